// SPDX-License-Identifier: GPL-2.0
/*
 * The init of scripts/check-configs' cross boots with fuse built in
 * (arm64-builtin-fs, arm-builtin-fs): the project's guest (busybox, its
 * tools) is x86-64, so this is built for the target with the kernel's own
 * nolibc (tools/include/nolibc) and put alone in an initramfs made with
 * the kernel's usr/gen_init_cpio. It mounts proc, sysfs and devtmpfs and
 * prints KTAP on the console: with initexit_builtin=present (the kernel
 * hands unknown name=value words of its command line to init's
 * environment) every registration of fuse's steps is there; with
 * initexit_builtin=absent (a step of fuse failed at boot) none is left.
 * Then it powers the machine off. The kernel log around it (initcall_debug
 * lines, the series' "unwinding" message) is judged on the host
 * (tests/configs/test_cross_builtin_fs.py).
 */
#include <nolibc.h>

#ifndef LINUX_REBOOT_CMD_POWER_OFF
#define LINUX_REBOOT_CMD_POWER_OFF 0x4321FEDC
#endif

static int failed;
static int number;

/* has: whether text occurs in buf (nolibc has no strstr()). */
static int has(const char *buf, const char *text)
{
	size_t n = strlen(text);

	for (; *buf; buf++)
		if (!strncmp(buf, text, n))
			return 1;
	return 0;
}

/* contains: whether the file holds the text, or -1 when it cannot be read. */
static int contains(const char *path, const char *text)
{
	static char buf[65536];
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY, 0);

	if (fd < 0)
		return -1;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return has(buf, text);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* check: one KTAP case, "WHAT is there" or "is gone" as the mode wants. */
static void check(int present, int there, const char *what)
{
	int ok = there == present;

	printf("%sok %d - fuse built in: %s %s\n", ok ? "" : "not ", ++number, what,
	       present ? "is there" : "is gone");
	if (there < 0)
		printf("# could not read what tells: the configuration lacks it\n");
	if (!ok)
		failed = 1;
}

int main(int argc, char **argv, char **envp)
{
	const char *mode = getenv("initexit_builtin");
	int present = !mode || strcmp(mode, "absent") != 0;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);

	printf("KTAP version 1\n1..8\n");
	printf("# initexit_builtin=%s\n", present ? "present" : "absent");
	check(present, contains("/proc/filesystems", "\tfuse\n"), "file system fuse");
	check(present, contains("/proc/filesystems", "\tfuseblk\n"), "file system fuseblk");
	check(present, contains("/proc/filesystems", "\tfusectl\n"), "file system fusectl");
	check(present, contains("/proc/misc", " fuse\n"), "misc device fuse");
	check(present, exists("/dev/fuse"), "/dev/fuse");
	check(present, exists("/sys/fs/fuse"), "/sys/fs/fuse");
	check(present, contains("/proc/slabinfo", "\nfuse_inode "), "slab cache fuse_inode (/proc/slabinfo)");
	check(present, exists("/sys/kernel/slab/fuse_inode"), "slab cache fuse_inode (/sys/kernel/slab)");
	printf("# initexit cross init: %s\n", failed ? "FAIL" : "PASS");
	fflush(stdout);
	reboot(LINUX_REBOOT_CMD_POWER_OFF);
	return 0;
}
