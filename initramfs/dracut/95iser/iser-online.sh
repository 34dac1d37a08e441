#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dracut initqueue/online hook ($1: the interface that came online):
# soft-RoCE on rd.iser.rxe=IFACE, then wait (bounded) for an ACTIVE
# RDMA port before dracut's iscsi module logs in over iSER.
# shellcheck source=initramfs/dracut/95iser/iser-lib.sh
. /lib/iser-lib.sh
iser_dracut_online "$1"
