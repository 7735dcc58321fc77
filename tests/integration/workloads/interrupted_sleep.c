// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: sleeps that a signal interrupts, for comparing how tracers print them. Each
 * sleep is 60 s and a SIGALRM (a handler that does nothing, no SA_RESTART) ends it after
 * 100 ms, so the call returns an ERESTART code at its exit. In order: nanosleep with a
 * remaining-time buffer; clock_nanosleep on CLOCK_MONOTONIC, relative, with one; the same
 * with TIMER_ABSTIME (the kernel writes no remaining time); nanosleep with none (NULL).
 * `interrupted_sleep same`: instead nanosleep, then clock_nanosleep on CLOCK_REALTIME,
 * relative, each with one struct as request and remaining time (as coreutils' sleep passes
 * it), so the kernel writes the time left over the request; each request is printed first.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

static void arm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static void request(const struct timespec *ts)
{
	printf("request %lld %ld\n", (long long)ts->tv_sec, ts->tv_nsec);
	fflush(stdout);
}

static int same_struct(void)
{
	struct timespec ts = { 60, 250000000 };

	request(&ts);
	arm();
	syscall(SYS_nanosleep, &ts, &ts);
	ts.tv_sec = 60;
	ts.tv_nsec = 250000000;
	request(&ts);
	arm();
	syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, &ts);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	struct timespec req = { 60, 0 }, rem = { 0, 0 }, until;

	sa.sa_handler = on_alarm;
	if (sigaction(SIGALRM, &sa, NULL))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "same"))
		return same_struct();
	arm();
	syscall(SYS_nanosleep, &req, &rem);
	arm();
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, &rem);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 60;
	arm();
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &until, &rem);
	arm();
	syscall(SYS_nanosleep, &req, NULL);
	return 0;
}
