# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ACL and CHAP: an initiator without an ACL is refused, a wrong CHAP secret
# is refused, the right one logs in and moves verified data.  The refused
# logins are tried twice at most (initial_login_retry_max=1): with the
# default 8 retries iscsid keeps a session in login retry for 2 minutes.
#   --mutual  then mutual CHAP: the target's ACL gets mutual credentials
#             (mutual_userid, mutual_password), the node record the
#             target's account (auth.username_in, password_in); the
#             initiator logs in and moves verified data
#   --mutual-bad  (after --mutual) last, the initiator expects another
#             target secret, refuses the target's answer and closes the
#             connection between two login PDUs: the login fails and no
#             session is left; the target must drop the half-done login,
#             or clearing LIO's configuration in teardown hangs on its ACL.
# The in-tree pair does not recover from --mutual-bad (intree-mutual-bad,
# in no set): the in-tree ib_iser hangs in iser_release_work and cannot be
# unloaded, and the in-tree ib_isert queues LIO's login work only when a
# login PDU arrives, so the half-done login is never dropped.

user=iservm
pass=iser-vm-secret-1
muser=iservm-target
mpass=iser-vm-secret-2
mutual=0
mutual_bad=0
for a in "$@"; do
	case $a in
	--mutual) mutual=1 ;;
	--mutual-bad) mutual_bad=1 ;;
	*) vm_fail "auth.sh: bad argument $a" ;;
	esac
done
vm_rxe_up
vm_load_roles
vm_target_setup --chap "$user" "$pass"
vm_iscsid_start

# an iSER iface with an initiator name the target has no ACL for
vm_must iscsiadm -m iface -I iser-stranger -o new
vm_must iscsiadm -m iface -I iser-stranger -o update -n iface.transport_name -v iser
vm_must iscsiadm -m iface -I iser-stranger -o update -n iface.initiatorname \
	-v iqn.2004-10.org.debian:iser-vm-stranger
vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser-stranger -o new
for n in auth.authmethod=CHAP auth.username=$user auth.password=$pass \
	initial_login_retry_max=1; do
	vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_ISER_PORT" \
		-I iser-stranger -o update -n "node.session.${n%%=*}" -v "${n#*=}"
done
if vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" \
	-p "$VM_TGT_IP:$VM_ISER_PORT" -I iser-stranger --login; then
	vm_fail "an initiator without an ACL logged in"
fi
vm_wait 30 vm_no_sessions ||
	vm_fail "refused login left a session behind"
vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_ISER_PORT" \
	-I iser-stranger -o delete

# our initiator name, wrong secret
vm_node_new
vm_node_set node.session.initial_login_retry_max 1
vm_node_set node.session.auth.authmethod CHAP
vm_node_set node.session.auth.username "$user"
vm_node_set node.session.auth.password wrong-secret-0
if vm_login; then
	vm_fail "login with a wrong CHAP secret succeeded"
fi
vm_wait 30 vm_no_sessions ||
	vm_fail "refused login left a session behind"

# the right secret
vm_node_set node.session.initial_login_retry_max 8
vm_node_set node.session.auth.password "$pass"
dev=$(vm_login_disk) || exit 1
vm_check_disk "$dev"
vm_fio "$dev" chap <<-EOF
	[rand-64k-qd16]
	rw=randwrite
	bs=64k
	iodepth=16
	size=16M
EOF
vm_logout_check "$dev"

[ $mutual = 1 ] || return 0

# mutual CHAP: the target proves it knows the initiator's incoming secret
vm_tcli "/iscsi/$VM_TARGET_IQN/tpg1/acls/$VM_INITIATOR_IQN set auth mutual_userid=$muser mutual_password=$mpass"
[ "$(cat "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/auth/userid_mutual")" = "$muser" ] ||
	vm_fail "target: mutual CHAP user not set in configfs"
vm_node_set node.session.auth.username_in "$muser"
vm_node_set node.session.auth.password_in "$mpass"
dev=$(vm_login_disk) || exit 1
vm_fio "$dev" mutual <<-EOF
	[rand-16k-qd8]
	rw=randwrite
	bs=16k
	iodepth=8
	size=8M
EOF
vm_logout_check "$dev"
vm_log "mutual CHAP login and verified I/O"

[ $mutual_bad = 1 ] || return 0
# the initiator expects another target secret: it refuses the target's
# answer in the last login step, after the target considered the login done
vm_node_set node.session.initial_login_retry_max 1
vm_node_set node.session.auth.password_in wrong-target-secret
if vm_login; then
	vm_fail "login succeeded although the target did not know the expected mutual secret"
fi
vm_wait 30 vm_no_sessions ||
	vm_fail "refused mutual login left a session behind"
vm_log "mutual CHAP with a wrong target secret refused"
