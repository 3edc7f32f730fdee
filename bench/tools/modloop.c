// SPDX-License-Identifier: GPL-2.0
/*
 * modloop: load and unload one module COUNT times and print how long each
 * finit_module(2) and delete_module(2) took, from CLOCK_MONOTONIC read in
 * this process (no fork or exec inside the timed interval, which under TCG
 * costs more than the load itself).
 *
 *   modloop FILE NAME COUNT    one line per iteration: "ITER LOAD_NS UNLOAD_NS"
 *
 * Exit status: 0, or 1 when a load or unload failed (the errno is printed).
 * Built static by scripts/bench and shipped inside its guest script.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: modloop FILE NAME COUNT\n");
		return 2;
	}
	int count = atoi(argv[3]);

	for (int i = 0; i < count; i++) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror(argv[1]);
			return 2;
		}
		long long t0 = now_ns();

		if (syscall(SYS_finit_module, fd, "", 0)) {
			printf("modloop: %s: load error %d (%s)\n", argv[1], errno, strerror(errno));
			return 1;
		}
		long long t1 = now_ns();

		close(fd);
		long long t2 = now_ns();

		if (syscall(SYS_delete_module, argv[2], O_NONBLOCK)) {
			printf("modloop: %s: unload error %d (%s)\n", argv[2], errno, strerror(errno));
			return 1;
		}
		long long t3 = now_ns();

		printf("%d %lld %lld\n", i, t1 - t0, t3 - t2);
	}
	return 0;
}
