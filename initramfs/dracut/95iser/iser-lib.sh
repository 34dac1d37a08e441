# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Functions of the dracut module "iser", sourced by its hooks (POSIX sh;
# getarg, warn, info and die come from dracut-lib.sh). The paths are
# variables so that tests/pkg/initramfs-check.sh can run them on the host.

ISER_SYSFS=${ISER_SYSFS:-/sys}
ISER_CMDLINE_D=${ISER_CMDLINE_D:-/etc/cmdline.d}
ISER_RDMA_WAIT=${ISER_RDMA_WAIT:-30}    # seconds for an ACTIVE RDMA port
ISER_LOGIN_TIMEOUT=15                   # node.conn[0].timeo.login_timeout

# Sets ISER_TRANSPORT to iser or tcp (also when unset), or dies.
iser_dracut_transport() {
	ISER_TRANSPORT=$(getarg rd.iscsi.transport=)
	case ${ISER_TRANSPORT:=tcp} in
	tcp | iser) ;;
	*) die "iser: rd.iscsi.transport=$ISER_TRANSPORT: only tcp and iser are known" ;;
	esac
}

# cmdline hook: translate rd.iscsi.transport=iser into dracut's
# rd.iscsi.param (iscsiroot passes each to iscsiadm --op=update).
iser_dracut_cmdline() {
	iser_dracut_transport
	[ "$ISER_TRANSPORT" = iser ] || return 0
	mkdir -p "$ISER_CMDLINE_D"
	echo "rd.iscsi.param=iface.transport_name=iser rd.iscsi.param=node.conn[0].timeo.login_timeout=$ISER_LOGIN_TIMEOUT" \
		>"$ISER_CMDLINE_D/95-iser.conf"
	modprobe ib_iser || die "iser: cannot load ib_iser"
	info "iser: iSCSI logins over iSER"
}

iser_dracut_rdma_ports() {
	for _s in "$ISER_SYSFS"/class/infiniband/*/ports/*/state; do
		[ -r "$_s" ] || continue
		_port=${_s%/state}
		_dev=${_port%/ports/*}
		read -r _st <"$_s"
		echo "${_dev##*/}/${_port##*/} $_st"
	done
}

# online hook: $1 is the interface that came up.
iser_dracut_online() {
	iser_dracut_transport
	[ "$ISER_TRANSPORT" = iser ] || return 0
	_rxe=$(getarg rd.iser.rxe=)
	if [ -n "$_rxe" ]; then
		[ -e "$ISER_SYSFS/class/net/$_rxe" ] ||
			die "iser: rd.iser.rxe=$_rxe: no such network device"
		_have=
		for _p in "$ISER_SYSFS"/class/infiniband/*/parent; do
			[ -r "$_p" ] || continue
			read -r _par <"$_p"
			[ "$_par" = "$_rxe" ] && _have=1
		done
		if [ -z "$_have" ]; then
			modprobe rdma_rxe || die "iser: cannot load rdma_rxe"
			info "iser: rdma link add rxe0 type rxe netdev $_rxe"
			rdma link add rxe0 type rxe netdev "$_rxe" ||
				die "iser: cannot create the soft-RoCE device on $_rxe"
		fi
	fi
	_w=0
	until iser_dracut_rdma_ports | grep -q ' 4: ACTIVE$'; do
		if [ "$_w" -ge "$ISER_RDMA_WAIT" ]; then
			_ports=$(iser_dracut_rdma_ports)
			[ -n "$_ports" ] ||
				die "iser: no RDMA device after ${ISER_RDMA_WAIT}s ($1 online); for soft-RoCE set rd.iser.rxe=IFACE"
			die "iser: no RDMA port became ACTIVE in ${ISER_RDMA_WAIT}s: $_ports"
		fi
		sleep 1
		_w=$((_w + 1))
	done
}
