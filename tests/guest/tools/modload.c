// SPDX-License-Identifier: GPL-2.0
/*
 * modload/modunload: exactly one finit_module(2) or delete_module(2) call,
 * printing the errno number.  busybox insmod retries a failed finit_module
 * with init_module, which would run a failing module's inits twice.
 *
 *   modload [--fail-nth N] FILE [PARAMS]
 *                             prints "modload: FILE: ok" or "...: error N"
 *   modunload NAME [force]    prints "modunload: NAME: ok" or "...: error N"
 *
 * --fail-nth N (CONFIG_FAULT_INJECTION, with failslab / fail_page_alloc
 * set up in debugfs): make the Nth fault-injectable allocation of the load
 * fail.  /proc/thread-self/fail-nth is per task, so it is written here, in
 * the thread that then calls finit_module(2), and read back after it: 0
 * means the Nth call came and a fault was injected; otherwise N minus the
 * value is how many calls the load made.  A line before the result says
 * which: "modload: fail-nth N: injected" or "...: not injected (C calls)".
 *
 * Exit status: 0 on success, 1 on failure (the errno is in the output),
 * 2 on a usage error or when fail-nth cannot be used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int report(const char *tool, const char *what, long rc)
{
	if (rc == 0) {
		printf("%s: %s: ok\n", tool, what);
		return 0;
	}
	printf("%s: %s: error %d (%s)\n", tool, what, errno, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *tool = basename(argv[0]);

	if (!strcmp(tool, "modunload")) {
		int flags = O_NONBLOCK;

		if (argc < 2 || argc > 3) {
			fprintf(stderr, "usage: modunload NAME [force]\n");
			return 2;
		}
		if (argc == 3 && !strcmp(argv[2], "force"))
			flags |= O_TRUNC;
		return report(tool, argv[1],
			      syscall(SYS_delete_module, argv[1], flags));
	}
	unsigned long nth = 0;

	if (argc >= 3 && !strcmp(argv[1], "--fail-nth")) {
		char *end;

		errno = 0;
		nth = strtoul(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || nth == 0 || nth > UINT_MAX) {
			fprintf(stderr, "modload: --fail-nth: a whole number >= 1, not '%s'\n", argv[2]);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: modload [--fail-nth N] FILE [PARAMS]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (!nth)
		return report(tool, argv[1],
			      syscall(SYS_finit_module, fd, argc == 3 ? argv[2] : "", 0));

	/* Opened first: the open allocates (a struct file), and must not count. */
	int nfd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	char num[32];
	int len;

	if (nfd < 0) {
		perror("/proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION?)");
		return 2;
	}
	len = snprintf(num, sizeof(num), "%lu", nth);
	if (write(nfd, num, len) != len) {
		perror("writing /proc/thread-self/fail-nth");
		return 2;
	}
	long rc = syscall(SYS_finit_module, fd, argc == 3 ? argv[2] : "", 0);
	int saved = errno;
	ssize_t got = pread(nfd, num, sizeof(num) - 1, 0);
	unsigned long left;

	/* Disarm it: nothing after the load may fail on purpose. */
	if (write(nfd, "0", 1) != 1 || got <= 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	num[got] = '\0';
	left = strtoul(num, NULL, 10);
	if (left == 0)
		printf("%s: fail-nth %lu: injected\n", tool, nth);
	else
		printf("%s: fail-nth %lu: not injected (%lu calls)\n", tool, nth, nth - left);
	errno = saved;
	return report(tool, argv[1], rc);
}
