# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# An STag never outlives its command (RFC 5046 7.3.2): a target that
# answers a READ by plain Send (no Send with Invalidate; legal, and what
# every target does that declined it in the CM REP) leaves the command's
# read STag to the initiator to invalidate, and the initiator must do so
# before the command completes to SCSI. Otherwise the target can still
# RDMA-write into the pages once they are back in the page cache.
#
# tests/vm/tools/iser_tgt serves a 1 MiB LUN of zeros; its late-write case
# answers the READ of block 1000 with the data and a plain Send response,
# then, 1 s later, RDMA-writes 512 bytes of 0xa5 to the same STag. The
# scenario reads that block once, buffered (read-ahead off, 4 KiB per
# command), so it lands in the page cache, and issues no other I/O while
# the tool waits. Our initiator must have invalidated the STag: the tool
# reports the write refused (late=refused). The connection ends (the
# refused write breaks it, or the NOP-Outs the tool no longer answers time
# out), and the session recovers on the next connection.
#
# The same for a task that ends without a response (RFC 5046 8.3.2): the
# next connection is iser_tgt's abort-late case, which holds the READ of
# block 1000 (sent with sg_raw: a passthrough command, which the midlayer
# does not retry) until the SCSI timeout (5 s) makes the error handler
# send ABORT TASK; the tool answers "function complete" and, 1 s later,
# RDMA-writes to the held command's read STag. The error handler must have
# invalidated it before returning (our initiator logs "error handling:
# invalidated N MR(s)"), so the tool reports the write refused.
#
# The third connection is the abort-zbva case: the tool accepts zero-based
# virtual addressing, which our initiator offers, and the held READ's
# buffer (a passthrough READ through SG_IO into a buffer 512 bytes into a
# page) does not start on a page boundary, so our initiator reads it
# through a page-aligned bounce buffer of its own. A write while the READ
# is held must land (the addressing works); right behind the ABORT TASK's
# response the tool RDMA-writes 512 bytes to the STag, 255 writes in flight,
# until one fails: they land until the error handler's invalidation, and
# the bounce buffer must stay the initiator's until then (debugfs
# bounce_held 1 or more; a write into freed pages would show as memory
# corruption, or as a KASAN report on the debug kernel). The session
# recovers once more on a well-behaved connection, and 1 MiB reads back
# as zeros.
#
# With the in-tree ib_iser (intree-initiator-stag, in no set) the outcome
# is logged, not judged: it invalidates an MR lazily, before its next
# registration, so the write lands.

vm_rxe_up
vm_load_roles
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" late-write,abort-late,abort-zbva,good -t 1000 -w 150
# case_line CASE PID WHAT OUT: wait for iser_tgt's line of CASE, then for
# the READ (PID, the tool WHAT, its output in OUT) that the case held; log
# both, and set line to iser_tgt's line
case_line() {
	vm_wait 90 grep -q "^case=$1 " "$out" ||
		vm_fail "${verdict:+$verdict; }iser_tgt did not finish the $1 case: $(cat "$out" "$out.err")"
	wait "$2"
	vm_log "$3 ended with status $?: $(tail -n 2 "$4" | paste -sd ' ' -)"
	line=$(grep "^case=$1 " "$out")
	vm_log "iser_tgt: $line"
}
vm_iscsid_start
dev=$(vm_iser_tgt_login) || exit 1
sysd=/sys/block/${dev#/dev/}/queue
echo 4 >"$sysd/max_sectors_kb" && echo 0 >"$sysd/read_ahead_kb" ||
	vm_fail "cannot set max_sectors_kb and read_ahead_kb of $dev"
sleep 2		# the scan's commands are answered
# block 1000 is byte 512000: page 125 of the device
vm_run timeout 60 dd if="$dev" of=/dev/null bs=4096 count=1 skip=125 status=none ||
	vm_fail "the read of block 1000 failed"
vm_wait 40 grep -q '^case=late-write ' "$out" ||
	vm_fail "iser_tgt did not finish the late-write case: $(cat "$out" "$out.err")"
line=$(grep '^case=late-write ' "$out")
vm_log "iser_tgt: $line"
verdict=""
case $line in
*' late=refused'*) ;;
*' late=written'*) verdict="the target RDMA-wrote into the buffer of a READ that had completed (its STag was still valid)" ;;
*) verdict="iser_tgt did not try the late write: $line" ;;
esac

vm_wait 60 vm_logged_in ||
	vm_fail "${verdict:+$verdict; }no session after the late-write case"

# the abort-late connection: a passthrough READ of block 1000, SCSI
# timeout 5 s; it ends in an error once the task is aborted
sleep 2
vm_log "+ sg_raw -r 4096 -t 5 $dev 28 00 00 00 03 e8 00 00 08 00 (expected to fail)"
sg_raw -r 4096 -t 5 -o /dev/null "$dev" 28 00 00 00 03 e8 00 00 08 00 \
	>"$VM_SCEN_DIR/sg_raw.out" 2>&1 &
case_line abort-late $! sg_raw "$VM_SCEN_DIR/sg_raw.out"
case $line in
*' late=refused'*) ;;
*' late=written'*) verdict="${verdict:+$verdict; }the target RDMA-wrote into the buffer of an aborted READ (its STag was still valid)" ;;
*) verdict="${verdict:+$verdict; }iser_tgt did not try the late write after the abort: $line" ;;
esac
if [ "$VM_INITIATOR" = ours ]; then
	vm_scen_dmesg | grep -E 'ib_iser: error handling'
	vm_scen_dmesg | grep -q 'ib_iser: error handling: invalidated [1-9][0-9]* MR' ||
		verdict="${verdict:+$verdict; }no 'error handling: invalidated N MR(s)' line"
fi

vm_wait 60 vm_logged_in ||
	vm_fail "${verdict:+$verdict; }no session after the abort-late case"

# the abort-zbva connection: the same READ through SG_IO into a buffer
# that starts 512 bytes into a page (sg_raw's is page-aligned)
sleep 2
vm_log "+ SG_IO READ(10) of block 1000 into a buffer at page offset 512, timeout 5 s (expected to fail)"
python3 - "$dev" >"$VM_SCEN_DIR/sgio.out" 2>&1 <<'PY' &
import ctypes, fcntl, mmap, os, sys

class SgIoHdr(ctypes.Structure):
    _fields_ = [("interface_id", ctypes.c_int), ("dxfer_direction", ctypes.c_int),
                ("cmd_len", ctypes.c_ubyte), ("mx_sb_len", ctypes.c_ubyte),
                ("iovec_count", ctypes.c_ushort), ("dxfer_len", ctypes.c_uint),
                ("dxferp", ctypes.c_void_p), ("cmdp", ctypes.c_void_p),
                ("sbp", ctypes.c_void_p), ("timeout", ctypes.c_uint),
                ("flags", ctypes.c_uint), ("pack_id", ctypes.c_int),
                ("usr_ptr", ctypes.c_void_p), ("status", ctypes.c_ubyte),
                ("masked_status", ctypes.c_ubyte), ("msg_status", ctypes.c_ubyte),
                ("sb_len_wr", ctypes.c_ubyte), ("host_status", ctypes.c_ushort),
                ("driver_status", ctypes.c_ushort), ("resid", ctypes.c_int),
                ("duration", ctypes.c_uint), ("info", ctypes.c_uint)]

buf = mmap.mmap(-1, 3 * mmap.PAGESIZE)          # page-aligned
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
cdb = (ctypes.c_ubyte * 10)(0x28, 0, 0, 0, 0x03, 0xe8, 0, 0, 8, 0)
sense = (ctypes.c_ubyte * 32)()
h = SgIoHdr(interface_id=ord("S"), dxfer_direction=-3, cmd_len=10,
            mx_sb_len=32, dxfer_len=4096, dxferp=base + 512,
            cmdp=ctypes.addressof(cdb), sbp=ctypes.addressof(sense),
            timeout=5000)
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x2285, h)                       # SG_IO
print("status=0x%x host_status=0x%x driver_status=0x%x duration=%u ms"
      % (h.status, h.host_status, h.driver_status, h.duration))
sys.exit(0 if h.status == 0 and h.host_status == 0 and h.driver_status == 0 else 1)
PY
case_line abort-zbva $! SG_IO "$VM_SCEN_DIR/sgio.out"
case $line in
*' pre=landed '*) ;;
*) verdict="${verdict:+$verdict; }the write to the held READ's buffer did not land (the tool's ZBVA addressing?): $line" ;;
esac
case $line in
*' late=refused'*) ;;
*' late=written'*) verdict="${verdict:+$verdict; }the target could RDMA-write into the buffer of an aborted READ for 5 s (its STag was still valid)" ;;
*) verdict="${verdict:+$verdict; }iser_tgt did not try the writes after the abort: $line" ;;
esac
if [ "$VM_INITIATOR" = ours ]; then
	case $line in
	*' zbva=yes '*) ;;
	*) verdict="${verdict:+$verdict; }our initiator did not take ZBVA on the abort-zbva connection: $line" ;;
	esac
	[ "$(vm_scen_dmesg | grep -c 'ib_iser: error handling: invalidated [1-9][0-9]* MR')" -ge 2 ] ||
		verdict="${verdict:+$verdict; }no second 'error handling: invalidated N MR(s)' line"
	# the aborted READ's bounce buffer was still reachable through its
	# MR when the task ended: the initiator kept it until the
	# invalidation (before, it was freed there)
	held=$(awk '/^bounce_held:/ { print $2 }' /sys/kernel/debug/ib_iser/host*/conn 2>/dev/null)
	vm_log "initiator debugfs: bounce_held ${held:-none}"
	[ "${held:-0}" -ge 1 ] ||
		verdict="${verdict:+$verdict; }the aborted READ's bounce buffer was not kept with its MR (bounce_held ${held:-none})"
fi

vm_wait 60 vm_logged_in ||
	vm_fail "${verdict:+$verdict; }no session after the abort-zbva case"
cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) ||
	verdict="${verdict:+$verdict; }the good connection did not read back zeros"
vm_iser_tgt_logout
cat "$out"

if [ "$VM_INITIATOR" = ours ]; then
	[ -z "$verdict" ] || vm_fail "$verdict"
	vm_log "the late writes were refused"
else
	vm_log "in-tree ib_iser (not judged): ${verdict:-the late writes were refused}"
fi
vm_iscsid_stop
