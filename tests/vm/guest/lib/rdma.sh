# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: soft-RoCE or soft-iWARP on a veth pair inside one guest.
# Sourced by ../lib.sh, with the rest of the library.

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

# vm_rdma_qps: the queue pairs on this guest's RDMA devices, kernel and
# user ones, but the GSI QPs each port has of its own
vm_rdma_qps() {
	rdma res show qp 2>/dev/null | grep -vc 'type GSI'
}
