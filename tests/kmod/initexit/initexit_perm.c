// SPDX-License-Identifier: GPL-2.0
/*
 * Permanent: the SECOND pair has an init and no exit, so the module must
 * show [permanent] and refuse rmmod without force.  The first pair is
 * complete: a loader that only looks at the first entry (the 2003 patch
 * read pairs->init instead of pairs[i]) gets this wrong.
 */
#include <linux/init.h>
#include <linux/module.h>

static int __init p0_init(void)
{
	pr_info("initexit-test: %s init p0\n", KBUILD_MODNAME);
	return 0;
}

static void __exit p0_exit(void)
{
	pr_info("initexit-test: %s exit p0\n", KBUILD_MODNAME);
}

static int __init p1_init(void)
{
	pr_info("initexit-test: %s init p1\n", KBUILD_MODNAME);
	return 0;
}

module_init_exit(-10, p0_init, p0_exit);
module_init_exit(10, p1_init, NULL);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() pair without exit: permanent module");
