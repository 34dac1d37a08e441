# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: two-guest mode: soft-RoCE on the virtio NIC, link cuts, signals between the guests.
# Sourced by ../lib.sh, with the rest of the library.

# vm_peer_nic: the name of the virtio NIC (eth0 without udev).
vm_peer_nic() {
	local n drv
	for n in /sys/class/net/*; do
		drv=$(readlink -f "$n/device/driver" 2>/dev/null)
		[ "${drv##*/}" = virtio_net ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

# vm_peer_rxe_up: this guest's address on the link and rxe0 on its NIC.
vm_peer_rxe_up() {
	local nic ip=$VM_INI_IP
	[ "$VM_PEER_ROLE" = target ] && ip=$VM_TGT_IP
	[ "$VM_RDMA" = rxe ] ||
		vm_fail "the two-guest mode has soft-RoCE only (VM_RDMA=$VM_RDMA)"
	vm_must modprobe virtio_net
	vm_must modprobe rdma_rxe
	vm_wait 10 vm_peer_nic || vm_fail "no virtio NIC in the guest: $(ls /sys/class/net)"
	nic=$(vm_peer_nic)
	vm_must ip link set lo up
	vm_must ip addr add "$ip/24" dev "$nic"
	vm_must ip link set "$nic" up
	vm_must rdma link add rxe0 type rxe netdev "$nic"
	vm_wait 20 vm_rxe_active 1 ||
		vm_fail "rxe0 on $nic not ACTIVE: $(rdma link show 2>&1 | tr '\n' ';')"
	vm_log "$VM_PEER_ROLE guest: $nic $ip, $(rdma link show)"
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
# qdisc; the cut only adds a drop filter to each, which swaps no qdisc
# and reports a dropped frame as sent (prio_classify(): TC_ACT_SHOT is
# NET_XMIT_SUCCESS with __NET_XMIT_BYPASS, masked off by the core).

# vm_link_cut_prepare NIC: the qdiscs vm_link_cut uses (before login), and
# the modules of its filter and action, loaded now: loaded by the first
# "tc filter add", under TCG they take seconds of the cut's start. Also
# turns on soft-RoCE's lines about retransmission (vm_rxe_retry_debug).
vm_link_cut_prepare() {
	vm_must tc qdisc add dev "$1" root handle 1: prio
	vm_must tc qdisc add dev "$1" ingress
	vm_must modprobe -a cls_matchall act_gact
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

# vm_link_cut NIC on|off [STAMP]: drop everything from now on / pass
# frames again. With STAMP, "on" writes the uptime once sent frames are
# dropped (the egress filter is in place) to the file STAMP: a tc command
# takes seconds under TCG, so the time before the cut is not its start.
vm_link_cut() {
	if [ "$2" = on ]; then
		tc filter add dev "$1" parent 1: matchall action drop &&
			{ [ -z "${3:-}" ] || cut -d' ' -f1 /proc/uptime >"$3"; } &&
			tc filter add dev "$1" parent ffff: matchall action drop
	else
		tc filter del dev "$1" parent ffff:
		tc filter del dev "$1" parent 1:
	fi
}

# vm_link_cut_remove NIC: the qdiscs gone (after the connections are).
vm_link_cut_remove() {
	tc qdisc del dev "$1" root 2>/dev/null
	tc qdisc del dev "$1" ingress 2>/dev/null
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
