// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the aggregation tests: calls whose keys and values are known
 * in advance, so counts, sums and every histogram bucket can be compared
 * with what the program did.
 *
 *   aggr_target values N   ag_val(i % 4, i) for i = 0..N-1
 *   aggr_target paced N B MS  the same on CPU 0 only, sleeping MS ms after
 *                          every B calls (records land in one CPU's ring)
 *   aggr_target signed     ag_val(0, v) for v = -3..3
 *   aggr_target keys N     ag_val(k, 1) for k = 0..N-1, then ag_val(0, 1)
 *                          again: N distinct keys, N + 1 calls
 *   aggr_target sleep MS.. ag_sleep(ms) for each MS: nanosleep of MS ms;
 *                          prints the ns all the calls took, as it saw them
 *   aggr_target syscalls N getppid() N times, then N failing chdir() and
 *                          openat() calls (ENOENT), all as raw syscalls
 *   aggr_target strings    ag_str(s): a string of 31 'a's once, then 'a' * 31
 *                          followed by "BBBBBBBBB" 3 times and by "CCCCCCCCC"
 *                          2 times (40 bytes each), "tab\there" once and
 *                          "\377\376 bad" once
 *   aggr_target big        ag_val(0, v) for v = -1, -1, LONG_MIN, 0: as u64,
 *                          2^64 - 1 twice, 2^63 and 0
 *   aggr_target wrap       ag_val(0, LONG_MIN + 1) 3 times: as u64 2^63 + 1,
 *                          as s64 -(2^63 - 1); either sum passes 64 bits
 *   aggr_target threads N  threads 1..3, thread t calling getppid() and
 *                          ag_val(t, t) t * N times each; prints each
 *                          thread's "TID CALLS" once they all ended
 * Only the functions to probe are named ag_*: a glob test counts them.
 *
 * noipa keeps the functions real calls with their own symbols.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noipa)) long ag_val(long key, long value)
{
	return key + value;
}

__attribute__((noipa)) long ag_str(const char *s)
{
	return s[0];
}

static void run_strings(void)
{
	char s[41];
	int i;

	memset(s, 'a', 31);
	s[31] = '\0';
	ag_str(s);
	memcpy(s + 31, "BBBBBBBBB", 10);
	for (i = 0; i < 3; i++)
		ag_str(s);
	memcpy(s + 31, "CCCCCCCCC", 10);
	for (i = 0; i < 2; i++)
		ag_str(s);
	ag_str("tab\there");
	ag_str("\377\376 bad");
}

__attribute__((noipa)) long ag_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

struct worker {
	pthread_t th;
	long t, n, tid;
};

static void *worker_main(void *arg)
{
	struct worker *a = arg;
	long i;

	a->tid = syscall(SYS_gettid);
	for (i = 0; i < a->t * a->n; i++) {
		syscall(SYS_getppid);
		ag_val(a->t, a->t);
	}
	return NULL;
}

static int run_workers(long n)
{
	struct worker a[3];
	int t;

	for (t = 0; t < 3; t++) {
		a[t].t = t + 1;
		a[t].n = n;
		if (pthread_create(&a[t].th, NULL, worker_main, &a[t]))
			return 1;
	}
	for (t = 0; t < 3; t++)
		pthread_join(a[t].th, NULL);
	for (t = 0; t < 3; t++)
		printf("%ld %ld\n", a[t].tid, a[t].t * n);
	return 0;
}

int main(int argc, char **argv)
{
	long i, n = argc > 2 ? atol(argv[2]) : 0;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "values")) {
		for (i = 0; i < n; i++)
			ag_val(i % 4, i);
	} else if (!strcmp(argv[1], "paced") && argc > 4) {
		long burst = atol(argv[3]), ms = atol(argv[4]);
		struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
		cpu_set_t cpu0;

		CPU_ZERO(&cpu0);
		CPU_SET(0, &cpu0);
		if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
			return 1;
		for (i = 0; i < n; i++) {
			ag_val(i % 4, i);
			if (burst > 0 && (i + 1) % burst == 0)
				nanosleep(&pause, NULL);
		}
	} else if (!strcmp(argv[1], "signed")) {
		for (i = -3; i <= 3; i++)
			ag_val(0, i);
	} else if (!strcmp(argv[1], "keys")) {
		for (i = 0; i < n; i++)
			ag_val(i, 1);
		ag_val(0, 1);
	} else if (!strcmp(argv[1], "syscalls")) {
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		for (i = 0; i < n; i++) {
			syscall(SYS_chdir, "/probectl-no-such-dir");
			syscall(SYS_openat, AT_FDCWD, "/probectl-no-such-file", O_RDONLY);
		}
	} else if (!strcmp(argv[1], "strings")) {
		run_strings();
	} else if (!strcmp(argv[1], "big")) {
		ag_val(0, -1);
		ag_val(0, -1);
		ag_val(0, LONG_MIN);
		ag_val(0, 0);
	} else if (!strcmp(argv[1], "wrap")) {
		for (i = 0; i < 3; i++)
			ag_val(0, LONG_MIN + 1);
	} else if (!strcmp(argv[1], "threads")) {
		return run_workers(n);
	} else if (!strcmp(argv[1], "sleep")) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 2; i < argc; i++)
			ag_sleep(atol(argv[i]));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%lld\n", (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec);
	} else {
		return 2;
	}
	return 0;
}
