#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of tests/vm/profile.sh: instructions per I/O, per module and per
# function, for every pairing and workload of one kernel's profile rows
# (prof-WORKLOAD-PAIRING), and for each pairing a diff table against the
# in-tree pair: where ours executes more or fewer instructions per I/O.
#
#   profile-report.py --kernel K LOGDIR OUTPREFIX
#
# The rows ran under qemu's icount (one guest nanosecond per guest
# instruction), perf sampling cpu-clock at FREQ per second of guest time:
# a sample stands for 1e9 / FREQ instructions, and a function's
# instructions per I/O are its samples times that, divided by the
# requests the disk completed while perf ran (profile.json).  Samples in
# the idle loop are guest time spent waiting for a timer, not
# instructions: they are reported apart, as "idle ns per I/O".
#
# Writes OUTPREFIX.txt (also printed) and OUTPREFIX.json.  Exits 1 when a
# row failed or has no samples.

import argparse
import json
import os
import re
import sys

PAIRS = [("intree", "in-tree pair (reference)"),
         ("target", "in-tree initiator -> our target"),
         ("initiator", "our initiator -> in-tree target"),
         ("ours", "our pair")]
# the symbols of the idle loop: time, not instructions
IDLE = re.compile(r"(safe_halt|default_idle|cpu_idle|do_idle|acpi_idle|"
                  r"mwait_idle|poll_idle|cpuidle_enter)")
# our modules and the in-tree ones they stand beside
ISER_MODULES = ("ib_iser", "ib_isert", "iser_dm")
TOP = 25
LINE = re.compile(r"^\s*([0-9.]+)%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$")


def load_row(path):
    """(profile.json, {(module, symbol): samples}) of one row's directory"""
    meta = json.load(open(os.path.join(path, "profile.json")))
    # perf names module functions as the core kernel's: modsyms.txt maps
    # each to its module ("name [module]" lines of /proc/kallsyms)
    modof = {}
    mpath = os.path.join(path, "modsyms.txt")
    if os.path.exists(mpath):
        for line in open(mpath):
            f = line.split()
            if len(f) == 2:
                modof[f[0]] = f[1].strip("[]")
    samples = {}
    for line in open(os.path.join(path, "perf-samples.txt")):
        m = LINE.match(line)
        if not m:
            continue
        dso = m.group(3)
        sym = m.group(5)
        module = "kernel" if dso == "[kernel.kallsyms]" else dso.strip("[]")
        if module == "kernel":
            module = modof.get(sym, "kernel")
        key = (module, sym)
        samples[key] = samples.get(key, 0) + int(m.group(2))
    return meta, samples


def per_io(meta, samples):
    """{(module, symbol): instructions per I/O}, idle ns per I/O"""
    scale = 1e9 / meta["freq"] / meta["requests"]
    work, idle = {}, 0.0
    for key, n in samples.items():
        if IDLE.search(key[1]):
            idle += n * scale
        else:
            work[key] = n * scale
    return work, idle


def by_symbol(work, mod):
    """{(module, symbol): v} -> {symbol: v}; the module of each symbol
    into mod, the most specific one seen (a row without modsyms.txt names
    every function's module "kernel")"""
    out = {}
    for (m, sym), v in work.items():
        out[sym] = out.get(sym, 0.0) + v
        if m != "kernel" or sym not in mod:
            mod[sym] = m
    return out


def modules(work):
    out = {}
    for (mod, _), v in work.items():
        out[mod] = out.get(mod, 0.0) + v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("logdir")
    ap.add_argument("out")
    a = ap.parse_args()

    pat = re.compile(r"^prof-(.+)-(intree|target|initiator|ours)$")
    rows = {}  # workload -> pair -> (work, idle, meta)
    failed = []
    for name in sorted(os.listdir(a.logdir)):
        m = pat.match(name)
        if not m:
            continue
        d = os.path.join(a.logdir, name)
        res = open(os.path.join(d, "result")).read().strip() \
            if os.path.exists(os.path.join(d, "result")) else "no result"
        if res != "PASS":
            failed.append("%s: %s" % (name, res))
            continue
        try:
            meta, samples = load_row(d)
        except (OSError, ValueError, KeyError) as e:
            failed.append("%s: no profile (%s)" % (name, e))
            continue
        if not samples or meta.get("requests", 0) <= 0:
            failed.append("%s: no samples or no requests" % name)
            continue
        work, idle = per_io(meta, samples)
        rows.setdefault(m.group(1), {})[m.group(2)] = (work, idle, meta)

    lines = ["instruction profiles, kernel %s: guest instructions per I/O "
             "(qemu icount; perf cpu-clock samples x 1e9/FREQ / requests)" % a.kernel, ""]
    report = {"kernel": a.kernel, "workloads": {}, "failed": failed}
    for wl in sorted(rows):
        got = rows[wl]
        report["workloads"][wl] = {}
        lines.append("== %s" % wl)
        lines.append("  %-34s %12s %12s %10s  %s" % (
            "pairing", "instr/IO", "iSER mods", "idle ns", "by module (instr/IO)"))
        for pair, label in PAIRS:
            if pair not in got:
                continue
            work, idle, meta = got[pair]
            mods = modules(work)
            total = sum(work.values())
            iser = sum(v for k, v in mods.items() if k in ISER_MODULES)
            top = sorted(mods.items(), key=lambda kv: -kv[1])[:6]
            report["workloads"][wl][pair] = {
                "instructions_per_io": round(total), "iser_modules": round(iser),
                "idle_ns_per_io": round(idle), "requests": meta["requests"],
                "freq": meta["freq"],
                "modules": {k: round(v) for k, v in mods.items()},
                "functions": {"%s:%s" % k: round(v, 1) for k, v in work.items()}}
            lines.append("  %-34s %12.0f %12.0f %10.0f  %s" % (
                label[:34], total, iser, idle,
                ", ".join("%s %.0f" % kv for kv in top)))
        lines.append("")
        ref = got.get("intree")
        for pair, label in PAIRS[1:]:
            if not ref or pair not in got:
                continue
            mod = {}
            rw, cw = by_symbol(ref[0], mod), by_symbol(got[pair][0], mod)
            keys = set(rw) | set(cw)
            diff = sorted(((cw.get(k, 0.0) - rw.get(k, 0.0), k) for k in keys),
                          key=lambda x: -abs(x[0]))
            tot = sum(cw.values()) - sum(rw.values())
            lines.append("  %s minus in-tree: %+.0f instructions per I/O (%+.1f%%); "
                         "the %d largest differences:" % (
                             label, tot, 100 * tot / sum(rw.values()), TOP))
            for d, sym in diff[:TOP]:
                lines.append("    %+10.0f  %10.0f -> %10.0f  %s [%s]" % (
                    d, rw.get(sym, 0.0), cw.get(sym, 0.0), sym, mod[sym]))
            report["workloads"][wl]["diff_" + pair] = [
                {"module": mod[sym], "symbol": sym, "delta": round(d, 1)}
                for d, sym in diff[:100]]
            lines.append("")
    if not rows:
        failed.append("no profile rows in %s" % a.logdir)
    if failed:
        lines.append("FAILED rows: " + "; ".join(failed))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(a.out + ".txt", "w") as f:
        f.write(text)
    with open(a.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
