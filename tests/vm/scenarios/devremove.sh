# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Removal of the target's RDMA device under verified I/O:
#  1. "rdma link delete rxe0" (the target side) while a fio job with crc32c
#     verification writes; the delete must return (the connections go down
#     through the device-removal path) and the kernel log stay clean;
#  2. "rdma link add rxe0" again: the portal must listen again by itself
#     (no targetcli step), the initiator's session recovery reconnects
#     (replacement_timeout is high, so no I/O is failed) and the fio job
#     passes its verification;
#  3. a second verified fio job afterwards, logout;
#  4. the device removed again and the portal disabled while it waits to
#     listen again (ist_free_np() against the relisten work): no listener
#     may come back; the device added back and the portal enabled: login
#     and a verify job work, and (in teardown) every module unloads.
# Our target's log lines are required, not just shown: "portal ADDR:
# device removal, listening again when ..." (each removal), "connection
# from ADDR: ...; closing", "portal ADDR: listening again on rxe0",
# "iSER portal ADDR disabled" and "... enabled".
# The in-tree target does not listen again after a device removal, so this
# scenario has no in-tree column. In one guest the initiator reaches the
# target's address through rxe0 too, so the removal takes our initiator's
# device as well (ours-pair-devremove).

vm_setup_node
vm_node_set node.session.timeo.replacement_timeout 300
dev=$(vm_login_disk) || exit 1

devremove_cycle() { # DOWN_SECONDS: delete rxe0, wait, add it again
	local t0 t1
	sleep 4
	t0=$(date +%s)
	vm_run timeout 150 rdma link delete rxe0 || {
		echo "rdma link delete rxe0 failed or hung" >/tmp/devremove.err
		return 1
	}
	t1=$(date +%s)
	vm_log "rdma link delete rxe0 took $((t1 - t0)) s"
	sleep "$1"
	vm_run rdma link add rxe0 type rxe netdev veth0 || {
		echo "rdma link add rxe0 failed" >/tmp/devremove.err
		return 1
	}
	return 0
}

rm -f /tmp/devremove.err
devremove_cycle 6 &
cycle=$!
printf '%s\n' '[verify-across-removal]' 'rw=randwrite' 'bs=16k' 'iodepth=8' \
	'size=32M' 'rate_iops=200' | vm_fio "$dev" removal || exit 1
wait "$cycle" || vm_fail "$(cat /tmp/devremove.err 2>/dev/null)"
vm_wait 10 vm_rxe_active || vm_fail "rxe0 not ACTIVE after it was added again"

# the removal went through our target's device-removal path: the
# listener got RDMA_CM_EVENT_DEVICE_REMOVAL (rdma_event_msg(): "device
# removal") and waits for a device (drivers/target/cm.c,
# ist_np_cm_event()), the session's connection was closed
# (ist_conn_fail(): "connection from ADDR: REASON; closing"), and the
# portal listens again without an admin step (ist_relisten_work())
np=$VM_TGT_IP:$VM_ISER_PORT
vm_scen_dmesg | grep -E 'ib_isert: .*(device removal|closing|listening again)'
vm_scen_dmesg | grep -q "ib_isert: portal $np: device removal, listening again when" ||
	vm_fail "no 'portal $np: device removal' line: the listener did not see the device go"
# (the source address is the target's own: in one guest the initiator
# reaches it through rxe0 too)
vm_scen_dmesg | grep -qE "ib_isert: connection from [^ ]+: .*closing" ||
	vm_fail "no 'connection from ...: closing' line: the session's connection was not closed by the removal"
vm_scen_dmesg | grep -q "ib_isert: portal $np: listening again on rxe0" ||
	vm_fail "the iSER portal did not listen again on rxe0 after the device came back"
vm_wait 60 sh -c "iscsiadm -m session -P 1 | grep -q 'iSCSI Session State: LOGGED_IN'" ||
	vm_fail "session not logged in again: $(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | paste -sd ' ' -)"
[ "$(vm_session_count)" = 1 ] || vm_fail "expected 1 session after recovery, have $(vm_session_count)"
vm_log "session recovered: $(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | tr -s ' \t' ' ' | paste -sd ';' -)"

printf '%s\n' '[after-removal]' 'rw=randwrite' 'bsrange=4k-128k' 'blockalign=4k' 'iodepth=16' \
	'size=16M' 'offset=40M' | vm_fio "$dev" after-removal || exit 1
vm_logout_check "$dev"

# 4. portal disabled while it waits for its device
removals=$(vm_scen_dmesg | grep -c "ib_isert: portal $np: device removal")
vm_must timeout 150 rdma link delete rxe0
sleep 5	# a few relisten attempts fail meanwhile
[ "$(vm_scen_dmesg | grep -c "ib_isert: portal $np: device removal")" = $((removals + 1)) ] ||
	vm_fail "the listener did not report the second device removal"
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1/portals/$np enable_iser false"
vm_scen_dmesg | grep -q "ib_isert: iSER portal $np disabled" ||
	vm_fail "no 'iSER portal $np disabled' line after enable_iser false"
relistened=$(vm_scen_dmesg | grep -c 'ib_isert: portal .*listening again')
vm_must rdma link add rxe0 type rxe netdev veth0
vm_wait 10 vm_rxe_active || vm_fail "rxe0 not ACTIVE after it was added again"
sleep 3	# a relisten work left running would listen now
[ "$(vm_scen_dmesg | grep -c 'ib_isert: portal .*listening again')" = "$relistened" ] ||
	vm_fail "a disabled portal listened again"
enabled=$(vm_scen_dmesg | grep -c "ib_isert: iSER portal $np enabled")
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1/portals/$np enable_iser true"
vm_scen_dmesg | grep -E 'ib_isert: .*portal' | tail -n 4
[ "$(vm_scen_dmesg | grep -c "ib_isert: iSER portal $np enabled")" = $((enabled + 1)) ] ||
	vm_fail "no 'iSER portal $np enabled' line after enable_iser true"
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-disable]' 'rw=randwrite' 'bs=8k' 'iodepth=8' 'size=4M' |
	vm_fio "$dev" after-disable || exit 1
vm_logout_check "$dev"
