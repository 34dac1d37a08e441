# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of the guest test rig: the two-guest mode, a target guest and
# an initiator guest joined by a link.
# Sourced by host.sh.

# vm_free_port [AFTER]: print a TCP port on 127.0.0.1 that nothing listens
# on, above AFTER when given (a second link's port, chosen before the first
# one's listener exists).
vm_free_port() {
	local p base=$((20000 + $$ % 20000))
	[ -z "${1:-}" ] || base=$(($1 + 1))
	for ((p = base; p < base + 500; p++)); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# vm_pair_links ROLE PORT [PORT2]: the qemu options of a guest's NICs in
# the two-guest mode, one per line: the link on PORT and, with PORT2, a
# second link (the second path of a multipath row). The target guest's
# qemu (ROLE target) listens, the initiator's connects. The MACs are the
# ones guest/lib.sh names (VM_TGT_MAC, VM_INI_MAC, VM_TGT_MAC2,
# VM_INI_MAC2): the guest tells its NICs apart by them.
vm_pair_links() {
	local how=connect last=02 i=1 port
	[ "$1" = target ] && how=listen last=01
	shift
	for port in "$@"; do
		echo "-netdev"
		echo "socket,id=n$i,$how=127.0.0.1:$port"
		echo "-device"
		echo "virtio-net-pci,netdev=n$i,mac=52:54:00:12:$((77 + i)):$last"
		i=$((i + 1))
	done
}

# vm_pair_nlinks ROW: how many links the two guests of ROW get: two for the
# multipath body (its second path), one for every other
vm_pair_nlinks() {
	local name ini tgt def tmo body rest
	read -r name ini tgt def tmo body rest <<<"$1"
	[ "$body" = mpath ] && echo 2 || echo 1
}

# vm_peer_start REL PJOB SIG HARD PORT [PORT2]: boot the target guest of a
# two-guest row in the background (its qemu listens on the link at
# 127.0.0.1:PORT, and on a second one at PORT2, so it starts first), with
# job directory PJOB, signal directory SIG and the hard limit HARD
# seconds.  Its outcome is left in files: PJOB/state, PJOB/state-reason,
# SIG/peer-gone once it stopped.  Sets VM_PEER_PID.
vm_peer_start() {
	local rel=$1 pjob=$2 sig=$3 hard=$4
	shift 4
	(
		mapfile -t VM_QEMU_EXTRA < <(vm_pair_links target "$@")
		VM_APPEND_EXTRA="iser_vm.role=target iser_vm.sig=$sig"
		vm_boot "$rel" "$pjob" "$hard" ""
		state=$VM_STATE
		[ -e "$sig/killed" ] && state=killed
		echo "$state" >"$pjob/state"
		if [ "$state" = killed ]; then
			echo "did not finish within ${VM_PAIR_GRACE}s after the initiator guest, killed" >"$pjob/state-reason"
		else
			vm_state_reason "$pjob" >"$pjob/state-reason"
		fi
		: >"$sig/peer-gone"
	) &
	VM_PEER_PID=$!
}

# vm_peer_finish PJOB SIG PID: once the initiator guest is done (and SIG/done
# written), give the target guest (PID, from vm_peer_start) VM_PAIR_GRACE
# seconds to end, then stop its qemu; sets VM_PEER_STATE and
# VM_PEER_REASON from its files.
vm_peer_finish() {
	local pjob=$1 sig=$2 ppid=$3 n=0
	while kill -0 "$ppid" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt "$VM_PAIR_GRACE" ]; then
			: >"$sig/killed"
			kill "$(cat "$pjob/qemu.pid")" 2>/dev/null
			sleep 2
			kill -9 "$(cat "$pjob/qemu.pid")" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$ppid" 2>/dev/null
	VM_PEER_STATE=$(cat "$pjob/state" 2>/dev/null)
	VM_PEER_REASON=$(cat "$pjob/state-reason" 2>/dev/null)
}

# vm_pair_boot RELEASE JOBDIR ROW [LINE_HANDLER]
#
# Run one two-guest scenario (ROW: its line of scenarios.list, TARGET
# "X@peer") in two guests booted together.  Each has a virtio-net NIC; the
# two NICs are joined by a qemu "socket" netdev (a TCP stream on the
# host's 127.0.0.1: the target guest's qemu listens, the initiator's
# connects), so RoCE packets between the guests really cross a link that
# either guest can take down.
#   JOBDIR                the initiator guest's job (as for vm_boot); its
#                         results in JOBDIR/NAME/, LINE_HANDLER gets its lines
#   JOBDIR/NAME.peer/     the target guest's job: NAME/{log,dmesg,result},
#                         console.log, progress, guest.log, qemu.log
#   JOBDIR/NAME.sig/      the signal files both guests poll through the
#                         repository share (9p with cache=none, so a file
#                         written by one side is seen by the next stat):
#                         ready (target set up), login1 (initiator logged
#                         in), done (written here when the initiator guest
#                         ended its scenario or stopped: the target may tear
#                         down), peer-gone (the target guest stopped)
# Each guest gets the row with the other role "none"; the kernel command
# line tells pid1.sh the role (iser_vm.role=) and the signal directory
# (iser_vm.sig=).  Sets VM_STATE, VM_CURRENT, VM_ELAPSED as vm_boot does for
# the initiator guest, and VM_PEER_STATE, VM_PEER_REASON for the target.
# shellcheck disable=SC2034 # VM_PEER_* are for the caller
vm_pair_boot() {
	local rel=$1 job=$2 row=$3 handler=${4:-} name ini tgt def tmo rest
	local pjob sig port ports hard phard ppid n save_cpus=$VM_CPUS save_mem=$VM_MEM
	read -r name ini tgt def tmo rest <<<"$row"
	pjob=$job/$name.peer
	sig=$job/$name.sig
	rm -rf "$pjob" "$sig"
	mkdir -p "$pjob" "$sig" || vm_die "cannot create $pjob"
	port=$(vm_free_port) || vm_die "no free TCP port on 127.0.0.1 for the guests' link"
	ports=("$port")
	if [ "$(vm_pair_nlinks "$row")" = 2 ]; then
		port=$(vm_free_port "$port") ||
			vm_die "no free TCP port on 127.0.0.1 for the guests' second link"
		ports+=("$port")
	fi
	echo "$name none ${tgt%@peer} $def $((tmo + VM_PAIR_EXTRA)) $rest" >"$pjob/job.list"
	echo "$name $ini none $def $tmo $rest" >"$job/job.list"
	cp "$job/job.env" "$pjob/job.env" 2>/dev/null
	hard=$((VM_BOOT_TIMEOUT + tmo + VM_SCENARIO_SLACK + 60))
	phard=$((hard + VM_PAIR_EXTRA + VM_PAIR_GRACE))
	VM_CPUS=$VM_PAIR_CPUS
	VM_MEM=$VM_PAIR_MEM
	# the target guest's qemu listens on the link, so it starts first; it
	# runs in a subshell, which leaves its outcome in files
	vm_peer_start "$rel" "$pjob" "$sig" "$phard" "${ports[@]}"
	ppid=$VM_PEER_PID
	# connect only once the listeners are there (or qemu refuses to start)
	n=0
	for port in "${ports[@]}"; do
		while ! ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; do
			kill -0 "$ppid" 2>/dev/null || break
			n=$((n + 1))
			[ $n -lt 300 ] || break
			sleep 0.2
		done
	done
	mapfile -t VM_QEMU_EXTRA < <(vm_pair_links initiator "${ports[@]}")
	VM_APPEND_EXTRA="iser_vm.role=initiator iser_vm.sig=$sig"
	vm_boot "$rel" "$job" "$hard" "$handler"
	VM_QEMU_EXTRA=()
	VM_APPEND_EXTRA=""
	VM_CPUS=$save_cpus
	VM_MEM=$save_mem
	# the target guest waits for this before it tears down
	[ -e "$sig/done" ] || echo "STOPPED $VM_STATE" >"$sig/done"
	vm_peer_finish "$pjob" "$sig" "$ppid"
	return 0
}
