// SPDX-License-Identifier: GPL-2.0
/*
 * iser_dm: the iSER datamover core shared by ib_iser (initiator) and
 * ib_isert (target).
 */
#include <linux/module.h>

#include "isdm/isdm.h"
#include "core.h"

static int __init isdm_init(void)
{
	return isdm_device_init();
}

static void __exit isdm_exit(void)
{
	isdm_device_exit();
}

module_init(isdm_init);
module_exit(isdm_exit);

MODULE_DESCRIPTION("iSER datamover core (RFC 5046, IBTA Annex A12)");
MODULE_VERSION(ISDM_VERSION);
MODULE_LICENSE("GPL");
