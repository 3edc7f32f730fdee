// SPDX-License-Identifier: GPL-2.0
/*
 * Failure sweep: 8 pairs (7 module_init_exit() plus module_init/module_exit
 * at priority 0).  fail_at=K makes the init at sorted position K return
 * -(200 + K), an error no other code returns.  Every init allocates a
 * buffer its exit frees, so a missing unwind shows up as a slab leak.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/slab.h>

static int fail_at = -1;
module_param(fail_at, int, 0444);
MODULE_PARM_DESC(fail_at, "sorted position (0-7) of the init that fails");

#define NPAIRS 8
static void *bufs[NPAIRS];

static int step_init(int idx)
{
	pr_info("initexit-test: %s init f%d\n", KBUILD_MODNAME, idx);
	if (idx == fail_at)
		return -(200 + idx);
	bufs[idx] = kmalloc(1000, GFP_KERNEL);
	return bufs[idx] ? 0 : -ENOMEM;
}

static void step_exit(int idx)
{
	pr_info("initexit-test: %s exit f%d\n", KBUILD_MODNAME, idx);
	kfree(bufs[idx]);
	bufs[idx] = NULL;
}

#define FAIL_PAIR(idx, prio)						\
	static int __init f##idx##_init(void) { return step_init(idx); } \
	static void __exit f##idx##_exit(void) { step_exit(idx); }	\
	module_init_exit(prio, f##idx##_init, f##idx##_exit)

/* Declared out of order on purpose; the comment gives the sorted index. */
FAIL_PAIR(5, 20);
FAIL_PAIR(0, -30);
FAIL_PAIR(7, 40);
FAIL_PAIR(2, -10);
FAIL_PAIR(4, 10);
FAIL_PAIR(1, -20);
FAIL_PAIR(6, 30);

/* The classic pair sits at priority 0: sorted position 3. */
static int __init f3_init(void)
{
	return step_init(3);
}

static void __exit f3_exit(void)
{
	step_exit(3);
}

module_init(f3_init);
module_exit(f3_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() failure sweep test");
