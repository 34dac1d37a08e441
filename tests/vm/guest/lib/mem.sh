# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: memory and CPU readings of the scenarios that count
# what sessions cost and whether they leak. Sourced by ../lib.sh, with
# the rest of the library.

# vm_meminfo FIELD: the value of FIELD in /proc/meminfo (KiB), e.g.
# SUnreclaim, MemFree, VmallocUsed
vm_meminfo() {
	awk -v f="$1:" '$1 == f { print $2; exit }' /proc/meminfo
}

# vm_slab_shrink: every slab cache gives its empty slabs back. On a KASAN
# kernel (the debug kernel) this also empties the quarantine of freed
# objects, which count as slab in use until then and would hide or fake
# a leak; kmemleak frees its records of those objects an RCU grace
# period later, so the shrink runs twice, a second apart.
vm_slab_shrink() {
	local f n=2
	while [ "$n" -gt 0 ]; do
		n=$((n - 1))
		for f in /sys/kernel/slab/*/shrink; do
			echo 1 >"$f"
		done 2>/dev/null
		sleep 1
	done
}

# vm_debug_kernel: true on a kernel with kmemleak (the debug kernel of
# make check-debug, which has KASAN too)
vm_debug_kernel() {
	[ -e /sys/kernel/debug/kmemleak ]
}

# vm_slab_settled: the unreclaimable slab (KiB) once the page cache is
# dropped and every slab cache is shrunk (vm_slab_shrink). For
# comparisons across logouts, with no I/O running.
vm_slab_settled() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	vm_slab_shrink
	vm_meminfo SUnreclaim
}

# vm_drop_inodes: drop the unused dentries and inodes (drop_caches 2),
# and with them the sysfs (kernfs) nodes they pin: the inodes of sysfs
# directories removed since (a logout's SCSI hosts, sessions, disks),
# read before their removal, keep each of their nodes and its parents
# allocated, unreclaimable slab, until the inode cache is shrunk. Page
# cache and slab caches are left as they are.
vm_drop_inodes() {
	echo 2 >/proc/sys/vm/drop_caches
	sleep 1
}

# vm_slab_snap FILE: the bytes every slab cache holds (its objects, in
# use or not, times their size), one "cache bytes" line each
vm_slab_snap() {
	awk 'NR > 2 { print $1, $3 * $4 }' /proc/slabinfo >"$1"
}

# vm_slab_active FILE: the objects in use in every slab cache, one "cache
# count" line each (a cache's pages also hold free objects: its bytes can
# grow by fragmentation while its objects in use do not)
vm_slab_active() {
	awk 'NR > 2 { print $1, $2 }' /proc/slabinfo >"$1"
}

# vm_cpu_busy: the CPU time of every CPU not idle (user, nice, system,
# irq, softirq, steal), in ticks of /proc/stat (USER_HZ); under icount
# (ISER_VM_ICOUNT=1) a tick is 1e7 guest instructions
vm_cpu_busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}
