// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the dlopen stack tests: probed() is called from the program
 * (probectl reads the process's maps for that stack), then, once a line
 * arrives on FIFO, from a library dlopen()ed only now, so that the second
 * stack has a frame in code mapped after the maps were read.
 *
 *   dlopen_target FIFO LIBRARY [hold]
 *
 * hold: read a second line before exiting (a backend that reads /proc needs
 * the process alive). noipa keeps each call a real call with its own
 * symbol; the work after each call keeps it from becoming a tail jump.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) long probed(long i)
{
	sink += i;
	return sink;
}

__attribute__((noipa)) long before_dlopen(long i)
{
	long r = probed(i);

	sink += 1;
	return r + 1;
}

/* 0 once a whole line was read from @fd. */
static int wait_line(int fd)
{
	ssize_t n;
	char c;

	do
		n = read(fd, &c, 1);
	while (n == 1 && c != '\n');
	return n == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	long (*calls_back)(long (*fn)(long), long i);
	void *lib;
	int fd;

	if (argc < 3 || (argc == 4 && strcmp(argv[3], "hold")) || argc > 4) {
		fprintf(stderr, "usage: dlopen_target FIFO LIBRARY [hold]\n");
		return 2;
	}
	before_dlopen(1);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || wait_line(fd)) {
		perror(argv[1]);
		return 1;
	}
	lib = dlopen(argv[2], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&calls_back = dlsym(lib, "lib_calls_back");
	if (!calls_back) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	calls_back(probed, 2);
	if (argc == 4 && wait_line(fd)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
