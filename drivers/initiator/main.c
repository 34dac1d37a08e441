// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: iSER initiator: the open-iscsi transport "iser" on the iSER datamover core.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "isdm/isdm.h"

static void isi_remove_device(struct ib_device *ib_dev)
{
	/* no connection of this module holds a device yet */
}

static struct isdm_ulp isi_ulp = {
	.name		= KBUILD_MODNAME,
	.remove_device	= isi_remove_device,
};

static int __init isi_init(void)
{
	return isdm_register_ulp(&isi_ulp);
}

static void __exit isi_exit(void)
{
	isdm_unregister_ulp(&isi_ulp);
}

module_init(isi_init);
module_exit(isi_exit);

MODULE_DESCRIPTION("iSER initiator: the open-iscsi transport \"iser\"");
MODULE_LICENSE("GPL");
