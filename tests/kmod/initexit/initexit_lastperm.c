// SPDX-License-Identifier: GPL-2.0
/*
 * An init without exit that is the module's LAST init: nothing runs after
 * it that could fail, so the module loads, and is [permanent].  module_init()
 * without module_exit() is that pair here (priority 0, after -20 and -10).
 * A forced removal runs the other exits in reverse: b then a.
 */
#include <linux/init.h>
#include <linux/module.h>

#define LOG_PAIR(name, prio)						\
	static int __init name##_init(void)				\
	{								\
		pr_info("initexit-test: %s init " #name "\n", KBUILD_MODNAME); \
		return 0;						\
	}								\
	static void __exit name##_exit(void)				\
	{								\
		pr_info("initexit-test: %s exit " #name "\n", KBUILD_MODNAME); \
	}								\
	module_init_exit(prio, name##_init, name##_exit)

LOG_PAIR(a, -20);
LOG_PAIR(b, -10);

static int __init last_setup(void)
{
	pr_info("initexit-test: %s init last_setup\n", KBUILD_MODNAME);
	return 0;
}
module_init(last_setup);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() test: an exit-less last init is permanent");
