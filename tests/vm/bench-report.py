#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of tests/vm/bench.sh: read the bench.json files of every
# bench-r<round>-<pairing> scenario of one kernel's log directory, take the
# median over the rounds and print each pairing's ratio to the in-tree pair.
#
#   bench-report.py --kernel K LOGDIR OUTPREFIX
#
# Writes OUTPREFIX.txt (the table, also printed) and OUTPREFIX.json.
# Exits 1 when a pairing has no complete result (a failed run is reported,
# never averaged away).

import argparse
import json
import os
import re
import statistics
import sys

PAIRS = [
    ("intree", "in-tree initiator -> in-tree target (reference)"),
    ("ours", "our initiator -> our target"),
    ("target", "in-tree initiator -> our target"),
    ("initiator", "our initiator -> in-tree target"),
]
# metric, label, True when higher is better
METRICS = [
    ("iops", "IOPS", True),
    ("lat_p99_us", "p99 latency", False),
    ("iops_per_cpu", "IOPS per busy CPU", True),
]


def load(logdir):
    runs = {}
    pat = re.compile(r"^bench-r(\d+)-(\w+)$")
    for name in sorted(os.listdir(logdir)):
        m = pat.match(name)
        if not m:
            continue
        pair = m.group(2)
        res = open(os.path.join(logdir, name, "result")).read().strip() \
            if os.path.exists(os.path.join(logdir, name, "result")) else "no result"
        path = os.path.join(logdir, name, "bench.json")
        rows = []
        mem = None
        mpath = os.path.join(logdir, name, "mem.json")
        if res == "PASS" and os.path.exists(mpath):
            mem = json.load(open(mpath))
        if res == "PASS" and os.path.exists(path):
            for line in open(path):
                if line.strip():
                    r = json.loads(line)
                    busy = r["cpu_busy"]
                    r["iops_per_cpu"] = r["iops"] / busy if busy > 0 else 0.0
                    rows.append(r)
        runs.setdefault(pair, []).append((name, res, rows, mem))
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("logdir")
    ap.add_argument("out")
    a = ap.parse_args()

    runs = load(a.logdir)
    failed = []
    med = {}  # pair -> workload -> metric -> median
    memmed = {}  # pair -> mem_kb, slab_kb -> median
    for pair, _ in PAIRS:
        if pair not in runs and pair != "intree":
            continue  # not asked for (bench.sh --pairings)
        for name, res, rows, mem in runs.get(pair, []):
            if res != "PASS" or not (rows or mem):
                failed.append("%s: %s" % (name, res))
        good = [rows for _, res, rows, _ in runs.get(pair, []) if res == "PASS" and rows]
        mems = [m for _, res, _, m in runs.get(pair, []) if res == "PASS" and m]
        if mems:
            memmed[pair] = {k: statistics.median(m[k] for m in mems)
                            for k in ("mem_kb", "slab_kb")}
        if not good and not mems:
            failed.append("%s: no passing run" % pair)
            continue
        per = {}
        for rows in good:
            for r in rows:
                per.setdefault(r["workload"], []).append(r)
        med[pair] = {w: {m: statistics.median(x[m] for x in rs) for m, _, _ in METRICS}
                     for w, rs in per.items()}

    lines = ["iSER benchmark, kernel %s: median of %d round(s); ratio = pairing / in-tree pair"
             % (a.kernel, max((len(v) for v in runs.values()), default=0)),
             "(under TCG only the ratios mean something; higher is better except for latency)", ""]
    ref = med.get("intree", {})
    report = {"kernel": a.kernel, "pairings": {}, "failed": failed}
    for pair, label in PAIRS:
        if not med.get(pair):
            continue  # no fio results (bench.sh --memory)
        lines.append(label)
        lines.append("  %-18s %10s %8s %12s %8s %14s %8s" % (
            "workload", "IOPS", "ratio", "p99 us", "ratio", "IOPS/CPU", "ratio"))
        report["pairings"][pair] = {}
        for w in sorted(med[pair]):
            v = med[pair][w]
            cells = []
            entry = {}
            for m, _, _ in METRICS:
                base = ref.get(w, {}).get(m)
                ratio = v[m] / base if base else None
                entry[m] = v[m]
                entry[m + "_ratio"] = round(ratio, 3) if ratio is not None else None
                cells.append((v[m], ratio))
            report["pairings"][pair][w] = entry
            lines.append("  %-18s %10.0f %8s %12.0f %8s %14.0f %8s" % (
                w, cells[0][0], fmt(cells[0][1]), cells[1][0], fmt(cells[1][1]),
                cells[2][0], fmt(cells[2][1])))
        lines.append("")
    if memmed:
        lines.append("kernel memory of one idle session, initiator and target together "
                     "(free memory and unreclaimable slab, before login to after; median)")
        refm = memmed.get("intree", {})
        report["memory"] = {}
        for pair, label in PAIRS:
            if pair not in memmed:
                continue
            v = memmed[pair]
            base = refm.get("mem_kb")
            ratio = v["mem_kb"] / base if base else None
            report["memory"][pair] = dict(v, mem_ratio=round(ratio, 3) if ratio is not None else None)
            lines.append("  %-48s %8.0f KiB %8s  slab %+8.0f KiB" % (
                label, v["mem_kb"], fmt(ratio), v["slab_kb"]))
        lines.append("")
    if failed:
        lines.append("FAILED runs (not in the medians): " + "; ".join(failed))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(a.out + ".txt", "w") as f:
        f.write(text)
    with open(a.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    return 1 if failed else 0


def fmt(r):
    return "%.2f" % r if r is not None else "-"


if __name__ == "__main__":
    sys.exit(main())
