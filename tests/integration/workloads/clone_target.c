// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the compiler-clone tests: at -O2 gcc specialises use() for
 * its one constant argument and passes the struct fields by value, so the
 * file has only use.constprop.0.isra.0 and no symbol "use".
 *
 *   clone_target N   calls use() N times; prints the sum
 */
#include <stdio.h>
#include <stdlib.h>

struct pair { long a, b; };

static __attribute__((noinline)) long use(const struct pair *p, long k)
{
	return p->a * k + p->b;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;

	for (long i = 0; i < n; i++) {
		struct pair p = { i, 2 * i };

		sum += use(&p, 3);
	}
	printf("sum=%ld\n", sum);
	return 0;
}
