# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# fio with crc32c verification over an iSER session.
#   --matrix  sequential and random, 4k..1M blocks, iodepth 1..128, writes
#             and a 50/50 read/write mix, each verified (~190 MiB); the
#             session's queue depth (32 by default) bounds what reaches
#             the target (deep.sh raises it)
#   --quick   one sequential and one random job (~40 MiB)
#   --fileio  a fileio backstore instead of the ramdisk (rd_mcp)
#   --iblock  LIO's block backstore on a brd RAM disk: 4 KiB writes with
#             immediate data reach the block layer from the target's
#             receive buffers, which a block device takes only aligned
#             (brd warns of an unaligned bio vector: the kernel-log gate)
# With our target in the guest, also: it used some WRITE's immediate data
# in place (debugfs imm_in_place above 0), every receive buffer a WRITE
# held is back after the I/O, and vm_ist_unsignaled_check (guest/lib/ist.sh): some
# SCSI Responses went out unsignaled (unsignaled_sends), ib_isert.signal_every
# refuses 0, 17, -1, x and an empty value, with 1 a verified job sends none
# unsignaled, back at 16 single WRITEs go out until a command of an
# unsignaled Send waits for a later completion (unsignaled_held); after the
# logout our target must drop the session within 30 s (its teardown
# completes those commands).

set_opts=()
mode=--matrix
for a in "$@"; do
	case $a in
	--fileio | --iblock) set_opts+=("$a") ;;
	--matrix | --quick) mode=$a ;;
	*) vm_fail "fio.sh: bad argument $a" ;;
	esac
done

vm_rxe_up
vm_load_roles
vm_target_setup "${set_opts[@]}"
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1
vm_check_disk "$dev"

if [ "$mode" = --quick ]; then
	vm_fio "$dev" quick <<-EOF
		[seq-1m-qd4]
		rw=write
		bs=1M
		iodepth=4
		size=24M
		[rand-4k-qd32]
		rw=randwrite
		bs=4k
		iodepth=32
		size=8M
		offset=32M
	EOF
else
	vm_fio "$dev" matrix <<-EOF
		[seq-1m-qd4]
		rw=write
		bs=1M
		iodepth=4
		size=48M
		[seq-128k-qd16]
		rw=write
		bs=128k
		iodepth=16
		size=32M
		[seq-4k-qd1]
		rw=write
		bs=4k
		iodepth=1
		size=2M
		[rand-4k-qd64]
		rw=randwrite
		bs=4k
		iodepth=64
		size=8M
		[rand-4k-qd1]
		rw=randwrite
		bs=4k
		iodepth=1
		size=2M
		offset=16M
		[rand-16k-qd8]
		rw=randwrite
		bs=16k
		iodepth=8
		size=16M
		offset=32M
		[rand-4k-1m-qd32]
		rw=randwrite
		bsrange=4k-1M
		blockalign=4k
		iodepth=32
		size=64M
		[mixed-4k-128k-qd128]
		rw=randrw
		rwmixread=50
		bsrange=4k-128k
		blockalign=4k
		iodepth=128
		size=16M
	EOF
fi
# our target: the 4k..64k writes carried all their data as immediate data
# (open-iscsi's ImmediateData=Yes), which it hands to LIO in place
ipl=$(vm_ist_sum imm_in_place)
[ -z "$ipl" ] || [ "$ipl" -gt 0 ] ||
	vm_fail "our target used no WRITE's immediate data in place"
vm_ist_unsignaled_check "$dev"
vm_logout_check "$dev"
# the teardown completes the commands whose unsignaled Sends had no later
# completion; LIO's close would wait for them for ever
[ -z "$ipl" ] || vm_wait 30 vm_ist_no_session ||
	vm_fail "our target still shows the session 30 s after the logout"
