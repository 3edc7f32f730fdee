// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed: a pair entry with neither init nor exit (written by hand; the
 * macro cannot produce it).  The loader must refuse it with -ENOEXEC.
 */
#include <linux/initexit.h>
#include <linux/module.h>

static struct initexit_pair empty_entry __used __section(INITEXIT_SECTION)
	__aligned(8) = {
	.prio = 1,
	.init_name = "NULL",
	.exit_name = "NULL",
	.origin = KBUILD_MODNAME,
	.file = __FILE__,
};

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("malformed pair section: empty entry");
