# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: fragmented memory (tests/vm/tools/memfrag).
# Sourced by ../lib.sh, with the rest of the library.

VM_MEMFRAG_SYSCTLS="min_free_kbytes watermark_scale_factor compact_unevictable_allowed lowmem_reserve_ratio"

# vm_memfrag_start: leave the guest's free memory in single pages until
# vm_memfrag_stop: vm.min_free_kbytes 512, vm.watermark_scale_factor 1 and
# no lowmem reserve of DMA32 against Normal (the pages the allocator keeps
# back from a process stay few), the page cache dropped,
# vm.compact_unevictable_allowed 0 (compaction leaves memfrag's locked
# pages where they are); then memfrag touches pages until the DMA32 and
# Normal zones have no free block of order 7 or more (or 1 MiB free) and
# gives back its pages of odd frame number. /proc/buddyinfo must then show
# no free block of order 7 or more in those zones, else the scenario fails
# as unable to set up its condition. The values changed are saved in
# $VM_SCEN_DIR and restored by vm_memfrag_stop.
vm_memfrag_start() {
	local frag=$VM_REPO/build/vm/tools/memfrag out=$VM_SCEN_DIR/memfrag.out
	local k big try
	[ -x "$frag" ] || vm_fail "$frag is not built (make vm-tools)"
	for k in $VM_MEMFRAG_SYSCTLS; do
		cat "/proc/sys/vm/$k" >"$VM_SCEN_DIR/memfrag.$k"
	done
	echo 0 >/proc/sys/vm/compact_unevictable_allowed
	echo 1 >/proc/sys/vm/watermark_scale_factor
	echo 512 >/proc/sys/vm/min_free_kbytes
	# DMA (kept), DMA32 (none against Normal), Normal, Movable, Device
	echo 256 2147483647 32 0 0 >/proc/sys/vm/lowmem_reserve_ratio 2>/dev/null
	# a block freed by someone else after memfrag's last look can merge
	# again: up to three tries
	for try in 1 2 3; do
		vm_memfrag_kill
		sync
		echo 3 >/proc/sys/vm/drop_caches
		"$frag" 1024 7 >"$out" 2>&1 &
		echo $! >"$VM_SCEN_DIR/memfrag.pid"
		vm_wait 300 grep -q '^ready' "$out" ||
			vm_fail "memfrag did not get ready: $(cat "$out")"
		vm_log "memfrag (try $try): $(cat "$out") (KiB kept, KiB freed in single pages)"
		cat /proc/buddyinfo
		big=$(awk '$4 == "DMA32" || $4 == "Normal" { for (i = 12; i <= NF; i++) s += $i } END { print s + 0 }' /proc/buddyinfo)
		[ "$big" = 0 ] && return 0
	done
	vm_fail "could not fragment memory: $big free block(s) of order 7 or more left"
}

# vm_memfrag_stop: end memfrag and restore what vm_memfrag_start changed;
# safe when it never ran
vm_memfrag_kill() {
	local p=$VM_SCEN_DIR/memfrag.pid
	if [ -f "$p" ]; then
		kill "$(cat "$p")" 2>/dev/null
		vm_wait 30 sh -c "! kill -0 $(cat "$p") 2>/dev/null"
		rm -f "$p"
	fi
}

vm_memfrag_stop() {
	local k
	vm_memfrag_kill
	for k in $VM_MEMFRAG_SYSCTLS; do
		[ -f "$VM_SCEN_DIR/memfrag.$k" ] || continue
		cat "$VM_SCEN_DIR/memfrag.$k" >"/proc/sys/vm/$k"
		rm -f "$VM_SCEN_DIR/memfrag.$k"
	done
}
