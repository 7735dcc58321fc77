// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the uprobe tests: user functions called a known number of
 * times with known arguments, so a test can compare every record with
 * what the program did. Prints what it did on stdout.
 *
 *   uprobe_target calls N     pc_add(i, 2*i+1) for i = 1..N; prints the sum
 *   uprobe_target fact N      pc_fact(N), recursive: N calls, N returns
 *   uprobe_target nest N      pc_nest(N), recursive: N calls nested N deep
 *   uprobe_target fork N      N calls here, then a child forks, execs
 *                             itself as "calls N" and the parent waits
 *   uprobe_target libc N      N calls of libc's getppid()
 *   uprobe_target usdt N      N USDT probes pc:tick(i, i*i) with a
 *                             semaphore; prints how often it was raised
 *   uprobe_target paths P...  pc_path(P) for each P, in order; prints the count
 *   uprobe_target neg N       pc_neg(i) for i = 1..N: an int function returning -i
 *                             (the upper half of ax is zero, not the sign)
 *   uprobe_target hold S FILE writes the address of pc:hold's semaphore to
 *                             FILE, then for S seconds fires pc:hold every 10 ms
 *
 * noipa keeps the functions real calls with their own symbols (no inlining,
 * cloning or constant propagation into callers).
 */
#define _SDT_HAS_SEMAPHORES 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

unsigned short pc_tick_semaphore __attribute__((section(".probes")));
unsigned short pc_hold_semaphore __attribute__((section(".probes")));
#define PC_TICK_ENABLED() __builtin_expect(pc_tick_semaphore, 0)

__attribute__((noipa)) long pc_add(long a, long b)
{
	return a + b;
}

/* returns the string's length, so a uretprobe sees a known $retval too */
__attribute__((noipa)) long pc_path(const char *p)
{
	return (long)strlen(p);
}

__attribute__((noipa)) int pc_neg(int i)
{
	return -i;
}

long pc_fact(long n);
/* through a volatile pointer: gcc would turn direct recursion into a loop */
static long (*volatile pc_fact_ptr)(long) = pc_fact;

__attribute__((noipa)) long pc_fact(long n)
{
	return n <= 1 ? 1 : n * pc_fact_ptr(n - 1);
}

long pc_nest(long n);
static long (*volatile pc_nest_ptr)(long) = pc_nest;

/* n calls nested n deep; returns n */
__attribute__((noipa)) long pc_nest(long n)
{
	return n <= 1 ? n : 1 + pc_nest_ptr(n - 1);
}

static long calls(long n)
{
	long sum = 0;

	for (long i = 1; i <= n; i++)
		sum += pc_add(i, 2 * i + 1);
	return sum;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 10;
	long enabled = 0;
	struct timespec t0, t;
	FILE *f;
	int status;
	pid_t pid;

	if (!strcmp(mode, "calls")) {
		printf("sum=%ld\n", calls(n));
	} else if (!strcmp(mode, "fact")) {
		printf("fact=%ld\n", pc_fact(n));
	} else if (!strcmp(mode, "fork")) {
		printf("sum=%ld\n", calls(n));
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "calls", argv[2], (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 1;
		printf("child=%d\n", (int)pid);
	} else if (!strcmp(mode, "libc")) {
		for (long i = 0; i < n; i++)
			getppid();
		printf("getppid=%ld\n", n);
	} else if (!strcmp(mode, "usdt")) {
		for (long i = 1; i <= n; i++) {
			if (PC_TICK_ENABLED())
				enabled++;
			DTRACE_PROBE2(pc, tick, i, i * i);
		}
		printf("enabled=%ld semaphore=%u\n", enabled, pc_tick_semaphore);
	} else if (!strcmp(mode, "nest")) {
		printf("nest=%ld\n", pc_nest(n));
	} else if (!strcmp(mode, "neg")) {
		long sum = 0;

		for (long i = 1; i <= n; i++)
			sum += pc_neg((int)i);
		printf("neg=%ld\n", sum);
	} else if (!strcmp(mode, "paths")) {
		for (int i = 2; i < argc; i++)
			pc_path(argv[i]);
		printf("paths=%d\n", argc - 2);
	} else if (!strcmp(mode, "hold") && argc > 3) {
		f = fopen(argv[3], "w");
		if (!f)
			return 1;
		fprintf(f, "%p\n", (void *)&pc_hold_semaphore);
		fclose(f);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			DTRACE_PROBE1(pc, hold, n);
			usleep(10000);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec - t0.tv_sec < n);
	} else {
		fprintf(stderr, "uprobe_target: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
