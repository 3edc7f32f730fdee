// SPDX-License-Identifier: GPL-2.0
/*
 * modload/modunload: exactly one finit_module(2) or delete_module(2) call,
 * printing the errno number.  busybox insmod retries a failed finit_module
 * with init_module, which would run a failing module's inits twice.
 *
 *   modload FILE [PARAMS]     prints "modload: FILE: ok" or "...: error N"
 *   modunload NAME [force]    prints "modunload: NAME: ok" or "...: error N"
 *
 * Exit status: 0 on success, 1 on failure (the errno is in the output).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
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
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: modload FILE [PARAMS]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	return report(tool, argv[1],
		      syscall(SYS_finit_module, fd, argc == 3 ? argv[2] : "", 0));
}
