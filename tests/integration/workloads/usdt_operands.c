// SPDX-License-Identifier: GPL-2.0
/*
 * USDT arguments that gcc gives as memory operands with an index register or
 * a symbol: array elements indexed by the loop variable, and globals. Built
 * PIE (usdt_operands), non-PIE (usdt_operands_nopie) and as a shared library
 * (libusdt_operands.so, run by usdt_operands_lib) at -O2, where gcc 12 writes
 * for uo:elem "(%rbx,%r13,8)", "glob(%rip)", "4+pair(%rip)" (PIE, library)
 * and "table(,%rbp,8)", "pair+4(%rip)", "shorts(%rbx,%rbx)" (non-PIE); the
 * tests read the notes to check that the forms are still there.
 *
 *   usdt_operands N   (N <= 8) for i = 0..N-1, in this order:
 *     uo:elem(arr[i], table[i], glob, pair[1], shorts[i + 1])
 *             = (3i+1, 100+i, 7+3(i+1), -13-2(i+1), -(i+2))
 *     uo:cellb(cells[i].b) = (-5i-1)
 *     uo:exact(words[i], ints[i + 4]) = (1000+i, -(i+4)*(i+4)), its operands
 *             written out: "-8@(,%rax,8) -4@16(%rbx,%rcx,4)"
 */
#include <stdlib.h>
#include <sys/sdt.h>

#define UO_N 8

int uo_run(int n);

#ifndef UO_MAIN_ONLY
/* hidden: in the library too they are reached %rip-relative, not through the GOT */
#define UO_HIDDEN __attribute__((visibility("hidden")))

struct uo_cell {
	int a;
	int b;
};

UO_HIDDEN long table[UO_N + 1] = { 100, 101, 102, 103, 104, 105, 106, 107, 108 };
UO_HIDDEN short shorts[UO_N + 1] = { -1, -2, -3, -4, -5, -6, -7, -8, -9 };
UO_HIDDEN int pair[2] = { 11, -13 };
UO_HIDDEN int glob = 7;
UO_HIDDEN long words[UO_N];
UO_HIDDEN int ints[UO_N + 4];

/* not inlined: glob and pair[1] are read from memory after each call */
__attribute__((noipa)) void uo_bump(void)
{
	glob += 3;
	pair[1] -= 2;
}

__attribute__((noipa)) static void uo_exact(long i)
{
	__asm__ __volatile__("" STAP_PROBE_ASM(uo, exact, -8@(,%%rax,8) -4@16(%%rbx,%%rcx,4))
			     : : "a"((unsigned long)&words[i] / 8), "b"(ints), "c"(i)
			     : "memory");
}

__attribute__((noipa)) static void uo_loop(long *arr, struct uo_cell *cells, int n)
{
	for (long i = 0; i < n; i++) {
		arr[i] = 3 * i + 1;
		cells[i].b = -(int)(5 * i) - 1;
		words[i] = 1000 + i;
		ints[i + 4] = -(int)((i + 4) * (i + 4));
		uo_bump();
		DTRACE_PROBE5(uo, elem, arr[i], table[i], glob, pair[1], shorts[i + 1]);
		DTRACE_PROBE1(uo, cellb, cells[i].b);
		uo_exact(i);
	}
}

int uo_run(int n)
{
	long arr[UO_N];
	struct uo_cell cells[UO_N];

	if (n < 0 || n > UO_N)
		return 2;
	uo_loop(arr, cells, n);
	return 0;
}
#endif

#ifndef UO_LIBRARY
int main(int argc, char **argv)
{
	return uo_run(argc > 1 ? atoi(argv[1]) : 4);
}
#endif
