# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# iSER over IPv6 (RoCEv2 with IPv6 GIDs): fd77::1/64 on veth0 (target),
# fd77::2/64 on veth1 (initiator), an iSER portal [fd77::1]:3260 on the
# target; login to the IPv6 portal, the session reports that address,
# verified I/O, logout.

v6_tgt=fd77::1
v6_ini=fd77::2
vm_rxe_up
vm_must ip -6 addr add "$v6_tgt/64" dev veth0 nodad
vm_must ip -6 addr add "$v6_ini/64" dev veth1 nodad
# the RDMA devices get an IPv6 GID for the new addresses
has_gid() {
	local g
	for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$g" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}
vm_wait 20 has_gid rxe0 fd77:0000:0000:0000:0000:0000:0000:0001 ||
	vm_fail "rxe0 has no GID for $v6_tgt"
vm_wait 20 has_gid rxe1 fd77:0000:0000:0000:0000:0000:0000:0002 ||
	vm_fail "rxe1 has no GID for $v6_ini"
vm_load_roles
vm_target_setup
t=/iscsi/$VM_TARGET_IQN/tpg1
vm_tcli "$t/portals create $v6_tgt $VM_ISER_PORT" \
	"$t/portals/[$v6_tgt]:$VM_ISER_PORT enable_iser true"
[ "$(cat "/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/np/[$v6_tgt]:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
	vm_fail "target: [$v6_tgt]:$VM_ISER_PORT is not an iSER portal in configfs"
vm_iscsid_start
portal="[$v6_tgt]:$VM_ISER_PORT"
vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$portal" -I iser -o new
vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" -p "$portal" -I iser --login ||
	vm_fail "iSER login to $portal failed"
s=$(iscsiadm -m session 2>&1)
vm_log "sessions: $s"
# libiscsi prints the connection's IPv6 address uncompressed (%pI6)
v6_re="(fd77::1|fd77:0000:0000:0000:0000:0000:0000:0001)"
echo "$s" | grep -qE "^iser: \[[0-9]+\] \[$v6_re\]:$VM_ISER_PORT,1 $VM_TARGET_IQN" ||
	vm_fail "no iSER session to $portal: $s"
iscsiadm -m session -P 3 2>&1 | grep -E 'Current Portal|Persistent Portal|Iface Transport'
iscsiadm -m session -P 3 2>&1 | grep -qE "Current Portal: \[$v6_re\]:$VM_ISER_PORT" ||
	vm_fail "the session's connection does not report $portal as its address"
dev=$(vm_disk) || exit 1
vm_check_disk "$dev"
printf '%s\n' '[v6-rand-4k-128k]' 'rw=randwrite' 'bsrange=4k-128k' 'blockalign=4k' \
	'iodepth=16' 'size=16M' | vm_fio "$dev" ipv6
vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" -p "$portal" -I iser --logout ||
	vm_fail "logout from $portal failed"
vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
