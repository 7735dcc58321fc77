// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for tracepoint probes, with known arguments:
 *   tp_workload rename N   names itself tpname1..tpnameN (prctl PR_SET_NAME fires
 *                          task:task_rename with the new name as its second argument)
 *   tp_workload fork N     forks N children that exit at once (sched_process_fork,
 *                          task_newtask) and prints each child's pid, one a line; the
 *                          raw clone(CLONE_PARENT_SETTID | SIGCHLD) gives task_newtask a
 *                          known clone_flags: CLONE_PARENT_SETTID (the kernel strips the
 *                          exit signal), where libc's fork() flags vary by version
 *   tp_workload spin SEC   renames itself and forks in a loop for SEC seconds
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void rename_to(long i)
{
	char name[16];

	/* at most 6 digits: the name stays within TASK_COMM_LEN */
	snprintf(name, sizeof(name), "tpname%d", (int)(i % 1000000));
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

static pid_t fork_one(void)
{
	pid_t ptid = 0;
	pid_t pid = syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, NULL, &ptid, NULL, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rename";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 5;

	if (!strcmp(mode, "rename")) {
		for (long i = 1; i <= n; i++)
			rename_to(i);
	} else if (!strcmp(mode, "fork")) {
		for (long i = 0; i < n; i++)
			printf("%d\n", (int)fork_one());
	} else if (!strcmp(mode, "spin")) {
		time_t end = time(NULL) + n;

		for (long i = 1; time(NULL) < end; i++) {
			rename_to(i % 1000);
			if (i % 16 == 0)
				fork_one();
		}
	} else {
		fprintf(stderr, "usage: tp_workload rename|fork|spin N\n");
		return 2;
	}
	return 0;
}
