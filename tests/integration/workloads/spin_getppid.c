// SPDX-License-Identifier: GPL-2.0
/* Workload: calls getppid() until killed, to keep probes firing under load. */
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	for (;;)
		syscall(SYS_getppid);
}
