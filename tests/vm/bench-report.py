#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of tests/vm/bench.sh: read the bench.json files of every
# bench-r<round>-<pairing> scenario of one kernel's log directory, take the
# median over the rounds and print each pairing's ratio to the in-tree pair.
#
#   bench-report.py --kernel K LOGDIR OUTPREFIX
#
# Writes OUTPREFIX.txt (the table, also printed), OUTPREFIX.json,
# OUTPREFIX.csv (one row per pairing, workload and metric: every round's
# value, the median and the ratio to the in-tree pair) and OUTPREFIX.png
# (the IOPS ratios as bars, one group per workload; python3-matplotlib).
# Exits 1 when a pairing has no complete result (a failed run is reported,
# never averaged away) or the chart cannot be drawn.

import argparse
import csv
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
    rounds_of = {}  # pair -> workload -> metric -> every round's value
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
        rounds_of[pair] = {w: {m: [x[m] for x in rs] for m, _, _ in METRICS}
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
    write_csv(a.out + ".csv", a.kernel, med, rounds_of)
    chart_ok = True
    if med.get("intree") and len(med) > 1:
        chart_ok = write_png(a.out + ".png", a.kernel, report)
    return 1 if failed or not chart_ok else 0


def write_csv(path, kernel, med, rounds_of):
    ref = med.get("intree", {})
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "pairing", "workload", "metric", "rounds",
                    "values", "median", "ratio_to_intree"])
        for pair, _ in PAIRS:
            for wl in sorted(med.get(pair, {})):
                for m, _, _ in METRICS:
                    vals = rounds_of[pair][wl][m]
                    base = ref.get(wl, {}).get(m)
                    v = med[pair][wl][m]
                    w.writerow([kernel, pair, wl, m, len(vals),
                                ";".join("%.6g" % x for x in vals), "%.6g" % v,
                                "%.4f" % (v / base) if base else ""])


def write_png(path, kernel, report):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.stderr.write("bench-report: no chart (%s): install python3-matplotlib\n" % e)
        return False
    pairs = [(p, label) for p, label in PAIRS
             if p != "intree" and p in report["pairings"]]
    workloads = sorted(report["pairings"]["intree"])
    width = 0.8 / max(len(pairs), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(workloads)), 4.5))
    for i, (p, label) in enumerate(pairs):
        ys = [report["pairings"][p].get(w, {}).get("iops_ratio") or 0 for w in workloads]
        xs = [j + (i - (len(pairs) - 1) / 2) * width for j in range(len(workloads))]
        ax.bar(xs, ys, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads, rotation=20, ha="right")
    ax.set_ylabel("IOPS / in-tree pair (median)")
    ax.set_title("iSER benchmark, kernel %s" % kernel)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def fmt(r):
    return "%.2f" % r if r is not None else "-"


if __name__ == "__main__":
    sys.exit(main())
