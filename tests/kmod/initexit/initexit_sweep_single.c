// SPDX-License-Identifier: GPL-2.0
/*
 * The fault sweep's baseline (tests/fault-sweep/guest-sweep.sh): one
 * module_init() doing four steps with a goto ladder, as most drivers are
 * written today.  initexit_sweep_pairs.c does the same four steps as
 * module_init_exit() pairs, so the two sweeps can be compared.
 *
 *   1. a kmalloc'd buffer
 *   2. a slab cache, and one object from it
 *   3. a misc device (/dev/initexit_sweep_single, /proc/misc)
 *   4. a /proc entry (/proc/initexit_sweep_single)
 *
 * ladder_bug=1 plants the kind of bug the sweep exists to find: when
 * proc_create() fails, the ladder undoes steps 3 and 2 but returns
 * before step 1's kfree(), leaking the buffer (one kmalloc-4k object per
 * failed load).  No fault, no bug: the module loads, works and unloads
 * cleanly either way.  (A leak, not a misc device left registered: that
 * one would point the misc list into freed module memory and oops the
 * guest on the next misc_register().)
 */
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

static bool ladder_bug;
module_param(ladder_bug, bool, 0444);
MODULE_PARM_DESC(ladder_bug, "leak the buffer when proc_create() fails");

static void *buf;
static struct kmem_cache *cache;
static void *obj;
static struct proc_dir_entry *proc;

static const struct file_operations misc_fops = {
	.owner = THIS_MODULE,
};

static struct miscdevice misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KBUILD_MODNAME,
	.fops = &misc_fops,
};

static int show(struct seq_file *m, void *v)
{
	seq_puts(m, "initexit_sweep_single\n");
	return 0;
}

static int __init sweep_init(void)
{
	int err = -ENOMEM;

	buf = kmalloc(3000, GFP_KERNEL);
	if (!buf)
		goto out;
	cache = kmem_cache_create(KBUILD_MODNAME, 72, 0, 0, NULL);
	if (!cache)
		goto free_buf;
	obj = kmem_cache_alloc(cache, GFP_KERNEL);
	if (!obj)
		goto destroy_cache;
	err = misc_register(&misc);
	if (err)
		goto free_obj;
	proc = proc_create_single(KBUILD_MODNAME, 0444, NULL, show);
	if (!proc) {
		err = -ENOMEM;
		if (ladder_bug) {
			/* The planted bug: steps 3 and 2 undone, step 1 forgotten. */
			misc_deregister(&misc);
			kmem_cache_free(cache, obj);
			kmem_cache_destroy(cache);
			return err;
		}
		goto deregister;
	}
	return 0;

deregister:
	misc_deregister(&misc);
free_obj:
	kmem_cache_free(cache, obj);
destroy_cache:
	kmem_cache_destroy(cache);
free_buf:
	kfree(buf);
out:
	return err;
}

static void __exit sweep_exit(void)
{
	proc_remove(proc);
	misc_deregister(&misc);
	kmem_cache_free(cache, obj);
	kmem_cache_destroy(cache);
	kfree(buf);
}

module_init(sweep_init);
module_exit(sweep_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fault sweep baseline: four steps in one module_init() with a goto ladder");
