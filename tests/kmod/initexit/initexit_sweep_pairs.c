// SPDX-License-Identifier: GPL-2.0
/*
 * The four steps of initexit_sweep_single.c (a buffer, a slab cache with
 * one object, a misc device, a /proc entry), each as one
 * module_init_exit() pair: no ladder, the loader unwinds.  Swept by
 * tests/fault-sweep/guest-sweep.sh beside the single-init version.
 */
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

static void *buf;
static struct kmem_cache *cache;
static void *obj;
static struct proc_dir_entry *proc;

static int __init buf_init(void)
{
	buf = kmalloc(3000, GFP_KERNEL);
	return buf ? 0 : -ENOMEM;
}

static void __exit buf_exit(void)
{
	kfree(buf);
}

static int __init cache_init(void)
{
	cache = kmem_cache_create(KBUILD_MODNAME, 72, 0, 0, NULL);
	if (!cache)
		return -ENOMEM;
	obj = kmem_cache_alloc(cache, GFP_KERNEL);
	if (!obj) {
		kmem_cache_destroy(cache);
		return -ENOMEM;
	}
	return 0;
}

static void __exit cache_exit(void)
{
	kmem_cache_free(cache, obj);
	kmem_cache_destroy(cache);
}

static const struct file_operations misc_fops = {
	.owner = THIS_MODULE,
};

static struct miscdevice misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KBUILD_MODNAME,
	.fops = &misc_fops,
};

static int __init misc_init(void)
{
	return misc_register(&misc);
}

static void __exit misc_exit(void)
{
	misc_deregister(&misc);
}

static int show(struct seq_file *m, void *v)
{
	seq_puts(m, "initexit_sweep_pairs\n");
	return 0;
}

static int __init proc_init(void)
{
	proc = proc_create_single(KBUILD_MODNAME, 0444, NULL, show);
	return proc ? 0 : -ENOMEM;
}

static void __exit proc_exit(void)
{
	proc_remove(proc);
}

module_init_exit(10, buf_init, buf_exit);
module_init_exit(20, cache_init, cache_exit);
module_init_exit(30, misc_init, misc_exit);
module_init_exit(40, proc_init, proc_exit);

module_init_exit_entry(initexit_sweep_pairs_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fault sweep: four steps as module_init_exit() pairs");
