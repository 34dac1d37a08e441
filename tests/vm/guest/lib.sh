# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library of the test rig: soft-RoCE on a veth pair, LIO through
# targetcli, open-iscsi over iSER, fio with verification, module selection
# per role and teardown.  Sourced by guest/run-job.sh and guest/run-one.sh,
# and so available to every scenario in tests/vm/scenarios/.
#
# Environment of a scenario (set by run-one.sh):
#   VM_SCEN_DIR   per-scenario result directory (in the repository share)
#   VM_INITIATOR  ours | intree | none    VM_TARGET  ours | intree | none
#   VM_MODDIR     where our .ko files are (build/<release>)
#   VM_RDMA       rxe (soft-RoCE, the default) | siw (soft-iWARP): the RDMA
#                 provider vm_rxe_up puts on the veth pair; a row asks for
#                 siw with a "siw:" prefix on its BODY, a whole run with
#                 ISER_VM_RDMA=siw
#   VM_DEV0, VM_DEV1  the RDMA devices on veth0 (target) and veth1
#                 (initiator): rxe0/rxe1, or siw0/siw1

VM_GUEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO=$(cd "$VM_GUEST_DIR/../../.." && pwd)
VM_REL=$(uname -r)
VM_MODDIR=${ISER_VM_MODDIR:-$VM_REPO/build/$VM_REL}
VM_RDMA=${VM_RDMA:-${ISER_VM_RDMA:-rxe}}
VM_DEV0=${VM_RDMA}0
VM_DEV1=${VM_RDMA}1
# soft-iWARP is not in Debian's kernels: scripts/build-siw.sh builds it
VM_SIW_KO=${ISER_VM_SIW_KO:-$VM_REPO/build/$VM_REL/siw/siw.ko}

# two-guest mode (VM_PEER_ROLE target|initiator, set by pid1.sh from the
# kernel command line): each guest has one role, soft-RoCE runs on its
# virtio NIC and the addresses are on the link between the guests
if [ -n "${VM_PEER_ROLE:-}" ]; then
	VM_TGT_IP=192.168.78.1
	VM_INI_IP=192.168.78.2
else
	VM_TGT_IP=192.168.77.1
	VM_INI_IP=192.168.77.2
fi
VM_ISER_PORT=3260
VM_TCP_PORT=3261
# the portal and open-iscsi iface of vm_node_new, vm_node_set, vm_login,
# vm_logout and vm_check_iser_session: iSER unless a scenario calls
# vm_use_tcp (iscsi_tcp on the TCP portal, for make bench's TCP column)
VM_LOGIN_PORT=$VM_ISER_PORT
VM_LOGIN_IFACE=iser
VM_LOGIN_TRANSPORT=iser
VM_LOGIN_LABEL=iSER
VM_TARGET_IQN=iqn.2003-01.org.linux-iscsi.iser-vm:tgt0
VM_INITIATOR_IQN=iqn.2004-10.org.debian:iser-vm-initiator
VM_LUN_SIZE=64M

# our modules: name -> path below $VM_MODDIR
declare -A VM_OURS=(
	[iser_dm]=drivers/core/iser_dm.ko
	[ib_iser]=drivers/initiator/ib_iser.ko
	[ib_isert]=drivers/target/ib_isert.ko
)

# kernel log lines that fail a scenario
VM_BAD_KLOG='WARNING:|(^|[^A-Za-z_])BUG([^A-Za-z_]|$)|Oops|refcount_t|lockdep is turned off|DEBUG_LOCKS_WARN_ON|possible (circular|recursive) locking|inconsistent lock state|KASAN|UBSAN|hung task|blocked for more than|Call Trace|general protection fault|Kernel panic|list_(add|del) corruption|stack-protector|kernel BUG'

vm_log() {
	echo "[$(date +%T)] $*"
}

# vm_progress TEXT: a line for the host (shown by demo.sh).
vm_progress() {
	vm_log "$*"
	echo "@@ MSG $*" >/dev/ttyS1
}

# vm_fail REASON: end the scenario with FAIL and REASON.
vm_fail() {
	vm_log "FAIL: $*"
	[ -n "${VM_SCEN_DIR:-}" ] && echo "$*" >"$VM_SCEN_DIR/reason"
	exit 1
}

# vm_run CMD...: run and log a command; its status is returned.
vm_run() {
	vm_log "+ $*"
	"$@"
}

# vm_must CMD...: run a command, fail the scenario if it fails.
vm_must() {
	vm_run "$@" || vm_fail "command failed (status $?): $*"
}

# vm_wait SECONDS CMD...: retry CMD once per 0.5 s until it succeeds.
vm_wait() {
	local n=$(($1 * 2))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
		n=$((n - 1))
	done
	return 1
}

vm_kmsg() {
	echo "$*" >/dev/kmsg
}

# vm_scen_dmesg: the kernel log since this scenario began (its BEGIN
# marker); earlier scenarios of the same boot are left out.
vm_scen_dmesg() {
	dmesg | awk -v b="iser-vm: BEGIN ${VM_SCEN_DIR##*/}" \
		'index($0, b) { p = 1 } p { print }'
}

# ---------------------------------------------------------------------------
# once per boot

# vm_scsi_target_pm_guard: runs for the whole job (run-job.sh), in the
# background: every SCSI target of an iSCSI session gets runtime PM
# forbidden (power/control "on") within half a second of appearing.  The
# reason is a kernel WARNING that is neither ours nor the in-tree
# initiator's: removing a session's LUN sets its runtime PM status to
# suspended, which queues an idle request for its parent, the SCSI target,
# on pm_wq (pm_runtime_reinit -> pm_request_idle); the target's own
# removal a few calls later flushes that request, and when pm_wq has not
# run it yet, check_flush_dependency() warns because the flush comes from
# the session's WQ_MEM_RECLAIM work queue (__iscsi_unbind_session).  A
# forbidden target (usage count held) gets no idle request, so there is
# nothing to flush.  Nothing in our modules or the rows' I/O depends on
# the target's runtime PM; rows that log out within half a second of
# logging in can still meet the race.  See Documentation/testing-vm.md.
vm_scsi_target_pm_guard() {
	local f v fd
	# a pipe of our own, never written: "read -t" on it is a sleep
	# without a fork per turn
	exec {fd}<> <(:)
	while :; do
		for f in /sys/class/iscsi_session/session*/device/target*/power/control; do
			[ -e "$f" ] || continue
			read -r v <"$f" 2>/dev/null || continue
			[ "$v" = on ] || echo on 2>/dev/null >"$f"
		done
		read -r -t 0.5 -u "$fd" _
	done
}

# vm_targets_pm_on: the guard has reached every SCSI target of the iSCSI
# sessions, and there is at least one
vm_targets_pm_on() {
	local f v n=0
	for f in /sys/class/iscsi_session/session*/device/target*/power/control; do
		[ -e "$f" ] || continue
		read -r v <"$f" || return 1
		[ "$v" = on ] || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

vm_guest_init() {
	local f
	echo 45 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
	echo 8 >/proc/sys/kernel/printk 2>/dev/null
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config || return 1
	mkdir -p /etc/target /run/dbus /var/run /etc/iscsi /root
	rm -rf /etc/target/* /root/.targetcli
	# D-Bus: targetcli fails with a Gio "Could not connect" error without it
	dbus-daemon --system --fork || return 1
	echo "InitiatorName=$VM_INITIATOR_IQN" >/etc/iscsi/initiatorname.iscsi
	# no stale records from the host's own open-iscsi state
	for f in nodes send_targets ifaces; do
		rm -rf "/etc/iscsi/$f" "/var/lib/iscsi/$f"
	done
	mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets
	mkdir -p /run/lock/iscsi /var/lock
	# an initiator guest of the two-guest mode runs no target (and a cold
	# targetcli start costs ~20 s of the CPU both guests share)
	[ "${VM_PEER_ROLE:-}" = initiator ] && return 0
	printf '%s\n' "set global auto_add_default_portal=false" \
		"set global auto_save_on_exit=false" "set global auto_use_daemon=false" \
		"set global color_mode=false" exit | targetcli >/dev/null 2>&1 || return 1
	return 0
}

# ---------------------------------------------------------------------------
# modules

# vm_ours_path NAME: the .ko file of our module NAME.
vm_ours_path() {
	echo "$VM_MODDIR/${VM_OURS[$1]}"
}

vm_loaded() {
	[ -d "/sys/module/$1" ]
}

# vm_insmod_ours NAME: load our module NAME from the build tree, after the
# modules it depends on (ours by insmod, in-tree ones by modprobe).
vm_insmod_ours() {
	local name=$1 ko dep want have
	ko=$(vm_ours_path "$name")
	[ -f "$ko" ] || vm_fail "our $name is not built: $ko is missing (run 'make modules' for $VM_REL)"
	want=$(modinfo -F srcversion "$ko" 2>/dev/null)
	if vm_loaded "$name"; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ -n "$want" ] && [ "$have" = "$want" ] && return 0
		vm_fail "a different $name is already loaded (srcversion '$have', ours '$want')"
	fi
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		vm_loaded "$dep" && continue
		if [ -n "${VM_OURS[$dep]:-}" ]; then
			vm_insmod_ours "$dep"
		else
			vm_must modprobe "$dep"
		fi
	done
	vm_must insmod "$ko"
	vm_loaded "$name" || vm_fail "insmod $ko returned 0 but /sys/module/$name is missing"
	if [ -n "$want" ]; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ "$have" = "$want" ] ||
			vm_fail "loaded $name has srcversion '$have', not ours ('$want')"
	fi
}

# vm_modprobe_intree NAME [PARAM=VALUE...]: load the in-tree module (with
# those parameters), refusing to mix it up
# with ours of the same name: modprobe must resolve NAME to the kernel's own
# file under kernel/drivers/infiniband/ulp/ (not, say, ours installed in
# updates/ for this release), and the loaded module must be that file.
vm_modprobe_intree() {
	local name=$1 ko want have
	shift
	ko=$(modinfo -n "$name" 2>/dev/null)
	[ -n "$ko" ] || vm_fail "in-tree $name: modinfo does not find it for $VM_REL"
	case $ko in
	"/lib/modules/$VM_REL/kernel/drivers/infiniband/ulp/"*) ;;
	*) vm_fail "in-tree $name: modprobe would load $ko, not the kernel's own module under /lib/modules/$VM_REL/kernel/drivers/infiniband/ulp/" ;;
	esac
	want=$(modinfo -F srcversion "$ko" 2>/dev/null)
	if vm_loaded "$name"; then
		have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
		[ -z "$want" ] || [ "$have" = "$want" ] ||
			vm_fail "a different $name is already loaded (srcversion '$have', the in-tree $ko has '$want')"
	fi
	vm_must modprobe "$name" "$@"
	have=$(cat "/sys/module/$name/srcversion" 2>/dev/null)
	[ -z "$want" ] || [ "$have" = "$want" ] ||
		vm_fail "$name loaded is not the in-tree one (srcversion '$have', $ko has '$want')"
}

# vm_load_roles: load the initiator and target modules the scenario asks for.
vm_load_roles() {
	case ${VM_INITIATOR:-intree} in
	ours) vm_insmod_ours iser_dm; vm_insmod_ours ib_iser ;;
	intree) vm_modprobe_intree ib_iser ;;
	none) ;;
	*) vm_fail "bad initiator '$VM_INITIATOR' (ours|intree|none)" ;;
	esac
	case ${VM_TARGET:-intree} in
	ours) vm_insmod_ours iser_dm; vm_insmod_ours ib_isert ;;
	intree) vm_modprobe_intree ib_isert ;;
	none) ;;
	*) vm_fail "bad target '$VM_TARGET' (ours|intree|none)" ;;
	esac
	vm_log "modules: $(lsmod | awk 'NR > 1 && /iser|rxe|siw|iw_cm|target_core|iscsi/ {print $1}' | tr '\n' ' ')"
}

# vm_module_params MODULE.PARAM=VALUE...: set module parameters of modules
# loaded already (/sys/module/MODULE/parameters/PARAM), for the rows of the
# performance tools that compare a setting with another in one boot; a
# parameter that is absent or refuses the value fails the scenario
vm_module_params() {
	local spec f
	for spec in "$@"; do
		case $spec in
		?*.?*=*) ;;
		*) vm_fail "vm_module_params: '$spec' is not MODULE.PARAM=VALUE" ;;
		esac
		f=${spec%%=*}
		f=/sys/module/${f%%.*}/parameters/${f#*.}
		[ -w "$f" ] || vm_fail "vm_module_params: no parameter $f"
		echo "${spec#*=}" >"$f" || vm_fail "vm_module_params: $f refused '${spec#*=}'"
		vm_log "module parameter ${spec%%=*} = $(cat "$f")"
	done
}

# ---------------------------------------------------------------------------
# soft-RoCE (or soft-iWARP, VM_RDMA=siw) on a veth pair (inside the guest
# only)

# vm_siw_load: soft-iWARP from the build tree (scripts/build-siw.sh), after
# its in-tree dependencies, and iw_cm, which rdma_cm needs for iWARP.
vm_siw_load() {
	local want have dep
	[ -f "$VM_SIW_KO" ] ||
		vm_fail "siw is not built: $VM_SIW_KO is missing (run 'make siw')"
	want=$(modinfo -F srcversion "$VM_SIW_KO" 2>/dev/null)
	if ! vm_loaded siw; then
		for dep in $(modinfo -F depends "$VM_SIW_KO" | tr ',' ' '); do
			vm_loaded "$dep" || vm_must modprobe "$dep"
		done
		vm_must insmod "$VM_SIW_KO"
	fi
	have=$(cat /sys/module/siw/srcversion 2>/dev/null)
	[ -z "$want" ] || [ "$have" = "$want" ] ||
		vm_fail "the loaded siw has srcversion '$have', not that of $VM_SIW_KO ('$want')"
	vm_must modprobe iw_cm
}

vm_rxe_up() {
	if [ -n "${VM_PEER_ROLE:-}" ]; then
		vm_peer_rxe_up
		return
	fi
	vm_must modprobe veth
	case $VM_RDMA in
	rxe) vm_must modprobe rdma_rxe ;;
	siw) vm_siw_load ;;
	*) vm_fail "bad RDMA provider '$VM_RDMA' (rxe|siw)" ;;
	esac
	vm_must ip link add veth0 type veth peer name veth1
	vm_must ip addr add "$VM_TGT_IP/24" dev veth0
	vm_must ip addr add "$VM_INI_IP/24" dev veth1
	vm_must ip link set veth0 up
	vm_must ip link set veth1 up
	vm_must ip link set lo up
	vm_must rdma link add "$VM_DEV0" type "$VM_RDMA" netdev veth0
	vm_must rdma link add "$VM_DEV1" type "$VM_RDMA" netdev veth1
	vm_wait 10 vm_rxe_active ||
		vm_fail "$VM_RDMA links not ACTIVE: $(rdma link show 2>&1 | tr '\n' ';')"
	vm_log "$(rdma link show)"
}

vm_rxe_active() {
	[ "$(rdma link show 2>/dev/null | grep -c 'state ACTIVE')" -ge "${1:-2}" ]
}

# ---------------------------------------------------------------------------
# two-guest mode: soft-RoCE on the virtio NIC, signals between the guests

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

# vm_link_cut_prepare NIC: the qdiscs vm_link_cut uses (before login).
vm_link_cut_prepare() {
	vm_must tc qdisc add dev "$1" root handle 1: prio
	vm_must tc qdisc add dev "$1" ingress
}

# vm_link_cut NIC on|off: drop everything from now on / pass frames again.
vm_link_cut() {
	if [ "$2" = on ]; then
		tc filter add dev "$1" parent 1: matchall action drop &&
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

# The benchmark's fio workloads (scenarios/bench.sh runs them all,
# scenarios/profile.sh one): name, then fio options without "--".
VM_BENCH_WORKLOADS=(
	"randread-4k-qd32 rw=randread bs=4k iodepth=32"
	"randwrite-4k-qd32 rw=randwrite bs=4k iodepth=32"
	"randread-4k-qd1 rw=randread bs=4k iodepth=1"
	"randrw70-16k-qd16 rw=randrw rwmixread=70 bs=16k iodepth=16"
	"read-512k-qd4 rw=read bs=512k iodepth=4"
	"read-1m-qd4 rw=read bs=1M iodepth=4"
	"write-1m-qd4 rw=write bs=1M iodepth=4"
)

# vm_bench_workload_names: the workloads' names, one a line (the host's
# bench.sh and profile.sh check their --workloads against it)
vm_bench_workload_names() {
	local w
	for w in "${VM_BENCH_WORKLOADS[@]}"; do
		echo "${w%% *}"
	done
}

# vm_bench_workload NAME: print the fio options of workload NAME
# (VM_BENCH_WORKLOADS); status 1 for an unknown one.
vm_bench_workload() {
	local w
	for w in "${VM_BENCH_WORKLOADS[@]}"; do
		[ "${w%% *}" = "$1" ] && { echo "${w#* }"; return 0; }
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

# ---------------------------------------------------------------------------
# LIO target, configured with targetcli only

# vm_tcli CMD...: run targetcli commands, one per argument, in one targetcli
# process (it reads commands from stdin when that is not a terminal; each
# start costs seconds under TCG).  targetcli reports most errors with status
# 0, so known error texts fail the scenario here, and callers check the
# outcome in configfs.
vm_tcli() {
	local out rc
	printf '+ targetcli: %s\n' "$@"
	out=$(printf '%s\n' "$@" exit | targetcli 2>&1)
	rc=$?
	echo "$out" | grep -v '^ *\(/> \)\?\(o-\||\)' | grep -v '^$'
	if [ $rc != 0 ] || echo "$out" | grep -qiE 'No such path|exists|Could not|Traceback|error|invalid|Unknown|not found|failed|cannot'; then
		vm_fail "targetcli failed: $(echo "$out" | grep -iE 'No such path|exists|Could not|Traceback|error|invalid|Unknown|not found|failed|cannot' | head -n 2 | paste -sd ' ' -)"
	fi
}

# vm_target_setup [--fileio|--iblock] [--chap USER PASS] [--acl IQN]
# A target $VM_TARGET_IQN with one 64 MiB LUN (LIO's ramdisk backstore;
# --fileio: a file on the guest's tmpfs; --iblock: LIO's block backstore
# on a brd RAM disk, /dev/ram0, the path a block device takes), an iSER portal on
# $VM_TGT_IP:$VM_ISER_PORT and a TCP portal on $VM_TGT_IP:$VM_TCP_PORT (for
# SendTargets discovery), an ACL for IQN (default: our initiator).
vm_target_setup() {
	local bs=ramdisk acl=$VM_INITIATOR_IQN chap_user="" chap_pass="" t np tpg
	local -a cmds
	while [ $# -gt 0 ]; do
		case $1 in
		--fileio) bs=fileio ;;
		--iblock) bs=iblock ;;
		--chap) chap_user=$2; chap_pass=$3; shift 2 ;;
		--acl) acl=$2; shift ;;
		*) vm_fail "vm_target_setup: bad argument $1" ;;
		esac
		shift
	done
	t=/iscsi/$VM_TARGET_IQN/tpg1
	if [ $bs = fileio ]; then
		bs=/backstores/fileio/lun0
		cmds=("/backstores/fileio create name=lun0 file_or_dev=/tmp/lun0.img size=$VM_LUN_SIZE write_back=false")
	elif [ $bs = iblock ]; then
		vm_brd_up
		bs=/backstores/block/lun0
		cmds=("/backstores/block create name=lun0 dev=/dev/ram0")
	else
		bs=/backstores/ramdisk/lun0
		cmds=("/backstores/ramdisk create name=lun0 size=$VM_LUN_SIZE")
	fi
	cmds+=(
		"/iscsi create $VM_TARGET_IQN"
		"$t/luns create $bs"
	)
	# over siw the iSER portal is made by vm_siw_iser_portal (below)
	[ "$VM_RDMA" = siw ] || cmds+=(
		"$t/portals create $VM_TGT_IP $VM_ISER_PORT"
		"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true"
	)
	cmds+=(
		"$t/portals create $VM_TGT_IP $VM_TCP_PORT"
		"$t/acls create $acl"
	)
	if [ -n "$chap_user" ]; then
		cmds+=("$t/acls/$acl set auth userid=$chap_user password=$chap_pass"
			"$t set attribute authentication=1")
	else
		cmds+=("$t set attribute authentication=0")
	fi
	vm_tcli "${cmds[@]}"
	tpg=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1
	[ "$VM_RDMA" = siw ] && vm_siw_iser_portal "$tpg" "$VM_TGT_IP:$VM_ISER_PORT"
	# check what the kernel got, not what targetcli printed
	np=$tpg/np
	[ "$(cat "$np/$VM_TGT_IP:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: portal $VM_TGT_IP:$VM_ISER_PORT is not an iSER portal in configfs"
	[ "$(cat "$np/$VM_TGT_IP:$VM_TCP_PORT/iser" 2>/dev/null)" = 0 ] ||
		vm_fail "target: TCP portal $VM_TGT_IP:$VM_TCP_PORT missing in configfs"
	[ "$(cat "$tpg/enable" 2>/dev/null)" = 1 ] || vm_fail "target: tpg 1 not enabled"
	[ -d "$tpg/lun/lun_0" ] || vm_fail "target: LUN 0 missing in configfs"
	[ -d "$tpg/acls/$acl/lun_0" ] || vm_fail "target: ACL $acl with LUN 0 missing in configfs"
	if [ -n "$chap_user" ]; then
		[ "$(cat "$tpg/acls/$acl/auth/userid")" = "$chap_user" ] ||
			vm_fail "target: CHAP user not set in configfs"
		[ "$(cat "$tpg/attrib/authentication")" = 1 ] ||
			vm_fail "target: authentication not enabled in configfs"
	fi
	vm_log "target ready: $VM_TARGET_IQN, $bs, iSER $VM_TGT_IP:$VM_ISER_PORT, TCP :$VM_TCP_PORT"
}

# vm_brd_up: one brd RAM disk, /dev/ram0, of $VM_LUN_SIZE (the teardown
# unloads brd once LIO let go of it)
vm_brd_up() {
	local mib=${VM_LUN_SIZE%M}
	vm_loaded brd && vm_fail "vm_brd_up: brd is already loaded"
	vm_must modprobe brd rd_nr=1 rd_size=$((mib * 1024)) max_part=0
	vm_wait 10 test -b /dev/ram0 || vm_fail "brd: /dev/ram0 did not appear"
}

# NVMe over Fabrics on the same soft-RoCE link, make bench's context
# column: nvmet-rdma exporting /dev/ram0 (vm_brd_up) as namespace 1 of
# $VM_NVME_NQN on $VM_TGT_IP:4420, nvme-rdma connected to it.
VM_NVME_NQN=nqn.2003-01.org.linux-iscsi.iser-vm:nvme0
VM_NVMET=/sys/kernel/config/nvmet

# vm_nvme_disk: set up the target, connect, print the namespace's disk
# (only that on stdout: the set-up's own lines go to stderr)
vm_nvme_disk() {
	vm_nvme_up >&2
	vm_nvme_dev
}

vm_nvme_up() {
	local s=$VM_NVMET/subsystems/$VM_NVME_NQN p=$VM_NVMET/ports/1
	command -v nvme >/dev/null || vm_fail "nvme-cli missing (scripts/packages.txt)"
	vm_brd_up
	vm_must modprobe nvmet-rdma
	vm_must modprobe nvme-rdma
	vm_must mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	vm_must mkdir "$s/namespaces/1"
	echo /dev/ram0 >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable" || vm_fail "nvmet: cannot enable namespace 1"
	vm_must mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo "$VM_TGT_IP" >"$p/addr_traddr"
	echo 4420 >"$p/addr_trsvcid"
	vm_must ln -s "$s" "$p/subsystems/$VM_NVME_NQN"
	vm_must nvme connect -t rdma -a "$VM_TGT_IP" -s 4420 -n "$VM_NVME_NQN"
}

vm_nvme_dev() {
	local d
	# the disk (with native multipath, the head nvmeXnY; its paths
	# nvmeXcZnY have no device node)
	for _ in $(seq 30); do
		for d in /sys/block/nvme*n1; do
			[ -e "$d/device/subsysnqn" ] || continue
			case ${d##*/} in nvme*c*) continue ;; esac
			[ "$(cat "$d/device/subsysnqn")" = "$VM_NVME_NQN" ] || continue
			vm_wait 10 test -b "/dev/${d##*/}" || vm_fail "no /dev/${d##*/}"
			echo "/dev/${d##*/}"
			return 0
		done
		sleep 1
	done
	vm_fail "nvme-rdma: no namespace of $VM_NVME_NQN within 30 s"
}

# vm_nvme_clear: disconnect the host and remove the nvmet configuration
# (the teardown calls it; 0 when nothing is left)
vm_nvme_clear() {
	local p
	if [ -d /sys/class/nvme-fabrics ]; then
		nvme disconnect -n "$VM_NVME_NQN" >/dev/null 2>&1
	fi
	[ -d "$VM_NVMET" ] || return 0
	for p in "$VM_NVMET"/ports/*/subsystems/*; do
		[ -L "$p" ] && rm -f "$p"
	done
	for p in "$VM_NVMET"/ports/*; do
		[ -d "$p" ] && rmdir "$p"
	done
	for p in "$VM_NVMET"/subsystems/*/namespaces/*; do
		[ -d "$p" ] || continue
		echo 0 >"$p/enable"
		rmdir "$p"
	done
	for p in "$VM_NVMET"/subsystems/*; do
		[ -d "$p" ] && rmdir "$p"
	done
	! ls -d "$VM_NVMET"/subsystems/* "$VM_NVMET"/ports/* >/dev/null 2>&1
}

# vm_acl_idle: LIO's ACL of our initiator on vm_target_setup's target
# shows no session (for vm_wait: the target released every session of a
# peer that went away)
vm_acl_idle() {
	grep -q 'No active iSCSI Session' \
		"/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1/acls/$VM_INITIATOR_IQN/info"
}

# vm_slow_lun DELAY_MS: LUN 1 of vm_target_setup's target, a block
# backstore "slow" on a dm-delay device (isdm_slow, over a loop device on
# a tmpfs file of $VM_LUN_SIZE) that delays every I/O by DELAY_MS, mapped
# in the ACL. vm_slow_lun_delay MS changes the delay; vm_slow_lun_remove
# (the scenario's EXIT trap) clears LIO and removes both devices.
vm_slow_lun_table() {
	echo "0 $(blockdev --getsz "$VM_SLOW_LOOP") delay $VM_SLOW_LOOP 0 $1"
}
vm_slow_lun() {
	local t=/iscsi/$VM_TARGET_IQN/tpg1
	local c=/sys/kernel/config/target/iscsi/$VM_TARGET_IQN/tpgt_1
	vm_must modprobe loop
	vm_must modprobe dm_delay
	vm_must truncate -s "$VM_LUN_SIZE" /tmp/slow.img
	VM_SLOW_LOOP=$(losetup -f --show /tmp/slow.img) || vm_fail "losetup failed"
	vm_must dmsetup create --noudevsync isdm_slow --table "$(vm_slow_lun_table "$1")"
	# no udev in the guest: dmsetup makes the node itself
	vm_must dmsetup mknodes isdm_slow
	[ -b /dev/mapper/isdm_slow ] || vm_fail "/dev/mapper/isdm_slow missing after dmsetup mknodes"
	vm_tcli "/backstores/block create name=slow dev=/dev/mapper/isdm_slow" \
		"$t/luns create /backstores/block/slow"
	[ -d "$c/lun/lun_1" ] || vm_fail "target: LUN 1 (block on dm-delay) missing in configfs"
	[ -d "$c/acls/$VM_INITIATOR_IQN/lun_1" ] || vm_fail "target: LUN 1 not mapped in the ACL"
}
vm_slow_lun_delay() {
	vm_must dmsetup suspend --noudevsync isdm_slow
	vm_must dmsetup load isdm_slow --table "$(vm_slow_lun_table "$1")"
	vm_must dmsetup resume --noudevsync isdm_slow
}
vm_slow_lun_remove() {
	timeout 60 targetcli clearconfig confirm=True >/dev/null 2>&1
	dmsetup remove --noudevsync isdm_slow >/dev/null 2>&1
	[ -z "${VM_SLOW_LOOP:-}" ] || losetup -d "$VM_SLOW_LOOP" >/dev/null 2>&1
	rm -f /tmp/slow.img
}

# vm_target_add IQN SIZE [NAME]: another target IQN beside
# vm_target_setup's, on the same iSER portal, its own ramdisk NAME (default
# lun1; give each further target its own) of SIZE, the ACL of
# $VM_INITIATOR_IQN, no authentication
vm_target_add() {
	local t=/iscsi/$1/tpg1 rd=${3:-lun1}
	vm_tcli "/backstores/ramdisk create name=$rd size=$2" \
		"/iscsi create $1" \
		"$t/luns create /backstores/ramdisk/$rd" \
		"$t/portals create $VM_TGT_IP $VM_ISER_PORT" \
		"$t/portals/$VM_TGT_IP:$VM_ISER_PORT enable_iser true" \
		"$t/acls create $VM_INITIATOR_IQN" \
		"$t set attribute authentication=0"
	[ "$(cat "/sys/kernel/config/target/iscsi/$1/tpgt_1/np/$VM_TGT_IP:$VM_ISER_PORT/iser" 2>/dev/null)" = 1 ] ||
		vm_fail "target: $1 has no iSER portal in configfs"
}

# vm_siw_iser_portal TPGDIR IP:PORT: an iSER portal that can listen over
# iWARP.  An LIO portal is a TCP portal first (mkdir of np/IP:PORT opens a
# TCP listener on IP:PORT) and enable_iser adds the iSER one beside it.
# Over soft-RoCE the two do not meet, but siw's listener is a TCP socket of
# the same network stack, so its bind fails with EADDRINUSE (isert:
# "rdma_listen() failed: -98", targetcli: "Cannot change iser").  Both
# listeners are created in the caller's network namespace (sock_create()
# in iscsit_setup_np() and in siw_create_listen()), so the portal's
# directory is made from a namespace of its own (a dummy device with the
# same address, for the bind), which takes LIO's TCP listener there, and
# iser is switched on from this one.  vm_teardown deletes the namespace.
VM_SIW_NETNS=iser-vm-lio-tcp
vm_siw_iser_portal() {
	local np=$1/np/$2
	if [ ! -e "/run/netns/$VM_SIW_NETNS" ]; then
		vm_must ip netns add "$VM_SIW_NETNS"
		vm_must ip -n "$VM_SIW_NETNS" link add dummy0 type dummy
		vm_must ip -n "$VM_SIW_NETNS" addr add "${2%:*}/32" dev dummy0
		vm_must ip -n "$VM_SIW_NETNS" link set dummy0 up
	fi
	vm_must nsenter --net="/run/netns/$VM_SIW_NETNS" mkdir "$np"
	vm_log "+ echo 1 >$np/iser"
	echo 1 >"$np/iser" || vm_fail "cannot enable iSER on $2 over siw"
}

# ---------------------------------------------------------------------------
# open-iscsi initiator

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
# vm_sessions_of_port PORT: the sysfs directories of the iSCSI sessions
# whose portal has port PORT (several iser_tgt instances, one per port;
# during a new login the old session may still be there), one per line
vm_sessions_of_port() {
	local sd c
	for sd in /sys/class/iscsi_session/session*; do
		for c in "$sd"/device/connection*/iscsi_connection/connection*/persistent_port; do
			[ "$(cat "$c" 2>/dev/null)" = "$1" ] && echo "$sd"
		done
	done
}

# vm_disk_of_port PORT: the block device name (sdX) of such a session
vm_disk_of_port() {
	local sd b
	for sd in $(vm_sessions_of_port "$1"); do
		for b in "$sd"/device/target*/*/block/*; do
			[ -e "$b" ] && basename "$b" && return 0
		done
	done
	return 1
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

# vm_ist_sum KEY: the sum of KEY over the normal sessions' connections in
# our target's debugfs file (rx_held, imm_in_place); empty when our
# ib_isert does not run in this guest or shows no normal session
vm_ist_sum() {
	local f=/sys/kernel/debug/ib_isert/connections
	[ -r "$f" ] || return 0
	awk -v k="$1:" -v RS= '/(^|\n)session: normal(\n|$)/ {
		n = split($0, line, "\n")
		for (i = 1; i <= n; i++) {
			split(line[i], w, " ")
			if (w[1] == k) { s += w[2]; seen = 1 }
		}
	} END { if (seen) print s + 0 }' "$f"
}
vm_ist_rx_back() { [ "$(vm_ist_sum rx_held)" = 0 ]; }
# our target shows no normal session any more (its teardown finished)
vm_ist_no_session() { [ -z "$(vm_ist_sum rx_held)" ]; }

# vm_ist_unsignaled_check DEV: with our target in this guest, SCSI Responses
# went out unsignaled (unsignaled_sends); signal_every refuses values outside
# 1..16; with 1, a verified run posts no Send unsignaled; back at 16,
# single WRITEs go out until a command of an unsignaled Send waits for a
# later completion (unsignaled_held), for the logout's teardown to complete
# (the caller checks that the connection goes: vm_ist_no_session)
vm_ist_unsignaled_check() {
	local dev=$1 p=/sys/module/ib_isert/parameters/signal_every
	local q0 q1 i v
	q0=$(vm_ist_sum unsignaled_sends)
	[ -n "$q0" ] || return 0
	[ "$q0" -gt 0 ] || vm_fail "our target sent no SCSI Response unsignaled"
	for v in 0 17 -1 x ""; do
		echo "$v" 2>/dev/null >"$p" &&
			vm_fail "signal_every accepted '$v'"
	done
	[ "$(cat "$p")" = 16 ] ||
		vm_fail "signal_every is $(cat "$p") after refused writes, not 16"
	vm_module_params ib_isert.signal_every=1
	vm_fio "$dev" signal-every-1 <<-EOF
		[rand-4k-qd16]
		rw=randwrite
		bs=4k
		iodepth=16
		size=4M
	EOF
	q1=$(vm_ist_sum unsignaled_sends)
	[ "$q1" = "$q0" ] ||
		vm_fail "with signal_every 1 our target still sent $((q1 - q0)) Responses unsignaled"
	vm_module_params ib_isert.signal_every=16
	for i in $(seq 0 16); do
		[ "$(vm_ist_sum unsignaled_held)" -gt 0 ] && break
		dd if=/dev/urandom of="$dev" bs=4k count=1 seek=$((4096 + i)) \
			oflag=direct status=none || vm_fail "a single 4 KiB WRITE failed"
	done
	[ "$(vm_ist_sum unsignaled_held)" -gt 0 ] ||
		vm_fail "no command of an unsignaled Send waits after 17 single WRITEs"
	vm_log "our target: $q1 Responses unsignaled, $(vm_ist_sum unsignaled_held) commands waiting for a later completion at the logout"
}

# vm_ist_rx_check: with our target in this guest, every receive buffer a
# WRITE held for its immediate data (used in place) is back once the I/O
# is over; logs how many WRITEs used it
vm_ist_rx_check() {
	local held
	held=$(vm_ist_sum rx_held)
	[ -n "$held" ] || return 0
	vm_wait 10 vm_ist_rx_back ||
		vm_fail "our target: $(vm_ist_sum rx_held) receive buffer(s) still held by WRITEs after the I/O ended"
	vm_log "our target: $(vm_ist_sum imm_in_place) WRITE(s) used their immediate data in place; no receive buffer held"
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

# vm_disk_requests DEV: the reads and writes DEV has completed so far
# (/sys/block/<disk>/stat), to divide what a workload cost by
vm_disk_requests() {
	awk '{ print $1 + $5 }' "/sys/block/${1##*/}/stat"
}

# vm_prefill DEV: write the whole LUN once, so that reads return written
# blocks and not a sparse ramdisk (the benchmark and the tools behind it)
vm_prefill() {
	vm_must fio --name=prefill --filename="$1" --rw=write --bs=1M --iodepth=8 \
		--direct=1 --ioengine=libaio --output=/dev/null
}

# vm_bench_disk [--iblock]: the pairing set up as the benchmark has it
# (soft-RoCE, both roles, the ramdisk LUN or with --iblock the brd one),
# logged in, checked and prefilled; the disk in VM_BENCH_DEV (a variable,
# not printed: the setup must run in this shell, not in a command
# substitution)
vm_bench_disk() {
	vm_rxe_up
	vm_load_roles
	vm_target_setup "$@"
	vm_iscsid_start
	vm_node_new
	VM_BENCH_DEV=$(vm_login_disk) || exit 1
	vm_check_disk "$VM_BENCH_DEV"
	vm_prefill "$VM_BENCH_DEV"
}

# vm_iser_tgt_start OUT CASES [ARGS...]: start tests/vm/tools/iser_tgt (a
# hostile userspace target) on $VM_TGT_IP port $VM_ISER_TGT_PORT (3262;
# set it for the call to run another instance on another port) with the
# cases CASES, its summary lines to OUT (stderr to OUT.err); sets
# VM_ISER_TGT_PID.
VM_ISER_TGT_PORT=3262
VM_ISER_TGT_IQN=iqn.2003-01.org.linux-iscsi.iser-vm:hostile
vm_iser_tgt_start() {
	local out=$1 cases=$2 tgt=$VM_REPO/build/vm/tools/iser_tgt
	shift 2
	[ -x "$tgt" ] || vm_fail "$tgt is not built (make vm-tools)"
	vm_log "+ iser_tgt -c $cases $* $VM_TGT_IP $VM_ISER_TGT_PORT"
	"$tgt" -c "$cases" "$@" "$VM_TGT_IP" "$VM_ISER_TGT_PORT" >"$out" \
		2>"$out.err" &
	VM_ISER_TGT_PID=$!
}

# vm_iser_tgt_login [KEY=VALUE...]: a node for iser_tgt's portal (port
# $VM_ISER_TGT_PORT) with short NOP-Out and replacement timeouts, 8 KiB
# receive data segments and the node settings given, then login; prints
# the disk of that session.
vm_iser_tgt_login() {
	local portal=$VM_TGT_IP:$VM_ISER_TGT_PORT kv dev
	vm_must iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" -I iser -o new >&2
	for kv in node.conn[0].timeo.noop_out_interval=5 \
		node.conn[0].timeo.noop_out_timeout=5 \
		node.session.timeo.replacement_timeout=20 \
		node.conn[0].iscsi.MaxRecvDataSegmentLength=8192 "$@"; do
		vm_must iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" \
			-I iser -o update -n "${kv%%=*}" -v "${kv#*=}" >&2
	done
	vm_run timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" -p "$portal" \
		-I iser --login >&2 ||
		vm_fail "the first login to iser_tgt failed: $(cat "$VM_SCEN_DIR"/*.err 2>/dev/null)"
	dev=/dev/$(vm_wait 30 vm_disk_of_port "$VM_ISER_TGT_PORT" &&
		vm_disk_of_port "$VM_ISER_TGT_PORT") ||
		vm_fail "no disk for the iser_tgt session"
	vm_wait 10 test -b "$dev" || vm_fail "$dev did not appear"
	vm_log "logged in to iser_tgt, disk $dev" >&2
	echo "$dev"
}

# vm_iser_tgt_logout: log out of iser_tgt's portal; wait for the tool.
vm_iser_tgt_logout() {
	vm_run timeout 60 iscsiadm -m node -T "$VM_ISER_TGT_IQN" \
		-p "$VM_TGT_IP:$VM_ISER_TGT_PORT" -I iser --logout ||
		vm_fail "logout from iser_tgt failed"
	vm_wait 15 vm_no_sessions || vm_fail "session still present after logout"
	vm_wait 30 sh -c "! kill -0 $VM_ISER_TGT_PID" || vm_fail "iser_tgt did not finish"
	wait "$VM_ISER_TGT_PID" || vm_fail "iser_tgt failed"
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

# ---------------------------------------------------------------------------
# fio

# vm_fio DEV TAG: run the fio jobs read from stdin (job sections) on DEV
# with crc32c verification; fail unless every job wrote, read back and
# verified without an error.  JSON result in $VM_SCEN_DIR/fio-TAG.json.
# No disk statistics (disk_util=0): nothing reads them, and fio's walk of
# /sys/block printed "stat: No such file or directory" into the log when
# another session's disk went away meanwhile (churn's login cycles).
vm_fio() {
	local dev=$1 tag=$2 jobf json rc
	jobf=$VM_SCEN_DIR/fio-$tag.fio
	json=$VM_SCEN_DIR/fio-$tag.json
	{
		cat <<-EOF
			[global]
			filename=$dev
			ioengine=libaio
			direct=1
			verify=crc32c
			verify_fatal=1
			do_verify=1
			stonewall
			group_reporting=0
			disk_util=0
		EOF
		cat
	} >"$jobf"
	vm_log "fio $tag on $dev"
	fio --output-format=json --output="$json" "$jobf"
	rc=$?
	/usr/bin/python3 - "$json" "$rc" <<-'EOF' || vm_fail "fio $tag: $(cat "$VM_SCEN_DIR/fio-$tag.err" 2>/dev/null)"
		import json, sys
		path, rc = sys.argv[1], int(sys.argv[2])
		err = open(path[:-5] + ".err", "w")
		try:
		    text = open(path).read()
		    data = json.loads(text[text.index("{"):])
		except Exception as e:
		    err.write("fio exit %d, no JSON output (%s)" % (rc, e)); sys.exit(1)
		bad = []
		for j in data["jobs"]:
		    w, r = j["write"]["io_bytes"], j["read"]["io_bytes"]
		    line = "%-14s err=%d write=%dKiB read=%dKiB wIOPS=%.0f rIOPS=%.0f rBW=%.1fMiB/s" % (
		        j["jobname"], j["error"], w // 1024, r // 1024,
		        j["write"]["iops"], j["read"]["iops"], j["read"]["bw"] / 1024.0)
		    print(line)
		    if j["error"]:
		        bad.append("%s error %d" % (j["jobname"], j["error"]))
		    elif w == 0 or r < w:
		        bad.append("%s: wrote %d bytes, read back %d: verify did not run" % (j["jobname"], w, r))
		if rc != 0 and not bad:
		    bad.append("fio exit status %d" % rc)
		err.write("; ".join(bad))
		sys.exit(1 if bad else 0)
	EOF
}

# ---------------------------------------------------------------------------
# teardown, run after every scenario whatever happened

# vm_lio_clear: remove every LIO object through configfs, leaves first:
# what targetcli clearconfig does, without its start-up (seconds of
# Python under TCG, in every row).  0 when nothing is left.
vm_lio_clear() {
	local cfs=/sys/kernel/config/target d l
	for d in "$cfs"/iscsi/*/tpgt_*; do
		[ -d "$d" ] || continue
		echo 0 >"$d/enable" 2>/dev/null
		for l in "$d"/acls/*/lun_*/*; do
			[ -L "$l" ] && rm -f "$l"
		done
		for l in "$d"/acls/*/lun_*; do
			[ -d "$l" ] && rmdir "$l"
		done
		for l in "$d"/acls/*; do
			[ -d "$l" ] && rmdir "$l"
		done
		for l in "$d"/lun/lun_*/*; do
			[ -L "$l" ] && rm -f "$l"
		done
		for l in "$d"/lun/lun_* "$d"/np/*; do
			[ -d "$l" ] && rmdir "$l"
		done
		rmdir "$d"
	done
	for d in "$cfs"/iscsi/iqn.* "$cfs"/iscsi/eui.* "$cfs"/iscsi/naa.*; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$cfs"/core/*_[0-9]*/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$cfs"/core/*_[0-9]*; do
		[ -d "$d" ] && rmdir "$d"
	done
	! ls -d "$cfs"/iscsi/*/tpgt_* "$cfs"/core/*_[0-9]* >/dev/null 2>&1
}

# vm_teardown: log out, stop iscsid, clear LIO, unload the iSER stack and
# rdma_rxe or siw.  Prints one line per problem on stdout (empty: all
# clean).
vm_teardown() {
	local m
	vm_memfrag_stop
	if [ "$(vm_session_count)" != 0 ]; then
		timeout 60 iscsiadm -m node -U all >/dev/null 2>&1 ||
			timeout 60 iscsiadm -m session -u >/dev/null 2>&1
		vm_wait 15 vm_no_sessions || echo "iSCSI session still present after logout"
	fi
	vm_log "teardown: stop iscsid" >&2
	vm_iscsid_stop
	rm -rf /etc/iscsi/nodes/* /etc/iscsi/send_targets/*
	if vm_loaded target_core_mod; then
		vm_log "teardown: clear LIO's configuration" >&2
		if ! timeout $((60 * ${VM_TIMEOUT_SCALE:-1})) bash -c ". '$VM_REPO/tests/vm/guest/lib.sh'; vm_lio_clear"; then
			vm_log "teardown: configfs left entries; targetcli clearconfig" >&2
			timeout 60 targetcli clearconfig confirm=True >/dev/null 2>&1 ||
				echo "targetcli clearconfig failed"
		fi
		# the fabric's configfs directory pins iscsi_target_mod
		rmdir /sys/kernel/config/target/iscsi 2>/dev/null
	fi
	rm -f /tmp/lun0.img
	if vm_loaded nvmet; then
		vm_log "teardown: NVMe over Fabrics" >&2
		vm_nvme_clear || echo "nvmet's configuration left entries"
	fi
	# a userspace peer a failed scenario left running holds the RDMA
	# devices open (uverbs), and their removal would wait for it
	if pkill -KILL -f "$VM_REPO/build/vm/tools/" 2>/dev/null; then
		vm_log "teardown: killed a leftover userspace peer" >&2
		sleep 1
	fi
	# (run in a shell of its own, without the scenario's VM_RDMA: both kinds)
	vm_log "teardown: rxe, siw, veth" >&2
	for m in rxe0 rxe1 siw0 siw1; do
		[ -e "/sys/class/infiniband/$m" ] && rdma link delete "$m" >/dev/null 2>&1
	done
	ip link delete veth0 >/dev/null 2>&1
	ip netns delete "$VM_SIW_NETNS" >/dev/null 2>&1
	# the modules a scenario must be able to unload, in dependency order
	for m in ib_iser ib_isert iser_dm iscsi_target_mod target_core_file \
		target_core_iblock target_core_pscsi target_core_user \
		target_core_mod nvme_rdma nvme_fabrics nvmet_rdma nvmet brd \
		rdma_rxe siw; do
		vm_loaded "$m" || continue
		vm_log "rmmod $m" >&2
		timeout 60 rmmod "$m" >/dev/null 2>&1
		vm_loaded "$m" || continue
		echo "cannot unload $m (refcnt $(cat "/sys/module/$m/refcnt" 2>/dev/null), holders: $(cd "/sys/module/$m/holders" 2>/dev/null && echo *))"
	done
	# the stack below (ib_core, rdma_cm, libiscsi, scsi_transport_iscsi,
	# iscsi_tcp, veth) stays: no scenario's result depends on reloading
	# it, and unloading and loading it again cost every row seconds
	return 0
}

# vm_kmemleak FILE: on a kernel with kmemleak (the debug kernel of make
# check-debug), scan twice and write the unreferenced objects it reports to
# FILE, then clear the list for the next scenario. kmemleak reports only
# objects older than 5 s, so the first scan waits that long after the
# scenario's last allocation. Returns 1 when FILE has a report, 0 when it
# has none or the kernel has no kmemleak.
vm_kmemleak() {
	local k=/sys/kernel/debug/kmemleak
	[ -w "$k" ] || return 0
	sleep 6
	echo scan >"$k" 2>/dev/null
	echo scan >"$k" 2>/dev/null
	cat "$k" >"$1" 2>/dev/null
	echo clear >"$k" 2>/dev/null
	[ ! -s "$1" ]
}

# vm_klog_check FILE: print the offending kernel log lines, if any.
vm_klog_check() {
	grep -aE "$VM_BAD_KLOG" "$1"
}

# ---------------------------------------------------------------------------
# fragmented memory (tests/vm/tools/memfrag)

VM_MEMFRAG_SYSCTLS="min_free_kbytes watermark_scale_factor compact_unevictable_allowed lowmem_reserve_ratio"

# vm_memfrag_start: leave the guest's free memory in single pages until
# vm_memfrag_stop: vm.min_free_kbytes 512, vm.watermark_scale_factor 1 and
# no lowmem reserve of DMA32 against Normal (the pages the allocator keeps
# back from a process stay few), the page cache dropped,
# vm.compact_unevictable_allowed 0 (compaction leaves memfrag's locked
# pages where they are); then memfrag touches pages until the DMA32 and
# Normal zones have no free block of order 7 or more (or 1 MiB free) and
# gives back its pages of odd frame number. /proc/buddyinfo must then show
# no free block of order 7 or more in those zones, else the scenario fails
# as unable to set up its condition. The values changed are saved in
# $VM_SCEN_DIR and restored by vm_memfrag_stop.
vm_memfrag_start() {
	local frag=$VM_REPO/build/vm/tools/memfrag out=$VM_SCEN_DIR/memfrag.out
	local k big try
	[ -x "$frag" ] || vm_fail "$frag is not built (make vm-tools)"
	for k in $VM_MEMFRAG_SYSCTLS; do
		cat "/proc/sys/vm/$k" >"$VM_SCEN_DIR/memfrag.$k"
	done
	echo 0 >/proc/sys/vm/compact_unevictable_allowed
	echo 1 >/proc/sys/vm/watermark_scale_factor
	echo 512 >/proc/sys/vm/min_free_kbytes
	# DMA (kept), DMA32 (none against Normal), Normal, Movable, Device
	echo 256 2147483647 32 0 0 >/proc/sys/vm/lowmem_reserve_ratio 2>/dev/null
	# a block freed by someone else after memfrag's last look can merge
	# again: up to three tries
	for try in 1 2 3; do
		vm_memfrag_kill
		sync
		echo 3 >/proc/sys/vm/drop_caches
		"$frag" 1024 7 >"$out" 2>&1 &
		echo $! >"$VM_SCEN_DIR/memfrag.pid"
		vm_wait 300 grep -q '^ready' "$out" ||
			vm_fail "memfrag did not get ready: $(cat "$out")"
		vm_log "memfrag (try $try): $(cat "$out") (KiB kept, KiB freed in single pages)"
		cat /proc/buddyinfo
		big=$(awk '$4 == "DMA32" || $4 == "Normal" { for (i = 12; i <= NF; i++) s += $i } END { print s + 0 }' /proc/buddyinfo)
		[ "$big" = 0 ] && return 0
	done
	vm_fail "could not fragment memory: $big free block(s) of order 7 or more left"
}

# vm_memfrag_stop: end memfrag and restore what vm_memfrag_start changed;
# safe when it never ran
vm_memfrag_kill() {
	local p=$VM_SCEN_DIR/memfrag.pid
	if [ -f "$p" ]; then
		kill "$(cat "$p")" 2>/dev/null
		vm_wait 30 sh -c "! kill -0 $(cat "$p") 2>/dev/null"
		rm -f "$p"
	fi
}

vm_memfrag_stop() {
	local k
	vm_memfrag_kill
	for k in $VM_MEMFRAG_SYSCTLS; do
		[ -f "$VM_SCEN_DIR/memfrag.$k" ] || continue
		cat "$VM_SCEN_DIR/memfrag.$k" >"/proc/sys/vm/$k"
		rm -f "$VM_SCEN_DIR/memfrag.$k"
	done
}
