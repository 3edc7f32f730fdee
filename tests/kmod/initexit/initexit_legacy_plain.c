// SPDX-License-Identifier: GPL-2.0
/* Legacy: module_init() and module_exit() only, as every module today. */
#include <linux/init.h>
#include <linux/module.h>

static int __init plain_init(void)
{
	pr_info("initexit-test: %s init plain_init\n", KBUILD_MODNAME);
	return 0;
}

static void __exit plain_exit(void)
{
	pr_info("initexit-test: %s exit plain_exit\n", KBUILD_MODNAME);
}

module_init(plain_init);
module_exit(plain_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("legacy module_init/module_exit module");
