# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: two-guest mode: soft-RoCE on the virtio NIC, link cuts, signals between the guests.
# Sourced by ../lib.sh, with the rest of the library.

# vm_peer_nic [MAC]: the name of the virtio NIC with the address MAC, by
# default this guest's on the first link (VM_TGT_MAC or VM_INI_MAC; no udev,
# so the kernel's names eth0, eth1 follow the order of discovery).
vm_peer_nic() {
	local n drv mac=${1:-$VM_INI_MAC}
	[ -n "${1:-}" ] || [ "$VM_PEER_ROLE" != target ] || mac=$VM_TGT_MAC
	for n in /sys/class/net/*; do
		drv=$(readlink -f "$n/device/driver" 2>/dev/null)
		[ "${drv##*/}" = virtio_net ] && [ "$(cat "$n/address")" = "$mac" ] &&
			{ echo "${n##*/}"; return 0; }
	done
	return 1
}

# vm_peer_link_up MAC IP DEV COUNT: the virtio NIC with the address MAC
# gets IP and the soft-RoCE device DEV, which must be ACTIVE with COUNT
# devices in all; sets VM_PEER_LINK_NIC to the NIC's name
vm_peer_link_up() {
	local mac=$1 ip=$2 dev=$3 count=$4 nic
	vm_wait 10 vm_peer_nic "$mac" >/dev/null ||
		vm_fail "no virtio NIC with $mac in the guest: $(ls /sys/class/net)"
	nic=$(vm_peer_nic "$mac")
	vm_must ip addr add "$ip/24" dev "$nic"
	vm_must ip link set "$nic" up
	vm_must rdma link add "$dev" type rxe netdev "$nic"
	vm_wait 20 vm_rxe_active "$count" ||
		vm_fail "$dev on $nic not ACTIVE: $(rdma link show 2>&1 | tr '\n' ';')"
	vm_log "$VM_PEER_ROLE guest: $nic $ip, $(rdma link show | paste -sd ';' -)"
	VM_PEER_LINK_NIC=$nic
}

# vm_peer_rxe_up: this guest's address on the link and rxe0 on its NIC.
vm_peer_rxe_up() {
	local ip=$VM_INI_IP mac=$VM_INI_MAC
	[ "$VM_PEER_ROLE" = target ] && ip=$VM_TGT_IP mac=$VM_TGT_MAC
	[ "$VM_RDMA" = rxe ] ||
		vm_fail "the two-guest mode has soft-RoCE only (VM_RDMA=$VM_RDMA)"
	vm_must modprobe virtio_net
	vm_must modprobe rdma_rxe
	vm_must ip link set lo up
	vm_peer_link_up "$mac" "$ip" rxe0 1
}

# vm_peer_rxe2_up: this guest's address on the second link (VM_TGT_IP2 or
# VM_INI_IP2) and $VM_DEV2 on its NIC; the other guest's address on that
# link pinned to its MAC (see vm_link_cut and scenarios/linkflap.sh: a CM
# message sent while ARP fails kills 6.12 soft-RoCE's GSI QP). Sets
# VM_PEER_NIC2 to the NIC's name.
# shellcheck disable=SC2034 # VM_PEER_NIC2 is for the scenario
vm_peer_rxe2_up() {
	local ip=$VM_INI_IP2 mac=$VM_INI_MAC2 peer=$VM_TGT_IP2 pmac=$VM_TGT_MAC2
	[ "$VM_PEER_ROLE" = target ] &&
		ip=$VM_TGT_IP2 mac=$VM_TGT_MAC2 peer=$VM_INI_IP2 pmac=$VM_INI_MAC2
	vm_peer_link_up "$mac" "$ip" "$VM_DEV2" 2
	VM_PEER_NIC2=$VM_PEER_LINK_NIC
	vm_must ip neigh replace "$peer" lladdr "$pmac" dev "$VM_PEER_NIC2" nud permanent
}

# A link outage in the two-guest mode: every frame this guest's NIC sends
# or receives is lost, as when a cable or switch fails further along.
# Lost, not refused: 6.12's soft-RoCE moves a QP to the error state when
# the kernel refuses a frame it transmits (rxe_send() passes the qdisc's
# NET_XMIT_DROP up and rxe_requester() fails the QP; 6.1 retries the
# frame), and adding or deleting a qdisc refuses every frame sent
# meanwhile (qdisc_graft() deactivates the device's queues, even for the
# ingress qdisc). Done mid-connection that kills the RC QP at once and, if
# a CM message is on its way, the GSI QP (QP1) for good: no CM message
# gets through after the link is back, nobody reconnects (seen on 6.12 in
# CI). So the qdiscs are put in place before any connection: a prio root
# qdisc, which queues as the default pfifo_fast does, and the ingress
# qdisc, each with a matchall filter whose one action (gact, shared by the
# two filters) passes every frame. The cut only replaces that action's
# verdict, pass or drop, in one tc command: it swaps no qdisc or filter,
# both directions change at once, and a dropped frame is reported as sent
# (prio_classify(): TC_ACT_SHOT is NET_XMIT_SUCCESS with
# __NET_XMIT_BYPASS, masked off by the core).

# vm_link_cut_act NIC: the index of NIC's gact action (one per NIC, from
# its ifindex: actions live in the network namespace, not in the device)
vm_link_cut_act() {
	echo $((1000 + $(cat "/sys/class/net/$1/ifindex")))
}

# vm_link_cut_prepare NIC: the qdiscs, the filters and the action vm_link_cut
# uses (before login), frames passing. The modules of the filter and the
# action load now: under TCG that takes seconds. Also turns on soft-RoCE's
# lines about retransmission (vm_rxe_retry_debug).
vm_link_cut_prepare() {
	local act
	act=$(vm_link_cut_act "$1")
	vm_must modprobe -a cls_matchall act_gact
	vm_must tc qdisc add dev "$1" root handle 1: prio
	vm_must tc qdisc add dev "$1" ingress
	vm_must tc actions add action gact pass index "$act"
	vm_must tc filter add dev "$1" parent 1: matchall action gact index "$act"
	vm_must tc filter add dev "$1" parent ffff: matchall action gact index "$act"
	vm_rxe_retry_debug
}

# vm_rxe_retry_debug: soft-RoCE logs each retransmit timer that fires and
# each memory registration or invalidation its requester refuses (dynamic
# debug; 6.1 warns of a refused registration on its own). Its requester
# runs a completed REG_MR or LOCAL_INV again when it retransmits the
# Sends in front of it (req_retry() rewinds to the oldest unacknowledged
# work request, rxe_requester() executes local operations whatever their
# state). The registration is refused ("mr->lkey = ... not free"), the
# QP goes into the error state, and its flush hides the status: on
# soft-RoCE the first retransmission of a send queue that holds a
# completed registration ends the connection, one ACK timeout after the
# last acknowledged packet.
vm_rxe_retry_debug() {
	local f
	for f in retransmit_timer rxe_reg_fast_mr rxe_invalidate_mr; do
		echo "func $f +p" 2>/dev/null >/sys/kernel/debug/dynamic_debug/control
	done
	return 0
}

# vm_link_cut NIC on|off [STAMP]: drop every frame NIC sends or receives
# from now on / pass them again (one tc command: about 0.2 s in an idle
# guest, seconds in a busy one; vm_link_cut_batch makes it a line). With
# STAMP, "on" writes the uptime once frames are dropped to the file STAMP:
# the time before the command is not the cut's start.
vm_link_cut() {
	local act verdict=pass
	[ "$2" = on ] && verdict=drop
	if [ -n "${VM_LINK_CUT_FD:-}" ]; then
		echo "actions replace action gact $verdict index $VM_LINK_CUT_ACT" >&"$VM_LINK_CUT_FD" ||
			return 1
	else
		act=$(vm_link_cut_act "$1")
		tc actions replace action gact "$verdict" index "$act" || return 1
	fi
	[ "$2" != on ] || [ -z "${3:-}" ] || cut -d' ' -f1 /proc/uptime >"$3"
}

# vm_link_cut_batch start NIC | stop: from start on, vm_link_cut NIC
# writes its command to one tc process that stays (tc -batch on a FIFO,
# fed through the descriptor VM_LINK_CUT_FD), and starts no process of its
# own: a guest busy with I/O over soft-RoCE takes up to seconds to start
# one, too long for a path that flaps every 2 s. stop ends it.
vm_link_cut_batch() {
	local fifo=/tmp/link-cut.fifo
	if [ "$1" = start ]; then
		VM_LINK_CUT_ACT=$(vm_link_cut_act "$2")
		rm -f "$fifo"
		vm_must mkfifo "$fifo"
		tc -force -batch "$fifo" &
		VM_LINK_CUT_PID=$!
		exec {VM_LINK_CUT_FD}>"$fifo"
	elif [ -n "${VM_LINK_CUT_FD:-}" ]; then
		exec {VM_LINK_CUT_FD}>&-
		VM_LINK_CUT_FD=""
		wait "$VM_LINK_CUT_PID" 2>/dev/null
		rm -f "$fifo"
	fi
	return 0
}

# vm_link_cut_remove NIC: the qdiscs, their filters and the action gone
# (after the connections are).
vm_link_cut_remove() {
	local act
	act=$(vm_link_cut_act "$1" 2>/dev/null) || return 0
	tc qdisc del dev "$1" root 2>/dev/null
	tc qdisc del dev "$1" ingress 2>/dev/null
	tc actions del action gact index "$act" 2>/dev/null
	return 0
}

# vm_rxe_counter NAME: soft-RoCE's counter NAME of rxe0 (hw_counters),
# e.g. rcvd_pkts (RoCE packets received: must stand still while the link
# is cut) or send_err (frames the kernel refused: an outage made by
# vm_link_cut must leave it unchanged); empty when rxe0 has none.
vm_rxe_counter() {
	cat "/sys/class/infiniband/rxe0/ports/1/hw_counters/$1" 2>/dev/null
}

# vm_peer_counters: the CM's message counters and soft-RoCE's packet
# counters of rxe0, one line (what the link carried, for the log).
vm_peer_counters() {
	local d f out=""
	for d in /sys/class/infiniband/rxe0/ports/1/cm_rx_msgs /sys/class/infiniband/rxe0/ports/1/cm_tx_msgs \
		/sys/class/infiniband/rxe0/ports/1/cm_tx_retries /sys/class/infiniband/rxe0/ports/1/cm_rx_duplicates \
		/sys/class/infiniband/rxe0/ports/1/hw_counters; do
		out="$out ${d##*/}:"
		for f in "$d"/*; do
			[ "$(cat "$f" 2>/dev/null)" != 0 ] && out="$out ${f##*/}=$(cat "$f" 2>/dev/null)"
		done
	done
	echo "$out"
}

# vm_peer_signal NAME [TEXT]: tell the other guest NAME (a file in the
# shared signal directory, written whole and then renamed into place).
vm_peer_signal() {
	echo "${2:-$1}" >"$VM_PEER_SIG/.$1.tmp" && mv "$VM_PEER_SIG/.$1.tmp" "$VM_PEER_SIG/$1"
	vm_log "signalled $1${2:+ ($2)}"
}

# vm_peer_wait NAME SECONDS: wait for the signal NAME.  Status 1 on
# timeout, 2 when the host says the target guest has stopped.  The
# repository is mounted with cache=none, so each test asks the host.
vm_peer_wait() {
	local name=$1 n=$2
	vm_log "waiting up to $n s for signal $name"
	while [ "$n" -gt 0 ]; do
		[ -e "$VM_PEER_SIG/$name" ] && return 0
		[ -e "$VM_PEER_SIG/peer-gone" ] && return 2
		sleep 1
		n=$((n - 1))
	done
	return 1
}

# vm_peer_wait_ready: in the initiator guest, wait until the target guest
# signalled "ready" (its target is set up); fail the scenario otherwise.
vm_peer_wait_ready() {
	vm_peer_wait ready 300
	case $? in
	0) ;;
	2) vm_fail "the target guest stopped before its target was ready" ;;
	*) vm_fail "the target guest's target was not ready within 300 s" ;;
	esac
}

# vm_peer_await NAME: in the target guest, wait for the initiator guest's
# signal NAME (status 0) until the host says the initiator guest's
# scenario ended ("done", status 1).  No time limit of its own: the
# host's scenario timeout bounds it.
vm_peer_await() {
	while [ ! -e "$VM_PEER_SIG/$1" ]; do
		[ -e "$VM_PEER_SIG/done" ] && return 1
		sleep 1
	done
}
