// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for tail-call frames: at -O2 gcc turns a call that ends a function
 * into a jump, so the caller's frame is gone when the callee runs. noipa keeps
 * every function a function of its own (no clones, no merging); the work
 * after each non-tail call keeps it a call. Every way reaches leaf():
 *
 *   start  -> hop (tail) -> leaf                  one tail call
 *   start2 -> hop2 (tail) -> hop (tail) -> leaf   two in a row
 *   start3 -> either (tail) -> leaf, or
 *             either (tail) -> hop (tail) -> leaf two ways: DWARF cannot
 *                                                 tell which one ran
 *
 *   tail_call N [S]  N rounds of the three, in this order; prints the sum;
 *                    then lives S more seconds (a tracer reads its maps
 *                    meanwhile)
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

__attribute__((noipa)) long hop(long x)
{
	sink += 1;
	return leaf(x + 1);
}

__attribute__((noipa)) long hop2(long x)
{
	sink += 2;
	return hop(x * 3);
}

__attribute__((noipa)) long either(long x)
{
	if (x & 1)
		return leaf(x);
	sink += 3;
	return hop(x);
}

__attribute__((noipa)) long start(long x)
{
	long r = hop(x * 2);

	sink += 4;
	return r;
}

__attribute__((noipa)) long start2(long x)
{
	long r = hop2(x);

	sink += 5;
	return r;
}

__attribute__((noipa)) long start3(long x)
{
	long r = either(x);

	sink += 6;
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;

	for (long i = 0; i < n; i++) {
		sum += start(i);
		sum += start2(i);
		sum += start3(i);
	}
	printf("sum=%ld\n", sum);
	fflush(stdout);
	if (argc > 2)
		sleep((unsigned int)strtoul(argv[2], NULL, 0));
	return 0;
}
