// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the separate-debug-file tests: dl_local() is a local symbol,
 * so once the file is stripped only its debug file (found by
 * .gnu_debuglink) names it. The build makes stripped copies
 * (tests/integration/CMakeLists.txt).
 *
 *   debuglink_target N   calls dl_local() N times; prints the sum
 */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noipa)) long dl_local(long i)
{
#ifdef DEBUGLINK_OTHER
	return 3 * i;
#else
	return 2 * i + 1;
#endif
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10, sum = 0;

	for (long i = 0; i < n; i++)
		sum += dl_local(i);
	printf("sum=%ld\n", sum);
	return 0;
}
