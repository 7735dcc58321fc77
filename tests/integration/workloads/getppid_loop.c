// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: calls getppid() N times (argv[1]) and prints the ppid once, so a
 * test can compare exact hit counts and return values with what it saw.
 * The raw syscall keeps libc from caching or batching anything.
 * With BURST and USEC (argv[2], argv[3]) it sleeps USEC microseconds after
 * every BURST calls: a steady rate that still leaves a reader time to run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 1000;
	long burst = argc > 3 ? strtol(argv[2], NULL, 0) : 0;
	long usec = argc > 3 ? strtol(argv[3], NULL, 0) : 0;
	long ppid = 0;

	for (long i = 0; i < n; i++) {
		ppid = syscall(SYS_getppid);
		if (burst > 0 && (i + 1) % burst == 0)
			usleep(usec);
	}
	printf("%ld\n", ppid);
	return 0;
}
