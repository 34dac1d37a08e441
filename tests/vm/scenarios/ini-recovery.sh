# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Initiator connection recovery: the target drops the connection (TPG
# disabled and enabled again), open-iscsi reconnects through ep_connect,
# bind, login and start on the same session, and the data written before
# reads back; then the initiator's RDMA device is removed under a live
# session, added again, and the session recovers once more.

vm_setup_node

ini_check_data() {
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/pattern ||
		vm_fail "$1: data read back from $dev differs from what was written"
}

dev=$(vm_login_disk) || exit 1
head -c 4M /dev/urandom >/tmp/pattern
vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
ini_check_data "before recovery"

tpg="/iscsi/$VM_TARGET_IQN/tpg1"
vm_tcli "$tpg disable"
sleep 5
vm_tcli "$tpg enable"
vm_wait 90 vm_logged_in || vm_fail "session did not recover after the target dropped it"
vm_log "session recovered after the target dropped the connection"
ini_check_data "after target drop"

vm_must rdma link delete rxe1
sleep 10
vm_must rdma link add rxe1 type rxe netdev veth1
vm_wait 120 vm_logged_in || vm_fail "session did not recover after device removal"
vm_log "session recovered after device removal"
ini_check_data "after device removal"

vm_logout_check "$dev"
