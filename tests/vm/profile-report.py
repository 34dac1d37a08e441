#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of tests/vm/profile.sh: instructions per I/O, per module and per
# function, for every pairing and workload of one kernel's profile rows
# (prof-WORKLOAD-PAIRING), and for each pairing a diff table against the
# in-tree pair: where ours executes more or fewer instructions per I/O.
# Our pair with T10-PI (ours_pi) is compared with our pair without it
# instead: what protection information costs, and where.
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
# Each workload's table ends with the floor: the packets per I/O that
# the exchange of RFC 5046 needs at the path MTU (a SCSI Command Send with
# its immediate data, the Data-In RDMA Write, the RDMA Read of the rest of
# a WRITE, the SCSI Response Send, one ACK per message; with PI, an 8-byte
# tuple behind each protection interval of the data) against the
# packets the RDMA devices sent (hw_counters), with their RNR NAKs and
# retries; the instructions the iSER modules themselves execute per I/O;
# the device's work (soft-RoCE, ib_core and the ICRC's CRC32); and the
# ceiling, the ratio to the in-tree pair that the pairing would reach if
# our modules executed no instruction at all and the rest stayed: the
# rows' IOPS ratio times the guest time per I/O over that time less our
# modules' instructions.
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
         ("ours", "our pair"),
         ("ours_pi", "our pair, T10-PI type 1")]
# the pairing each one's diff table is taken against, and its name there
BASE = {"ours_pi": "ours"}
BASE_NAME = {"intree": "in-tree", "ours": "our pair without PI"}
# the symbols of the idle loop: time, not instructions
IDLE = re.compile(r"(safe_halt|default_idle|cpu_idle|do_idle|acpi_idle|"
                  r"mwait_idle|poll_idle|cpuidle_enter)")
# our modules and the in-tree ones they stand beside
ISER_MODULES = ("ib_iser", "ib_isert", "iser_dm")
TOP = 25
# which modules each pairing's "ours" is: what a zero-cost stack would save
OURS = {"intree": (), "target": ("ib_isert", "iser_dm"),
        "initiator": ("ib_iser", "iser_dm"),
        "ours": ("ib_iser", "ib_isert", "iser_dm"),
        "ours_pi": ("ib_iser", "ib_isert", "iser_dm")}
# the RDMA device's own work: soft-RoCE (or siw), the verbs core, the ICRC
DEVICE_MODULES = ("rdma_rxe", "siw", "ib_core", "crc32_generic")
DEVICE_SYMBOL = re.compile(r"^crc32")
# iSER header (RFC 5046 9.2) and BHS (RFC 7143 11.2) of a control-type PDU
PDU_HDR = 28 + 48
SIZE = re.compile(r"^(\d+)([kKmM]?)$")
LINE = re.compile(r"^\s*([0-9.]+)%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$")


def load_sched(path):
    """{"switch"|"work"|"softirq": per request} from the row's sched.txt"""
    out = {"switch": 0.0, "work": 0.0, "softirq": 0.0}
    spath = os.path.join(path, "sched.txt")
    if not os.path.exists(spath):
        return None
    for line in open(spath):
        f = line.split()
        if len(f) >= 2:
            kind = "switch" if f[1] == "switch-to" else f[1]
            if kind in out:
                out[kind] += float(f[0])
    return out


def load_row(path):
    """(profile.json, {(module, symbol): samples}) of one row's directory"""
    meta = json.load(open(os.path.join(path, "profile.json")))
    meta["sched"] = load_sched(path)
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
        module = "kernel" if dso in ("[kernel.kallsyms]", "[kernel.vmlinux]") \
            else dso.strip("[]")
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


def size_of(text):
    m = SIZE.match(text)
    if not m:
        raise ValueError("block size %r" % text)
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1 << 20}[m.group(2).lower()]


def floor_packets(meta):
    """the packets per I/O that RFC 5046's exchange needs at the path MTU,
    one ACK per message; None when the row did not record its workload"""
    opts, mtu = meta.get("options"), meta.get("path_mtu", 0)
    if not opts or mtu <= 0:
        return None
    bs = size_of(opts.get("bs", "4k"))
    interval = meta.get("pi_interval", 0)
    if interval > 0:
        bs += bs // interval * 8
    rw = opts.get("rw", "read")
    if rw in ("read", "randread"):
        rd = 1.0
    elif rw in ("write", "randwrite"):
        rd = 0.0
    else:
        rd = int(opts.get("rwmixread", "50")) / 100.0

    def pk(n):
        return max(1, -(-n // mtu))
    # SCSI Command Send, SCSI Response Send, each with its ACK
    ctl = pk(PDU_HDR) + 1
    read = ctl + (pk(bs) + 1) + ctl
    imm = min(bs, meta.get("immediate_limit", 0))
    write = (pk(PDU_HDR + imm) + 1) + ctl
    if bs > imm:
        write += 1 + pk(bs - imm)  # RDMA Read Request and its responses
    return rd * read + (1 - rd) * write


def device_counts(meta):
    """(packets, RNR NAKs, retries) per I/O over every RDMA device"""
    c = meta.get("rdma_counters")
    if not c:
        return None
    n = float(meta["requests"])

    def tot(*names):
        return sum(v for k, v in c.items() if k.split("/")[-1] in names) / n
    return (tot("sent_pkts"), tot("rcvd_rnr_err", "send_rnr_err"),
            tot("duplicate_request", "out_of_seq_request", "completer_retry_err",
                "rcvd_seq_err"))


def floor_table(got, lines, out):
    """the floor lines of one workload's pairings"""
    ref = got.get("intree")
    lines.append("  floor: packets per I/O against RFC 5046's exchange; context "
                 "switches per I/O; the iSER modules' and the device's "
                 "instructions per I/O; the ceiling")
    lines.append("  %-34s %8s %8s %7s %8s %9s %9s %9s %9s %8s" % (
        "pairing", "packets", "floor", "RNR", "retries", "switches", "ours",
        "in-tree", "device", "ceiling"))
    for pair, label in PAIRS:
        if pair not in got:
            continue
        work, idle, meta = got[pair]
        mods = modules(work)
        ours = sum(mods.get(m, 0.0) for m in OURS[pair])
        # the in-tree modules in this pairing: the names ours do not take
        intree = sum(mods.get(m, 0.0) for m in ("ib_iser", "ib_isert")
                     if m not in OURS[pair])
        dev = sum(v for (m, sym), v in work.items()
                  if m in DEVICE_MODULES or DEVICE_SYMBOL.match(sym))
        fl = floor_packets(meta)
        dc = device_counts(meta)
        ceiling = None
        if ref and pair != "intree" and ref[2].get("iops"):
            # the IOPS ratio under perf, scaled by the guest time per I/O
            # that would be left without our modules' instructions
            t = sum(work.values()) + idle
            ceiling = meta["iops"] / ref[2]["iops"] * t / (t - ours)
        row = {"packets_per_io": dc and round(dc[0], 3),
               "floor_packets_per_io": fl and round(fl, 3),
               "rnr_per_io": dc and round(dc[1], 4),
               "retries_per_io": dc and round(dc[2], 4),
               "our_modules": round(ours), "intree_modules": round(intree),
               "device": round(dev), "ceiling": ceiling and round(ceiling, 4),
               "sched_per_io": meta["sched"]}
        out[pair] = row
        sw = meta["sched"]
        lines.append("  %-34s %8s %8s %7s %8s %9s %9.0f %9.0f %9.0f %8s" % (
            label[:34], "%.2f" % dc[0] if dc else "-",
            "%.2f" % fl if fl is not None else "-",
            "%.3f" % dc[1] if dc else "-", "%.3f" % dc[2] if dc else "-",
            "%.2f" % sw["switch"] if sw else "-",
            ours, intree, dev, "%.4f" % ceiling if ceiling else "-"))
    lines.append("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("logdir")
    ap.add_argument("out")
    a = ap.parse_args()

    pat = re.compile(r"^prof-(.+?)-(intree|target|initiator|ours|ours_pi)$")
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
        floor = {}
        floor_table(got, lines, floor)
        report["workloads"][wl]["floor"] = floor
        for pair, label in PAIRS[1:]:
            base = BASE.get(pair, "intree")
            ref = got.get(base)
            if not ref or pair not in got:
                continue
            mod = {}
            rw, cw = by_symbol(ref[0], mod), by_symbol(got[pair][0], mod)
            keys = set(rw) | set(cw)
            diff = sorted(((cw.get(k, 0.0) - rw.get(k, 0.0), k) for k in keys),
                          key=lambda x: -abs(x[0]))
            tot = sum(cw.values()) - sum(rw.values())
            lines.append("  %s minus %s: %+.0f instructions per I/O (%+.1f%%); "
                         "the %d largest differences:" % (
                             label, BASE_NAME[base], tot,
                             100 * tot / sum(rw.values()), TOP))
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
