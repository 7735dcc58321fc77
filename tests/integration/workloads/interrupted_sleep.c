// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: sleeps that a signal interrupts, for comparing how tracers print them. Each
 * sleep is 60 s and a SIGALRM (a handler that does nothing, no SA_RESTART) ends it after
 * 100 ms, so the call returns an ERESTART code at its exit. In order: nanosleep with a
 * remaining-time buffer; clock_nanosleep on CLOCK_MONOTONIC, relative, with one; the same
 * with TIMER_ABSTIME (the kernel writes no remaining time); nanosleep with none (NULL).
 */
#include <signal.h>
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

int main(void)
{
	struct sigaction sa = { 0 };
	struct timespec req = { 60, 0 }, rem = { 0, 0 }, until;

	sa.sa_handler = on_alarm;
	if (sigaction(SIGALRM, &sa, NULL))
		return 1;
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
