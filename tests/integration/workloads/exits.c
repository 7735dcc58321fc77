// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: processes and a thread that end in every way strace tells apart, one after
 * another: a thread that returns, a child that exits with 3, one killed by SIGKILL, one
 * that aborts (dumping core in /tmp when the system lets it), then itself exiting with 5.
 * Usage: exits. Each end is waited for before the next begins, so the order is fixed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg)
{
	return arg;
}

static void wait_for(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		;
}

int main(void)
{
	const struct rlimit core = {RLIM_INFINITY, RLIM_INFINITY};
	pthread_t t;
	pid_t pid;

	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	pid = fork();
	if (pid == 0)
		_exit(3);
	wait_for(pid);
	pid = fork();
	if (pid == 0)
		for (;;)
			kill(getpid(), SIGKILL);
	wait_for(pid);
	pid = fork();
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &core);
		if (chdir("/tmp") == 0)
			abort();
		_exit(4);
	}
	wait_for(pid);
	return 5;
}
