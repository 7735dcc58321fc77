// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: one thread pinned to each of the first T online CPUs (argv[2],
 * default 2), each calling getppid() N times (argv[1]) once all have
 * started, so that every CPU's ring fills at once and the reader must merge
 * them. With BURST and USEC (argv[3], argv[4]) each thread sleeps USEC
 * microseconds after every BURST calls, so that the threads' calls
 * interleave in time even where the CPUs take turns on one host thread.
 * Prints the number of threads that ran.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls, burst, usec;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		exit(2);
	pthread_barrier_wait(&start);
	for (long i = 0; i < calls; i++) {
		syscall(SYS_getppid);
		if (burst > 0 && (i + 1) % burst == 0)
			usleep(usec);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long t = argc > 2 ? strtol(argv[2], NULL, 0) : 2;
	pthread_t th[64];

	calls = argc > 1 ? strtol(argv[1], NULL, 0) : 1000;
	burst = argc > 4 ? strtol(argv[3], NULL, 0) : 0;
	usec = argc > 4 ? strtol(argv[4], NULL, 0) : 0;
	if (t < 1 || t > 64 || t > sysconf(_SC_NPROCESSORS_ONLN))
		return 3;
	pthread_barrier_init(&start, NULL, t);
	for (long i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 4;
	for (long i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	printf("%ld\n", t);
	return 0;
}
