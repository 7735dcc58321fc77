// execve()s whose path and argv strings lie on pages the process never touched, as a
// string literal on a page not yet read in does: the strings are written to a file with
// write(2), then the file is mapped read-only, and nothing reads the mapping before the
// exec (the pages are in the page cache but not in the process's page tables). First a
// path that does not exist (ENOENT), its strings on one page as literals would be, then
// this program again, the path and each argv string on a page of its own; that run
// exits 0 when it sees "second-exec". Run it by its absolute path.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char** environ;

enum { kPage = 4096, kPages = 3 };

// Writes `strings` (n of them) into a fresh file, each at offset at[i], and maps it
// read-only without touching it; the strings' addresses go to out[i].
static int map_strings(const char* dir, const char* name, const char* const* strings,
                       const size_t* at, size_t n, const char** out) {
    static char buf[kPage * kPages];
    char path[256];
    memset(buf, 0, sizeof(buf));
    for (size_t i = 0; i < n; i++)
        memcpy(buf + at[i], strings[i], strlen(strings[i]) + 1);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
        perror(path);
        return -1;
    }
    const char* m = mmap(NULL, sizeof(buf), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    unlink(path);
    if (m == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = m + at[i];
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "second-exec") == 0)
        return 0;
    const char* dir = "/tmp";

    const char* missing[] = {"/nonexistent/untouched-exec", "untouched-a0", "untouched-a1"};
    const size_t missing_at[] = {0, 64, 128};
    const char* m[3];
    if (map_strings(dir, "exec_untouched.1", missing, missing_at, 3, m))
        return 2;
    char* const fail_argv[] = {(char*)m[1], (char*)m[2], NULL};
    execve(m[0], fail_argv, environ);  // fails: ENOENT

    const char* again[] = {argv[0], "second-exec", "untouched-arg2"};
    const size_t again_at[] = {0, kPage, 2 * kPage + 100};
    const char* a[3];
    if (map_strings(dir, "exec_untouched.2", again, again_at, 3, a))
        return 2;
    char* const ok_argv[] = {(char*)a[0], (char*)a[1], (char*)a[2], NULL};
    execve(a[0], ok_argv, environ);
    perror("execve");
    return 4;
}
