// A child created with CLONE_UNTRACED, which a ptrace tracer cannot follow: it calls
// getppid(2) three times and exits; the parent prints the child's pid, waits for it and
// calls getppid(2) once.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	/* no new stack: without CLONE_VM the child runs on its own copy, as after fork() */
	long pid = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);

	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			syscall(SYS_getppid);
		_exit(0);
	}
	printf("child %ld\n", pid);
	fflush(stdout);
	waitpid((pid_t)pid, NULL, 0);
	syscall(SYS_getppid);
	return 0;
}
