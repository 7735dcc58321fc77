// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for nested inlined frames: main -> outer() (noinline) -> middle()
 * -> inner() (both always_inline, so inner is inlined into middle, which is
 * inlined into outer) -> leaf() (noipa: a real call, the probe point).
 *
 *   inline_nested N [S]  leaf() N times; prints the sum; then lives S more
 *                        seconds (a tracer reads its maps meanwhile)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) long leaf(long x)
{
	sink += x;
	return sink;
}

static inline __attribute__((always_inline)) long inner(long x)
{
	long r = leaf(x);

	sink += 1;
	return r;
}

static inline __attribute__((always_inline)) long middle(long x)
{
	long r = inner(x + 1);

	sink += 2;
	return r;
}

__attribute__((noinline)) long outer(long x)
{
	long r = middle(x * 2);

	sink += 3;
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;

	for (long i = 0; i < n; i++)
		sum += outer(i);
	printf("sum=%ld\n", sum);
	fflush(stdout);
	if (argc > 2)
		sleep((unsigned int)strtoul(argv[2], NULL, 0));
	return 0;
}
