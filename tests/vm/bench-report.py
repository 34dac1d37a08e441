#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of tests/vm/bench.sh: read the bench.json files of every
# bench-r<round>-<pairing> scenario of one kernel's log directory, take the
# median over the rounds and print each pairing's ratio to the in-tree pair.
# Two context columns, which are not iSER pairings: "tcp" (the same fio
# workloads over iscsi_tcp to LIO's TCP portal, reported like a pairing
# with its ratio to the in-tree iSER pair) and "raw" (perftest's
# ib_write_bw and ib_read_bw between the two soft-RoCE devices, link.json
# of the bench-r<round>-raw runs), against which the large reads of each
# pairing are set: read bandwidth / raw ib_write_bw with 512 KiB messages
# (an iSER READ's data travels as the target's RDMA Writes).
#
#   bench-report.py --kernel K LOGDIR OUTPREFIX
#
# The work one I/O cost (busy CPU time, context switches, interrupts,
# soft-RoCE packets) gets a table of its own, with ratios where lower is
# better: counts like these move much less with a loaded host than rates.
#
# Writes OUTPREFIX.txt (the table, also printed), OUTPREFIX.json,
# OUTPREFIX.csv (one row per pairing, workload and metric: every round's
# value, the median, the ratio to the in-tree pair and, for the large
# reads' bandwidth, the ratio to raw ib_write_bw; one row per raw link
# test) and OUTPREFIX.png (left: the IOPS ratios as bars, one group per
# workload; right: the large reads' bandwidth against the raw link;
# python3-matplotlib). Exits 1 when a pairing has no complete result or a
# raw link test gave no number (a failed run is reported, never averaged
# away) or the chart cannot be drawn.

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
    # bench.sh --pairings ...,target_sigall: our target as it was before
    # unsignaled Sends, for a same-boot comparison
    ("target_sigall", "in-tree initiator -> our target, every Send signaled"),
    # bench.sh --pairings ...,ours_pi: our pair on a LUN with T10-PI type 1
    ("ours_pi", "our initiator -> our target, T10-PI type 1 in software"),
    # context, not an iSER pairing
    ("tcp", "context, not iSER: iscsi_tcp -> LIO over TCP"),
    ("nvme", "context, not iSCSI: nvme-rdma -> nvmet-rdma, same link and disk"),
]
CONTEXT = ("tcp", "nvme")
# a pairing that differs from another by one feature: the exact table
# gives its ratio to that one as well (the feature's cost)
BASE_OF = {"ours_pi": "ours"}
# metric, label, True when higher is better
METRICS = [
    ("iops", "IOPS", True),
    ("bw_mib", "bandwidth MiB/s", True),
    ("lat_p99_us", "p99 latency", False),
    ("iops_per_cpu", "IOPS per busy CPU", True),
]
# the work one I/O cost (bench.json since 2026-11-27; lower is better):
# metric, column head
WORK = [
    ("cpu_us_per_io", "CPU us"),
    ("ctxt_per_io", "ctxsw"),
    ("intr_per_io", "intr"),
    ("pkts_per_io", "packets"),
]
# the exact mode's figures of bench.json: guest nanoseconds per I/O, and
# the share of guest time the CPU was idle (waiting for a timer)
EXACT = ("ns_per_io", "idle")
# the raw link tests of scenarios/bench-link.sh: perftest tool, message KiB
RAW_TESTS = [("write", 128), ("write", 512), ("read", 128), ("read", 512)]
# the raw figure the large reads are set against, and those reads
RAW_REF = ("write", 512)
LARGE_READS = ("read-512k-qd4", "read-1m-qd4")
TARGET_FRACTION = 0.80  # issue #14: 512 KiB reads at 80% of raw ib_write_bw
# issue #14's memory goals, ours / in-tree for one idle session, per side
SPLIT_GOALS = (("initiator", 0.50), ("target", 1.00))


def raw_name(test, kib):
    return "ib_%s_bw %d KiB" % (test, kib)


def raw_key(test, kib):
    return "ib_%s_bw-%dk" % (test, kib)


def row_result(logdir, name):
    """the verdict vm-check.sh wrote for row NAME, or 'no result'"""
    path = os.path.join(logdir, name, "result")
    return open(path).read().strip() if os.path.exists(path) else "no result"


def load(logdir):
    runs = {}
    pat = re.compile(r"^bench-r(\d+)-(\w+)$")
    for name in sorted(os.listdir(logdir)):
        m = pat.match(name)
        if not m:
            continue
        pair = m.group(2)
        res = row_result(logdir, name)
        if pair == "raw":
            runs.setdefault(pair, []).append(
                (name, res, load_link(os.path.join(logdir, name, "link.json"))
                 if res == "PASS" else None, None))
            continue
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
                    r["bw_mib"] = r.get("bw_kib", 0) / 1024.0
                    busy = r["cpu_busy"]
                    r["iops_per_cpu"] = r["iops"] / busy if busy > 0 else 0.0
                    rows.append(r)
        runs.setdefault(pair, []).append((name, res, rows, mem))
    return runs


def load_split(logdir, failed):
    """side -> module -> memsplit.json of the two-guest rows
    bench-split-MODULE: the initiator guest's in NAME/, the target
    guest's in NAME.peer/NAME/; a row that failed or lacks a side's figures is
    added to failed"""
    split = {}
    pat = re.compile(r"^bench-split-(intree|ours)$")
    for name in sorted(os.listdir(logdir)):
        m = pat.match(name)
        if not m:
            continue
        res = row_result(logdir, name)
        if res != "PASS":
            failed.append("%s: %s" % (name, res))
            continue
        for sub, side in ((name, "initiator"),
                          (os.path.join(name + ".peer", name), "target")):
            path = os.path.join(logdir, sub, "memsplit.json")
            if not os.path.exists(path):
                failed.append("%s: no figures of the %s guest (%s)" % (name, side, path))
                continue
            split.setdefault(side, {})[m.group(1)] = json.load(open(path))
    return split


def load_link(path):
    """(test, KiB) -> MiB/s or an error text, from one raw run's link.json"""
    got = {}
    if not os.path.exists(path):
        return got
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            key = (r["test"], r["size_kib"])
            got[key] = r["mib_s"] if r.get("mib_s") is not None else \
                (r.get("error") or "no number")
    return got


def raw_medians(runs, failed):
    """median MiB/s per raw test over the passing raw runs; every run that
    failed or lacks a test's number is added to failed"""
    vals = {t: [] for t in RAW_TESTS}
    for name, res, got, _ in runs.get("raw", []):
        if res != "PASS":
            failed.append("%s: %s" % (name, res))
            continue
        for t in RAW_TESTS:
            v = got.get(t)
            if isinstance(v, (int, float)):
                vals[t].append(float(v))
            else:
                failed.append("%s: no %s result (%s)" % (
                    name, raw_name(*t), v or "missing from link.json"))
    med = {t: statistics.median(v) for t, v in vals.items() if v}
    return med, vals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--backstore", default="ramdisk")
    # the two-guest memory rows, when they ran in a log directory of
    # their own (bench.sh: without icount)
    ap.add_argument("--split-logs")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--exact", dest="exact", action="store_true", default=True)
    mode.add_argument("--wallclock", dest="exact", action="store_false")
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
        med[pair] = {w: {m: statistics.median(x[m] for x in rs) for m in metric_keys(rs)}
                     for w, rs in per.items()}
        rounds_of[pair] = {w: {m: [x[m] for x in rs] for m in metric_keys(rs)}
                           for w, rs in per.items()}

    rawmed, rawvals = raw_medians(runs, failed) if "raw" in runs else ({}, {})
    nrounds = max((len(v) for v in runs.values()), default=0)
    lines = ["iSER benchmark, kernel %s, backstore %s: median of %d round(s); "
             "ratio = pairing / in-tree pair" % (a.kernel, a.backstore, nrounds)]
    if a.exact:
        lines += ["exact mode: one vCPU under qemu's icount, 1 guest ns = 1 guest "
                  "instruction; a line's figure is the whole stack's work per I/O", ""]
    else:
        lines += ["WALL-CLOCK MODE, context only: the ratios move with the host's load; "
                  "no claim rests on them", ""]
    ref = med.get("intree", {})
    report = {"kernel": a.kernel, "backstore": a.backstore,
              "mode": "exact" if a.exact else "wallclock",
              "pairings": {}, "failed": failed}
    # (bench.sh --memory: no fio lines, nothing to check)
    if a.exact and any(med.values()):
        exact_table(lines, report, med, rounds_of, failed)
    for pair, label in PAIRS:
        if not med.get(pair):
            continue  # no fio results (bench.sh --memory)
        lines.append(label)
        lines.append("  %-18s %10s %6s %9s %6s %10s %6s %11s %6s" % (
            "workload", "IOPS", "ratio", "MiB/s", "ratio", "p99 us", "ratio",
            "IOPS/CPU", "ratio"))
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
            lines.append("  %-18s %10.0f %6s %9.1f %6s %10.0f %6s %11.0f %6s" % (
                w, cells[0][0], fmt(cells[0][1]), cells[1][0], fmt(cells[1][1]),
                cells[2][0], fmt(cells[2][1]), cells[3][0], fmt(cells[3][1])))
        lines.append("")
    work_table(lines, report, med)
    vsraw = {}  # pair -> large read -> bandwidth / raw ib_write_bw 512 KiB
    if "raw" in runs:
        lines.append("context, raw link limit: perftest over rdma_cm between the two "
                     "soft-RoCE devices (median MiB/s)")
        report["raw_link"] = {}
        for t in RAW_TESTS:
            v = rawmed.get(t)
            report["raw_link"][raw_key(*t)] = {
                "mib_s": v, "rounds": rawvals.get(t, [])}
            lines.append("  %-20s %10s%s" % (raw_name(*t), "%.1f" % v if v is not None
                                             else "-", "" if v is not None else "  (no result)"))
        base = rawmed.get(RAW_REF)
        lines.append("")
        lines.append("large reads / raw %s (issue #14's target: 512 KiB reads "
                     ">= %.2f); MiB/s and ratio" % (raw_name(*RAW_REF), TARGET_FRACTION))
        lines.append("  %-48s" % "" + "".join(" %18s" % w for w in LARGE_READS))
        for pair, label in PAIRS:
            if not med.get(pair):
                continue
            vsraw[pair] = {}
            cells = []
            for w in LARGE_READS:
                bw = med[pair].get(w, {}).get("bw_mib")
                r = bw / base if bw is not None and base else None
                vsraw[pair][w] = round(r, 3) if r is not None else None
                cells.append("%9s %8s" % ("%.1f" % bw if bw is not None else "-", fmt(r)))
            lines.append("  %-48s" % label[:48] + "".join(" %18s" % c for c in cells))
        report["vs_raw_write_512k"] = vsraw
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
    split = load_split(a.split_logs or a.logdir, failed)
    if split:
        lines.append("kernel memory of an idle session, each side in its own guest "
                     "(two-guest rows bench-split-*): the first session after loading the "
                     "modules, and one more (median of the next logins); issue #14's goal "
                     "is ours / in-tree")
        report["memory_split"] = {}
        for side, goal in SPLIT_GOALS:
            got = split.get(side, {})
            it, ours = got.get("intree"), got.get("ours")
            entry = {"goal": goal}
            verdict = []
            for key, label in (("first_kb", "first"), ("median_kb", "one more")):
                ratio = ours[key] / it[key] if it and ours and it[key] > 0 else None
                met = ratio is not None and ratio <= goal
                entry[key] = {"intree": it and it[key], "ours": ours and ours[key],
                              "ratio": round(ratio, 3) if ratio is not None else None,
                              "met": met}
                verdict.append("%s for %s session" % ("met" if met else "not met",
                                                       "the first" if key == "first_kb"
                                                       else "one more"))
                lines.append("  %-10s %-9s in-tree %8s KiB  ours %8s KiB  ratio %6s  goal <= %.2f" % (
                    side, label, it[key] if it else "-", ours[key] if ours else "-",
                    fmt(ratio), goal))
            entry["met"] = entry["first_kb"]["met"] and entry["median_kb"]["met"]
            entry["intree_rounds"] = it and it["rounds"]
            entry["ours_rounds"] = ours and ours["rounds"]
            report["memory_split"][side] = entry
            lines.append("  %-10s goal %s" % (side, ", ".join(verdict)))
        lines.append("")
    if failed:
        lines.append("FAILED runs (not in the medians): " + "; ".join(failed))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(a.out + ".txt", "w") as f:
        f.write(text)
    with open(a.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    write_csv(a.out + ".csv", a.kernel, med, rounds_of, rawmed, rawvals)
    chart_ok = True
    if med.get("intree") and len(med) > 1:
        chart_ok = write_png(a.out + ".png", a.kernel, report, rawmed)
    return 1 if failed or not chart_ok else 0


def metric_keys(rows):
    """the metrics of METRICS and WORK that every row of one workload has
    (the work counts are missing from logs older than them)"""
    keys = [m for m, _, _ in METRICS] + [m for m, _ in WORK] + list(EXACT)
    return [m for m in keys if all(m in r for r in rows)]


# the exact mode's self-check: the in-tree pair's rounds of one boot agree
# to this fraction on every line, or the mode is broken
SELF_CHECK_TOL = 0.005


def exact_table(lines, report, med, rounds_of, failed):
    """exact mode: per pairing and workload, IOPS and bandwidth in guest
    time, guest ns per I/O, the guest's idle share and the ratio to the
    in-tree pair with three decimals; then the self-check of the in-tree
    pair's rounds (a failure goes to failed)"""
    ref = med.get("intree", {})
    report["exact"] = {}
    for pair, label in PAIRS:
        if not med.get(pair):
            continue
        other = BASE_OF.get(pair) if med.get(BASE_OF.get(pair)) else None
        lines.append(label)
        lines.append("  %-18s %10s %10s %10s %6s %7s" % (
            "workload", "IOPS", "KiB/s", "ns/IO", "idle", "ratio") +
            (" %9s" % ("vs " + other) if other else ""))
        report["exact"][pair] = {}
        for w in sorted(med[pair]):
            v = med[pair][w]
            base = ref.get(w, {}).get("iops")
            ratio = v["iops"] / base if base else None
            report["exact"][pair][w] = {
                "iops": v["iops"], "kib_s": v["bw_mib"] * 1024,
                "ns_per_io": v.get("ns_per_io"), "idle": v.get("idle"),
                "ratio": round(ratio, 3) if ratio is not None else None}
            extra = ""
            if other:
                obase = med[other].get(w, {}).get("iops")
                oratio = v["iops"] / obase if obase else None
                report["exact"][pair][w]["ratio_to_" + other] = \
                    round(oratio, 3) if oratio is not None else None
                extra = " %9s" % ("%.3f" % oratio if oratio is not None else "-")
            lines.append("  %-18s %10.1f %10.0f %10.0f %5.1f%% %7s" % (
                w, v["iops"], v["bw_mib"] * 1024, v.get("ns_per_io", 0),
                100 * v.get("idle", 0), "%.3f" % ratio if ratio is not None else "-") + extra)
        lines.append("")
    check = {}
    worst = 0.0
    for w, ms in sorted(rounds_of.get("intree", {}).items()):
        vals = ms.get("iops", [])
        if len(vals) < 2 or min(vals) <= 0:
            continue
        spread = max(vals) / min(vals) - 1
        check[w] = round(spread, 5)
        worst = max(worst, spread)
    ok = bool(check) and worst <= SELF_CHECK_TOL
    report["self_check"] = {"tolerance": SELF_CHECK_TOL, "spread": check, "ok": ok}
    if not check:
        lines.append("self-check: no two in-tree rounds to compare: EXACT MODE NOT CHECKED")
        failed.append("self-check: fewer than two passing in-tree rounds")
    elif ok:
        lines.append("self-check: the in-tree pair's rounds agree within %.3f%% on every "
                     "line (largest spread %.3f%%)" % (100 * SELF_CHECK_TOL, 100 * worst))
    else:
        lines.append("self-check: FAILED, the in-tree pair's rounds differ by up to %.3f%% "
                     "(tolerance %.3f%%): THE EXACT MODE IS BROKEN; no ratio here holds"
                     % (100 * worst, 100 * SELF_CHECK_TOL))
        failed.append("self-check: in-tree rounds differ by %.3f%%" % (100 * worst))
    lines.append("")


def work_table(lines, report, med):
    """the work per I/O of each pairing, and its ratio to the in-tree
    pair's (lower is better); into lines and report["work_per_io"]"""
    ref = med.get("intree", {})
    have = [(m, head) for m, head in WORK
            if any(m in v for p in med.values() for v in p.values())]
    if not have:
        return
    lines.append("work per I/O: busy CPU microseconds, context switches, interrupts, "
                 "soft-RoCE packets sent, per request the disk completed; "
                 "ratio = pairing / in-tree pair, lower is better")
    report["work_per_io"] = {}
    for pair, label in PAIRS:
        if not med.get(pair):
            continue
        lines.append(label)
        lines.append("  %-18s" % "workload" +
                     "".join(" %9s %6s" % (head, "ratio") for _, head in have))
        report["work_per_io"][pair] = {}
        for w in sorted(med[pair]):
            row = "  %-18s" % w
            entry = {}
            for m, _ in have:
                v = med[pair][w].get(m)
                base = ref.get(w, {}).get(m)
                ratio = v / base if v is not None and base else None
                entry[m] = v
                entry[m + "_ratio"] = round(ratio, 3) if ratio is not None else None
                row += " %9s %6s" % ("%.2f" % v if v is not None else "-", fmt(ratio))
            report["work_per_io"][pair][w] = entry
            lines.append(row)
        lines.append("")


def write_csv(path, kernel, med, rounds_of, rawmed, rawvals):
    ref = med.get("intree", {})
    raw = rawmed.get(RAW_REF)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "pairing", "workload", "metric", "rounds",
                    "values", "median", "ratio_to_intree", "ratio_to_raw_write"])
        for pair, _ in PAIRS:
            for wl in sorted(med.get(pair, {})):
                # the metrics every round of this workload has (metric_keys())
                for m in med[pair][wl]:
                    vals = rounds_of[pair][wl][m]
                    base = ref.get(wl, {}).get(m)
                    v = med[pair][wl][m]
                    vs_raw = "%.4f" % (v / raw) if raw and m == "bw_mib" and \
                        wl in LARGE_READS else ""
                    w.writerow([kernel, pair, wl, m, len(vals),
                                ";".join("%.6g" % x for x in vals), "%.6g" % v,
                                "%.4f" % (v / base) if base else "", vs_raw])
        # the raw link: one row per test, even one without a number
        for t in (RAW_TESTS if rawvals else []):
            vals = rawvals.get(t, [])
            v = rawmed.get(t)
            w.writerow([kernel, "raw", raw_key(*t), "bw_mib", len(vals),
                        ";".join("%.6g" % x for x in vals),
                        "%.6g" % v if v is not None else "", "", ""])


def write_png(path, kernel, report, rawmed):
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
    reads = [w for w in LARGE_READS if w in workloads]
    right = bool(reads) or bool(rawmed)
    fig, axes = plt.subplots(
        1, 2 if right else 1, figsize=(max(6, 1.6 * len(workloads)) + (5 if right else 0), 6),
        gridspec_kw={"width_ratios": [max(len(workloads), 1), 3]} if right else None)
    ax = axes[0] if right else axes
    width = 0.8 / max(len(pairs), 1)
    for i, (p, label) in enumerate(pairs):
        ys = [report["pairings"][p].get(w, {}).get("iops_ratio") or 0 for w in workloads]
        xs = [j + (i - (len(pairs) - 1) / 2) * width for j in range(len(workloads))]
        ax.bar(xs, ys, width, label=SHORT.get(p, label), **style(p))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads, rotation=20, ha="right")
    ax.set_ylabel("IOPS / in-tree pair (median)")
    ax.set_title("iSER benchmark, kernel %s, %s backstore, %s mode" % (
        kernel, report.get("backstore", "?"), report.get("mode", "?")))
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    if right:
        ax = axes[1]
        allp = [(p, label) for p, label in PAIRS if p in report["pairings"]]
        width = 0.8 / max(len(allp), 1)
        for i, (p, label) in enumerate(allp):
            ys = [report["pairings"][p].get(w, {}).get("bw_mib") or 0 for w in reads]
            xs = [j + (i - (len(allp) - 1) / 2) * width for j in range(len(reads))]
            ax.bar(xs, ys, width, label=SHORT.get(p, label), **style(p))
        ref = rawmed.get(RAW_REF)
        if ref:
            ax.axhline(ref, color="black", linestyle="--", linewidth=1,
                       label="raw %s" % raw_name(*RAW_REF))
            ax.axhline(TARGET_FRACTION * ref, color="grey", linestyle=":",
                       linewidth=1, label="%d%% of it (target)" % (100 * TARGET_FRACTION))
        else:
            ax.text(0.5, 0.95, "no raw link result", transform=ax.transAxes,
                    ha="center", va="top", fontsize="small")
        ax.set_xticks(range(len(reads)))
        ax.set_xticklabels(reads, rotation=20, ha="right")
        ax.set_ylabel("MiB/s (median)")
        ax.set_title("large reads against the raw link")
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


SHORT = {"intree": "in-tree pair", "ours": "our pair", "target": "in-tree ini -> our tgt",
         "initiator": "our ini -> in-tree tgt", "tcp": "context: iSCSI/TCP",
         "nvme": "context: NVMe-oF RDMA",
         "target_sigall": "our tgt, all signaled", "ours_pi": "our pair, PI type 1"}
COLOR = {"intree": "tab:purple", "ours": "tab:blue", "target": "tab:orange",
         "initiator": "tab:green", "target_sigall": "tab:brown", "ours_pi": "tab:cyan"}


def style(pair):
    """bar style: one colour per pairing in both panels; the context
    column (TCP) hatched grey, apart from the iSER pairings"""
    if pair in CONTEXT:
        return {"color": "lightgrey", "edgecolor": "dimgrey", "hatch": "//"}
    return {"color": COLOR.get(pair)}


def fmt(r):
    return "%.2f" % r if r is not None else "-"


if __name__ == "__main__":
    sys.exit(main())
