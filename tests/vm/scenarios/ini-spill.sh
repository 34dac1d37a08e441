# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Session recovery on fragmented memory with the largest receive data
# segment. The node asks for MaxRecvDataSegmentLength 262144, so the
# initiator's spill buffer (the part of a message beyond its 512-byte
# receive buffers, drivers/initiator/rx.c) takes 28 + 48 + 262144 bytes:
# as one allocation, a block of order 7. After the login and a verified
# write, vm_memfrag_start (tests/vm/tools/memfrag) leaves the guest's free
# memory in single pages, with no free block of order 7 or more; then the
# target drops the connection (its TPG disabled for 5 s through configfs,
# then enabled again).
# Judged: the session is logged in again within 60 s of the enable, with
# no "full-feature receives" error of ib_iser and no "page allocation
# failure" in the kernel log, and the data written before reads back.

vm_setup_node
vm_node_set 'node.conn[0].iscsi.MaxRecvDataSegmentLength' 262144
dev=$(vm_login_disk) || exit 1
dbg=$(grep -h rx_data_bytes /sys/kernel/debug/ib_iser/host*/conn 2>/dev/null)
vm_log "ib_iser: $dbg"
[ "$dbg" = "rx_data_bytes: 262144" ] ||
	vm_fail "the connection does not receive 262144 data bytes: '$dbg'"
head -c 4M /dev/urandom >/tmp/pattern
vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none

vm_memfrag_start
en=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/enable
echo 0 >"$en" || vm_fail "cannot disable the TPG"
vm_wait 30 sh -c '! iscsiadm -m session -P 1 2>/dev/null | grep -q "Connection State: LOGGED IN"' ||
	vm_fail "the connection did not go when the TPG was disabled"
sleep 5
echo 1 >"$en" || vm_fail "cannot enable the TPG"
t0=$SECONDS
ok=1
vm_wait 60 vm_logged_in || ok=0
vm_log "session logged in again: $ok, after $((SECONDS - t0)) s"
cat /proc/buddyinfo
vm_memfrag_stop
ffp=$(vm_scen_dmesg | grep -c 'full-feature receives')
paf=$(vm_scen_dmesg | grep -c 'page allocation failure')
vm_scen_dmesg | grep -E 'full-feature receives|page allocation failure|detected conn error' | head -n 8
[ "$ok" = 1 ] || vm_fail "the session did not recover on fragmented memory within 60 s"
[ "$ffp" = 0 ] || vm_fail "$ffp connection start(s) failed to set up their receive buffers"
[ "$paf" = 0 ] || vm_fail "$paf page allocation failure(s) in the kernel log"
cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
	vm_fail "data read back from $dev after the recovery differs from what was written"
vm_logout_check "$dev"
