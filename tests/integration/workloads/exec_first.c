// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the exec stack tests: a child calls first_leaf() through
 * first_top(), then execs the program named by argv[1] (exec_second), which
 * calls second_leaf(); one process, two address spaces, the stacks of both
 * pending at once when the records are held back.
 *
 *   exec_first SECOND   exit status: the child's
 *
 * noipa keeps each function a real call with its own symbol; the work after
 * each call keeps the calls from becoming tail jumps.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) long first_leaf(long i)
{
	sink += i;
	return sink;
}

__attribute__((noipa)) long first_top(long i)
{
	long r = first_leaf(i);

	sink += 1;
	return r + 1;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: exec_first SECOND\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		first_top(1);
		execl(argv[1], argv[1], (char *)NULL);
		perror(argv[1]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
