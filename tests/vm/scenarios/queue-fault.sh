# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A device with no QP or CQ left for a new connection: queue-fault
# Needs a kernel built with CONFIG_FAULT_INJECTION_DEBUG_FS (the debug
# kernel of make check-debug): debugfs iser_dm/fail_queues makes our
# core's queue creation (isdm_queues_create()) fail with -ENOMEM, where a
# device out of QPs or CQs makes it fail. The side that refuses is the
# one of our modules in the row; the peer is the in-tree module.
#  1. session A (tgt0) logs in; verified I/O runs on it throughout 2.;
#  2. with every queue creation failing (probability 100, times -1): a
#     login to a second target (tgt1, the same portal) fails, within
#     120 s scaled (open-iscsi's own retries of the first login
#     included), and leaves no session; our module's kernel log names the
#     refusal and its peer (our target: "rejecting <peer>: no queues
#     ...", our initiator: "connection to <portal>: setup failed at
#     route resolved  (-12)", the kernel's event name ending in a
#     space); the device holds no
#     QP more than with session A alone (rdma res), and with our target,
#     its debugfs lists no connection besides session A's;
#  3. the fault off: the login to tgt1 succeeds and writes and verifies
#     its own data; session A's I/O passed; both log out.
# The kernel log must stay clean (the runner's gates; kmemleak on the
# debug kernel: the refused connections' memory is freed).

fi_dir=/sys/kernel/debug/iser_dm/fail_queues
iqn2=${VM_TARGET_IQN%:*}:tgt1
scale=${VM_TIMEOUT_SCALE:-1}

vm_rxe_up
vm_load_roles
[ -d "$fi_dir" ] ||
	vm_fail "no $fi_dir: this kernel ($VM_REL) lacks CONFIG_FAULT_INJECTION_DEBUG_FS (the row runs in make check-debug)"
vm_target_setup
vm_target_add "$iqn2" "$VM_LUN_SIZE"
vm_iscsid_start
vm_node_new
vm_must iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser -o new
# one attempt per login: open-iscsi's 8 retries of a first login would
# only repeat the refusal
vm_must iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" -I iser \
	-o update -n node.session.initial_login_retry_max -v 1
deva=$(vm_login_disk) || exit 1

# QPs of the device, not the GSI ones
qp0=$(vm_rdma_qps)
conns0=$(vm_ist_conns)
qps_back() { [ "$(vm_rdma_qps)" = "$qp0" ]; }
conns_back() { [ "$(vm_ist_conns)" = "$conns0" ]; }
vm_log "with session A: $qp0 QPs${conns0:+, $conns0 connections of our target}"

printf '%s\n' '[a-during]' 'rw=randwrite' 'bsrange=4k-64k' 'blockalign=4k' \
	'iodepth=16' 'size=16M' 'loops=4' | vm_fio "$deva" a-during &
fioa=$!

echo 100 >"$fi_dir/probability"
echo 1 >"$fi_dir/interval"
echo -1 >"$fi_dir/times"
echo 0 >"$fi_dir/verbose"
t0=${EPOCHREALTIME/./}
rc=0
vm_run timeout $((120 * scale)) iscsiadm -m node -T "$iqn2" \
	-p "$VM_TGT_IP:$VM_ISER_PORT" -I iser --login || rc=$?
took=$(((${EPOCHREALTIME/./} - t0) / 1000))
echo 0 >"$fi_dir/probability"
echo 0 >"$fi_dir/times"
[ "$rc" != 124 ] || vm_fail "the login with no queues left did not end within $((120 * scale)) s"
[ "$rc" != 0 ] || vm_fail "the login succeeded while every queue creation failed"
! iscsiadm -m session 2>/dev/null | grep -qF "$iqn2" ||
	vm_fail "a session to $iqn2 remains after its refused login"
vm_log "the login with no queues left failed in $took ms (iscsiadm status $rc)"

if [ "$VM_TARGET" = ours ]; then
	line=$(vm_scen_dmesg | grep -m1 'ib_isert: rejecting .*: no queues')
else
	line=$(vm_scen_dmesg | grep -m1 -E "ib_iser: connection to $VM_TGT_IP:$VM_ISER_PORT: setup failed at route resolved +\(-12\)")
fi
[ -n "$line" ] || vm_fail "our $( [ "$VM_TARGET" = ours ] && echo target || echo initiator) logged no line for the connection it could not give queues"
vm_log "the refusal in the kernel log: $line"
vm_wait $((30 * scale)) qps_back ||
	vm_fail "$(vm_rdma_qps) QPs after the refused logins, $qp0 before"
[ -z "$conns0" ] || vm_wait $((30 * scale)) conns_back ||
	vm_fail "our target lists $(vm_ist_conns) connections after the refused logins, $conns0 before"

wait "$fioa" || vm_fail "verified I/O on session A failed while logins were refused: $(cat "$VM_SCEN_DIR/fio-a-during.err" 2>/dev/null)"
vm_log "verified I/O on session A passed meanwhile"

vm_run timeout $((120 * scale)) iscsiadm -m node -T "$iqn2" \
	-p "$VM_TGT_IP:$VM_ISER_PORT" -I iser --login ||
	vm_fail "the login to $iqn2 failed with the fault off"
vm_wait 30 vm_disk_of "$iqn2" || vm_fail "no disk for $iqn2"
devb=$(vm_disk_of "$iqn2")
printf '%s\n' '[b-after]' 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
	vm_fio "$devb" b-after || exit 1
vm_run timeout 120 iscsiadm -m node -T "$iqn2" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser --logout || vm_fail "logout of $iqn2 failed"
vm_logout_check "$deva"
