// SPDX-License-Identifier: GPL-2.0
/*
 * ib_isert: iSER target: the LIO ISCSI_INFINIBAND transport on the iSER datamover core.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "isdm/isdm.h"

static void ist_remove_device(struct ib_device *ib_dev)
{
	/* no connection of this module holds a device yet */
}

static struct isdm_ulp ist_ulp = {
	.name		= KBUILD_MODNAME,
	.remove_device	= ist_remove_device,
};

static int __init ist_init(void)
{
	return isdm_register_ulp(&ist_ulp);
}

static void __exit ist_exit(void)
{
	isdm_unregister_ulp(&ist_ulp);
}

module_init(ist_init);
module_exit(ist_exit);

MODULE_DESCRIPTION("iSER target: the LIO ISCSI_INFINIBAND transport");
MODULE_LICENSE("GPL");
