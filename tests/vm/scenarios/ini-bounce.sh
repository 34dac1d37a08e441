# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Misaligned buffers with ZBVA on fragmented memory. With zero-based
# addressing (on by default between our modules) the initiator copies a
# buffer that does not start on a page boundary into a bounce buffer of its
# own, allocated where it cannot sleep (GFP_ATOMIC). ib_iser's max_io_kb is
# raised to 16384 before the login, so that a command carries what
# soft-RoCE registers at most, 2044 KiB (4 * (512 - 1), see ini-mode.sh):
# one allocation of that length is a block of order 9.
# vm_memfrag_start (tests/vm/tools/memfrag) then leaves the guest's free
# memory in single pages, no free block of order 7 or more.
# Then fio with direct I/O from buffers 512 bytes past a page boundary
# (mem_align=512), verified: 4-64 KiB random, 256 KiB-2044 KiB sequential
# (random ones of varying size overwrite each other, and fio then verifies
# only part of them) and 16 MiB sequential writes (the block layer cuts them into 2044 KiB
# commands, each starting 512 bytes into a page).
# Judged: the verified I/O passes, no request took 20 s or more, and no
# allocation failure in the kernel log ("page allocation failure", whose
# stack dump the rig's kernel log check also fails).

vm_setup_node
vm_module_params ib_iser.max_io_kb=16384
dev=$(vm_login_disk) || exit 1
mskb=$(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")
vm_log "max_hw_sectors_kb of $dev: $mskb"
[ "$mskb" = 2044 ] || vm_fail "$dev transfers $mskb KiB per command, not 2044"

vm_memfrag_start

vm_fio "$dev" bounce <<-EOF
	[small-4k-64k]
	rw=randwrite
	bsrange=4k-64k
	blockalign=4k
	mem_align=512
	iodepth=16
	size=8M
	[large-256k-2044k]
	rw=write
	bsrange=256k-2044k
	mem_align=512
	iodepth=8
	size=24M
	offset=8M
	[seq-16m]
	rw=write
	bs=16M
	mem_align=512
	iodepth=2
	size=32M
	offset=32M
EOF
slow=$(/usr/bin/python3 - "$VM_SCEN_DIR/fio-bounce.json" <<-'EOF'
	import json, sys
	t = open(sys.argv[1]).read()
	d = json.loads(t[t.index("{"):])
	print(max(max(j[k]["clat_ns"]["max"] for k in ("read", "write")) for j in d["jobs"]) // 1000000)
EOF
)
cat /proc/buddyinfo
vm_memfrag_stop
vm_log "slowest request: $slow ms"
[ "${slow:-0}" -lt 20000 ] || vm_fail "a request took $slow ms"
fails=$(vm_scen_dmesg | grep -c 'page allocation failure')
[ "$fails" = 0 ] || vm_fail "$fails page allocation failure(s) in the kernel log"
vm_logout_check "$dev"
