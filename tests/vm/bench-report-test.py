#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tests/vm/bench-report.py on made-up log directories: medians,
# ratios, the CSV and the chart, the context columns (iSCSI over TCP, the
# raw link from perftest), and that a failed run or a missing perftest
# number fails the report.
# Prints PASS/FAIL lines and "N passed, N failed" (scripts/check.sh).

import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "bench-report.py")
PAIRS = ("intree", "ours", "target", "initiator", "tcp")
# pairing -> factor applied to the in-tree figures
FACTOR = {"intree": 1.0, "ours": 1.25, "target": 0.8, "initiator": 1.1, "tcp": 0.5}
# workload -> in-tree IOPS, block size in KiB
WORKLOADS = {"randread-4k-qd32": (1000.0, 4), "seqwrite-128k-qd8": (200.0, 128),
             "read-512k-qd4": (8.0, 512)}
METRICS = 4  # iops, bw_mib, lat_p99_us, iops_per_cpu
# the work per I/O (bench.json's newer fields): in-tree value, the others'
# divided by their FACTOR, so each ratio is 1 / FACTOR
WORK = {"cpu_us_per_io": 200.0, "ctxt_per_io": 4.0, "intr_per_io": 3.0,
        "pkts_per_io": 8.0}
# raw link test -> MiB/s in round r: base * (1 + r / 100)
RAW = {("write", 128): 3000.0, ("write", 512): 4000.0,
       ("read", 128): 2000.0, ("read", 512): 2500.0}

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s%s" % (name, ": " + detail if detail else ""))


def make_logs(top, rounds, fail=None, raw=True, raw_drop=(), work=True):
    """rounds x pairings of bench-rR-PAIR/{result,bench.json} and, with
    raw, bench-rR-raw/{result,link.json}; the IOPS of round r are
    base * factor * (1 + r / 100), so the median is the middle round's.
    raw_drop: (round, test, KiB, how) for a perftest number that is
    missing from link.json (how "absent") or recorded as failed ("error");
    work: with the work per I/O (False: a log older than those fields)"""
    for r in range(1, rounds + 1):
        for p in PAIRS + (("raw",) if raw else ()):
            d = os.path.join(top, "bench-r%d-%s" % (r, p))
            os.makedirs(d)
            name = "bench-r%d-%s" % (r, p)
            with open(os.path.join(d, "result"), "w") as f:
                f.write("FAIL: made up\n" if name == fail else "PASS\n")
            if p == "raw":
                with open(os.path.join(d, "link.json"), "w") as f:
                    for (t, kib), base in RAW.items():
                        how = [x[3] for x in raw_drop if x[:3] == (r, t, kib)]
                        if how == ["absent"]:
                            continue
                        f.write(json.dumps({
                            "test": t, "size_kib": kib,
                            "mib_s": None if how else base * (1 + r / 100.0),
                            "error": "ib_%s_bw exited 1 (made up)" % t if how else "",
                        }) + "\n")
                continue
            with open(os.path.join(d, "bench.json"), "w") as f:
                for w, (base, kib) in WORKLOADS.items():
                    iops = base * FACTOR[p] * (1 + r / 100.0)
                    row = {
                        "workload": w,
                        "iops": iops,
                        "bw_kib": iops * kib,
                        "lat_p99_us": 100.0 / FACTOR[p],
                        "cpu_busy": 0.5,
                    }
                    if work:
                        row.update({m: v / FACTOR[p] for m, v in WORK.items()})
                    f.write(json.dumps(row) + "\n")


def make_split(top, figures, fail=None, drop=()):
    """the two-guest rows bench-split-MODULE: figures maps (side, module)
    to the first session's KiB (one more costs half of it); the initiator
    guest's memsplit.json in NAME/, the target guest's in NAME.peer/NAME/;
    drop: (side, module) without a file"""
    for module in ("intree", "ours"):
        name = "bench-split-%s" % module
        for sub, side in ((name, "initiator"),
                          (os.path.join(name + ".peer", name), "target")):
            d = os.path.join(top, sub)
            os.makedirs(d)
            if sub == name:
                with open(os.path.join(d, "result"), "w") as f:
                    f.write("FAIL: made up\n" if name == fail else "PASS\n")
            if (side, module) in drop:
                continue
            kb = figures[(side, module)]
            with open(os.path.join(d, "memsplit.json"), "w") as f:
                json.dump({"side": side, "module": module, "first_kb": kb,
                           "median_kb": kb // 2,
                           "rounds": [{"mem_kb": kb, "slab_kb": kb // 2,
                                       "vmalloc_kb": kb // 4, "other_kb": kb // 4}]}, f)


def run(logdir, out, mode="--wallclock"):
    return subprocess.run(["/usr/bin/python3", REPORT, "--kernel", "6.1", mode,
                           logdir, out], capture_output=True, text=True)


def make_exact(top, spread):
    """two rounds of every pairing as the exact mode writes them (with
    ns_per_io and idle); the in-tree pair's second round is SPREAD higher
    than its first, every other pairing's rounds are equal"""
    for r in (1, 2):
        for p in PAIRS:
            d = os.path.join(top, "bench-r%d-%s" % (r, p))
            os.makedirs(d)
            with open(os.path.join(d, "result"), "w") as f:
                f.write("PASS\n")
            with open(os.path.join(d, "bench.json"), "w") as f:
                for w, (base, kib) in WORKLOADS.items():
                    iops = base * FACTOR[p] * (1 + spread if p == "intree" and r == 2 else 1)
                    f.write(json.dumps({
                        "workload": w, "iops": iops, "bw_kib": iops * kib,
                        "lat_p99_us": 100.0, "cpu_busy": 0.9,
                        "ns_per_io": 1e9 / iops, "idle": 0.1}) + "\n")


def exact_tests(tmp):
    """the exact mode: its table and its self-check on the in-tree rounds"""
    logs = os.path.join(tmp, "exact-ok")
    make_exact(logs, 0.001)
    out = os.path.join(tmp, "exact-ok-out")
    r = run(logs, out, "--exact")
    txt = open(out + ".txt").read()
    rep = json.load(open(out + ".json"))
    check("exact: rounds within 0.5% pass the self-check", r.returncode == 0 and
          rep["self_check"]["ok"] is True and "self-check: the in-tree pair's rounds agree" in txt,
          r.stdout + r.stderr)
    e = rep["exact"]["target"]["randread-4k-qd32"]
    check("exact: ratio with three decimals, ns per I/O and idle share",
          abs(e["ratio"] - round(0.8 / 1.0005, 3)) < 1e-9 and abs(e["ns_per_io"] - 1e9 / 800) < 1e-6
          and e["idle"] == 0.1 and "exact mode: one vCPU under qemu's icount" in txt and
          "  10.0%   0.800" in txt, txt)
    logs = os.path.join(tmp, "exact-bad")
    make_exact(logs, 0.006)
    out = os.path.join(tmp, "exact-bad-out")
    r = run(logs, out, "--exact")
    check("exact: in-tree rounds 0.6% apart fail the report as a broken mode",
          r.returncode == 1 and "THE EXACT MODE IS BROKEN" in r.stdout and
          json.load(open(out + ".json"))["self_check"]["ok"] is False, r.stdout)
    logs = os.path.join(tmp, "exact-one")
    make_logs(logs, 1, raw=False)
    r = run(logs, os.path.join(tmp, "exact-one-out"), "--exact")
    check("exact: a single round cannot check itself and fails",
          r.returncode == 1 and "EXACT MODE NOT CHECKED" in r.stdout, r.stdout)
    logs = os.path.join(tmp, "exact-memory")
    for p in ("intree", "ours"):
        d = os.path.join(logs, "bench-r1-%s" % p)
        os.makedirs(d)
        with open(os.path.join(d, "result"), "w") as f:
            f.write("PASS\n")
        with open(os.path.join(d, "mem.json"), "w") as f:
            json.dump({"mem_kb": 1000, "slab_kb": 100}, f)
    r = run(logs, os.path.join(tmp, "exact-memory-out"), "--exact")
    check("exact: a memory-only run (bench.sh --memory) has no fio line to check",
          r.returncode == 0 and "self-check" not in r.stdout and "1000 KiB" in r.stdout,
          r.stdout + r.stderr)
    logs = os.path.join(tmp, "exact-one")
    r = run(logs, os.path.join(tmp, "wall-out"))
    check("wall-clock: labelled as context", "WALL-CLOCK MODE, context only" in r.stdout,
          r.stdout)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        logs = os.path.join(tmp, "logs")
        make_logs(logs, 3)
        out = os.path.join(tmp, "out")
        r = run(logs, out)
        check("report exits 0 when every run passed", r.returncode == 0,
              r.stderr.strip())
        rows = list(csv.DictReader(open(out + ".csv")))
        check("csv: a row per pairing, workload and metric, and per raw test",
              len(rows) == len(PAIRS) * len(WORKLOADS) * (METRICS + len(WORK)) + len(RAW),
              "%d rows" % len(rows))
        ok = True
        for row in rows:
            if row["metric"] != "iops":
                continue
            base = WORKLOADS[row["workload"]][0]
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
        txt = open(out + ".txt").read()
        check("txt: the table names every pairing",
              all(s in txt for s in
                  ("in-tree initiator -> our target", "our initiator -> in-tree target")))

        # the work per I/O: medians and ratios, lower is better
        ctx = [row for row in rows if row["metric"] == "ctxt_per_io" and
               row["pairing"] == "target"]
        check("csv: work per I/O with its ratio to the in-tree pair",
              ctx and abs(float(ctx[0]["median"]) - 4.0 / 0.8) < 1e-9 and
              abs(float(ctx[0]["ratio_to_intree"]) - 1.25) < 1e-3, repr(ctx))
        wk = rep.get("work_per_io", {})
        check("json: our pair's work per I/O and ratios",
              abs(wk["ours"]["randread-4k-qd32"]["pkts_per_io"] - 8.0 / 1.25) < 1e-9 and
              abs(wk["ours"]["randread-4k-qd32"]["cpu_us_per_io_ratio"] - 0.8) < 1e-3)
        check("txt: the work per I/O table",
              "work per I/O: busy CPU microseconds" in txt and
              "   packets  ratio" in txt, txt)

        # iSCSI over TCP: reported like a pairing, marked as context
        check("txt: the TCP column is marked as context, not an iSER pairing",
              "context, not iSER: iscsi_tcp -> LIO over TCP" in txt)
        check("json: TCP's ratio to the in-tree iSER pair",
              abs(rep["pairings"]["tcp"]["randread-4k-qd32"]["iops_ratio"] - 0.5) < 1e-3)
        tcp = [row for row in rows if row["pairing"] == "tcp" and row["metric"] == "iops"]
        check("csv: TCP rows with their ratio to the in-tree pair",
              len(tcp) == len(WORKLOADS) and
              all(abs(float(row["ratio_to_intree"]) - 0.5) < 1e-3 for row in tcp))
        bw = [row for row in rows if row["pairing"] == "ours" and
              row["metric"] == "bw_mib" and row["workload"] == "seqwrite-128k-qd8"]
        check("csv: bandwidth in MiB/s with its ratio",
              bw and abs(float(bw[0]["median"]) - 200 * 1.25 * 1.02 * 128 / 1024) < 1e-3 and
              abs(float(bw[0]["ratio_to_intree"]) - 1.25) < 1e-3)

        # the raw link: medians in MiB/s, and the large reads against it
        raw = {row["workload"]: row for row in rows if row["pairing"] == "raw"}
        check("csv: one row per raw link test with every round and the median",
              sorted(raw) == sorted("ib_%s_bw-%dk" % t for t in RAW) and
              all(raw["ib_%s_bw-%dk" % t]["rounds"] == "3" and
                  abs(float(raw["ib_%s_bw-%dk" % t]["median"]) - b * 1.02) < 1e-3
                  for t, b in RAW.items()), repr(raw))
        want = 8.0 * 1.25 * 1.02 * 512 / 1024 / (4000 * 1.02)
        rd = [row for row in rows if row["pairing"] == "ours" and
              row["metric"] == "bw_mib" and row["workload"] == "read-512k-qd4"]
        check("csv: a large read's bandwidth / raw ib_write_bw 512 KiB",
              rd and abs(float(rd[0]["ratio_to_raw_write"]) - want) < 1e-4,
              rd and rd[0]["ratio_to_raw_write"])
        check("csv: no raw ratio for other workloads or metrics",
              all(row["ratio_to_raw_write"] == "" for row in rows
                  if row["workload"] != "read-512k-qd4" or row["metric"] != "bw_mib"))
        check("json: the raw link and our pair's read against it",
              abs(rep["raw_link"]["ib_write_bw-512k"]["mib_s"] - 4080) < 1e-6 and
              abs(rep["vs_raw_write_512k"]["ours"]["read-512k-qd4"] - round(want, 3)) < 1e-9)
        check("txt: the raw link section with MiB/s",
              "ib_write_bw 512 KiB" in txt and "4080.0" in txt and
              "large reads / raw ib_write_bw 512 KiB" in txt)

        # without the context runs (bench.sh --pairings intree,ours)
        logs0 = os.path.join(tmp, "logs0")
        make_logs(logs0, 1, raw=False, work=False)
        for p in ("tcp", "target", "initiator"):
            for f in os.listdir(os.path.join(logs0, "bench-r1-%s" % p)):
                os.unlink(os.path.join(logs0, "bench-r1-%s" % p, f))
            os.rmdir(os.path.join(logs0, "bench-r1-%s" % p))
        out0 = os.path.join(tmp, "out0")
        r = run(logs0, out0)
        check("no context runs: the report passes without their sections",
              r.returncode == 0 and "raw link" not in r.stdout and
              "iscsi_tcp" not in r.stdout, r.stdout + r.stderr)
        check("a log older than the work per I/O: no such table, 4 metrics in the CSV",
              "work per I/O" not in r.stdout and
              len(list(csv.DictReader(open(out0 + ".csv")))) == 2 * len(WORKLOADS) * METRICS,
              r.stdout)

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

        # a missing perftest result: one run lacks ib_read_bw 512 KiB in
        # link.json, another recorded it as failed; the third round's
        # ib_write_bw 128 KiB too, and every round's ib_write_bw 512 KiB
        logs3 = os.path.join(tmp, "logs3")
        make_logs(logs3, 3, raw_drop=[
            (2, "read", 512, "absent"), (3, "read", 512, "error"),
            (3, "write", 128, "error"),
            (1, "write", 512, "error"), (2, "write", 512, "absent"),
            (3, "write", 512, "absent")])
        out3 = os.path.join(tmp, "out3")
        r = run(logs3, out3)
        check("a missing perftest result fails the report", r.returncode == 1,
              r.stdout + r.stderr)
        check("a missing perftest result is named with its run",
              "bench-r2-raw: no ib_read_bw 512 KiB result (missing from link.json)" in r.stdout
              and "bench-r3-raw: no ib_read_bw 512 KiB result (ib_read_bw exited 1 (made up))"
              in r.stdout, r.stdout)
        rows = {row["workload"]: row for row in csv.DictReader(open(out3 + ".csv"))
                if row["pairing"] == "raw"}
        check("the other rounds' perftest numbers still make the median",
              rows["ib_read_bw-512k"]["rounds"] == "1" and
              abs(float(rows["ib_read_bw-512k"]["median"]) - 2500 * 1.01) < 1e-3 and
              rows["ib_write_bw-128k"]["rounds"] == "2" and
              abs(float(rows["ib_write_bw-128k"]["median"]) - 3000 * 1.015) < 1e-3)
        check("a test without any number: an empty median, no raw ratio",
              rows["ib_write_bw-512k"]["median"] == "" and
              all(row["ratio_to_raw_write"] == "" for row in csv.DictReader(open(out3 + ".csv"))))
        txt = open(out3 + ".txt").read()
        check("txt: '-' for the raw test without a number and for the ratios",
              "ib_write_bw 512 KiB           -  (no result)" in txt, txt)
        with open(out3 + ".png", "rb") as f:
            check("png: still drawn without the raw reference",
                  f.read(8) == b"\x89PNG\r\n\x1a\n")
        rep = json.load(open(out3 + ".json"))
        check("json: null for the raw test and the ratios without it",
              rep["raw_link"]["ib_write_bw-512k"]["mib_s"] is None and
              rep["vs_raw_write_512k"]["ours"]["read-512k-qd4"] is None)

        # a raw run that failed as a whole
        logs4 = os.path.join(tmp, "logs4")
        make_logs(logs4, 2, fail="bench-r1-raw")
        r = run(logs4, os.path.join(tmp, "out4"))
        check("a failed raw link run fails the report and is named",
              r.returncode == 1 and "bench-r1-raw: FAIL: made up" in r.stdout, r.stdout)

        # memory of each side in its own guest (bench-split-*)
        fig = {("initiator", "intree"): 4000, ("initiator", "ours"): 1800,
               ("target", "intree"): 6000, ("target", "ours"): 6600}
        logs5 = os.path.join(tmp, "logs5")
        make_logs(logs5, 1, raw=False)
        make_split(logs5, fig)
        out5 = os.path.join(tmp, "out5")
        r = run(logs5, out5)
        rep = json.load(open(out5 + ".json"))
        ms = rep.get("memory_split", {})
        check("split memory: the report passes and gives each side's ratio",
              r.returncode == 0 and abs(ms["initiator"]["first_kb"]["ratio"] - 0.45) < 1e-9 and
              abs(ms["initiator"]["median_kb"]["ratio"] - 0.45) < 1e-9 and
              ms["initiator"]["median_kb"]["intree"] == 2000 and
              abs(ms["target"]["first_kb"]["ratio"] - 1.1) < 1e-9, r.stdout + r.stderr)
        check("split memory: each side judged against its goal",
              ms["initiator"]["met"] is True and ms["initiator"]["goal"] == 0.5 and
              ms["target"]["met"] is False and ms["target"]["goal"] == 1.0 and
              ms["target"]["first_kb"]["met"] is False and ms["target"]["median_kb"]["met"] is False and
              ms["initiator"]["median_kb"]["met"] is True)
        txt = open(out5 + ".txt").read()
        check("txt: the split memory lines",
              "each side in its own guest" in txt and
              "initiator  first     in-tree     4000 KiB  ours     1800 KiB  ratio   0.45  goal <= 0.50" in txt and
              "initiator  one more  in-tree     2000 KiB  ours      900 KiB  ratio   0.45" in txt and
              "initiator  goal met for the first session, met for one more session" in txt and
              "target     goal not met for the first session, not met for one more session" in txt, txt)
        logs6 = os.path.join(tmp, "logs6")
        make_logs(logs6, 1, raw=False)
        make_split(logs6, fig, drop=[("target", "ours")])
        r = run(logs6, os.path.join(tmp, "out6"))
        check("split memory: a guest without figures fails the report and is named",
              r.returncode == 1 and "bench-split-ours: no figures of the target guest" in r.stdout,
              r.stdout)
        logs7 = os.path.join(tmp, "logs7")
        make_logs(logs7, 1, raw=False)
        make_split(logs7, fig, fail="bench-split-intree")
        r = run(logs7, os.path.join(tmp, "out7"))
        check("split memory: a failed row fails the report, no ratio from it",
              r.returncode == 1 and "bench-split-intree: FAIL: made up" in r.stdout and
              json.load(open(os.path.join(tmp, "out7.json")))["memory_split"]["initiator"]["first_kb"]["ratio"] is None,
              r.stdout)

        exact_tests(tmp)

        # the memory rows in a log directory of their own (bench.sh runs
        # them without icount)
        logs8, split8 = os.path.join(tmp, "logs8"), os.path.join(tmp, "split8")
        make_logs(logs8, 1, raw=False)
        make_split(split8, fig)
        r = subprocess.run(["/usr/bin/python3", REPORT, "--kernel", "6.1", "--wallclock",
                            "--split-logs", split8, logs8, os.path.join(tmp, "out8")],
                           capture_output=True, text=True)
        ms = json.load(open(os.path.join(tmp, "out8.json"))).get("memory_split", {})
        check("split memory from --split-logs", r.returncode == 0 and
              abs(ms["initiator"]["first_kb"]["ratio"] - 0.45) < 1e-9, r.stdout + r.stderr)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
