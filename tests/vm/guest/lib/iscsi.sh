# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: the open-iscsi initiator: iscsid, node records, login, sessions, disks.
# Sourced by ../lib.sh, with the rest of the library.

vm_iscsid_start() {
	vm_loaded scsi_transport_iscsi || vm_must modprobe scsi_transport_iscsi
	vm_must modprobe sd_mod   # no udev in the guest
	if [ -s /run/iscsid.pid ] && kill -0 "$(cat /run/iscsid.pid)" 2>/dev/null; then
		return 0
	fi
	# in the foreground, so that its log (connects, logins, reopens) lands
	# in the scenario's directory instead of a syslog the guest lacks; in
	# a session of its own, since it signals its whole process group when
	# it stops
	vm_log "+ setsid iscsid -f -d 3 >${VM_SCEN_DIR:-/tmp}/iscsid.log"
	setsid iscsid -f -d 3 >"${VM_SCEN_DIR:-/tmp}/iscsid.log" 2>&1 </dev/null &
	echo $! >/run/iscsid.pid
	vm_wait 10 grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix ||
		vm_fail "iscsid did not start: $(tail -3 "${VM_SCEN_DIR:-/tmp}/iscsid.log")"
}

vm_iscsid_stop() {
	local pid
	pid=$(cat /run/iscsid.pid 2>/dev/null)
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	vm_wait 10 sh -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null
	rm -f /run/iscsid.pid
}

# vm_discover: SendTargets over the TCP portal; prints the records.
vm_discover() {
	iscsiadm -m discovery -t sendtargets -p "$VM_TGT_IP:$VM_TCP_PORT"
}

# vm_setup_node: what most single-guest scenarios start with: rxe devices,
# the modules of both roles, the LIO target, iscsid, SendTargets discovery
# over TCP, and a node record for the iSER portal.
vm_setup_node() {
	vm_rxe_up
	vm_load_roles
	vm_target_setup
	vm_iscsid_start
	vm_discover >/dev/null 2>&1 || vm_fail "SendTargets discovery failed"
	vm_node_new
}

# vm_use_tcp: from here on, vm_node_new, vm_login and the rest log in with
# iscsi_tcp (open-iscsi's iface "default") to the TCP portal that
# vm_target_setup makes for discovery, instead of over iSER.
vm_use_tcp() {
	vm_loaded iscsi_tcp || vm_must modprobe iscsi_tcp
	VM_LOGIN_PORT=$VM_TCP_PORT
	VM_LOGIN_IFACE=default
	VM_LOGIN_TRANSPORT=tcp
	VM_LOGIN_LABEL=TCP
}

# vm_node_new: a node record for the iSER portal bound to the iser iface
# (after vm_use_tcp: the TCP portal, iface default).
vm_node_new() {
	vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_LOGIN_PORT" \
		-I "$VM_LOGIN_IFACE" -o new
}

vm_node_set() {
	vm_must iscsiadm -m node -T "$VM_TARGET_IQN" -p "$VM_TGT_IP:$VM_LOGIN_PORT" \
		-I "$VM_LOGIN_IFACE" -o update -n "$1" -v "$2"
}

# vm_login: log in over iSER (after vm_use_tcp: TCP); status of iscsiadm.
vm_login() {
	vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" \
		-p "$VM_TGT_IP:$VM_LOGIN_PORT" -I "$VM_LOGIN_IFACE" --login
}

vm_logout() {
	vm_run timeout 120 iscsiadm -m node -T "$VM_TARGET_IQN" \
		-p "$VM_TGT_IP:$VM_LOGIN_PORT" -I "$VM_LOGIN_IFACE" --logout
}

vm_session_count() {
	find /sys/class/iscsi_session/ -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# vm_logged_in: the session and its connection are both LOGGED IN
vm_logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN' &&
		iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Connection State: LOGGED IN'
}

# vm_conns_started: connections our initiator has started on the session's
# host (its debugfs file; empty with the in-tree ib_iser)
vm_conns_started() {
	awk '/^connections_started:/ { print $2 }' /sys/kernel/debug/ib_iser/host*/conn 2>/dev/null
}

vm_no_sessions() {
	[ "$(vm_session_count)" = 0 ]
}

# vm_check_iser_session: exactly one session, over iSER (after vm_use_tcp:
# over TCP), to our target.
vm_check_iser_session() {
	local s
	s=$(iscsiadm -m session 2>&1)
	vm_log "sessions: $s"
	echo "$s" | grep -q "^$VM_LOGIN_TRANSPORT: \[[0-9]*\] $VM_TGT_IP:$VM_LOGIN_PORT,1 $VM_TARGET_IQN" ||
		vm_fail "no $VM_LOGIN_LABEL session to $VM_TARGET_IQN (iscsiadm -m session: $s)"
	[ "$(vm_session_count)" = 1 ] || vm_fail "expected 1 session, have $(vm_session_count)"
}

# vm_disk: print /dev/sdX of the (only) iSCSI session's LUN, waiting for it.
# vm_disk_of IQN: /dev/NAME of the disk of the session to target IQN
# (sessions to several targets at once), or fail
vm_disk_of() {
	local sd b
	for sd in /sys/class/iscsi_session/session*; do
		[ "$(cat "$sd/targetname" 2>/dev/null)" = "$1" ] || continue
		for b in "$sd"/device/target*/*/block/*; do
			[ -e "$b" ] && echo "/dev/$(basename "$b")" && return 0
		done
	done
	return 1
}
# vm_sessions_of_conn ATTR VALUE: the sysfs directories of the iSCSI
# sessions whose connection's ATTR (persistent_port, persistent_address)
# is VALUE, one per line
vm_sessions_of_conn() {
	local sd c
	for sd in /sys/class/iscsi_session/session*; do
		for c in "$sd"/device/connection*/iscsi_connection/connection*/"$1"; do
			[ "$(cat "$c" 2>/dev/null)" = "$2" ] && echo "$sd"
		done
	done
}

# vm_sessions_of_port PORT: those whose portal has port PORT (several
# iser_tgt instances, one per port; during a new login the old session may
# still be there)
vm_sessions_of_port() {
	vm_sessions_of_conn persistent_port "$1"
}

# vm_disk_of_sessions SESSION...: the block device name (sdX) of the first
# of these sessions (sysfs directories) that has one
vm_disk_of_sessions() {
	local sd b
	for sd in "$@"; do
		for b in "$sd"/device/target*/*/block/*; do
			[ -e "$b" ] && basename "$b" && return 0
		done
	done
	return 1
}

# vm_disk_of_port PORT: the block device name (sdX) of such a session
vm_disk_of_port() {
	# shellcheck disable=SC2046 # one session directory per word
	vm_disk_of_sessions $(vm_sessions_of_port "$1")
}
vm_disk_sysfs() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && basename "$b" && return 0
	done
	return 1
}

vm_disk() {
	local d
	vm_wait 30 vm_disk_sysfs || vm_fail "no disk appeared for the iSCSI session"
	d=$(vm_disk_sysfs)
	vm_wait 10 test -b "/dev/$d" || vm_fail "/dev/$d did not appear"
	echo "/dev/$d"
}

# vm_check_disk DEV: the LUN has the size we configured and answers INQUIRY.
vm_check_disk() {
	local dev=$1 sectors inq
	sectors=$(cat "/sys/block/${dev#/dev/}/size")
	[ "$sectors" = $((64 * 2048)) ] || vm_fail "$dev has $sectors sectors, expected 64 MiB"
	inq=$(sg_inq "$dev" 2>&1) || vm_fail "sg_inq $dev failed: $inq"
	echo "$inq" | grep -q 'LIO-ORG' || vm_fail "$dev does not look like an LIO LUN: $inq"
	vm_log "disk $dev: $((sectors / 2048)) MiB, $(echo "$inq" | grep -m1 'Product identification')"
}

# vm_logout_check DEV: vm_ist_rx_check, then log out; the session and the
# disk must be gone.
vm_logout_check() {
	local dev=$1
	vm_ist_rx_check
	vm_logout || vm_fail "logout failed"
	vm_wait 15 vm_no_sessions ||
		vm_fail "session still present after logout"
	iscsiadm -m session >/dev/null 2>&1 && vm_fail "iscsiadm still lists a session after logout"
	[ -z "$dev" ] || vm_wait 15 test ! -e "/sys/block/${dev#/dev/}" ||
		vm_fail "$dev still present after logout"
	vm_log "logged out, session and $dev gone"
}

# vm_login_disk: new node, login, checks; prints the disk.
vm_login_disk() {
	local out
	out=$(vm_login 2>&1) || {
		echo "$out" >&2
		vm_fail "$VM_LOGIN_LABEL login to $VM_TARGET_IQN failed: $(echo "$out" |
			grep -m1 -E 'reported error|iscsiadm: [^CL]' | sed 's/^iscsiadm: //')"
	}
	echo "$out" >&2
	vm_check_iser_session >&2
	vm_disk
}

# vm_serves_after TAG: after a hostile peer, the target still serves a
# normal initiator: iscsid, a node record, login, a verified fio job,
# logout.
vm_serves_after() {
	local dev
	vm_iscsid_start
	vm_node_new
	dev=$(vm_login_disk) || exit 1
	printf '%s\n' "[$1]" 'rw=randwrite' 'bs=16k' 'iodepth=8' 'size=8M' |
		vm_fio "$dev" "$1" || exit 1
	vm_logout_check "$dev"
}
