#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tests/vm/profile-report.py on made-up profile rows: the floor
# of packets per I/O for READs, WRITEs with and without immediate data and
# a read/write mix; the device counters per I/O; the instructions per I/O
# and per module (both names perf gives the kernel); the ceiling; and that
# a failed row fails the report.
# Prints PASS/FAIL lines and "N passed, N failed" (scripts/check.sh).

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "profile-report.py")
spec = importlib.util.spec_from_file_location("profile_report", REPORT)
pr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pr)

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s%s" % (name, ": " + detail if detail else ""))


def near(a, b, eps=1e-6):
    return a is not None and abs(a - b) <= eps


def meta(rw, bs, imm=8192, mtu=1024, mix=None):
    opts = {"rw": rw, "bs": bs, "iodepth": "32"}
    if mix is not None:
        opts["rwmixread"] = str(mix)
    return {"options": opts, "immediate_limit": imm, "path_mtu": mtu,
            "requests": 1000}


# READ: command 1+1, Data-In 4 packets + ACK, response 1+1 = 9
check("floor 4k read", near(pr.floor_packets(meta("randread", "4k")), 9.0),
      str(pr.floor_packets(meta("randread", "4k"))))
# WRITE with all its data immediate: command 5 packets (76 + 4096 bytes)
# + ACK, response 1 + 1 = 8
check("floor 4k write, immediate",
      near(pr.floor_packets(meta("randwrite", "4k")), 8.0),
      str(pr.floor_packets(meta("randwrite", "4k"))))
# WRITE without immediate data: command 2, RDMA Read request 1 and four
# responses, response 2 = 9
check("floor 4k write, no immediate data",
      near(pr.floor_packets(meta("randwrite", "4k", imm=0)), 9.0),
      str(pr.floor_packets(meta("randwrite", "4k", imm=0))))
# 16 KiB, 70% reads, 8 KiB immediate: read 2 + 17 + 2 = 21; write
# command 9 + 1, RDMA Read 1 + 8, response 2 = 21
check("floor 16k 70/30 mix",
      near(pr.floor_packets(meta("randrw", "16k", mix=70)), 21.0),
      str(pr.floor_packets(meta("randrw", "16k", mix=70))))
# a path MTU of 4096: a 1 MiB READ's data is 256 packets
check("floor 1M read at MTU 4096",
      near(pr.floor_packets(meta("read", "1M", mtu=4096)), 2 + 257 + 2),
      str(pr.floor_packets(meta("read", "1M", mtu=4096))))
# with PI type 1 on 512-byte blocks a 4 KiB READ carries 4160 bytes: 5
# packets of Data-In, 2 + 6 + 2 = 10
mpi = meta("randread", "4k")
mpi["pi_interval"] = 512
check("floor 4k read with PI", near(pr.floor_packets(mpi), 10.0),
      str(pr.floor_packets(mpi)))
check("floor without the workload", pr.floor_packets({"requests": 1}) is None)
dc = pr.device_counts({"requests": 100, "rdma_counters": {
    "rxe0/sent_pkts": 900, "rxe1/sent_pkts": 100, "rxe0/rcvd_rnr_err": 3,
    "rxe0/send_rnr_err": 2, "rxe0/duplicate_request": 1,
    "rxe0/completer_retry_err": 4}})
check("device counters per I/O", dc is not None and near(dc[0], 10.0) and
      near(dc[1], 0.05) and near(dc[2], 0.05), str(dc))
check("no device counters", pr.device_counts({"requests": 1}) is None)


def write_row(d, name, iops, samples, counters, result="PASS"):
    """a row directory: FREQ 1000 and 1000 requests, so a sample stands
    for 1e9 / 1000 / 1000 = 1000 instructions per I/O"""
    p = os.path.join(d, name)
    os.makedirs(p)
    with open(os.path.join(p, "result"), "w") as f:
        f.write(result + "\n")
    m = meta("randread", "4k")
    m.update({"workload": "randread-4k-qd32", "freq": 1000, "iops": iops,
              "rdma_counters": counters})
    with open(os.path.join(p, "profile.json"), "w") as f:
        json.dump(m, f)
    with open(os.path.join(p, "perf-samples.txt"), "w") as f:
        for dso, sym, n in samples:
            f.write("    10.00%%  %d  %s  [k] %s\n" % (n, dso, sym))
    with open(os.path.join(p, "modsyms.txt"), "w") as f:
        f.write("ist_rx_pdu [ib_isert]\nisdm_rx_parse [iser_dm]\n"
                "isert_recv_done [ib_isert]\niser_task_rsp [ib_iser]\n"
                "rxe_requester [rdma_rxe]\n")
    with open(os.path.join(p, "sched.txt"), "w") as f:
        f.write("    1.5000 switch-to next_comm=fio\n"
                "    0.5000 switch-to next_comm=kworker\n"
                "    1.0000 work target_complete_ok_work\n")


with tempfile.TemporaryDirectory() as tmp:
    logs = os.path.join(tmp, "logs")
    os.makedirs(logs)
    ctr = {"rxe0/sent_pkts": 9000, "rxe0/rcvd_pkts": 9000}
    # in-tree: 100 instructions per I/O, 2 in its modules, 20 device
    write_row(logs, "prof-randread-4k-qd32-intree", 1000, [
        ("[kernel.kallsyms]", "schedule", 76),
        ("[kernel.kallsyms]", "isert_recv_done", 1),
        ("[kernel.kallsyms]", "iser_task_rsp", 1),
        ("[kernel.kallsyms]", "rxe_requester", 10),
        ("[kernel.kallsyms]", "crc32_body", 10),
        ("[kernel.kallsyms]", "native_safe_halt", 2)], ctr)
    # our target, 6.12's name for the kernel: 96 instructions per I/O, 4
    # of them in our modules; IOPS ratio 1.02
    write_row(logs, "prof-randread-4k-qd32-target", 1020, [
        ("[kernel.vmlinux]", "schedule", 70),
        ("[kernel.vmlinux]", "ist_rx_pdu", 3),
        ("[kernel.vmlinux]", "isdm_rx_parse", 1),
        ("[kernel.vmlinux]", "iser_task_rsp", 1),
        ("[kernel.vmlinux]", "rxe_requester", 11),
        ("[kernel.vmlinux]", "crc32_body", 10),
        ("[kernel.vmlinux]", "native_safe_halt", 2)], ctr)
    out = os.path.join(tmp, "out")
    r = subprocess.run([sys.executable, REPORT, "--kernel", "6.12", logs, out],
                       capture_output=True, text=True)
    check("report exits 0", r.returncode == 0, r.stderr[-300:])
    rep = json.load(open(out + ".json"))
    wl = rep["workloads"].get("randread-4k-qd32", {})
    t = wl.get("target", {})
    check("instructions per I/O", t.get("instructions_per_io") == 96000,
          str(t.get("instructions_per_io")))
    check("idle apart", t.get("idle_ns_per_io") == 2000, str(t.get("idle_ns_per_io")))
    check("modules under kernel.vmlinux", t.get("modules", {}).get("ib_isert") == 3000,
          str(t.get("modules")))
    fl = wl.get("floor", {})
    ft, fi = fl.get("target", {}), fl.get("intree", {})
    check("floor packets in the table", ft.get("floor_packets_per_io") == 9.0 and
          ft.get("packets_per_io") == 9.0, str(ft))
    check("our modules", ft.get("our_modules") == 4000, str(ft.get("our_modules")))
    check("the in-tree modules beside ours", ft.get("intree_modules") == 1000,
          str(ft.get("intree_modules")))
    check("the in-tree pair's modules", fi.get("intree_modules") == 2000,
          str(fi.get("intree_modules")))
    check("device work", ft.get("device") == 21000, str(ft.get("device")))
    check("switches per I/O", (ft.get("sched_per_io") or {}).get("switch") == 2.0,
          str(ft.get("sched_per_io")))
    # 1.02 * (96000 + 2000) / (98000 - 4000)
    want = 1.02 * 98000.0 / 94000.0
    check("ceiling", near(ft.get("ceiling"), round(want, 4), 1e-4),
          "%s, want %.4f" % (ft.get("ceiling"), want))
    check("no ceiling for the reference", fi.get("ceiling") is None)
    text = open(out + ".txt").read()
    check("text has the floor table", "floor: packets per I/O" in text)

    # our pair, and our pair with PI: its diff is taken against our pair
    write_row(logs, "prof-randread-4k-qd32-ours", 1100, [
        ("[kernel.kallsyms]", "schedule", 70),
        ("[kernel.kallsyms]", "ist_rx_pdu", 2),
        ("[kernel.kallsyms]", "rxe_requester", 10)], ctr)
    write_row(logs, "prof-randread-4k-qd32-ours_pi", 600, [
        ("[kernel.kallsyms]", "schedule", 70),
        ("[kernel.kallsyms]", "ist_rx_pdu", 2),
        ("[kernel.kallsyms]", "crc_t10dif_generic", 50),
        ("[kernel.kallsyms]", "rxe_requester", 12)], ctr)
    r = subprocess.run([sys.executable, REPORT, "--kernel", "6.1", logs, out],
                       capture_output=True, text=True)
    text = open(out + ".txt").read()
    check("PI against our pair", r.returncode == 0 and
          "our pair, T10-PI type 1 minus our pair without PI: +52000 instructions" in text,
          r.stdout[-600:])
    rep = json.load(open(out + ".json"))
    d = rep["workloads"]["randread-4k-qd32"].get("diff_ours_pi", [])
    check("PI diff: the CRC first", d and d[0]["symbol"] == "crc_t10dif_generic" and
          d[0]["delta"] == 50000.0, str(d[:2]))

    write_row(logs, "prof-randwrite-4k-qd32-ours", 1000, [], ctr, result="FAIL: boom")
    r = subprocess.run([sys.executable, REPORT, "--kernel", "6.1", logs, out],
                       capture_output=True, text=True)
    check("a failed row fails the report", r.returncode == 1 and
          "FAILED rows" in r.stdout, r.stdout[-200:])

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
