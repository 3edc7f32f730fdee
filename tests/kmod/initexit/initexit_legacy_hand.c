// SPDX-License-Identifier: GPL-2.0
/* Legacy: hand-written init_module() and cleanup_module(), no macros. */
#include <linux/init.h>
#include <linux/module.h>

int init_module(void)
{
	pr_info("initexit-test: %s init init_module\n", KBUILD_MODNAME);
	return 0;
}

void cleanup_module(void)
{
	pr_info("initexit-test: %s exit cleanup_module\n", KBUILD_MODNAME);
}

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("legacy hand-written init_module/cleanup_module module");
