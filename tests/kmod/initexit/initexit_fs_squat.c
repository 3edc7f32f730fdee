// SPDX-License-Identifier: GPL-2.0
/*
 * Holds a file system type's name, so that a later register_filesystem()
 * of that name fails with -EBUSY.  tests/guest/80-fuse.sh loads it with
 * name=fuseblk, fuse or fusectl to make the step of fs/fuse that registers
 * that name fail: those steps allocate nothing, so no fault injection
 * reaches them.  It cannot be mounted: a mount of the name fails with
 * EOPNOTSUPP (80-fuse.sh's state() tries to mount fusectl).  A module
 * without pairs: built for the stock kernel too.
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/init.h>
#include <linux/module.h>

static char *name = "initexit_squat";
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "the file system type name to hold");

static int squat_init_fs_context(struct fs_context *fc)
{
	return -EOPNOTSUPP;
}

static struct file_system_type squat_fs_type = {
	.owner = THIS_MODULE,
	.init_fs_context = squat_init_fs_context,
	.kill_sb = kill_anon_super,
};

static int __init squat_init(void)
{
	squat_fs_type.name = name;
	return register_filesystem(&squat_fs_type);
}

static void __exit squat_exit(void)
{
	unregister_filesystem(&squat_fs_type);
}

module_init(squat_init);
module_exit(squat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("initexit test: hold a file system type name");
