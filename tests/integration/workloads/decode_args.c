// SPDX-License-Identifier: GPL-2.0
/*
 * Workload: syscalls whose arguments strace decodes into names (modes, AT_FDCWD, signal
 * names, flags, SEEK_*, socket families, arch_prctl codes, rlimit resources), each with
 * scalar or path arguments only, so a line of `strace -e trace=...` and of
 * `probectl trace --syscalls=...` can be compared whole. Usage: decode_args DIR. Prints "pid=PID tid=TID" last.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir;
	int fds[2], fd;

	if (argc < 2)
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
	printf("pid=%d tid=%d\n", (int)getpid(), (int)gettid());
	return 0;
}
