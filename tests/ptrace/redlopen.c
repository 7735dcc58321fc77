// SPDX-License-Identifier: GPL-2.0
/*
 * Host workload for probes in a library that goes away and comes back: calls
 * lib_calls_back() of LIBRARY (dlopen_lib) N times, unloads it, loads it
 * again and calls it N more times (2N calls in all).
 *
 *   redlopen LIBRARY N again|moved|munmap
 *
 * again:  dlclose() then dlopen(); prints "same address" or "moved".
 * moved:  dlclose(), then a page of our own where lib_calls_back was, so the
 *         second dlopen() maps the library elsewhere (exit 4 if it does not).
 * munmap: the library file mapped executable by hand as well (no dynamic
 *         linker told), the N+N calls, then that mapping replaced by a page
 *         of 0x5a bytes; calls page_replaced(), prints "ready", waits for SIGUSR1 and exits 3 if
 *         anything wrote into that page, 0 if not.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef long (*calls_back_fn)(long (*fn)(long), long i);

static volatile long sink;

__attribute__((noipa)) static long callback(long i)
{
	sink += i;
	return sink;
}

/* Called once the page of our own is in place (munmap). */
__attribute__((noipa)) void page_replaced(void)
{
	sink++;
}

static void *load(const char *path, calls_back_fn *fn)
{
	void *lib = dlopen(path, RTLD_NOW);

	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	*(void **)fn = dlsym(lib, "lib_calls_back");
	if (!*fn) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	return lib;
}

static void calls(calls_back_fn fn, int n)
{
	for (int i = 0; i < n; i++)
		fn(callback, i);
}

static int munmap_mode(const char *path, int n)
{
	const long page = sysconf(_SC_PAGESIZE);
	calls_back_fn fn;
	struct stat st;
	sigset_t usr1;
	int fd, sig;
	void *own, *lib;
	char *by_hand;
	size_t len;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return 1;
	}
	len = ((size_t)st.st_size + page - 1) & ~(size_t)(page - 1);
	by_hand = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (by_hand == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* The dynamic linker's notice makes a tracer see both mappings. */
	lib = load(path, &fn);

	calls(fn, n);
	calls(fn, n);
	own = mmap(by_hand, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (own != by_hand) {
		perror("mmap");
		return 1;
	}
	memset(own, 0x5a, len);
	page_replaced();
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&usr1, &sig))
		return 1;
	for (size_t i = 0; i < len; i++)
		if (by_hand[i] != 0x5a) {
			printf("byte %zu of our page is 0x%02x\n", i,
			       (unsigned char)by_hand[i]);
			return 3;
		}
	dlclose(lib);
	return 0;
}

int main(int argc, char **argv)
{
	calls_back_fn fn, again;
	uintptr_t before;
	void *lib;
	int n;

	if (argc != 4 || (strcmp(argv[3], "again") && strcmp(argv[3], "moved") &&
			  strcmp(argv[3], "munmap"))) {
		fprintf(stderr,
			"usage: redlopen LIBRARY N again|moved|munmap\n");
		return 2;
	}
	n = atoi(argv[2]);
	if (!strcmp(argv[3], "munmap"))
		return munmap_mode(argv[1], n);
	lib = load(argv[1], &fn);
	calls(fn, n);
	before = (uintptr_t)fn;
	dlclose(lib);
	if (!strcmp(argv[3], "moved")) {
		const long page = sysconf(_SC_PAGESIZE);
		void *at = (void *)(before & ~(uintptr_t)(page - 1));

		if (mmap(at, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
			 0) != at) {
			perror("mmap");
			return 1;
		}
	}
	lib = load(argv[1], &again);
	calls(again, n);
	printf("%s\n", (uintptr_t)again == before ? "same address" : "moved");
	if (!strcmp(argv[3], "moved") && (uintptr_t)again == before)
		return 4;
	dlclose(lib);
	return 0;
}
