// SPDX-License-Identifier: GPL-2.0
#include <linux/printk.h>
#include "order.h"

int order_log(const char *what, const char *name)
{
	pr_info("initexit-test: %s %s %s\n", KBUILD_MODNAME, what, name);
	return 0;
}

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() order test: 17 pairs in two files");
