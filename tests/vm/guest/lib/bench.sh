# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: the benchmark's workloads and the disk it measures.
# Sourced by ../lib.sh, with the rest of the library.

# The benchmark's fio workloads (scenarios/bench.sh runs them all,
# scenarios/profile.sh one): name, then fio options without "--".
VM_BENCH_WORKLOADS=(
	"randread-4k-qd32 rw=randread bs=4k iodepth=32"
	"randwrite-4k-qd32 rw=randwrite bs=4k iodepth=32"
	"randread-4k-qd1 rw=randread bs=4k iodepth=1"
	"randrw70-16k-qd16 rw=randrw rwmixread=70 bs=16k iodepth=16"
	"read-512k-qd4 rw=read bs=512k iodepth=4"
	"read-1m-qd4 rw=read bs=1M iodepth=4"
	"write-1m-qd4 rw=write bs=1M iodepth=4"
)

# vm_bench_workload_names: the workloads' names, one a line (the host's
# bench.sh and profile.sh check their --workloads against it)
vm_bench_workload_names() {
	local w
	for w in "${VM_BENCH_WORKLOADS[@]}"; do
		echo "${w%% *}"
	done
}

# vm_bench_workload NAME: print the fio options of workload NAME
# (VM_BENCH_WORKLOADS); status 1 for an unknown one.
vm_bench_workload() {
	local w
	for w in "${VM_BENCH_WORKLOADS[@]}"; do
		[ "${w%% *}" = "$1" ] && { echo "${w#* }"; return 0; }
	done
	return 1
}

# vm_disk_requests DEV: the reads and writes DEV has completed so far
# (/sys/block/<disk>/stat), to divide what a workload cost by
vm_disk_requests() {
	awk '{ print $1 + $5 }' "/sys/block/${1##*/}/stat"
}

# vm_prefill DEV: write the whole LUN once, so that reads return written
# blocks and not a sparse ramdisk (the benchmark and the tools behind it)
vm_prefill() {
	vm_must fio --name=prefill --filename="$1" --rw=write --bs=1M --iodepth=8 \
		--direct=1 --ioengine=libaio --output=/dev/null
}

# vm_bench_disk [MODULE.PARAM=VALUE...] [vm_target_setup options]: the
# pairing set up as the benchmark has it (soft-RoCE, both roles with the
# module parameters given, the ramdisk LUN, or with --iblock the brd one,
# or with --pi TYPE the ramdisk formatted with protection information),
# logged in, checked and prefilled; the disk in VM_BENCH_DEV (a variable,
# not printed: the setup must run in this shell, not in a command
# substitution). With --pi the caller checks the disk's integrity profile
# (vm_bench_pi_check).
vm_bench_disk() {
	local params=()
	while [ $# -gt 0 ]; do
		case $1 in
		?*.?*=*) params+=("$1"); shift ;;
		*) break ;;
		esac
	done
	vm_rxe_up
	vm_load_roles
	[ ${#params[@]} -eq 0 ] || vm_module_params "${params[@]}"
	vm_target_setup "$@"
	vm_iscsid_start
	vm_node_new
	VM_BENCH_DEV=$(vm_login_disk) || exit 1
	vm_check_disk "$VM_BENCH_DEV"
	vm_prefill "$VM_BENCH_DEV"
}

# vm_bench_pi_check DEV TYPE: fail unless DEV has the integrity profile of
# PI type TYPE (a PI figure measured without PI would be a wrong figure)
vm_bench_pi_check() {
	local fmt
	fmt=$(cat "/sys/block/${1#/dev/}/integrity/format" 2>/dev/null)
	[ "$fmt" = "T10-DIF-TYPE$2-CRC" ] ||
		vm_fail "$1 has the integrity profile '${fmt:-?}', not T10-DIF-TYPE$2-CRC"
	vm_log "$1: integrity profile $fmt"
}
