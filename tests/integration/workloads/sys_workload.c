// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: a fixed sequence of syscalls for comparing syscall traces (probectl's kernel and
 * ptrace backends against Debian's strace). It starts with an openat of a path that never
 * exists, so a comparison can skip whatever the tracer, the dynamic loader and libc did
 * before main. Usage: sys_workload EXISTING_FILE OUT_FILE
 *
 * Calls, in order: openat(marker) = ENOENT; openat(EXISTING) read 64 close; openat(missing)
 * = ENOENT; openat(OUT, O_CREAT) write (escapes, more than strace's 32 bytes) close;
 * close(1000) = EBADF; read(fd of EXISTING again, NULL) = EFAULT; then sleeps: nanosleep
 * (1 ms), clock_nanosleep on CLOCK_MONOTONIC (1 us) and with TIMER_ABSTIME on CLOCK_REALTIME
 * (a time long past: no wait), nanosleep of address 0x1 = EFAULT. No remaining-time
 * pointer: a stack address would differ between the traced runs.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MARKER "/probectl-syscall-workload-begin"

static long sys(long nr, long a, long b, long c, long d)
{
	return syscall(nr, a, b, c, d);
}

int main(int argc, char **argv)
{
	static const char data[] = "line\twith \"quotes\" and a backslash \\ and more than 32 bytes\n";
	static const struct timespec ms = { 0, 1000000 }, us = { 0, 1000 }, past = { 1, 5 };
	char buf[64];
	long fd;

	if (argc < 3)
		return 2;
	sys(SYS_openat, AT_FDCWD, (long)MARKER, O_RDONLY, 0);
	fd = sys(SYS_openat, AT_FDCWD, (long)argv[1], O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	sys(SYS_read, fd, (long)buf, sizeof(buf), 0);
	sys(SYS_close, fd, 0, 0, 0);
	sys(SYS_openat, AT_FDCWD, (long)"/nonexistent/probectl-missing", O_RDONLY, 0);
	fd = sys(SYS_openat, AT_FDCWD, (long)argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	sys(SYS_write, fd, (long)data, sizeof(data) - 1, 0);
	sys(SYS_close, fd, 0, 0, 0);
	sys(SYS_close, 1000, 0, 0, 0);
	fd = sys(SYS_openat, AT_FDCWD, (long)argv[1], O_RDONLY, 0);
	sys(SYS_read, fd, 0, 16, 0);
	sys(SYS_close, fd, 0, 0, 0);
	sys(SYS_nanosleep, (long)&ms, 0, 0, 0);
	sys(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&us, 0);
	sys(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, (long)&past, 0);
	sys(SYS_nanosleep, 1, 0, 0, 0);
	return 0;
}
