// SPDX-License-Identifier: GPL-2.0
/* Legacy: no init and no exit at all; a data-only module. */
#include <linux/module.h>

int initexit_legacy_none_data = 42;
EXPORT_SYMBOL_GPL(initexit_legacy_none_data);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("legacy module without init or exit");
