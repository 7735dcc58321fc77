// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: prints its effective uid, so a test can tell whether a
 * set-user-ID exec gave it the file owner's (unreadable_test.cpp).
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("%u\n", (unsigned int)geteuid());
	return 0;
}
