// SPDX-License-Identifier: GPL-2.0
/*
 * The library dlopen_target loads after its first stack was read: it calls
 * the program's function back, so that a probe there sees this frame.
 */
static volatile long sink;

__attribute__((noipa)) long lib_calls_back(long (*fn)(long), long i)
{
	long r = fn(i);

	sink += r;
	return r + 1;
}
