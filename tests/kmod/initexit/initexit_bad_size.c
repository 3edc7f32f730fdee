// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed: a __initexit_pairs section whose size is not a multiple of
 * struct initexit_pair.  The loader must refuse it with -ENOEXEC.
 */
#include <linux/initexit.h>
#include <linux/module.h>

static const char bad_entry[sizeof(struct initexit_pair) + 4] __used
	__section(INITEXIT_SECTION) __aligned(8);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("malformed pair section: bad size");
