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
# reports the write refused (before the fix it landed). The connection
# ends (the refused write breaks it, or the NOP-Outs the tool no longer
# answers time out), the session recovers on the next connection, which
# is served properly, and 1 MiB reads back as zeros.
#
# With the in-tree ib_iser (intree-initiator-stag, a reference row not in
# the default set) the outcome is logged, not judged: it invalidates an
# MR lazily, before its next registration, so the write lands.

vm_rxe_up
vm_load_roles
out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" late-write,good -t 1000 -w 120
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

vm_wait 60 sh -c "iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN'" ||
	vm_fail "${verdict:+$verdict; }no session after the late-write case"
cmp <(dd if="$dev" bs=4096 count=256 iflag=direct status=none) \
	<(head -c 1M /dev/zero) ||
	verdict="${verdict:+$verdict; }the good connection did not read back zeros"
vm_iser_tgt_logout
cat "$out"

if [ "$VM_INITIATOR" = ours ]; then
	[ -z "$verdict" ] || vm_fail "$verdict"
	vm_log "the late write was refused"
else
	vm_log "in-tree ib_iser (not judged): ${verdict:-the late write was refused}"
fi
vm_iscsid_stop
