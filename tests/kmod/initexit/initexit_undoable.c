// SPDX-License-Identifier: GPL-2.0
/*
 * An init that nothing can undo, followed by another init.  setup() creates
 * /proc/initexit_undoable and has no exit (module_init() without
 * module_exit()); other_init() runs after it and fails.  Were the load
 * allowed, the failed load would free the module with the /proc entry still
 * registered, and reading it would call freed code.  The loader must refuse
 * the module before any init runs: -ENOEXEC, naming both functions.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

static int undoable_show(struct seq_file *m, void *v)
{
	seq_puts(m, "initexit_undoable\n");
	return 0;
}

static int __init setup(void)
{
	pr_info("initexit-test: %s init setup\n", KBUILD_MODNAME);
	return proc_create_single("initexit_undoable", 0444, NULL,
				  undoable_show) ? 0 : -ENOMEM;
}

static int __init other_init(void)
{
	pr_info("initexit-test: %s init other_init\n", KBUILD_MODNAME);
	return -EIO;
}

static void __exit other_exit(void)
{
	pr_info("initexit-test: %s exit other_exit\n", KBUILD_MODNAME);
}

module_init(setup);
module_init_exit(10, other_init, other_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("module_init_exit() test: an init nothing undoes, before another init");
