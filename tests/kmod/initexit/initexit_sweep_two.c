// SPDX-License-Identifier: GPL-2.0
/*
 * Two pairs, as a user writes them: a slab cache, then two kmalloc()s in
 * one init that frees the first when the second fails.  kmem_cache_create()
 * makes about thirty allocations (its sysfs part among them), and how many
 * moves from load to load, so the N of the second kmalloc() moves too;
 * the two kmalloc()s share a function, so only their offsets tell them
 * apart.  Swept by tests/fault-sweep/guest-sweep.sh at every allocation.
 *
 * leak_bug=1 is its twin with a bug: the first kmalloc() (kmalloc-256) is
 * not freed when the second fails.  The sweep must find that leak at the
 * second kmalloc() of the second init, every time.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/slab.h>

static bool leak_bug;
module_param(leak_bug, bool, 0444);
MODULE_PARM_DESC(leak_bug, "leak the first buffer when the second kmalloc() fails");

static struct kmem_cache *cache;
static void *first, *second;

static int __init two_cache_init(void)
{
	cache = kmem_cache_create(KBUILD_MODNAME, 88, 0, 0, NULL);
	return cache ? 0 : -ENOMEM;
}

static void __exit two_cache_exit(void)
{
	kmem_cache_destroy(cache);
}

static int __init two_bufs_init(void)
{
	first = kmalloc(200, GFP_KERNEL);
	if (!first)
		return -ENOMEM;
	second = kmalloc(100, GFP_KERNEL);
	if (!second) {
		if (!leak_bug)
			kfree(first);
		return -ENOMEM;
	}
	return 0;
}

static void __exit two_bufs_exit(void)
{
	kfree(second);
	kfree(first);
}

module_init_exit(10, two_cache_init, two_cache_exit);
module_init_exit(20, two_bufs_init, two_bufs_exit);

module_init_exit_entry(initexit_sweep_two_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fault sweep: a slab cache, then two kmalloc()s in one init");
