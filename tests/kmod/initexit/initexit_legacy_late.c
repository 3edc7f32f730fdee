// SPDX-License-Identifier: GPL-2.0
/*
 * Legacy: late_initcall() plus module_exit(), as fs/btrfs/super.c does.
 * In a module *_initcall() means module_init(): one unloadable pair.
 */
#include <linux/init.h>
#include <linux/module.h>

static int __init late_init(void)
{
	pr_info("initexit-test: %s init late_init\n", KBUILD_MODNAME);
	return 0;
}

static void __exit late_exit(void)
{
	pr_info("initexit-test: %s exit late_exit\n", KBUILD_MODNAME);
}

late_initcall(late_init);
module_exit(late_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("legacy late_initcall + module_exit module");
