// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: syscalls with plain, known arguments, for checking that syscall lines decode
 * them on every kernel. Usage: sys_args DIR
 *
 * Calls kill(getpid(), 0), lseek(fd, 5, SEEK_SET) on /proc/self/stat and mkdir(DIR, 0750);
 * prints "pid=PID fd=FD".
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = open("/proc/self/stat", O_RDONLY);

	if (argc < 2 || fd < 0)
		return 2;
	kill(getpid(), 0);
	lseek(fd, 5, SEEK_SET);
	mkdir(argv[1], 0750);
	printf("pid=%d fd=%d\n", (int)getpid(), fd);
	return 0;
}
