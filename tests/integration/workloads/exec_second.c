// SPDX-License-Identifier: GPL-2.0
/*
 * The program exec_first's child execs: second_leaf() through second_top(),
 * then exit at once, so that its address space, like the one before the
 * exec, is gone when the held-back records are read.
 */
static volatile long sink;

__attribute__((noipa)) long second_leaf(long i)
{
	sink += i;
	return sink;
}

__attribute__((noipa)) long second_top(long i)
{
	long r = second_leaf(i);

	sink += 1;
	return r + 1;
}

int main(void)
{
	second_top(2);
	return 0;
}
