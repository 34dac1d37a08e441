#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dracut cmdline hook: rd.iscsi.transport=iser for dracut's iscsi module.
# shellcheck source=initramfs/dracut/95iser/iser-lib.sh
. /lib/iser-lib.sh
iser_dracut_cmdline
