// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the instruction-boundary tests: functions written in
 * assembly so their instruction boundaries are known exactly.
 *
 *   insn_target N   calls pc_insn() and pc_nosize() N times each; prints
 *                   the sum of what pc_insn returned
 *
 * pc_insn:   +0x0 movabs (10 bytes), +0xa ret       (size 11)
 * pc_nosize: +0x0 mov (5 bytes),     +0x5 ret       (size 0: no .size)
 * pc_after:  the next symbol, so pc_nosize+0x6 and on lie past it
 */
#include <stdio.h>
#include <stdlib.h>

long pc_insn(void);
long pc_nosize(void);

__asm__(".text\n"
	".globl pc_insn\n"
	".type pc_insn, @function\n"
	"pc_insn:\n"
	"	movabs $0x1122334455667788, %rax\n"
	"	ret\n"
	".size pc_insn, .-pc_insn\n"
	".globl pc_nosize\n"
	".type pc_nosize, @function\n"
	"pc_nosize:\n"
	"	mov $7, %eax\n"
	"	ret\n"
	".globl pc_after\n"
	".type pc_after, @function\n"
	"pc_after:\n"
	"	ret\n"
	".size pc_after, .-pc_after\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 10;
	unsigned long sum = 0;

	for (long i = 0; i < n; i++)
		sum += (unsigned long)pc_insn() + (unsigned long)pc_nosize();
	printf("sum=%#lx\n", sum);
	return 0;
}
