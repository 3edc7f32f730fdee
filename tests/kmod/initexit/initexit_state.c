// SPDX-License-Identifier: GPL-2.0
/*
 * The world an exit sees.  s0's exit logs the module's state and whether
 * try_module_get(THIS_MODULE) succeeds.  With fail=1, s1's init fails and
 * s0's exit runs as an unwind; without, rmmod runs it.  Both must log the
 * same: the module is GOING and new references are refused, as when
 * delete_module() calls an exit.
 */
#include <linux/init.h>
#include <linux/module.h>

static bool fail;
module_param(fail, bool, 0444);
MODULE_PARM_DESC(fail, "make the second init fail, so the first is unwound");

static const char *state_name(enum module_state state)
{
	switch (state) {
	case MODULE_STATE_LIVE:
		return "live";
	case MODULE_STATE_COMING:
		return "coming";
	case MODULE_STATE_GOING:
		return "going";
	case MODULE_STATE_UNFORMED:
		return "unformed";
	}
	return "?";
}

static int __init s0_init(void)
{
	return 0;
}

static void __exit s0_exit(void)
{
	bool got = try_module_get(THIS_MODULE);

	if (got)
		module_put(THIS_MODULE);
	pr_info("initexit-test: %s exit s0 state=%s get=%s\n", KBUILD_MODNAME,
		state_name(THIS_MODULE->state), got ? "ok" : "refused");
}

static int __init s1_init(void)
{
	return fail ? -EAGAIN : 0;
}

static void __exit s1_exit(void)
{
}

module_init_exit(-10, s0_init, s0_exit);
module_init_exit(10, s1_init, s1_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() test: unwind exits run as unload exits do");
