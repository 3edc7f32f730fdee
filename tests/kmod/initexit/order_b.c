// SPDX-License-Identifier: GPL-2.0
/*
 * Second file of initexit_order, but first in link order (Kbuild lists
 * order_b.o first).  b_d4 is declared before b_d3: ties run b_d4 first.
 */
#include "order.h"

ORDER_PAIR(b_d4, 7);
ORDER_PAIR(b_m5, -5);
ORDER_PAIR(b_z3, 0);
ORDER_PAIR(b_1000, 1000);
ORDER_PAIR(b_m1, -1);
ORDER_PAIR(b_min2, INT_MIN);
ORDER_PAIR(b_3, 3);
ORDER_PAIR(b_d3, 7);
