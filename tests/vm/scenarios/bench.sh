# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Benchmark body (tests/vm/bench.sh runs it once per pairing and round, all
# in one boot): a fixed set of fio workloads on a ramdisk LUN, each for
# RUNTIME seconds after a short ramp, without verification; then one
# verified job, so a number never comes from a data path that corrupts.
#   bench [RUNTIME|memory] [iser|tcp|nvme] [--backstore=iblock|ramdisk]
#         [--workloads=NAME,...] [--ramp=SECONDS] [--pi=TYPE]
#         [MODULE.PARAM=VALUE...]
# --backstore: the LUN (default ramdisk: LIO's rd_mcp; iblock: LIO's block
# backstore on a brd RAM disk); --workloads: a subset of the workloads;
# --ramp: fio's ramp before each measured run (default 2 s); --pi: the
# LUN formatted with T10 protection information of TYPE (the ramdisk
# backstore only; the pairing sets ib_iser.pi_enable=1).
# memory: only the memory of one idle session; tcp: log in with iscsi_tcp
# (open-iscsi's iface "default") to LIO's TCP portal instead of over iSER,
# for the report's context column (the same target, LUN and workloads);
# nvme: no iSCSI at all, NVMe over Fabrics (nvmet-rdma, nvme-rdma) on the
# same soft-RoCE link and the same brd RAM disk as --backstore=iblock, the
# other context column.
# MODULE.PARAM=VALUE: module parameters set once the modules are loaded
# (a pairing that differs from another only by a setting, such as
# target_sigall: ib_isert.signal_every=1).
# Results, one JSON object per workload, in $VM_SCEN_DIR/bench.json:
# IOPS, bandwidth, mean and 99th percentile completion latency, and the
# guest's CPU busy time over the run (from /proc/stat), so that a pairing
# that buys throughput with CPU shows it; the work each I/O cost: busy CPU
# microseconds, context switches, interrupts and soft-RoCE packets sent per
# I/O (counts that depend far less on a loaded host than the rates do);
# and in $VM_SCEN_DIR/mem.json the kernel memory of one idle session (see
# memstat below).

runtime=${1:-10}
transport=${2:-iser}
shift $(($# < 2 ? $# : 2))
backstore=ramdisk
only=""
ramp=2
pi=
while [ $# -gt 0 ]; do
	case $1 in
	--backstore=iblock | --backstore=ramdisk) backstore=${1#*=} ;;
	--ramp=[0-9]) ramp=${1#*=} ;;
	--workloads=?*) only=${1#*=} ;;
	--pi=[13]) pi=${1#*=} ;;
	--*) vm_fail "bench.sh: bad option '$1'" ;;
	*) break ;;
	esac
	shift
done
case $runtime in
memory) ;;
'' | *[!0-9]*) vm_fail "bench.sh: RUNTIME must be a number of seconds, not '$runtime'" ;;
esac
case $transport in
iser) ;;
tcp) vm_use_tcp ;;
nvme) [ "$runtime" != memory ] || vm_fail "bench.sh: no memory figure for nvme" ;;
*) vm_fail "bench.sh: the transport is iser, tcp or nvme, not '$transport'" ;;
esac

vm_rxe_up
if [ "$transport" = nvme ]; then
	dev=$(vm_nvme_disk) || exit 1
	vm_log "NVMe over RDMA: $dev"
else
	vm_load_roles
	vm_module_params "$@"
	if [ "$backstore" = iblock ]; then
		[ -z "$pi" ] || vm_fail "bench.sh: --pi needs the ramdisk backstore"
		vm_target_setup --iblock
	else
		vm_target_setup ${pi:+--pi "$pi"}
	fi
	vm_iscsid_start
	vm_node_new

	# Kernel memory one idle session costs, initiator and target together (both
	# run in this guest): free memory and unreclaimable slab after dropping the
	# caches, before the login and after it, before any I/O.  In
	# $VM_SCEN_DIR/mem.json; bench-report.py takes the median over the rounds.
	# Free memory is MemFree plus the pages waiting in the per-CPU free lists
	# (/proc/zoneinfo's "count"), which MemFree leaves out and which come and
	# go by megabytes.
	memstat() {
		local pcp
		sync
		echo 3 >/proc/sys/vm/drop_caches
		sleep 2
		pcp=$(awk '$1 == "count:" { n += $2 } END { print n * 4 }' /proc/zoneinfo)
		awk -v pcp="$pcp" '/^MemFree:/ { f = $2 } /^SUnreclaim:/ { s = $2 }
			END { print f + pcp, s }' /proc/meminfo
	}
	read -r free0 slab0 < <(memstat)
	dev=$(vm_login_disk) || exit 1
	read -r free1 slab1 < <(memstat)
	echo "{\"mem_kb\": $((free0 - free1)), \"slab_kb\": $((slab1 - slab0))}" >"$VM_SCEN_DIR/mem.json"
	vm_log "memory of one idle session: $((free0 - free1)) kB less free memory, unreclaimable slab +$((slab1 - slab0)) kB"
	if [ "$runtime" = memory ]; then
		vm_logout_check "$dev"
		return 0
	fi
	vm_check_disk "$dev"
	[ -z "$pi" ] || vm_bench_pi_check "$dev" "$pi"
fi


# cpu_ticks: "busy total" jiffies of all CPUs since boot
cpu_ticks() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i;
		print t - $5 - $6, t; exit }' /proc/stat
}

# work_counts: "context-switches interrupts soft-RoCE-packets-sent
# requests" since boot (/proc/stat's ctxt and intr, the sum of every rxe
# device's sent_pkts, and the reads and writes $dev completed: its
# /sys/block/*/stat, fields 1 and 5)
work_counts() {
	local f pkts=0 ios
	for f in /sys/class/infiniband/*/ports/1/hw_counters/sent_pkts; do
		[ -f "$f" ] && pkts=$((pkts + $(cat "$f")))
	done
	ios=$(vm_disk_requests "$dev")
	awk -v pkts="$pkts" -v ios="$ios" '/^ctxt / { c = $2 } /^intr / { i = $2 }
		END { print c, i, pkts, ios }' /proc/stat
}

# rxe_counters: "device/counter value" of every soft-RoCE hardware counter
# (retries, RNR NAKs, sequence errors: a stall shows up there)
rxe_counters() {
	local f
	for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do
		[ -f "$f" ] || continue
		echo "$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$f")")")")")/$(basename "$f") $(cat "$f")"
	done
}

# stat_sampler: every 0.2 s, "EPOCH busy total" from /proc/stat's cpu
# line (busy: all but idle and iowait), until killed; bash builtins only,
# so that sampling costs the guest next to nothing.  The idle share of a
# measured window comes from the samples around it (fio's end time and
# runtime): the time the guest sat halted, waiting for a timer or an
# interrupt, which under icount counts in its figures as well.
stat_sampler() {
	local fd u n s i w q sq st
	exec {fd}<> <(:)
	while :; do
		read -r _ u n s i w q sq st _ </proc/stat
		echo "$EPOCHREALTIME $((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"
		read -rt 0.2 -u "$fd" _
	done
}

out=$VM_SCEN_DIR/bench.json
: >"$out"
rxe_counters >/tmp/rxe.start
vm_prefill "$dev"
# one job each (numjobs=1), guest/lib/bench.sh's table
for w in "${VM_BENCH_WORKLOADS[@]}"; do
	read -r name opts <<<"$w"
	case ",${only:-$name}," in
	*",$name,"*) ;;
	*) continue ;;
	esac
	args=()
	for o in $opts; do
		args+=("--$o")
	done
	json=$VM_SCEN_DIR/bench-$name.json
	rxe_counters >/tmp/rxe.before
	read -r b0 t0 < <(cpu_ticks)
	read -r c0 i0 p0 r0 < <(work_counts)
	stat_sampler >"$VM_SCEN_DIR/stat-$name.txt" &
	spid=$!
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--time_based --ramp_time="$ramp" --runtime="$runtime" "${args[@]}" \
		--output-format=json --output="$json" >/dev/null 2>&1 ||
		vm_fail "fio $name failed: $(tail -c 300 "$json" 2>/dev/null)"
	kill "$spid"
	wait "$spid" 2>/dev/null
	read -r c1 i1 p1 r1 < <(work_counts)
	read -r b1 t1 < <(cpu_ticks)
	/usr/bin/python3 - "$json" "$name" "$((b1 - b0))" "$((t1 - t0))" \
		"$((r1 - r0))" "$((c1 - c0))" "$((i1 - i0))" "$((p1 - p0))" \
		"$VM_SCEN_DIR/stat-$name.txt" >>"$out" <<-'EOF' ||
		import json, sys
		path, name, busy, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
		reqs, ctxt, intr, pkts = (int(x) for x in sys.argv[5:9])
		text = open(path).read()
		top = json.loads(text[text.index("{"):])
		j = top["jobs"][0]
		# the idle share of the measured window: fio's report time is its
		# end, its runtime (ms) its length; the samples at or before each
		samples = []
		for line in open(sys.argv[9]):
		    f = line.split()
		    if len(f) == 3:
		        samples.append((float(f[0]) * 1000, int(f[1]), int(f[2])))
		def at(ms):
		    before = [x for x in samples if x[0] <= ms]
		    return before[-1] if before else None
		end = top["timestamp_ms"]
		s0, s1 = at(end - j["job_runtime"]), at(end)
		if s0 and s1 and s1[2] > s0[2]:
		    idle = 1 - (s1[1] - s0[1]) / (s1[2] - s0[2])
		else:
		    sys.exit("no /proc/stat samples around the measured window")
		if j["error"]:
		    sys.exit("fio job error %d" % j["error"])
		iops = j["read"]["iops"] + j["write"]["iops"]
		bw = j["read"]["bw"] + j["write"]["bw"]
		ios = j["read"]["total_ios"] + j["write"]["total_ios"]
		if ios == 0:
		    sys.exit("no I/O completed")
		def lat(d, k):
		    return d["clat_ns"].get(k, 0) if d["total_ios"] else 0
		mean = (lat(j["read"], "mean") * j["read"]["total_ios"] +
		        lat(j["write"], "mean") * j["write"]["total_ios"]) / ios
		p99 = 0
		for d in (j["read"], j["write"]):
		    if d["total_ios"]:
		        p99 = max(p99, d["clat_ns"].get("percentile", {}).get("99.000000", 0))
		# the work counters ran over fio's start, ramp, run and exit:
		# per request the disk completed meanwhile (a 1 MiB read is two
		# requests of 512 KiB, each one SCSI command)
		def per_io(x):
		    return round(x / reqs, 3) if reqs > 0 else 0
		# guest time per I/O: under icount (bench.sh's exact mode) the
		# guest's nanoseconds are its instructions, plus its idle waits
		ns_per_io = 1e9 / iops if iops else 0
		print(json.dumps({"workload": name, "iops": round(iops, 1),
		                  "ns_per_io": round(ns_per_io, 1),
		                  "idle": round(idle, 4),
		                  "bw_kib": bw, "lat_mean_us": round(mean / 1000, 1),
		                  "lat_p99_us": round(p99 / 1000, 1),
		                  "cpu_busy": round(busy / total, 4) if total else 0,
		                  # /proc/stat counts in USER_HZ (100) ticks
		                  "cpu_us_per_io": per_io(busy * 10000),
		                  "ctxt_per_io": per_io(ctxt), "intr_per_io": per_io(intr),
		                  "pkts_per_io": per_io(pkts)}))
	EOF
		vm_fail "fio $name: no usable result"
	vm_log "bench $name: $(tail -n 1 "$out")"
	rxe_counters | awk 'NR == FNR { b[$1] = $2; next }
		$2 != b[$1] && $1 !~ /(sent|rcvd)_pkts$|rdma_(sends|recvs)$/ {
			printf "%s +%d ", $1, $2 - b[$1] } END { print "" }' \
		/tmp/rxe.before - | sed 's/^/rxe counters: /'
done

# which soft-RoCE devices carried the run (none over TCP)
rxe_counters | awk 'NR == FNR { b[$1] = $2; next }
	$1 ~ /(sent|rcvd)_pkts$/ { printf "%s +%d ", $1, $2 - b[$1] } END { print "" }' \
	/tmp/rxe.start - | sed 's/^/rxe packets over all workloads: /'

vm_fio "$dev" after-bench <<-EOF
	[verify-after-bench]
	rw=randwrite
	bs=64k
	iodepth=16
	size=16M
EOF
if [ "$transport" = nvme ]; then
	vm_must nvme disconnect -n "$VM_NVME_NQN" >/dev/null
else
	vm_logout_check "$dev"
fi
