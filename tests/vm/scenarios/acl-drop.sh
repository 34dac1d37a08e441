# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Removing the ACL of an initiator whose connection has just dropped:
# iser_ffp (tests/vm/tools/ffp/) logs in to a normal session as
# $VM_INITIATOR_IQN offering DefaultTime2Retain=T (-T), pings and exits, so
# the target sees the connection go down; then, at once, the ACL is
# removed through configfs (its mapped LUN, then the ACL: what targetcli
# does), which must complete within 40 s, and LIO must show no session.
#   acl-drop [--t2r T] [--tpg-t2r T]
#   --t2r T      the DefaultTime2Retain the tool offers (default 0, as
#                open-iscsi offers)
#   --tpg-t2r T  the TPG's DefaultTime2Retain (the negotiated value is the
#                smaller offer: 0 there is the way around the hang below)
#
# With T=0 LIO closes the session when the connection goes. With T>0 LIO
# keeps the failed session for T seconds (Time2Retain, which only ERL 2
# can use), and removing its ACL or disabling its TPG meanwhile stops that
# timer without closing the session: the removal waits for ever in
# core_tpg_del_initiator_node_acl() (LIO's own code, the same with the
# in-tree ib_isert; Documentation/target.md). The rows that show it
# (ours-target-acl-drop-t2r, intree-target-acl-drop-t2r) are not in any
# set: the guest does not recover from the hang, so run them last, alone.
t2r=0
tpg_t2r=""
while [ $# -gt 0 ]; do
	case $1 in
	--t2r) t2r=$2; shift ;;
	--tpg-t2r) tpg_t2r=$2; shift ;;
	*) vm_fail "acl-drop: bad argument $1" ;;
	esac
	shift
done

ffp=$VM_REPO/build/vm/tools/iser_ffp
[ -x "$ffp" ] || vm_fail "$ffp is not built (make vm-tools)"
vm_rxe_up
vm_load_roles
vm_target_setup
[ -z "$tpg_t2r" ] ||
	vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1 set parameter DefaultTime2Retain=$tpg_t2r"

out=$("$ffp" -m nop -T "$t2r" -n "$VM_TARGET_IQN" -i "$VM_INITIATOR_IQN" \
	"$VM_TGT_IP" "$VM_ISER_PORT" 2>&1) || vm_fail "iser_ffp did not run: $out"
vm_log "iser_ffp -m nop -T $t2r: $out"
echo "$out" | grep -q 'login=ok .*nop_in=yes' || vm_fail "the tool's session did not work: $out"

acl=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN
vm_log "LIO's ACL right after the drop: $(tr '\n' ' ' <"$acl/info")"
start=$SECONDS
(
	for l in "$acl"/lun_*/*; do
		[ -L "$l" ] && rm -f "$l"
	done
	for l in "$acl"/lun_*; do
		[ -d "$l" ] && rmdir "$l"
	done
	rmdir "$acl"
) &
rm_pid=$!
gone() { ! kill -0 "$rm_pid" 2>/dev/null; }
vm_wait 40 gone ||
	vm_fail "removing the ACL of $VM_INITIATOR_IQN did not complete in 40 s (DefaultTime2Retain $t2r): LIO waits for a session it stopped the Time2Retain timer of"
wait "$rm_pid" || vm_fail "removing the ACL failed"
vm_log "the ACL was removed in $((SECONDS - start)) s"
[ ! -d "$acl" ] || vm_fail "the ACL is still there"
