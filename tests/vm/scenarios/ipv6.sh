# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# An IPv6 iSER portal: fd77::1 on veth0 and fd77::2 on veth1 (nodad, so the
# addresses are usable at once; rxe derives RoCEv2 GIDs from them), a
# portal [fd77::1]:3260 with enable_iser true next to the IPv4 one on the
# same port, login over iSER through it, INQUIRY and size, a fio verify
# job, logout.

p6="[fd77::1]:$VM_ISER_PORT"
vm_rxe_up
vm_must ip -6 addr add fd77::1/64 dev veth0 nodad
vm_must ip -6 addr add fd77::2/64 dev veth1 nodad
has_gid() { # DEV: an IPv6 GID for fd77::/64 exists on DEV port 1
	grep -qi '^fd77:' /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null
}
vm_wait 15 has_gid rxe0 || vm_fail "rxe0 has no GID for fd77::1"
vm_wait 15 has_gid rxe1 || vm_fail "rxe1 has no GID for fd77::2"
vm_load_roles
vm_target_setup
t=/iscsi/$VM_TARGET_IQN/tpg1
vm_tcli "$t/portals create fd77::1 $VM_ISER_PORT" "$t/portals/$p6 enable_iser true"
[ "$(cat "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/np/$p6/iser" 2>/dev/null)" = 1 ] ||
	vm_fail "target: portal $p6 is not an iSER portal in configfs ($(cd "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/np" && echo ./*))"
vm_iscsid_start
vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$p6" -I iser -o new
vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" -p "$p6" -I iser --login ||
	vm_fail "iSER login through $p6 failed"
s=$(iscsiadm -m session 2>&1)
vm_log "sessions: $s"
echo "$s" | grep -qF "iser: " || vm_fail "the session is not over iSER: $s"
echo "$s" | grep -qF "$p6,1 $VM_TARGET_IQN" || vm_fail "no session through $p6: $s"
[ "$(vm_session_count)" = 1 ] || vm_fail "expected 1 session, have $(vm_session_count)"
dev=$(vm_disk) || exit 1
vm_check_disk "$dev"
vm_scen_dmesg | grep -E 'isert.*(fd77|session from)' | tail -n 2

printf '%s\n' '[ipv6-rand]' 'rw=randwrite' 'bsrange=4k-256k' 'blockalign=4k' \
	'iodepth=16' 'size=24M' '[ipv6-seq-1m]' 'rw=write' 'bs=1M' 'iodepth=4' \
	'size=16M' 'offset=32M' | vm_fio "$dev" ipv6 || exit 1

vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" -p "$p6" -I iser --logout ||
	vm_fail "logout through $p6 failed"
vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
vm_log "logged out of $p6"
