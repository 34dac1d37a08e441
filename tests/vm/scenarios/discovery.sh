# SPDX-License-Identifier: GPL-2.0
#
# SendTargets discovery over the TCP portal reports the iSER portal; the
# iSER-only portal does not answer iSCSI over TCP.

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start

out=$(vm_discover 2>&1) ||
	vm_fail "SendTargets discovery on $VM_TGT_IP:$VM_TCP_PORT failed: $out"
echo "$out"
echo "$out" | grep -qx "$VM_TGT_IP:$VM_ISER_PORT,1 $VM_TARGET_IQN" ||
	vm_fail "discovery did not report the iSER portal $VM_TGT_IP:$VM_ISER_PORT"
echo "$out" | grep -qx "$VM_TGT_IP:$VM_TCP_PORT,1 $VM_TARGET_IQN" ||
	vm_fail "discovery did not report the TCP portal $VM_TGT_IP:$VM_TCP_PORT"

# discovery made node records for both portals
nodes=$(iscsiadm -m node 2>&1)
echo "$nodes"
[ "$(echo "$nodes" | grep -c "$VM_TARGET_IQN")" = 2 ] ||
	vm_fail "expected 2 node records after discovery, got: $nodes"

# once enable_iser is set the portal speaks iSER only: TCP discovery fails
if vm_run timeout 90 iscsiadm -m discovery -t sendtargets \
	-p "$VM_TGT_IP:$VM_ISER_PORT" -o nonpersistent; then
	vm_fail "TCP discovery succeeded on the iSER-only portal"
fi

# no session came out of discovery
[ "$(vm_session_count)" = 0 ] || vm_fail "discovery left a session behind"
