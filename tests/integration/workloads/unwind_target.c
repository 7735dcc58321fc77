// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for calls that never return to their caller (unreturned_test.cpp):
 *
 *   unwind_target longjmp N   un_jump(i) for i = 1..N from the same call site;
 *                             every call but the last leaves by longjmp, the
 *                             last returns i: N entries, 1 return
 *   unwind_target hold        un_hold() blocks in pause() until killed
 *   unwind_target texit       a thread enters un_texit() and pthread_exit()s
 *                             there; prints "joined"
 *   unwind_target pause N     N threads block in the pause syscall until killed
 *   unwind_target wait FIFO   un_wait() blocks reading a byte of FIFO: the
 *                             caller decides when the call returns
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static jmp_buf env;

__attribute__((noipa)) long un_jump(long i, int leave)
{
	if (leave)
		longjmp(env, 1);
	return i;
}

__attribute__((noipa)) long un_hold(void)
{
	return pause();
}

__attribute__((noipa)) long un_texit(long v)
{
	pthread_exit((void *)v);
}

static void *texit_thread(void *arg)
{
	return (void *)un_texit((long)arg);
}

__attribute__((noipa)) long un_wait(int fd)
{
	char c;

	return read(fd, &c, 1);
}

static void *pause_thread(void *arg)
{
	(void)arg;
	syscall(SYS_pause);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "longjmp";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 1024;
	volatile long returns = 0, got = 0;
	pthread_t t;

	if (!strcmp(mode, "longjmp")) {
		for (volatile long i = 1; i <= n; i++)
			if (!setjmp(env)) {
				got = un_jump(i, i < n);
				returns++;
			}
		printf("returns=%ld last=%ld\n", returns, got);
	} else if (!strcmp(mode, "hold")) {
		un_hold();
	} else if (!strcmp(mode, "texit")) {
		if (pthread_create(&t, NULL, texit_thread, (void *)7L) ||
		    pthread_join(t, NULL))
			return 1;
		printf("joined\n");
	} else if (!strcmp(mode, "wait") && argc > 2) {
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0 || un_wait(fd) != 1)
			return 1;
		printf("released\n");
	} else if (!strcmp(mode, "pause")) {
		for (long i = 0; i < n; i++)
			if (pthread_create(&t, NULL, pause_thread, NULL))
				return 1;
		pause();
	} else {
		fprintf(stderr, "usage: unwind_target longjmp N | hold | texit | pause N | wait FIFO\n");
		return 2;
	}
	return 0;
}
