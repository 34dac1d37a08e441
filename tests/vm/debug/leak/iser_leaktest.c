// SPDX-License-Identifier: GPL-2.0
/*
 * A module that leaks on purpose, for the self-test of the rig's kmemleak
 * gate (scripts/check-debug.sh): it allocates a few objects at load time
 * and forgets them, as a connection teardown that misses a free would.
 * Built only for the debug kernel, never installed.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static unsigned int leaktest_objects = 3;
module_param(leaktest_objects, uint, 0444);
MODULE_PARM_DESC(leaktest_objects, "objects to leak at load time (default 3)");

static int __init leaktest_init(void)
{
	unsigned int i;

	for (i = 0; i < leaktest_objects; i++) {
		void *p = kmalloc(512, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		memset(p, 0x5a, 512);
		/* the only pointer goes out of scope: kmemleak must see it */
	}
	pr_info("leaked %u objects of 512 bytes on purpose\n",
		leaktest_objects);
	return 0;
}

static void __exit leaktest_exit(void)
{
}

module_init(leaktest_init);
module_exit(leaktest_exit);
MODULE_DESCRIPTION("iser rig: a deliberate leak for the kmemleak gate's self-test");
MODULE_LICENSE("GPL");
