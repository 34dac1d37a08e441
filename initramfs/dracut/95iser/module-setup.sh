#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dracut module "iser": root on an iSER LUN with dracut's own iscsi
# module (rd.iscsi.*, netroot=iscsi:...), which logs in with iscsiadm.
# This module adds what iSER needs on top of it:
#   - iser_dm and ib_iser (DKMS: updates/dkms/, preferred by modprobe),
#     rdma_cm, rdma_rxe and the RDMA drivers of common NICs;
#   - rd.iscsi.transport=iser: becomes rd.iscsi.param=iface.transport_name=iser
#     (and a bounded login timeout) for dracut's iscsiroot;
#   - rd.iser.rxe=IFACE: a soft-RoCE device on IFACE (iproute2's rdma);
#   - on each interface that comes online, a bounded wait for an ACTIVE
#     RDMA port before dracut's iscsi module logs in.
# Not included unless asked for: dracut --add iser, or
# add_dracutmodules+=" iser " in /etc/dracut.conf.d/.

check() {
	require_binaries iscsiadm || return 1
	return 255
}

depends() {
	echo iscsi network
	return 0
}

installkernel() {
	instmods iser_dm ib_iser rdma_cm rdma_rxe
	# RDMA drivers of the NICs (hostonly: only those in use).
	instmods mlx5_ib mlx4_ib irdma bnxt_re qedr iw_cxgb4 ocrdma erdma mana_ib efa
}

# shellcheck disable=SC2154 # dracut sets moddir
install() {
	inst_multiple -o rdma ip
	inst_simple "$moddir/iser-lib.sh" /lib/iser-lib.sh
	inst_hook cmdline 89 "$moddir/parse-iser.sh"
	inst_hook initqueue/online 50 "$moddir/iser-online.sh"
}
