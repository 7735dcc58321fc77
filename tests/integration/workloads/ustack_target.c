// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the user-stack tests: a known call chain main -> top -> mid ->
 * leaf, built with and without frame pointers (ustack_fp, ustack_nofp).
 *
 *   ustack_target N          leaf() N times through top() and mid()
 *   ustack_target N syscall  the same, leaf() making a getppid syscall
 *
 * It then stays 500 ms: a process's maps are read while it lives, and a
 * process gone before its first record is read could not be symbolized.
 * noipa keeps each function a real call with its own symbol; the work after
 * each call keeps the calls from becoming tail jumps.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;
static int use_syscall;

__attribute__((noipa)) long leaf(long i)
{
	if (use_syscall)
		sink += syscall(SYS_getppid);
	sink += i;
	return sink;
}

__attribute__((noipa)) long mid(long i)
{
	long r = leaf(i);

	sink += 1;
	return r + 1;
}

__attribute__((noipa)) long top(long i)
{
	long r = mid(i);

	sink += 2;
	return r + 2;
}

int main(int argc, char **argv)
{
	const struct timespec linger = { 0, 500 * 1000 * 1000 };
	long n = argc > 1 ? atol(argv[1]) : 1;
	long i, r = 0;

	use_syscall = argc > 2 && !strcmp(argv[2], "syscall");
	for (i = 0; i < n; i++)
		r += top(i);
	nanosleep(&linger, NULL);
	return r == 0x7fffffff;	/* uses r: main calls top, not a tail jump */
}
