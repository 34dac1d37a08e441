# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# SendTargets discovery over the TCP portal (:3261) reports the iSER and
# the TCP portal and creates a node record for each; SendTargets over iSER
# itself (-I iser, a kernel discovery session) reports the iSER portal too
# and binds the record to the iser iface; a port without a portal is
# refused within 60 s; no session is left.
#   --extra N   N more targets with an iSER portal on the same address, so
#               that the SendTargets response (about 90 bytes per target)
#               is larger than a small receive buffer (our initiator's are
#               512 bytes; with 100 targets the response is larger than
#               8 KiB too): every target must be reported over TCP and
#               over iSER. Creating 100 targets with targetcli takes about
#               two minutes in the guest.

extra=0
[ "${1:-}" = --extra ] && extra=$2
vm_rxe_up
vm_load_roles
vm_target_setup
cmds=()
for i in $(seq "$extra"); do
	t=/iscsi/$VM_TARGET_IQN-x$i/tpg1
	cmds+=("/iscsi create $VM_TARGET_IQN-x$i"
		"$t/portals create $VM_TGT_IP $VM_ISER_PORT"
		"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true"
		"$t set attribute authentication=0")
done
[ "$extra" = 0 ] || vm_tcli "${cmds[@]}"
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
[ "$(echo "$nodes" | grep -c "$VM_TARGET_IQN\$")" = 2 ] ||
	vm_fail "expected 2 node records after discovery, got: $nodes"
[ "$(echo "$nodes" | grep -c "$VM_TARGET_IQN-x")" = "$extra" ] ||
	vm_fail "expected $extra extra node records after discovery, got: $nodes"

# discovery over iSER (the initiator runs it as a kernel session)
out=$(timeout 90 iscsiadm -m discovery -t sendtargets -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser -o nonpersistent 2>&1) ||
	vm_fail "SendTargets discovery over iSER on $VM_TGT_IP:$VM_ISER_PORT failed: $out"
echo "$out"
echo "$out" | grep -qx "$VM_TGT_IP:$VM_ISER_PORT,1 $VM_TARGET_IQN" ||
	vm_fail "discovery over iSER did not report the iSER portal"
for i in $(seq "$extra"); do
	echo "$out" | grep -qx "$VM_TGT_IP:$VM_ISER_PORT,1 $VM_TARGET_IQN-x$i" ||
		vm_fail "discovery over iSER did not report $VM_TARGET_IQN-x$i"
done
[ "$extra" = 0 ] || vm_log "SendTargets over iSER: $(echo "$out" | wc -l) records, $(printf '%s\n' "$out" | awk '{ n += length($2) + length($1) + 27 } END { print n }') bytes of Text data (approx.)"
# this scenario's window only: an iSER login of an earlier scenario in the
# same boot logged the same line
vm_scen_dmesg | grep -q 'scsi host[0-9]*: iSCSI Initiator over iSER' ||
	vm_fail "no iSER discovery session in this scenario's kernel log"

# a port without a portal: refused, and iscsiadm gives up by itself
start=$(date +%s)
if vm_run timeout 90 iscsiadm -m discovery -t sendtargets \
	-p "$VM_TGT_IP:3262" -o nonpersistent; then
	vm_fail "discovery on a port without a portal succeeded"
fi
[ $(($(date +%s) - start)) -lt 60 ] || vm_fail "refused discovery took more than 60 s"

# no session came out of discovery
[ "$(vm_session_count)" = 0 ] || vm_fail "discovery left a session behind"
