#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tests/vm/bench-report.py on made-up log directories: medians,
# ratios, the CSV and the chart, and that a failed run fails the report.
# Prints PASS/FAIL lines and "N passed, N failed" (scripts/check.sh).

import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "bench-report.py")
PAIRS = ("intree", "ours", "target", "initiator")
# pairing -> factor applied to the in-tree figures
FACTOR = {"intree": 1.0, "ours": 1.25, "target": 0.8, "initiator": 1.1}
WORKLOADS = {"randread-4k-qd32": 1000.0, "seqwrite-128k-qd8": 200.0}

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s%s" % (name, ": " + detail if detail else ""))


def make_logs(top, rounds, fail=None):
    """rounds x pairings of bench-rR-PAIR/{result,bench.json}; the IOPS
    of round r are base * factor * (1 + r / 100), so the median is the
    middle round's"""
    for r in range(1, rounds + 1):
        for p in PAIRS:
            d = os.path.join(top, "bench-r%d-%s" % (r, p))
            os.makedirs(d)
            name = "bench-r%d-%s" % (r, p)
            with open(os.path.join(d, "result"), "w") as f:
                f.write("FAIL: made up\n" if name == fail else "PASS\n")
            with open(os.path.join(d, "bench.json"), "w") as f:
                for w, base in WORKLOADS.items():
                    f.write(json.dumps({
                        "workload": w,
                        "iops": base * FACTOR[p] * (1 + r / 100.0),
                        "lat_p99_us": 100.0 / FACTOR[p],
                        "cpu_busy": 0.5,
                    }) + "\n")


def run(logdir, out):
    return subprocess.run(["/usr/bin/python3", REPORT, "--kernel", "6.1",
                           logdir, out], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        logs = os.path.join(tmp, "logs")
        make_logs(logs, 3)
        out = os.path.join(tmp, "out")
        r = run(logs, out)
        check("report exits 0 when every run passed", r.returncode == 0,
              r.stderr.strip())
        rows = list(csv.DictReader(open(out + ".csv")))
        check("csv: a row per pairing, workload and metric",
              len(rows) == len(PAIRS) * len(WORKLOADS) * 3, "%d rows" % len(rows))
        ok = True
        for row in rows:
            if row["metric"] != "iops":
                continue
            base = WORKLOADS[row["workload"]]
            want_med = base * FACTOR[row["pairing"]] * 1.02
            vals = [float(v) for v in row["values"].split(";")]
            ok &= row["rounds"] == "3" and len(vals) == 3
            ok &= abs(float(row["median"]) - want_med) < 1e-3 * want_med
            ok &= abs(float(row["ratio_to_intree"]) - FACTOR[row["pairing"]]) < 1e-3
        check("csv: medians over the rounds and ratios to the in-tree pair", ok)
        lat = [row for row in rows if row["metric"] == "lat_p99_us" and
               row["pairing"] == "ours"]
        check("csv: latency ratio is ours / in-tree (lower is better)",
              lat and abs(float(lat[0]["ratio_to_intree"]) - 0.8) < 1e-3)
        rep = json.load(open(out + ".json"))
        check("json: ratio of our pair",
              abs(rep["pairings"]["ours"]["randread-4k-qd32"]["iops_ratio"] - 1.25) < 1e-3)
        with open(out + ".png", "rb") as f:
            magic = f.read(8)
        check("png: a chart was written", magic == b"\x89PNG\r\n\x1a\n",
              repr(magic))
        check("txt: the table names every pairing",
              all(s in open(out + ".txt").read() for s in
                  ("in-tree initiator -> our target", "our initiator -> in-tree target")))

        logs2 = os.path.join(tmp, "logs2")
        make_logs(logs2, 3, fail="bench-r2-target")
        out2 = os.path.join(tmp, "out2")
        r = run(logs2, out2)
        check("a failed run fails the report", r.returncode == 1)
        check("a failed run is named, not averaged away",
              "bench-r2-target: FAIL: made up" in r.stdout)
        rows = [row for row in csv.DictReader(open(out2 + ".csv"))
                if row["pairing"] == "target" and row["metric"] == "iops"]
        check("the failed run's values are not in the CSV",
              rows and all(row["rounds"] == "2" for row in rows))

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
