# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash source-path=SCRIPTDIR
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
	# the NICs' addresses, which lib/pair.sh gives qemu
	VM_TGT_MAC=52:54:00:12:78:01
	VM_INI_MAC=52:54:00:12:78:02
	# the second link of a multipath row (lib/pair.sh vm_pair_nlinks)
	VM_TGT_MAC2=52:54:00:12:79:01
	VM_INI_MAC2=52:54:00:12:79:02
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

# vm_log TEXT: a line with the time of day (bash's own strftime: no
# process for each line, which under TCG costs a tenth of a second).
vm_log() {
	printf '[%(%T)T] %s\n' -1 "$*"
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
# CMD's words are expanded once, by the caller: a reading that must be
# taken again each time goes in a function (not `test "$(...)" = X`).
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

# the rest of the library, one file per concern
# shellcheck source=lib/boot.sh
. "$VM_GUEST_DIR/lib/boot.sh"
# shellcheck source=lib/modules.sh
. "$VM_GUEST_DIR/lib/modules.sh"
# shellcheck source=lib/rdma.sh
. "$VM_GUEST_DIR/lib/rdma.sh"
# shellcheck source=lib/peer.sh
. "$VM_GUEST_DIR/lib/peer.sh"
# shellcheck source=lib/lio.sh
. "$VM_GUEST_DIR/lib/lio.sh"
# shellcheck source=lib/iscsi.sh
. "$VM_GUEST_DIR/lib/iscsi.sh"
# shellcheck source=lib/ist.sh
. "$VM_GUEST_DIR/lib/ist.sh"
# shellcheck source=lib/iser-tgt.sh
. "$VM_GUEST_DIR/lib/iser-tgt.sh"
# shellcheck source=lib/fio.sh
. "$VM_GUEST_DIR/lib/fio.sh"
# shellcheck source=lib/mem.sh
. "$VM_GUEST_DIR/lib/mem.sh"
# shellcheck source=lib/bench.sh
. "$VM_GUEST_DIR/lib/bench.sh"
# shellcheck source=lib/teardown.sh
. "$VM_GUEST_DIR/lib/teardown.sh"
# shellcheck source=lib/memfrag.sh
. "$VM_GUEST_DIR/lib/memfrag.sh"
# shellcheck source=lib/mpath.sh
. "$VM_GUEST_DIR/lib/mpath.sh"
