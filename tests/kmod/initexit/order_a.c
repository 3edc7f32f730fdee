// SPDX-License-Identifier: GPL-2.0
/*
 * First file of initexit_order: pairs declared in shuffled priority order,
 * with duplicates, zero, INT_MIN and INT_MAX, plus module_init/module_exit.
 * Ties are declared out of name order (a_z2 before a_z1), and this file
 * links after order_b.c (Kbuild), so only link order gives the right run.
 */
#include "order.h"

ORDER_PAIR(a_max, INT_MAX);
ORDER_PAIR(a_m5, -5);
ORDER_PAIR(a_z2, 0);
ORDER_PAIR(a_min, INT_MIN);
ORDER_PAIR(a_d1, 7);
ORDER_PAIR(a_m100, -100);
ORDER_PAIR(a_z1, 0);
ORDER_PAIR(a_d2, 7);
ORDER_PAIR(a_100, 100);

static int __init legacy_init(void)
{
	return order_log("init", "legacy");
}

static void __exit legacy_exit(void)
{
	order_log("exit", "legacy");
}

module_init(legacy_init);
module_exit(legacy_exit);
