# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Initiator behaviour when the path goes away under I/O.
#   --link SECONDS    the initiator's link (veth1) goes down and all
#                     traffic is dropped for SECONDS in
#                     the middle of a crc32c-verified fio job: the
#                     connection fails (NOP-Out timeout, 5 s + 5 s), the
#                     initiator reconnects once the link is back, within
#                     the replacement timeout (60 s): a second connection
#                     in debugfs; the fio job passes its verification.
#                     (see below why the traffic must be dropped as well)
#   --portal SECONDS  the target's TPG is disabled for SECONDS, longer than
#                     the replacement timeout (10 s): I/O fails with errors
#                     within the timeout plus slack instead of hanging;
#                     after the TPG is enabled again the session comes
#                     back on a new connection, and a new login moves
#                     verified data
# Both need our initiator (its debugfs counts the connections).

mode=${1:-}
secs=${2:-}
case $mode in
--link | --portal) [ -n "$secs" ] || vm_fail "ini-outage.sh: $mode needs SECONDS" ;;
*) vm_fail "ini-outage.sh: --link SECONDS or --portal SECONDS" ;;
esac
tpg=/iscsi/$VM_TARGET_IQN/tpg1
vm_rxe_up
vm_load_roles
vm_target_setup
vm_iscsid_start
vm_node_new
vm_node_set node.conn[0].timeo.noop_out_interval 5
vm_node_set node.conn[0].timeo.noop_out_timeout 5

# connections the session's host has started (debugfs of our initiator)
conns_started() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	awk '/^connections_started:/ { print $2 }' /sys/kernel/debug/ib_iser/host*/conn 2>/dev/null
}

logged_in() {
	iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Session State: LOGGED_IN' &&
		iscsiadm -m session -P 1 2>/dev/null | grep -q 'iSCSI Connection State: LOGGED IN'
}

if [ "$mode" = --link ]; then
	vm_node_set node.session.timeo.replacement_timeout 60
	dev=$(vm_login_disk) || exit 1
	# Both veth ends are in this one network namespace, so the RoCE (UDP)
	# packets between 192.168.77.2 and .1 travel over lo, not veth:
	# "ip link set veth1 down" alone only makes rxe1 report its port down
	# and does not stop the traffic (I/O went on unhindered).  netem drops
	# everything on lo for the same time, as a real link loss would.
	(
		sleep 4
		vm_log "veth1 down and RoCE traffic dropped for $secs s"
		ip link set veth1 down
		tc qdisc add dev lo root netem loss 100%
		sleep "$secs"
		tc qdisc del dev lo root
		ip link set veth1 up
		vm_log "veth1 up, traffic flows again"
	) &
	flap=$!
	start=$(date +%s)
	printf '%s\n' '[verify-across-link-flap]' 'rw=randwrite' 'bs=16k' \
		'iodepth=8' 'size=24M' 'rate_iops=200' | vm_fio "$dev" link
	wait "$flap"
	vm_log "fio verify passed across the link flap ($(($(date +%s) - start)) s)"
	vm_wait 60 logged_in || vm_fail "session not logged in after the link came back"
	dmesg | grep -E 'ib_iser|connection[0-9:]* error|iscsi' | tail -n 8
	started=$(conns_started)
	vm_log "connections started on the session: $started"
	[ "${started:-0}" -ge 2 ] ||
		vm_fail "no reconnection after a $secs s link outage (connections_started ${started:-?})"
	vm_logout_check "$dev"
	return 0
fi

# --portal: outage longer than the replacement timeout
vm_node_set node.session.timeo.replacement_timeout 10
dev=$(vm_login_disk) || exit 1
head -c 1M /dev/urandom >/tmp/pattern
vm_must dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none
vm_tcli "$tpg disable"
down=$(date +%s)
vm_log "TPG disabled for $secs s"
# I/O during the outage must fail, not hang: the replacement timeout (10 s)
# fails the queued commands once the connection is found dead
start=$(date +%s)
if timeout 90 dd if=/tmp/pattern of="$dev" bs=1M oflag=direct status=none; then
	vm_fail "a write during the outage succeeded"
fi
took=$(($(date +%s) - start))
vm_log "write during the outage failed after $took s"
[ "$took" -lt 80 ] || vm_fail "a write during the outage took $took s to fail (hang?)"
if timeout 60 dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none; then
	vm_fail "a read during the outage succeeded"
fi
[ "$(vm_session_count)" = 1 ] || vm_fail "session vanished during the outage"
left=$((secs - ($(date +%s) - down)))
[ "$left" -le 0 ] || sleep "$left"
vm_tcli "$tpg enable"
vm_log "TPG enabled again"
# iscsid keeps reconnecting a session past its replacement timeout
vm_wait 90 logged_in || vm_fail "session did not come back after the outage"
started=$(conns_started)
vm_log "connections started on the session: $started"
[ "${started:-0}" -ge 2 ] ||
	vm_fail "the session came back without a new connection (connections_started ${started:-?})"
vm_logout_check ""
dev=$(vm_login_disk) || exit 1
printf '%s\n' '[after-outage]' 'rw=randwrite' 'bs=64k' 'iodepth=8' 'size=8M' |
	vm_fio "$dev" after-outage
vm_logout_check "$dev"
