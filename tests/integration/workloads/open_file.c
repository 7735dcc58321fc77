// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: opens argv[1] read-only once and prints the user address of the
 * path string and the fd, so a test can match the syscall's recorded
 * arguments (the pointer, the flags) with what the process really passed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long fd;

	if (argc < 2)
		return 2;
	fd = syscall(SYS_openat, AT_FDCWD, argv[1], O_RDONLY);
	printf("%p %ld\n", (void *)argv[1], fd);
	return fd < 0;
}
