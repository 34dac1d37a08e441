# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Link loss under I/O, in the two-guest mode (TARGET column "X@peer"):
#   linkflap SECONDS [--drop | --down] [--ack-timeout N] [--retry-count R]
# The target guest sets up LIO on its virtio NIC's address and waits; the
# initiator guest logs in over iSER, starts a crc32c-verified fio job and,
# in the middle of it, cuts its link for SECONDS.  With the roles in two
# guests the RoCE packets cross the qemu link, so the outage really cuts
# the connection: the initiator's NOP-Out times out (interval and timeout
# 5 s), the connection fails ("detected conn error" in the initiator's
# kernel log), and after the link is back the session logs in again on a
# new connection within the replacement timeout (60 s), so the queued
# commands are retried and fio's verification must pass.  Proof that the
# connection was really replaced:
#   - initiator: the session is LOGGED_IN again and the kernel logged the
#     connection error; with our initiator, debugfs connections_started
#     goes from 1 to 2 or more;
#   - target: LIO accepted another login after the first one
#     (fabric_statistics/iscsi_login_stats/accepts grew).
# The initiator guest logs how long after the cut the first connection
# error came: the time to detect the dead path.
# Both guests pin the other's MAC in their neighbour table for the outage
# (nud permanent): a CM message sent while ARP fails would fail in
# soft-RoCE's transmit, which on 6.12 kills its GSI QP (QP1) for good.
# Both guests log soft-RoCE's packet counters every 5 s, and each checks
# that rxe0's rcvd_pkts stands still during the outage: the initiator
# guest reads it 2 s after the cut (frames in flight have landed) and
# again just before the link is restored; it signals "cut" and "restore"
# at those two points, the target guest reads its own counter at each
# signal and answers "restore-ack" before the initiator lets frames pass
# again.  A counter that moves means packets crossed the "cut" link, so
# the outage was not one.  Then logout; teardown in each guest unloads
# its modules.
#
# How the link is cut:
#   --drop (default)  every frame the initiator's NIC sends or receives is
#                     lost (vm_link_cut in guest/lib/peer.sh: a drop filter on
#                     egress and on ingress, on qdiscs put in place before
#                     login); the NIC stays up, as when a cable
#                     or switch fails further along the path. rxe0's
#                     send_err must not move: a frame the kernel refuses
#                     kills a 6.12 soft-RoCE QP (see vm_link_cut), which no
#                     real outage does
#   --down            "ip link set NIC down", then up.  soft-RoCE does not
#                     survive this: the port-down event moves rxe's GSI QP
#                     (QP1) to the error state and nothing brings it back,
#                     so after the link is up again no CM message gets
#                     through (6.12: the REQs never leave, cm_tx_msgs/req
#                     grows while sent_pkts stands still; 6.1: the target
#                     answers the REQs, the REPs never arrive) and no
#                     initiator, in-tree or ours, can reconnect until the
#                     rxe device is deleted and added again
#                     (intree-linkdown, in no set, FAILs for this).
# --ack-timeout N sets ack_timeout=N on our modules (ib_iser, ib_isert) in
# both guests, --retry-count R ib_iser's retry_count; both QPs must show
# them in debugfs, and out-of-range values must be refused. soft-RoCE
# retries forever with a retry count of 7 (rxe_comp.c decrements it only
# below 7), so the rows that show the timers use 6.
# The row names what ended the connection and fails unless it is one of
# three, each within its bound from the drop (a TCG slack of 3 s added):
#   - the NOP-Out (conn error 1022): interval and timeout, 10 s;
#   - the transport's retries (rxe0's retry_exceeded_err): retry_count + 1
#     tries of the ACK timeout;
#   - soft-RoCE's first retransmission, which runs a completed memory
#     registration again and fails the QP (vm_rxe_retry_debug in
#     guest/lib/peer.sh; the refused registration in the kernel log): two
#     ACK timeouts.

secs=${1:-}
[ $# -gt 0 ] && shift
how=--drop ackt="" retry=""
while [ $# -gt 0 ]; do
	case $1 in
	--drop | --down) how=$1 ;;
	--ack-timeout) ackt=${2:-}; shift ;;
	--retry-count) retry=${2:-}; shift ;;
	*) vm_fail "linkflap.sh: bad option $1 (--drop, --down, --ack-timeout N, --retry-count N)" ;;
	esac
	shift
done
[ -n "$secs" ] || vm_fail "linkflap.sh: SECONDS missing"
# 2 s for frames in flight, then at least 2 s between the two samples
[ "$secs" -ge 6 ] 2>/dev/null || vm_fail "linkflap.sh: SECONDS must be 6 or more, not $secs"
case ${VM_PEER_ROLE:-} in
target | initiator) ;;
*) vm_fail "linkflap.sh needs the two-guest mode (TARGET column X@peer in scenarios.list)" ;;
esac

vm_rxe_up
vm_load_roles
# lf_refuses MODULE PARAM VALUE...: the parameter refuses every VALUE
lf_refuses() {
	local m=$1 p=$2 f=/sys/module/$1/parameters/$2 v
	shift 2
	for v in "$@"; do
		! echo "$v" 2>/dev/null >"$f" || vm_fail "$m.$p accepted '$v'"
	done
}
# lf_qp_timers DEBUGFS-FILE RETRY...: the QP's ack_timeout and retry_count
# as our module's debugfs FILE shows them are --ack-timeout's (without it,
# rdma_cm's: 19 on 6.1's RoCE, 17 on 6.12's) and one of RETRY
lf_qp_timers() {
	local f=$1 qpt want r
	shift
	qpt=$(awk '/^(ack_timeout|retry_count):/ { printf "%s %s ", $1, $2 }' "$f")
	vm_log "QP: $qpt"
	qp_ackt=$(echo "$qpt" | awk '{ print $2 }')
	want=${ackt:-1[79]}
	for r in "$@"; do
		# shellcheck disable=SC2027,SC2254 # $want is a pattern
		case $qpt in
		"ack_timeout: "$want" retry_count: $r ") return 0 ;;
		esac
	done
	vm_fail "the QP has '$qpt', not ack_timeout ${ackt:-17 or 19} and retry_count $*"
}
# --ack-timeout, --retry-count: on whichever guest runs our module
if [ -n "$ackt" ]; then
	if [ "$VM_PEER_ROLE" = initiator ] && [ "$VM_INITIATOR" = ours ]; then
		lf_refuses ib_iser ack_timeout 9 32 x -1
		lf_refuses ib_iser retry_count 0 8 x
		vm_module_params "ib_iser.ack_timeout=$ackt"
		[ -z "$retry" ] || vm_module_params "ib_iser.retry_count=$retry"
	fi
	if [ "$VM_PEER_ROLE" = target ] && [ "$VM_TARGET" = ours ]; then
		lf_refuses ib_isert ack_timeout 9 32 x
		vm_module_params "ib_isert.ack_timeout=$ackt"
	fi
fi

if [ "$VM_PEER_ROLE" = target ]; then
	vm_target_setup
	stats=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/fabric_statistics/iscsi_login_stats
	accepts() {
		cat "$stats/accepts" 2>/dev/null
	}
	# the initiator's MAC stays known through the outage (see the
	# initiator's side below: soft-RoCE's GSI QP and failed ARP), pinned
	# before any connection, so that no neighbour update reaches rdma_cm
	# while one is up (its netevent callback ends a connection whose
	# neighbour's address changes)
	tnic=$(vm_peer_nic)
	ip neigh replace "$VM_INI_IP" lladdr "$VM_INI_MAC" dev "$tnic" nud permanent
	vm_peer_signal ready
	# what the link carried, every 5 s (the target itself logs nothing
	# when a connection just goes quiet)
	(
		while sleep 5; do
			vm_log "counters$(vm_peer_counters)"
			vm_log "qps $(rdma resource show qp 2>&1 | paste -sd ';' -)"
		done
	) &
	mon=$!
	# the initiator's first login; its outcome decides nothing here, the
	# initiator guest reports it
	first="" rx_cut="" rx_end=""
	if vm_peer_await login1; then
		first=$(accepts)
		vm_log "logins accepted after the first login: $first"
		if [ "$VM_TARGET" = ours ]; then
			# the accepted QP's timers: ours, and the REQ's count,
			# --retry-count's from our initiator, 7 from Linux's
			lf_qp_timers /sys/kernel/debug/ib_isert/connections "${retry:-7}" 7
		fi
	fi
	# rcvd_pkts at the initiator's two samples within the outage
	if vm_peer_await cut; then
		rx_cut=$(vm_rxe_counter rcvd_pkts)
		vm_log "outage: rcvd_pkts $rx_cut"
	fi
	if vm_peer_await restore; then
		rx_end=$(vm_rxe_counter rcvd_pkts)
		vm_log "outage ends: rcvd_pkts $rx_end"
		vm_peer_signal restore-ack
	fi
	# the host writes "done" once the initiator guest ended its scenario
	# (logged out, torn down) or stopped; tear down only then
	vm_peer_wait "done" 100000
	ip neigh replace "$VM_INI_IP" lladdr "$VM_INI_MAC" dev "$tnic" nud reachable
	kill "$mon"
	result=$(cat "$VM_PEER_SIG/done" 2>/dev/null)
	last=$(accepts)
	vm_log "initiator guest's scenario: $result; logins accepted: $last"
	dmesg | grep -iE 'isert|iscsi|login|reinstat' | tail -n 20
	# only when the initiator passed are a missing second login or
	# missing samples a target guest's failure (otherwise the initiator's
	# reason says why)
	if [ "$result" = PASS ]; then
		if [ -z "$first" ] || [ -z "$last" ]; then
			vm_fail "no login statistics in $stats"
		fi
		[ "$last" -gt "$first" ] ||
			vm_fail "the target accepted no login after the first ($first, then $last): the link outage did not replace the connection"
		if [ -z "$rx_cut" ] || [ -z "$rx_end" ]; then
			vm_fail "no rcvd_pkts samples of rxe0 during the outage (cut '$rx_cut', restore '$rx_end')"
		fi
	fi
	if [ -n "$rx_cut" ] && [ -n "$rx_end" ] && [ "$rx_end" != "$rx_cut" ]; then
		vm_fail "rxe0 received $((rx_end - rx_cut)) packets while the initiator's link was cut (rcvd_pkts $rx_cut, then $rx_end)"
	fi
	return 0
fi

# initiator guest
# what the link and the RDMA side look like (logged after the outage)
vm_peer_diag() {
	vm_log "diag: $(ip -br link show "$nic"; ip -br addr show "$nic")"
	vm_log "diag: neigh $(ip neigh show dev "$nic" | paste -sd ';' -)"
	vm_log "diag: $(rdma link show | paste -sd ';' -)"
	vm_log "diag: gids $(cat /sys/class/infiniband/rxe0/ports/1/gids/[0-3] | paste -sd ' ' -)"
	vm_log "diag: cm_ids $(rdma resource show cm_id 2>&1 | paste -sd ';' -)"
	vm_log "diag: qps $(rdma resource show qp 2>&1 | paste -sd ';' -)"
	vm_log "diag: counters $(vm_peer_counters)"
}

vm_iscsid_start
vm_peer_wait_ready
nic=$(vm_peer_nic)
vm_node_new
vm_node_set node.conn[0].timeo.noop_out_interval 5
vm_node_set node.conn[0].timeo.noop_out_timeout 5
vm_node_set node.session.timeo.replacement_timeout 60
# a body that fails mid-outage must not leave the link cut for teardown
trap 'kill "$flap" 2>/dev/null; ip link set "$nic" up; vm_link_cut_remove "$nic"' EXIT
[ "$how" = --drop ] && vm_link_cut_prepare "$nic"
# The target's MAC stays known through the outage: without it, ARP fails
# during the outage, a CM message the kernel sends then (the DREQ of the
# failed connection, a reconnect's REQ) fails in soft-RoCE's transmit
# (send_err), which moves its GSI QP (QP1) to the error state for good
# on 6.12, and no CM message gets through after the link is back. A
# dropped packet, which is what a real outage gives, does not. Pinned
# before the login, so that no neighbour update reaches rdma_cm while the
# connection is up (see the target's side).
ip neigh replace "$VM_TGT_IP" lladdr "$VM_TGT_MAC" dev "$nic" nud permanent
dev=$(vm_login_disk) || exit 1
vm_peer_signal login1
if [ "$VM_INITIATOR" = ours ]; then
	started=$(vm_conns_started)
	[ "$started" = 1 ] || vm_fail "after login, connections_started is '${started}', not 1"
	# the QP's timers as the connection got them
	lf_qp_timers /sys/kernel/debug/ib_iser/host*/conn "${retry:-7}"
fi
rm -f /tmp/linkflap.rx /tmp/linkflap.cut /tmp/linkflap.cut1 /tmp/linkflap.up /tmp/linkflap.senderr
# the outage: cut, sample rcvd_pkts 2 s in and 2 s before the end (the
# target guest samples its own at the same signals), restore
(
	sleep 4
	if [ "$how" = --drop ]; then
		vm_log "$nic drops everything for $secs s (neighbour $VM_TGT_IP pinned at $VM_TGT_MAC)"
		vm_rxe_counter send_err >/tmp/linkflap.senderr
		# when the cut begins: setting it up takes seconds under TCG,
		# so the time before it and the time sent frames are dropped
		cut -d' ' -f1 /proc/uptime >/tmp/linkflap.cut
		vm_link_cut "$nic" on /tmp/linkflap.cut1
	else
		vm_log "$nic down for $secs s (see above: soft-RoCE does not recover)"
		cut -d' ' -f1 /proc/uptime >/tmp/linkflap.cut
		ip link set "$nic" down
	fi
	sleep 2
	rx_cut=$(vm_rxe_counter rcvd_pkts)
	vm_peer_signal cut "$rx_cut"
	sleep $((secs - 4))
	rx_end=$(vm_rxe_counter rcvd_pkts)
	echo "$rx_cut $rx_end" >/tmp/linkflap.rx
	vm_peer_signal restore "$rx_end"
	# the target guest's sample must be taken with the link still cut
	vm_peer_wait restore-ack 60 || vm_log "no restore-ack from the target guest"
	sleep 2
	if [ "$how" = --drop ]; then
		vm_link_cut "$nic" off
		echo "$(cat /tmp/linkflap.senderr) $(vm_rxe_counter send_err)" >/tmp/linkflap.senderr
	else
		ip link set "$nic" up
	fi
	vm_log "$nic up"
	cut -d' ' -f1 /proc/uptime >/tmp/linkflap.up
	sleep 8
	vm_peer_diag
) &
flap=$!
# the link's traffic every 5 s: it must stand still during the outage
(
	while sleep 5; do
		vm_log "counters$(vm_peer_counters)"
		vm_log "qps $(rdma resource show qp 2>&1 | paste -sd ';' -)"
	done
) &
imon=$!
# lf_why: what the kernel said about the failed I/O, for the reason line
# (a CI run shows only that line): the SCSI host byte of the first failed
# command, whether the replacement timeout ran out, the connection errors
# and how many connections the session started
lf_why() {
	local k failed tmo conn started
	k=$(vm_scen_dmesg)
	failed=$(echo "$k" | grep -m1 -oE 'FAILED Result: hostbyte=[A-Z_]+ driverbyte=[A-Z_]+')
	tmo=$(echo "$k" | grep -m1 -oE 'session recovery timed out after [0-9]+ secs')
	conn=$(echo "$k" | grep -oE '^\[ *[0-9.]+\] +connection[0-9]+:[0-9]+: detected conn error \([0-9]+\)' |
		sed -E 's/^\[ *([0-9.]+)\].*\(([0-9]+)\)/\2@\1s/' | paste -sd ' ' -)
	started=$(vm_conns_started)
	echo "first failed command: ${failed:-none logged}; ${tmo:-no replacement timeout}; conn errors (code@uptime): ${conn:-none}; link cut at $(cat /tmp/linkflap.cut 2>/dev/null)s, back at $(cat /tmp/linkflap.up 2>/dev/null)s; send_err at cut and after $(cat /tmp/linkflap.senderr 2>/dev/null); GSI QP $(rdma resource show qp lqpn 1 2>/dev/null | grep -oE 'state [A-Z]+'); connections_started ${started:-?}; $(iscsiadm -m session -P 1 2>&1 | grep -m2 -E 'Session State|Internal iscsid' | tr -s ' \t\n' ' ')"
}
# lf_ended SECONDS CODE: name what ended the connection SECONDS after the
# drop with conn error CODE (see the header), and fail when it is none of
# the three or came later than its bound. The ACK timeout is the QP's as
# our initiator's debugfs showed it, else --ack-timeout's, else rdma_cm's
# largest default (19, 6.1's RoCE). A registration soft-RoCE refused is
# logged with its time whatever ended the connection: Linux's initiator
# ignores flushed completions, so its connection stays up on a QP in
# error until the NOP-Out fails.
lf_ended() {
	local took=$1 code=$2 try what bound refused
	try=$(awk -v a="${qp_ackt:-${ackt:-19}}" 'BEGIN { printf "%.3f", 4.096e-6 * 2 ^ a }')
	refused=$(vm_scen_dmesg | grep -m1 -E 'rxe_reg_fast_mr: .*not free|rxe_invalidate_mr: ')
	if [ -n "$refused" ]; then
		vm_log "soft-RoCE refused a completed registration at its retransmission, $(echo "$refused" | sed -nE 's/^\[ *([0-9.]+)\].*/\1/p' | awk -v c="$(cat /tmp/linkflap.cut1)" '{ printf "%.1f", $1 - c }') s after the drop: ${refused#*] }"
	fi
	if [ "$code" = 1022 ]; then
		what="the NOP-Out"
		bound=13
	elif [ "$(vm_rxe_counter retry_exceeded_err)" -ge 1 ] 2>/dev/null; then
		what="the transport's retries"
		bound=$(awk -v t="$try" -v r="${retry:-7}" 'BEGIN { print (r + 1) * t + 3 }')
	elif [ -n "$refused" ]; then
		what="soft-RoCE's first retransmission, which failed the QP"
		bound=$(awk -v t="$try" 'BEGIN { print 2 * t + 3 }')
	else
		vm_fail "the connection ended by conn error (${code:-?}) $took s after the drop, by nothing this row knows: not the NOP-Out, no transport retries exhausted, no registration refused by soft-RoCE ($(vm_scen_dmesg | grep -E 'ib_iser|rxe0|completion failed' | tail -n 4 | paste -sd ';' -))"
	fi
	vm_log "ended by $what, conn error ($code), $took s after the drop (bound $bound s)"
	awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t <= b) }' ||
		vm_fail "the connection ended by $what $took s after the drop, later than its bound of $bound s"
}
start=$(date +%s)
if ! printf '%s\n' '[verify-across-link-flap]' 'rw=randwrite' 'bs=16k' \
	'iodepth=8' 'size=24M' 'rate_iops=200' | vm_fio "$dev" link; then
	why=$(lf_why)
	vm_log "fio failed: $why"
	vm_scen_dmesg | tail -n 40
	vm_fail "fio link: $(cat "$VM_SCEN_DIR/fio-link.err" 2>/dev/null); $why"
fi
wait "$flap"
# the qdiscs go once the session is gone (vm_link_cut_prepare)
trap 'vm_link_cut_remove "$nic"' EXIT
kill "$imon"
vm_log "fio verify passed across the link flap ($(($(date +%s) - start)) s)"
read -r rx_cut rx_end 2>/dev/null </tmp/linkflap.rx
if [ -z "$rx_cut" ] || [ -z "$rx_end" ]; then
	vm_fail "no rcvd_pkts samples of rxe0 during the outage ($(cat /tmp/linkflap.rx 2>&1))"
fi
[ "$rx_end" = "$rx_cut" ] ||
	vm_fail "rxe0 received $((rx_end - rx_cut)) packets while the link was cut (rcvd_pkts $rx_cut, then $rx_end)"
vm_log "rcvd_pkts stood still at $rx_cut during the outage"
if [ "$how" = --drop ]; then
	read -r se_cut se_end 2>/dev/null </tmp/linkflap.senderr
	if [ -z "$se_end" ] || [ "$se_end" != "$se_cut" ]; then
		vm_fail "rxe0's send_err went from '$se_cut' to '$se_end' over the outage: the kernel refused frames instead of losing them, which kills a 6.12 soft-RoCE QP (vm_link_cut in guest/lib/peer.sh)"
	fi
	vm_log "send_err stood still at $se_cut over the outage"
fi
vm_wait 90 vm_logged_in || vm_fail "session not logged in after the link came back"
vm_log "$(iscsiadm -m session -P 1 2>&1 | grep -E 'State|Portal')"
errs=$(vm_scen_dmesg | grep -E 'connection[0-9]+:[0-9]+: detected conn error')
vm_scen_dmesg | grep -E 'ib_iser|iser|connection[0-9]|iscsi' | tail -n 12
[ -n "$errs" ] ||
	vm_fail "no connection error in the kernel log: the $secs s link outage did not break the connection"
# how long the dead path went unnoticed: from the cut to the first
# connection error (NOP-Out interval and timeout 5 s each, so at most
# about 10 s; sooner when a WR in flight exhausts its transport retries:
# rxe0's retry_exceeded_err; completer_retry_err counts the resends)
detect=$(echo "$errs" | head -n 1 | sed -nE 's/^\[ *([0-9.]+)\].*/\1/p')
cut_at=$(cat /tmp/linkflap.cut 2>/dev/null)
# --down has no second stamp: the link is down once "ip link" returns
cut1=$(cat /tmp/linkflap.cut1 2>/dev/null || echo "$cut_at")
if [ -n "$detect" ] && [ -n "$cut_at" ] && [ -n "$cut1" ]; then
	took=$(awk -v a="$cut1" -v b="$detect" 'BEGIN { printf "%.1f", b - a }')
	vm_log "dead path detected $took s after sent frames were dropped ($(awk -v a="$cut_at" -v b="$cut1" 'BEGIN { printf "%.1f", b - a }') s to put the cut in place; NOP-Out interval 5 s, timeout 5 s; ack_timeout ${ackt:-default}, retry_count ${retry:-7}; rxe0 completer_retry_err $(vm_rxe_counter completer_retry_err), retry_exceeded_err $(vm_rxe_counter retry_exceeded_err))"
	lf_ended "$took" "$(echo "$errs" | head -n 1 | sed -nE 's/.*conn error \(([0-9]+)\).*/\1/p')"
else
	vm_fail "no time of detection (cut at '$cut_at', '$cut1', first connection error at '$detect')"
fi
if [ "$VM_INITIATOR" = ours ]; then
	started=$(vm_conns_started)
	vm_log "connections started on the session: $started"
	[ "${started:-0}" -ge 2 ] ||
		vm_fail "no reconnection after a $secs s link outage (connections_started ${started:-?})"
fi
vm_logout_check "$dev"
ip neigh replace "$VM_TGT_IP" lladdr "$VM_TGT_MAC" dev "$nic" nud reachable
