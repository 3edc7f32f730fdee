/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by order_a.c and order_b.c: every init and exit logs one line,
 * "initexit-test: initexit_order init <name>", that the guest test compares
 * with the order the priorities promise.
 */
#include <linux/init.h>
#include <linux/limits.h>
#include <linux/module.h>

int order_log(const char *what, const char *name);

#define ORDER_PAIR(name, prio)						\
	static int __init name##_init(void)				\
	{								\
		return order_log("init", #name);			\
	}								\
	static void __exit name##_exit(void)				\
	{								\
		order_log("exit", #name);				\
	}								\
	module_init_exit(prio, name##_init, name##_exit)
