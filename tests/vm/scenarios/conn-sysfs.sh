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
# debug kernel once the drain finds a reader inside a file (an open
# descriptor alone does not count: hence readers in tight loops).
#   conn-sysfs [CYCLES]   (default 5)
#  1. login; open the connection's address, port and persistent_address
#     files and read them through the open descriptors;
#  2. CYCLES times: two readers reread address and port in tight loops
#     (shell builtins, no process per read) while the session logs out:
#     the logout succeeds (iscsiadm's 120 s), no reader hangs, the
#     connection's sysfs directory goes; then login again;
#  3. after the first logout a read through a descriptor opened before it
#     fails or reads nothing (the connection is gone) instead of hanging
#     or returning the old address;
#  4. the last session serves verified I/O (then logout, unload: teardown).
# Judged also by the rig's kernel-log gate (lockdep on the debug kernel).
# With the in-tree pair (intree-initiator-conn-sysfs, in no set) it is a
# reference.

cycles=${1:-5}
case $cycles in '' | *[!0-9]* | 0) vm_fail "conn-sysfs: CYCLES must be a number > 0, not '$cycles'" ;; esac

vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new

conn_dir() { # the one connection's sysfs directory
	local c
	for c in /sys/class/iscsi_connection/connection*; do
		[ -e "$c/address" ] && echo "$c" && return 0
	done
	return 1
}

# reader FILE TAG: read FILE in a loop until /tmp/conn-sysfs.stop, each read
# an open, read and close by the shell itself; the count in /tmp/TAG.reads
reader() {
	local n=0
	while [ ! -e /tmp/conn-sysfs.stop ]; do
		read -r _ <"$1" 2>/dev/null
		n=$((n + 1))
	done
	echo "$n" >"/tmp/$2.reads"
}

for ((i = 1; i <= cycles; i++)); do
	dev=$(vm_login_disk) || exit 1
	conn=$(conn_dir) || vm_fail "cycle $i: no iSCSI connection in /sys/class/iscsi_connection"
	if [ "$i" = 1 ]; then
		# 1. descriptors held open across the logout
		exec 7<"$conn/address" 8<"$conn/port" 9<"$conn/persistent_address" ||
			vm_fail "cannot open the sysfs files of $conn"
		read -r addr <&7 || vm_fail "reading $conn/address through its descriptor failed"
		read -r port <&8 || vm_fail "reading $conn/port through its descriptor failed"
		read -r paddr <&9 || vm_fail "reading $conn/persistent_address failed"
		[ "$addr" = "$VM_TGT_IP" ] ||
			vm_fail "$conn/address reads '$addr', the portal is $VM_TGT_IP"
		[ "$port" = "$VM_LOGIN_PORT" ] ||
			vm_fail "$conn/port reads '$port', the portal's is $VM_LOGIN_PORT"
		vm_log "read through open descriptors: address $addr port $port persistent_address $paddr"
	fi

	# 2. readers inside the files while the connection goes
	rm -f /tmp/conn-sysfs.stop
	reader "$conn/address" addr &
	r1=$!
	reader "$conn/port" port &
	r2=$!
	sleep 1
	vm_logout || vm_fail "cycle $i: logout with readers in $conn's sysfs files failed"
	touch /tmp/conn-sysfs.stop
	vm_wait 20 sh -c "! kill -0 $r1 2>/dev/null && ! kill -0 $r2 2>/dev/null" ||
		vm_fail "cycle $i: a reader of $conn's sysfs files hangs after the logout"
	wait "$r1" "$r2"
	vm_wait 20 sh -c "[ ! -e '$conn' ]" || vm_fail "cycle $i: $conn is still there after the logout"
	vm_log "cycle $i: $conn gone; reads during the logout: address $(cat /tmp/addr.reads), port $(cat /tmp/port.reads)"

	if [ "$i" = 1 ]; then
		# 3. a stale descriptor: an error or nothing, not a hang and
		# not the old address (the child shell inherits descriptor 7;
		# $x is its variable)
		# shellcheck disable=SC2016
		if out=$(timeout 10 sh -c 'read -r x <&7 && echo "$x"' 2>&1); then
			[ -z "$out" ] ||
				vm_fail "$conn/address still reads '$out' through a descriptor opened before the logout"
		else
			[ $? != 124 ] || vm_fail "a read through a stale descriptor of $conn/address hangs"
		fi
		exec 7<&- 8<&- 9<&-
		vm_log "stale descriptors: ${out:-no data} (the connection is gone)"
	fi
done

# 4. the initiator serves a new session
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-conn-sysfs]' 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" after-conn-sysfs || exit 1
vm_logout_check "$dev"
