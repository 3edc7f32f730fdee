// SPDX-License-Identifier: GPL-2.0
/*
 * Pairs with a NULL init (exit only) and module_exit() without module_init():
 * the 2003 loader called the NULL init of module_exit's entry.  Loading must
 * succeed, the module must be removable, and both exits run on rmmod.
 */
#include <linux/init.h>
#include <linux/module.h>

static void __exit e0_exit(void)
{
	pr_info("initexit-test: %s exit e0\n", KBUILD_MODNAME);
}

static void __exit legacy_exit(void)
{
	pr_info("initexit-test: %s exit legacy\n", KBUILD_MODNAME);
}

module_init_exit(5, NULL, e0_exit);
module_exit(legacy_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() exit-only pairs test");
