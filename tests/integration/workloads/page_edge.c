// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: syscall arguments whose memory ends where an unmapped page begins, which a
 * tracer reading a fixed number of bytes runs into. Usage: page_edge
 *
 * write(1, "hi!\n", 4) from the last 4 bytes of a page, then execve of itself with
 * ["PATH", "done"] and the environment ["A=1", "B=2"], both arrays ending a page (so only
 * their own pointers can be read); the new program exits 0 at once.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m, *buf, **nargv, **nenvp;

	if (argc > 1)
		return 0;
	m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m + pg, pg) || munmap(m + 3 * pg, pg))
		return 2;
	buf = m + pg - 4;
	memcpy(buf, "hi!\n", 4);
	if (write(1, buf, 4) != 4)
		return 2;
	nenvp = (char **)(m + 3 * pg) - 3;
	nenvp[0] = "A=1";
	nenvp[1] = "B=2";
	nenvp[2] = NULL;
	nargv = nenvp - 3;
	nargv[0] = argv[0];
	/* in a page already touched: a tracer in the kernel cannot fault one in */
	nargv[1] = strcpy(m, "done");
	nargv[2] = NULL;
	execve(argv[0], nargv, nenvp);
	return 2;
}
