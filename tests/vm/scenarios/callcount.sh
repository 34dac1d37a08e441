# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# How many times each kernel function of the I/O path runs per request
# (rows callcount-*: not a test, a tool for the performance work; see
# Documentation/performance.md, "Call counts"):
#   callcount WORKLOAD [IOS [MODULE.PARAM=VALUE...]]
# Sets up the pairing as profile.sh does (with the module parameters
# given), then runs IOS requests (default 4000) of WORKLOAD (one of bench.sh's) with ftrace's function tracer on
# every function of the iSER, iSCSI, LIO, RDMA core and soft-RoCE modules
# and on the core kernel's allocators, DMA mapping, work queue and wake-up
# calls. The counts, divided by the requests the disk completed
# (/sys/block/<disk>/stat), do not depend on how fast the host runs, so
# two targets can be compared step by step on a busy machine, where
# perf's sampling cannot tell 7% apart. In $VM_SCEN_DIR: callcount.txt
# (every traced function, calls per request), callcount-caller.txt (the
# same per function and caller) and callcount-mod.txt (per module). The
# ring buffer must not overflow: a run that lost events fails rather than
# report short counts.

workload=${1:-}
ios=${2:-4000}
shift $(($# < 2 ? $# : 2))
case $ios in
'' | *[!0-9]* | 0) vm_fail "callcount.sh: IOS must be a positive number, not '$ios'" ;;
esac
opts=$(vm_bench_workload "$workload") ||
	vm_fail "callcount.sh: unknown workload '$workload'"

vm_bench_disk
dev=$VM_BENCH_DEV
vm_module_params "$@"

tr=/sys/kernel/tracing
[ -e $tr/available_tracers ] || mount -t tracefs tracefs $tr 2>/dev/null
[ -e $tr/available_tracers ] || tr=/sys/kernel/debug/tracing
grep -qw function $tr/available_tracers 2>/dev/null ||
	vm_fail "callcount.sh: no function tracer in this kernel"
echo 0 >$tr/tracing_on
echo nop >$tr/current_tracer
echo >$tr/trace
: >$tr/set_ftrace_filter
mods=
for m in ib_isert iser_dm ib_iser iscsi_target_mod target_core_mod \
	target_core_iblock libiscsi scsi_transport_iscsi rdma_rxe ib_core \
	rdma_cm ib_cm; do
	grep -q "^$m " /proc/modules || continue
	echo ":mod:$m" >>$tr/set_ftrace_filter 2>/dev/null && mods+=" $m"
done
# core kernel calls whose count says what a request costs; the names
# differ between 6.1 and 6.12, so each one that is not there is skipped
for f in kmem_cache_alloc kmem_cache_alloc_lru kmem_cache_alloc_noprof \
	__kmalloc __kmalloc_noprof kmalloc_trace __kmalloc_cache_noprof \
	__kmalloc_node kvmalloc_node kfree kvfree kmem_cache_free \
	mempool_alloc mempool_free __alloc_pages __free_pages \
	sgl_alloc_order sgl_free_order sg_alloc_table_chained __sg_alloc_table \
	scsi_alloc_sgtables \
	dma_map_sg_attrs dma_unmap_sg_attrs dma_map_page_attrs \
	dma_unmap_page_attrs queue_work_on try_to_wake_up complete \
	__wake_up raise_softirq __raise_softirq_irqoff tasklet_action \
	_raw_spin_lock_irqsave _raw_spin_lock_bh _raw_spin_lock \
	mutex_lock percpu_ref_get_many blk_mq_complete_request; do
	echo "$f" >>$tr/set_ftrace_filter 2>/dev/null
done
nf=$(grep -vc '^#' $tr/set_ftrace_filter)
[ "$nf" -gt 0 ] || vm_fail "callcount.sh: no function could be selected"
echo 196608 >$tr/buffer_size_kb ||
	vm_fail "callcount.sh: cannot size the trace buffer"
echo function >$tr/current_tracer
vm_log "tracing $nf functions (modules:$mods and core kernel calls)"

args=()
for o in $opts; do
	args+=("--$o")
done
r0=$(vm_disk_requests "$dev")
echo 1 >$tr/tracing_on
fio --name="$workload" --filename="$dev" --direct=1 --ioengine=libaio \
	--number_ios="$ios" --size=64M "${args[@]}" \
	--output="$VM_SCEN_DIR/fio.txt" >/dev/null 2>&1
rc=$?
echo 0 >$tr/tracing_on
r1=$(vm_disk_requests "$dev")
[ "$rc" = 0 ] || vm_fail "fio failed: $(tail -n 3 "$VM_SCEN_DIR/fio.txt" | paste -sd ' ' -)"
n=$((r1 - r0))
[ "$n" -gt 0 ] || vm_fail "the disk completed no request"
lost=$(cat $tr/per_cpu/cpu*/stats | awk '/^(overrun|dropped events):/ { s += $NF } END { print s + 0 }')
[ "$lost" = 0 ] ||
	vm_fail "the trace buffer lost $lost events: fewer requests (IOS) or a larger buffer"
vm_log "$workload: $n requests traced"

# every line of the trace is "task-pid [cpu] flags time: function <-caller";
# one pass counts each function, and each function per caller (who
# allocates, who wakes whom)
awk -v n="$n" -v byfn="$VM_SCEN_DIR/callcount.unsorted" \
	-v bycaller="$VM_SCEN_DIR/callcount-caller.unsorted" '
	/^#/ { next }
	{ for (i = 1; i < NF; i++) if ($i ~ /:$/ && $(i + 1) !~ /^</) {
		f[$(i + 1)]++
		if ($(i + 2) ~ /^</) c[$(i + 1) " " substr($(i + 2), 3)]++
		break } }
	END {
		for (k in f) printf "%10.3f %s\n", f[k] / n, k >byfn
		for (k in c) printf "%10.3f %s\n", c[k] / n, k >bycaller
	}' $tr/trace
for o in callcount callcount-caller; do
	sort -k1,1 -nr "$VM_SCEN_DIR/$o.unsorted" >"$VM_SCEN_DIR/$o.txt" &&
		rm -f "$VM_SCEN_DIR/$o.unsorted"
done
echo nop >$tr/current_tracer
: >$tr/set_ftrace_filter
echo 1408 >$tr/buffer_size_kb
[ -s "$VM_SCEN_DIR/callcount.txt" ] || vm_fail "the trace held no call"

# per module: a symbol's module from /proc/kallsyms ("[mod]"), else vmlinux
awk 'NR == FNR { if (NF >= 4) m[$3] = $4; else if (!($3 in m)) m[$3] = "[vmlinux]"; next }
	{ k = ($2 in m) ? m[$2] : "[?]"; s[k] += $1 }
	END { for (k in s) printf "%10.3f %s\n", s[k], k }' \
	/proc/kallsyms "$VM_SCEN_DIR/callcount.txt" |
	sort -k1,1 -nr >"$VM_SCEN_DIR/callcount-mod.txt"
vm_log "calls per request by module: $(awk '{ printf "%s %s; ", $2, $1 }' "$VM_SCEN_DIR/callcount-mod.txt")"
vm_log "most called per request:"
head -n 60 "$VM_SCEN_DIR/callcount.txt"
vm_logout_check "$dev"
