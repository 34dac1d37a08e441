#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Side-by-side benchmark of our modules and the in-tree pair, in one guest
# boot per kernel and backstore.  Every round runs the bench body
# (scenarios/bench.sh) for the four pairings -- in-tree pair, our pair,
# in-tree initiator with our target, our initiator with the in-tree target
# -- and two context columns: "tcp", the same body over iscsi_tcp to LIO's
# TCP portal, and "raw", perftest's ib_write_bw/ib_read_bw between the two
# soft-RoCE devices (scenarios/bench-link.sh) -- in ABBA order: the list
# forward in odd rounds, backward in even ones.  After the rounds, two boot
# pairs of two guests measure the kernel memory of one idle session for
# each side in its own guest (scenarios/memsplit.sh: the in-tree modules,
# then ours; four logins each; without icount, whose leaping clocks two
# linked guests cannot share).  The report (tests/vm/bench-report.py)
# gives each pairing's ratio to the in-tree pair.
#
#   tests/vm/bench.sh [--kernel 6.1|6.12]... [--rounds N] [--runtime SECONDS]
#                     [--pairings intree,ours,target,initiator,tcp,nvme,raw,target_sigall,ours_pi]
#                     [--backstore iblock|ramdisk|iblock,ramdisk]
#                     [--workloads NAME,...] [--wallclock] [--memory] [--no-split]
#
# Exact mode (the default): each guest has one vCPU under qemu's icount
# (ISER_VM_ICOUNT=1, lib/host.sh), its clock one nanosecond per guest
# instruction, so a figure is the whole stack's instructions per I/O (plus
# the guest's own timer waits, reported as its idle share) and repeats to
# a small fraction of a percent whatever the host does.  So one round is
# enough, and the two backstores' boots run side by side (one per host
# core).  The in-tree pair runs first and once more last: the report
# checks itself on those two runs, which must agree to 0.5% on every line,
# or the run fails.  The report gives ratios with three decimals.
# --wallclock: the former mode, two vCPUs under multi-threaded TCG, whose
# ratios move with the host's load; context only, no claim rests on it.
#
# Defaults: exact mode, 6.1 and 6.12, both backstores (LIO's block
# backstore on a brd RAM disk, what real targets use, and LIO's ramdisk
# backstore: immediate data takes another path through the target), one
# round (wall-clock mode: 6), 3 s of guest time per workload, the four
# pairings and, with the block backstore only, the context columns "tcp"
# and "nvme": NVMe over Fabrics (nvmet-rdma, nvme-rdma) on the same link
# and brd disk (raw: ask for it; perftest's timing is wall-clock), every
# workload of guest/lib.sh's VM_BENCH_WORKLOADS.  --memory measures only
# the memory of one idle session; --no-split leaves out the two-guest
# memory rows (a run aimed at a few lines).  ours_pi (ask for it): our
# pair on a LUN with T10-PI type 1, which only the ramdisk backstore has
# here; the report gives its ratio to our pair without PI too.  Report: build/bench/<kernel>-<backstore>
# .txt, .json, .csv and .png.  See Documentation/performance.md.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kernels=()
rounds=""
runtime=3
pairings=intree,ours,target,initiator,tcp,nvme
backstores=iblock,ramdisk
workloads=""
exact=1
memory=""
split=1
need_arg() {
	[ $# -ge 2 ] && [ -n "$2" ] || { echo "bench: $1 needs a value" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | -k) need_arg "$@"; kernels+=("$2"); shift ;;
	--rounds) need_arg "$@"; rounds=$2; shift ;;
	--runtime) need_arg "$@"; runtime=$2; shift ;;
	--pairings) need_arg "$@"; pairings=$2; shift ;;
	--backstore) need_arg "$@"; backstores=$2; shift ;;
	--workloads) need_arg "$@"; workloads=$2; shift ;;
	--wallclock) exact="" ;;
	--exact) exact=1 ;;
	--memory) memory=1 ;;
	--no-split) split=0 ;;
	-h | --help) sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)
# exact mode: one round, the in-tree pair first and last (its self-check);
# wall-clock mode: rounds to take a median of
[ -n "$rounds" ] || rounds=$([ -n "$exact" ] && echo 1 || echo 6)
for k in "${kernels[@]}"; do
	case $k in
	6.1 | 6.12) ;;
	*) echo "bench: unknown kernel '$k' (6.1 or 6.12)" >&2; exit 2 ;;
	esac
done
for b in ${backstores//,/ }; do
	case $b in
	iblock | ramdisk) ;;
	*) echo "bench: unknown backstore '$b' (iblock or ramdisk)" >&2; exit 2 ;;
	esac
done
[ -n "${backstores//,/}" ] || { echo "bench: --backstore names none" >&2; exit 2; }
known=$(bash -c ". '$top/tests/vm/guest/lib.sh' 2>/dev/null; vm_bench_workload_names")
for w in ${workloads//,/ }; do
	echo "$known" | grep -qx -- "$w" ||
		{ echo "bench: unknown workload '$w' (one of: $(echo $known))" >&2; exit 2; }
done
case "$rounds$runtime" in
*[!0-9]*) echo "bench: --rounds and --runtime take numbers" >&2; exit 2 ;;
esac
[ "$rounds" -ge 1 ] && [ "$runtime" -ge 3 ] ||
	{ echo "bench: need --rounds >= 1 and --runtime >= 3" >&2; exit 2; }

list=$top/build/vm/bench.list
mkdir -p "$top/build/vm" "$top/build/bench"
# pairing: name initiator target; then the context columns (tcp: the
# in-tree modules are loaded for vm_target_setup's iSER portal, the I/O
# goes over iscsi_tcp; raw: no iSCSI at all)
# (and any module parameters the pairing sets in the guest)
all=("intree intree intree" "ours ours ours" "target intree ours" "initiator ours intree"
	"tcp intree intree" "nvme none none" "raw none none"
	"target_sigall intree ours ib_isert.signal_every=1"
	"ours_pi ours ours --pi=1 ib_iser.pi_enable=1")
pairs=()
for p in "${all[@]}"; do
	case ",$pairings," in *",${p%% *},"*) pairs+=("$p") ;; esac
done
case ",$pairings," in
*,intree,*) ;;
*) echo "bench: --pairings must include intree (the reference)" >&2; exit 2 ;;
esac
names=" ${all[*]%% *} "
for p in ${pairings//,/ }; do
	case $names in
	*" $p "*) ;;
	*) echo "bench: unknown pairing '$p'" >&2; exit 2 ;;
	esac
done
if [ -n "$memory" ]; then
	# no memory to measure without a session
	p2=()
	for p in "${pairs[@]}"; do
		case ${p%% *} in raw | nvme) ;; *) p2+=("$p") ;; esac
	done
	pairs=("${p2[@]}")
fi
case ",$pairings," in
*,raw,*)
	[ -z "$exact" ] || {
		echo "bench: raw needs --wallclock: perftest does not measure in an icount guest's time" >&2
		exit 2
	} ;;
esac
case " ${pairs[*]} " in
*" raw none none "*)
	if ! command -v ib_write_bw >/dev/null || ! command -v ib_read_bw >/dev/null; then
		echo "bench: ib_write_bw/ib_read_bw missing: install Debian's perftest (scripts/deps.sh)" >&2
		exit 2
	fi ;;
esac
np=${#pairs[@]}
# the watchdog of one run: set-up, login, the prefill and seven workloads
# (each with fio's and python's start, slow under TCG), verify, logout;
# generous, since another guest on the host can slow this one severalfold
timeout=$((300 + 9 * (runtime + 60)))
# the raw link run: four perftest runs of RUNTIME, each with a server and
# a client to start
link_timeout=$((120 + 4 * (runtime + 60)))
body_arg=$runtime
if [ -n "$memory" ]; then
	body_arg=memory
	timeout=300
fi
# bench_list BACKSTORE: the scenario list of one boot
bench_list() {
	local b=$1 opts="--backstore=$1${workloads:+ --workloads=$workloads}"
	# under icount the guest's second of ramp is 1e9 instructions,
	# thousands of I/Os: past fio's start, and two fewer wall-clock
	# minutes a run
	[ -z "$exact" ] || opts="$opts --ramp=1"
	echo "# generated by tests/vm/bench.sh"
	for r in $(seq "$rounds"); do
		for i in $(seq 0 $((np - 1))); do
			# ABBA: forward in odd rounds, backward in even ones
			[ $((r % 2)) = 0 ] && i=$((np - 1 - i))
			read -r p ini tgt params <<<"${pairs[$i]}"
			# the context columns run with the block backstore (the
			# disk NVMe-oF exports too) and not again with rd_mcp
			case $b:$p in
			ramdisk:tcp | ramdisk:nvme | ramdisk:raw) ;;
			# PI needs a backstore formatted with it: LIO's ramdisk
			# is, a block backstore only on a disk with an integrity
			# profile (brd has none)
			iblock:ours_pi) ;;
			*:tcp) echo "bench-r$r-$p $ini $tgt no $timeout bench $body_arg tcp $opts" ;;
			*:nvme) echo "bench-r$r-$p $ini $tgt no $timeout bench $body_arg nvme $opts" ;;
			*:raw) echo "bench-r$r-$p $ini $tgt no $link_timeout bench-link $runtime" ;;
			*) echo "bench-r$r-$p $ini $tgt no $timeout bench $body_arg iser $opts $params" ;;
			esac
		done
	done
	# exact mode: the in-tree pair once more, last, for the self-check
	# (bench-report.py: its runs must agree to 0.5%)
	[ -z "$exact" ] || [ "$body_arg" = memory ] ||
		echo "bench-r$((rounds + 1))-intree intree intree no $timeout bench $body_arg iser $opts"
}

if [ -n "$exact" ]; then
	icount=1
	mode=--exact
else
	icount=0
	mode=--wallclock
fi
# bench_boot KERNEL BACKSTORE: one boot's runs
bench_boot() {
	ISER_VM_ICOUNT=$icount ISER_VM_LOGS=$top/build/vm/bench-logs/$2 \
		ISER_VM_LIST=$list-$2 "$top/tests/vm/vm-check.sh" --kernel "$1" --all
}

rc=0
for k in "${kernels[@]}"; do
	pids=()
	for b in ${backstores//,/ }; do
		bench_list "$b" >"$list-$b"
		if [ -n "$exact" ]; then
			# a guest's figures do not depend on the host's load: the
			# backstores' boots run side by side, one per host core
			bench_boot "$k" "$b" &
			pids+=($!)
			# the first boot builds the rig's initramfs
			sleep 30
		else
			bench_boot "$k" "$b" || rc=1
		fi
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	# each side's memory in its own guest (two-guest mode), without
	# icount: two guests whose clocks each leap while idle cannot keep
	# each other's time-outs, and memory is no matter of time
	splitlogs=$top/build/vm/bench-logs/split
	if [ "$split" = 1 ]; then
		{
			echo "# generated by tests/vm/bench.sh"
			echo "bench-split-intree intree intree@peer no 600 memsplit 4"
			echo "bench-split-ours ours ours@peer no 600 memsplit 4"
		} >"$list-split"
		ISER_VM_ICOUNT=0 ISER_VM_LOGS=$splitlogs ISER_VM_LIST=$list-split \
			"$top/tests/vm/vm-check.sh" --kernel "$k" --all || rc=1
	fi
	first=1
	for b in ${backstores//,/ }; do
		sargs=()
		[ "$split" = 1 ] && [ "$first" = 1 ] && sargs=(--split-logs "$splitlogs/$k")
		/usr/bin/python3 "$top/tests/vm/bench-report.py" --kernel "$k" \
			--backstore "$b" $mode "${sargs[@]}" \
			"$top/build/vm/bench-logs/$b/$k" "$top/build/bench/$k-$b" || rc=1
		first=0
	done
done
exit $rc
