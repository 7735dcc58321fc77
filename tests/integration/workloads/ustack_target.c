// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the user-stack tests: a known call chain main -> top -> mid ->
 * leaf, built with and without frame pointers (ustack_fp, ustack_nofp).
 *
 *   ustack_target N          leaf() N times through top() and mid()
 *   ustack_target N syscall  the same, leaf() making a getppid syscall
 *   ustack_target K tree     leaf() 2^K times, each through its own path of K
 *                            calls of left() and right(): 2^K distinct stacks
 *   ustack_target N now      leaf() N times, then exit at once
 *
 * It then stays 500 ms (unless "now"), so that tests of other things do not
 * depend on the kernel keeping the address space of a process that is gone
 * (mm_pin.c); "now" tests exactly that.
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

long left(long path, int k);
long right(long path, int k);

/* Bit k of path picks the next call: every path is another chain of call sites. */
__attribute__((noipa)) long branch(long path, int k)
{
	long r;

	if (k == 0)
		return leaf(path);
	r = (path >> (k - 1)) & 1 ? left(path, k - 1) : right(path, k - 1);
	sink += 3;
	return r;
}

__attribute__((noipa)) long left(long path, int k)
{
	long r = branch(path, k);

	sink += 4;
	return r;
}

__attribute__((noipa)) long right(long path, int k)
{
	long r = branch(path, k);

	sink += 5;
	return r;
}

int main(int argc, char **argv)
{
	const struct timespec linger = { 0, 500 * 1000 * 1000 };
	long n = argc > 1 ? atol(argv[1]) : 1;
	long i, r = 0;
	int linger_now = 0;

	use_syscall = argc > 2 && !strcmp(argv[2], "syscall");
	if (argc > 2 && !strcmp(argv[2], "now"))
		linger_now = 1;
	if (argc > 2 && !strcmp(argv[2], "tree"))
		for (i = 0; i < 1L << n; i++)
			r += branch(i, (int)n);
	else
		for (i = 0; i < n; i++)
			r += top(i);
	if (!linger_now)
		nanosleep(&linger, NULL);
	return r == 0x7fffffff;	/* uses r: main calls top, not a tail jump */
}
