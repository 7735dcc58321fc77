// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: syscalls whose arguments strace decodes into names (modes, AT_FDCWD, signal
 * names, flags, SEEK_*, socket families, arch_prctl codes, rlimit resources, getrandom
 * flags, wait4 options and statuses, futex operations, the strings readlink and getcwd
 * write), each with scalar or path arguments, or memory at a fixed address, so a line of
 * `strace -e trace=...` and of `probectl trace --syscalls=...` can be compared whole (but
 * for getrandom's random bytes).
 * Usage: decode_args DIR. Prints "child=PID child=PID pid=PID tid=TID" last.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir;
	int fds[2], fd;
	pid_t child[2];
	/* the futex word, a timespec and a wait status at one address in every run */
	uint32_t *page = mmap((void *)0x200000000, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	struct timespec *ts = (struct timespec *)(page + 4);
	char random[4];

	if (argc < 2 || page != (void *)0x200000000)
		return 2;
	dir = argv[1];
	umask(022);
	mkdir(dir, 0755);
	chmod(dir, 0700);
	fchmodat(AT_FDCWD, dir, 0750, 0);
	access(dir, R_OK | W_OK);
	syscall(SYS_faccessat, AT_FDCWD, dir, X_OK);
	unlinkat(AT_FDCWD, dir, AT_REMOVEDIR);
	kill(getpid(), 0);
	syscall(SYS_tgkill, getpid(), gettid(), 0);
	syscall(SYS_tkill, gettid(), 0);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return 3;
	fd = dup3(fds[0], 100, O_CLOEXEC);
	lseek(fds[1], 0, SEEK_CUR);
	fcntl(fd, F_GETFD);
	socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* named codes and resources, an unknown one of each, NULL pointers (no addresses) */
	syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0);
	syscall(SYS_arch_prctl, 0x3001, 0x1234);
	syscall(SYS_arch_prctl, ARCH_GET_XCOMP_SUPP, 0);
	syscall(SYS_prlimit64, 0, 99, 0, 0);
	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, 0);
	syscall(SYS_getrlimit, RLIMIT_CORE, 0);
	syscall(SYS_setrlimit, 77, 0);
	syscall(SYS_rseq, 0, 32, 0, 0x53053053);
	/* getrandom: its bytes (shown in hex) and flags, named, unknown and refused */
	syscall(SYS_getrandom, random, sizeof(random), 0);
	syscall(SYS_getrandom, NULL, 0, GRND_NONBLOCK);
	syscall(SYS_getrandom, NULL, 0, GRND_INSECURE);
	syscall(SYS_getrandom, NULL, 0, GRND_RANDOM | GRND_INSECURE);
	syscall(SYS_getrandom, NULL, 0, GRND_NONBLOCK | 0x10);
	/* wait4: a child that exits with 7, one killed; the statuses they leave */
	child[0] = fork();
	if (child[0] == 0)
		_exit(7);
	syscall(SYS_wait4, child[0], page + 8, 0, NULL);
	child[1] = fork();
	if (child[1] == 0)
		for (;;)
			pause();
	kill(child[1], SIGKILL);
	syscall(SYS_wait4, child[1], page + 8, __WALL, NULL);
	syscall(SYS_wait4, -1, NULL, WNOHANG | WUNTRACED, NULL);
	syscall(SYS_wait4, -1, page + 8, 0x10000000, NULL);
	/* futex: waits that time out or find another value, wakes, an unknown operation */
	ts->tv_sec = 0;
	ts->tv_nsec = 1000;
	syscall(SYS_futex, page, FUTEX_WAIT_PRIVATE, 0, ts, NULL, 0);
	syscall(SYS_futex, page, FUTEX_WAIT, 1, NULL, NULL, 0);
	syscall(SYS_futex, page, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL,
		FUTEX_BITSET_MATCH_ANY);
	syscall(SYS_futex, page, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	syscall(SYS_futex, page, FUTEX_WAKE_OP_PRIVATE, 1, 2, page + 1,
		FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 0));
	syscall(SYS_futex, NULL, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0);
	syscall(SYS_futex, page, 99, 7, NULL, NULL, 0x1234);
	/* strings the call writes: the returned count of bytes, the address after a failure */
	syscall(SYS_readlink, "/proc/self/exe", (char *)(page + 64), 256);
	syscall(SYS_readlink, "/proc/self/exe", (char *)(page + 64), 3);
	syscall(SYS_readlinkat, AT_FDCWD, "/nonexistent", (char *)(page + 64), 16);
	syscall(SYS_getcwd, (char *)(page + 64), 2);
	printf("child=%d child=%d pid=%d tid=%d\n", (int)child[0], (int)child[1], (int)getpid(),
	       (int)gettid());
	return 0;
}
