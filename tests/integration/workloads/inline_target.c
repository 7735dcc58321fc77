// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the inlined-function tests: at -O2 gcc inlines the static
 * helper() into twice() and thrice(), and keeps one out-of-line copy for the
 * call through a function pointer: 1 of its 3 calls per round reaches the
 * symbol "helper". bump() is inlined into its one caller and has no symbol.
 * Built with -g (inline_dwarf: DWARF lists the copies) and without
 * (inline_nodwarf).
 *
 *   inline_dwarf N [S]  N rounds: helper() 2N+2 times, bump() N times; prints
 *                       the sum; then lives S more seconds (a tracer reads its
 *                       maps meanwhile)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long seen;

static long helper(long x)
{
	seen += x;
	return x * 3;
}

static long bump(long x)
{
	seen -= x;
	return x;
}

static long (*volatile indirect)(long) = helper;

__attribute__((noinline)) long twice(long x)
{
	return helper(x) + helper(x + 1);
}

__attribute__((noinline)) long thrice(long x)
{
	return helper(2 * x) * 5 + bump(x);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;

	for (long i = 0; i < n; i++)
		sum += thrice(i) + indirect(i);
	sum += twice(n);
	printf("sum=%ld\n", sum);
	fflush(stdout);
	if (argc > 2)
		sleep((unsigned int)strtoul(argv[2], NULL, 0));
	return 0;
}
