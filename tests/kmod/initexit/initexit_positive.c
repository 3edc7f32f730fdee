// SPDX-License-Identifier: GPL-2.0
/*
 * A pair whose init returns a positive value.  As for a module_init() that
 * does, the loader warns ("suspiciously returned") and counts it as a
 * success: the next pair's init runs, the module loads, and on unload all
 * three exits run in reverse.
 */
#include <linux/init.h>
#include <linux/module.h>

#define POS_PAIR(name, prio, ret)					\
	static int __init name##_init(void)				\
	{								\
		pr_info("initexit-test: %s init %s\n", KBUILD_MODNAME, #name); \
		return ret;						\
	}								\
	static void __exit name##_exit(void)				\
	{								\
		pr_info("initexit-test: %s exit %s\n", KBUILD_MODNAME, #name); \
	}								\
	module_init_exit(prio, name##_init, name##_exit)

POS_PAIR(p0, -1, 0);
POS_PAIR(p1, 0, 7);
POS_PAIR(p2, 1, 0);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() test: a positive init return counts as success");
