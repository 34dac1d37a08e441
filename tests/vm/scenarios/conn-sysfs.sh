# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A connection's sysfs files held open and read across its logout, as
# iscsiadm -m session and monitoring tools do at any time. Reading the
# connection's address or port takes the transport class's ep_mutex
# inside the file's active reference; removing the connection at logout
# waits for those references (kernfs drain) with the transport class's
# attribute_container_mutex held. A transport that takes a lock of its
# own under ep_mutex (bind) and holds it while the SCSI host is added
# (attribute_container_mutex) closes a cycle, which lockdep reports on the
# debug kernel once the drain finds the file open (it skips its
# annotation for files nobody has open, so the churn hit it only by
# chance: session 22, the debug kernel, 1,265 s into the login cycles).
#  1. login; open the connection's address, port and persistent_address
#     files and read them through the open descriptors;
#  2. a reader rereads them in a loop while the session logs out with the
#     descriptors still open: the logout succeeds (iscsiadm's 120 s), no
#     read hangs;
#  3. after the logout a read through a stale descriptor fails (the
#     connection is gone) instead of hanging or returning old data;
#  4. a second login serves verified I/O (then logout, unload: teardown).
# Judged also by the rig's kernel-log gate (lockdep on the debug kernel).

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new
dev=$(vm_login_disk) || exit 1

conn=
for c in /sys/class/iscsi_connection/connection*; do
	[ -e "$c/address" ] && conn=$c
done
[ -n "$conn" ] || vm_fail "no iSCSI connection in /sys/class/iscsi_connection"
vm_log "connection $conn: address $(cat "$conn/address") port $(cat "$conn/port")"

# 1. descriptors held open across the logout
exec 7<"$conn/address" 8<"$conn/port" 9<"$conn/persistent_address" ||
	vm_fail "cannot open the sysfs files of $conn"
read -r addr <&7 || vm_fail "reading $conn/address through its descriptor failed"
read -r port <&8 || vm_fail "reading $conn/port through its descriptor failed"
read -r paddr <&9 || vm_fail "reading $conn/persistent_address failed"
[ "$addr" = "$VM_TGT_IP" ] || vm_fail "$conn/address reads '$addr', the portal is $VM_TGT_IP"
[ "$port" = "$VM_LOGIN_PORT" ] || vm_fail "$conn/port reads '$port', the portal's is $VM_LOGIN_PORT"
vm_log "read through open descriptors: address $addr port $port persistent_address $paddr"

# 2. a reader in a loop during the logout (each read opens the files anew)
rm -f /tmp/conn-sysfs.stop
(
	n=0
	while [ ! -e /tmp/conn-sysfs.stop ]; do
		cat "$conn/address" "$conn/port" "$conn/persistent_address" \
			>/dev/null 2>&1
		n=$((n + 1))
	done
	echo "$n" >/tmp/conn-sysfs.reads
) &
reader=$!
sleep 1
vm_logout || vm_fail "logout with the connection's sysfs files open failed"
touch /tmp/conn-sysfs.stop
vm_wait 20 sh -c "! kill -0 $reader 2>/dev/null" ||
	vm_fail "a reader of $conn's sysfs files hangs after the logout"
wait "$reader"
vm_log "the reader read the files $(cat /tmp/conn-sysfs.reads) times during the logout"
vm_wait 20 sh -c "[ ! -e '$conn' ]" || vm_fail "$conn is still there after the logout"

# 3. a stale descriptor: an error, not a hang and not the old address
# (the child shell inherits descriptor 7; $x is its variable)
# shellcheck disable=SC2016
if out=$(timeout 10 sh -c 'read -r x <&7 && echo "$x"' 2>&1); then
	[ -z "$out" ] || vm_fail "$conn/address still reads '$out' through a descriptor opened before the logout"
else
	[ $? != 124 ] || vm_fail "a read through a stale descriptor of $conn/address hangs"
fi
exec 7<&- 8<&- 9<&-
vm_log "stale descriptors: ${out:-no data} (the connection is gone)"

# 4. the initiator serves a new session
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-conn-sysfs]' 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" after-conn-sysfs || exit 1
vm_logout_check "$dev"
