# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# ACL and CHAP: an initiator without an ACL is refused, a wrong CHAP secret
# is refused, the right one logs in and moves verified data.  The refused
# logins are tried twice at most (initial_login_retry_max=1): with the
# default 8 retries iscsid keeps a session in login retry for 2 minutes.

user=iservm
pass=iser-vm-secret-1
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
