// SPDX-License-Identifier: GPL-2.0
/*
 * Async work across an unwind.  a_init schedules async work that sleeps,
 * then logs from the module's own text; b_init fails.  The unwind must let
 * the work finish before a's exit runs (as a good load waits for it before
 * the module goes LIVE), so the log says "async done" before "exit a",
 * and the module's text is not freed under the work.
 */
#include <linux/async.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/module.h>

static void slow_work(void *data, async_cookie_t cookie)
{
	msleep(100);
	pr_info("initexit-test: %s async done\n", KBUILD_MODNAME);
}

static int __init a_init(void)
{
	async_schedule(slow_work, NULL);
	return 0;
}

static void __exit a_exit(void)
{
	pr_info("initexit-test: %s exit a\n", KBUILD_MODNAME);
}

static int __init b_init(void)
{
	return -ENODEV;
}

static void __exit b_exit(void)
{
}

module_init_exit(-10, a_init, a_exit);
module_init_exit(10, b_init, b_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() test: async work finishes before an unwind's exits");
