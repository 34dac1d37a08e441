# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The RDMA device goes away while our initiator waits for a HelloReply
# (ib_iser hello=on). start_conn posts the Hello and then waits without the
# connection's lock, so device removal can free the QP, the CM id and the
# device's hold in that wait; nothing start_conn does afterwards may touch
# them. tests/vm/tools/iser_tgt serves the case hello-none (it never answers
# the Hello) and marks the kernel log when the Hello comes; at that mark
# "rdma link delete" removes the device both ends use.
#  - the removal returns within 20 s, with the core's "removed: released"
#    line and no "still hold(s)" line;
#  - the wait ends at once with "ADDR: the connection ended before the
#    HelloReply came", ADDR the target's address and port (read from the
#    connection while it still had its CM id), and never with the 5 s
#    timeout's line;
#  - no KASAN, WARNING, BUG or Oops line (run-job.sh; the debug kernel of
#    make check-debug catches a read of the freed CM id);
#  - ib_iser unloads.

vm_rxe_up
vm_load_roles
[ "$VM_INITIATOR" = ours ] || vm_fail "ini-hello-remove.sh: only our initiator has the hello switch"
param=/sys/module/ib_iser/parameters/hello
echo on >"$param" || vm_fail "cannot set ib_iser hello=on"

out=$VM_SCEN_DIR/iser_tgt.out
vm_iser_tgt_start "$out" hello-none -w 120
tpid=$VM_ISER_TGT_PID
vm_iscsid_start

portal=$VM_TGT_IP:$VM_ISER_TGT_PORT
node() {
	iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser "$@"
}
vm_must node -o new
vm_must node -o update -n node.session.initial_login_retry_max -v 1
# the login cannot succeed: start_conn fails once the device is gone
timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser \
	--login >"$VM_SCEN_DIR/login.out" 2>&1 &
lpid=$!

hello_came() {
	vm_scen_dmesg | grep -q 'iser_tgt: hello hello-none'
}
vm_wait 60 hello_came ||
	vm_fail "iser_tgt received no Hello ($(tail -n 3 "$out.err" | tr '\n' ' '))"

t0=$SECONDS
timeout 150 rdma link delete "$VM_DEV0" &
rpid=$!
ended() {
	vm_scen_dmesg | grep -qE 'ib_iser: .*the connection ended before the HelloReply came'
}
vm_wait 20 ended
# the tool's uverbs objects hold the device until it exits (rxe cannot
# take them away from a process)
vm_wait 10 bash -c "! kill -0 $tpid 2>/dev/null" || kill "$tpid" 2>/dev/null
wait "$rpid"
rc=$?
vm_log "rdma link delete $VM_DEV0 during the Hello wait: status $rc, $((SECONDS - t0)) s"
cat "$out"
[ $rc = 0 ] || vm_fail "rdma link delete $VM_DEV0 failed or hung (status $rc)"
[ $((SECONDS - t0)) -le 20 ] ||
	vm_fail "the device removal took $((SECONDS - t0)) s (at most 20 s)"
wait "$lpid"

klog=$(vm_scen_dmesg)
echo "$klog" | grep -q "iser_dm: $VM_DEV0 removed: released" ||
	vm_fail "no 'iser_dm: $VM_DEV0 removed: released' line"
if echo "$klog" | grep -E 'still hold|while still referenced'; then
	vm_fail "the device went away while a module still held it"
fi
line=$(echo "$klog" | grep -m1 'the connection ended before the HelloReply came')
[ -n "$line" ] || vm_fail "the Hello wait did not end with the connection's end"
vm_log "${line#*] }"
echo "$line" | grep -qF "ib_iser: $portal: the connection ended" ||
	vm_fail "the line does not name the target's address $portal"
if echo "$klog" | grep -q 'no HelloReply within'; then
	vm_fail "the Hello wait ran into its timeout after the device was gone"
fi

node -o delete >/dev/null 2>&1
vm_iscsid_stop
vm_must rmmod ib_iser
vm_log "ib_iser unloaded"
