// SPDX-License-Identifier: GPL-2.0
/* Second file of initexit_order: link order puts it after order_a.c. */
#include "order.h"

ORDER_PAIR(b_d3, 7);
ORDER_PAIR(b_m5, -5);
ORDER_PAIR(b_z3, 0);
ORDER_PAIR(b_1000, 1000);
ORDER_PAIR(b_m1, -1);
ORDER_PAIR(b_min2, INT_MIN);
ORDER_PAIR(b_3, 3);
ORDER_PAIR(b_d4, 7);
