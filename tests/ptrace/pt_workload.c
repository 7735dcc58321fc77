/* Workload for the ptrace backend tests: known calls, returns, syscalls, threads and forks,
 * so every event a test sees can be checked against what the program did.
 *
 *   pt_workload calls N        pt_add(i, 2*i+1) for i = 1..N (returns 3*i+1)
 *   pt_workload fact N         pt_fact(N), recursive: N entries, N returns (n!)
 *   pt_workload syscalls N     N raw getppid(), then openat(AT_FDCWD, PT_MISSING, O_RDONLY)
 *                              (fails with ENOENT)
 *   pt_workload missing N      N raw openat(AT_FDCWD, PT_MISSING, O_RDONLY) (each fails with
 *                              ENOENT)
 *   pt_workload threads T N    T threads, thread k calls pt_add(k, j) for j = 0..N-1
 *   pt_workload forks N        pt_add(i, 0) for i = 1..N here, then a forked child does the
 *                              same with pt_add(i, 1); exits 0 only if the child exited 0
 *   pt_workload spin T         T threads calling pt_spin(j) forever; thread 0 writes one
 *                              byte to stdout every 4096 calls (progress for the tests)
 *   pt_workload usdt N         USDT probe pt:tick(i, i*i, 3*i) for i = 1..N, its third
 *                              argument a stack slot whose address escaped (a memory
 *                              operand in the note)
 *   pt_workload usdt-fork N    the same pt:tick sequence in a forked child (after it, the
 *                              parent fires nothing); exits 0 only if the child exited 0
 *   pt_workload rename T       raw getppid() under each comm the process takes: once as
 *                              itself, twice renamed "renamed" (PR_SET_NAME), then T threads
 *                              one after another, thread k named "worker<k>" making k+1
 *                              calls; then once each as "g\377", "nl\nx" and "" (any
 *                              byte but NUL)
 *   pt_workload vfork N        pt_add(i, 0) for i = 1..N here, then a vfork() child (sharing
 *                              this memory) does the same with pt_add(i, 1) and _exits
 *   pt_workload execs N        N forked children, one after another, each execve()s
 *                              PT_MISSING (fails with ENOENT) then /proc/self/exe as
 *                              "syscalls 2"; then one raw getppid(). In all: 2N+1 execve
 *                              (N failed), 2N+1 getppid, N forks; exits 0 only if every
 *                              child exited 0
 *   pt_workload sleeps S       nanosleep(&ts, &ts), then clock_nanosleep(CLOCK_REALTIME, 0,
 *                              &ts, &ts), one struct as request and remaining time (as
 *                              coreutils' sleep passes it) asking S.25 s, each cut short after
 *                              100 ms by a handled SIGALRM; prints each request before the call
 *   pt_workload killed S       a forked child sleeps in clock_nanosleep(CLOCK_REALTIME, 0,
 *                              {S, 0}, NULL); once it is asleep in it (/proc says so: its
 *                              tracer saw the entry) it is killed with SIGKILL; exits 0 only if
 *                              the child died of that
 *   pt_workload killed-thread S  a second thread sleeps in clock_nanosleep(CLOCK_REALTIME, 0,
 *                              {S, 0}, NULL); once it is asleep in it, the process _exits
 *                              (status 0), which kills that thread inside its call
 *   pt_workload blocked-read N   read(0, buf, 1): blocks until the test writes a byte or
 *                              closes stdin (a pipe), then N more one-byte reads of stdin
 *   pt_workload blocked-sleep N  clock_nanosleep(CLOCK_REALTIME, 0, {300, 0}, NULL) until a
 *                              SIGUSR1 (handled, no SA_RESTART) cuts it short (EINTR), then N
 *                              clock_nanosleep of {0, 0}; exits 3 if the first ran its time
 *   pt_workload read-under-calls N  a second thread blocks in read(2) on a pipe; once it
 *                              sleeps in it, pt_add(i, 0) for i = 1..N here, then one byte
 *                              into the pipe, which the thread's read returns (1)
 *
 * noipa keeps each function a real call with its own symbol. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PT_MISSING "/nonexistent/probectl-ptrace-test"

__attribute__((noipa)) long pt_add(long a, long b) {
    return a + b;
}

__attribute__((noipa)) long pt_fact(long n) {
    /* the multiplication after the call keeps it a real (non-tail) recursion */
    return n <= 1 ? 1 : n * pt_fact(n - 1);
}

__attribute__((noipa)) long pt_spin(long j) {
    return j ^ 0x5a;
}

__attribute__((noipa)) void pt_touch(long* p) {
    (void)p;
}

/* pt:tick(i, i*i, 3*i) for i = 1..n, the third a stack slot whose address escaped */
static int usdt_ticks(long n) {
    for (long i = 1; i <= n; ++i) {
        long cell = 3 * i;
        pt_touch(&cell);
        DTRACE_PROBE3(pt, tick, i, i * i, cell);
    }
    printf("pt:tick x%ld\n", n);
    return fflush(stdout) == 0 ? 0 : 1;
}

static long g_n;

static void* adder(void* arg) {
    long k = (long)arg, sum = 0;
    for (long j = 0; j < g_n; ++j)
        sum += pt_add(k, j);
    return (void*)sum;
}

static void* spinner(void* arg) {
    long k = (long)arg;
    for (long j = 0;; ++j) {
        pt_spin(j);
        if (k == 0 && (j & 4095) == 0 && write(1, "x", 1) < 0)
            _exit(3);
    }
    return NULL;
}

static void* renamer(void* arg) {
    char name[16];
    long k = (long)arg;
    snprintf(name, sizeof(name), "worker%ld", k);
    pthread_setname_np(pthread_self(), name);
    for (long j = 0; j <= k; ++j)
        syscall(SYS_getppid);
    return NULL;
}

static int run_renames(long t) {
    static const char* const later[] = {"g\377", "nl\nx", ""};
    syscall(SYS_getppid);
    prctl(PR_SET_NAME, "renamed");
    syscall(SYS_getppid);
    syscall(SYS_getppid);
    for (long k = 0; k < t; ++k) {
        pthread_t th;
        if (pthread_create(&th, NULL, renamer, (void*)k) != 0)
            return 2;
        pthread_join(th, NULL);
    }
    for (unsigned i = 0; i < sizeof(later) / sizeof(later[0]); ++i) {
        prctl(PR_SET_NAME, later[i]);
        syscall(SYS_getppid);
    }
    return 0;
}

static int run_threads(long t, void* (*fn)(void*), int join) {
    pthread_t th[64];
    if (t < 1 || t > 64)
        return 2;
    for (long k = 0; k < t; ++k)
        if (pthread_create(&th[k], NULL, fn, (void*)k) != 0)
            return 2;
    if (join)
        for (long k = 0; k < t; ++k)
            pthread_join(th[k], NULL);
    else
        for (;;)
            pause();
    return 0;
}

static void on_alarm(int sig) {
    (void)sig;
}

/* A sleep the kernel cuts short: it writes the time left over the request. */
static int run_sleeps(long s) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm; /* no SA_RESTART: the sleep returns EINTR */
    if (sigaction(SIGALRM, &sa, NULL))
        return 2;
    const struct itimerval it = {{0, 0}, {0, 100000}};
    struct timespec ts = {s, 250000000};
    printf("request %ld %ld\n", (long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
    setitimer(ITIMER_REAL, &it, NULL);
    if (syscall(SYS_nanosleep, &ts, &ts) == 0)
        return 3;
    ts.tv_sec = s;
    ts.tv_nsec = 250000000;
    printf("request %ld %ld\n", (long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
    setitimer(ITIMER_REAL, &it, NULL);
    if (syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, &ts) == 0)
        return 3;
    return 0;
}

/* Whether `pid` sleeps (state S) inside syscall `nr`. */
static int sleeps_in(pid_t pid, long nr) {
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE* f = fopen(path, "r");
    if (!f)
        return 0;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = 0;
    const char* end = strrchr(buf, ')');
    if (!end || end[1] != ' ' || end[2] != 'S')
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    long got = -1;
    if (fscanf(f, "%ld", &got) != 1)
        got = -1;
    fclose(f);
    return got == nr;
}

static int run_killed(long s) {
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        struct timespec ts = {s, 0};
        syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL);
        _exit(3);
    }
    while (!sleeps_in(pid, SYS_clock_nanosleep))
        sched_yield(); /* not a sleep: the only clock_nanosleep is the child's */
    kill(pid, SIGKILL);
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
        return 4;
    return 0;
}

static void* killed_sleeper(void* arg) {
    struct timespec ts = {(long)arg, 0};
    syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL);
    return NULL;
}

static int run_killed_thread(long s) {
    pthread_t th;
    if (pthread_create(&th, NULL, killed_sleeper, (void*)s) != 0)
        return 2;
    /* The thread's tid is not pthread_t: find the task other than this one. */
    for (;;) {
        char path[64];
        for (pid_t tid = getpid() + 1; tid < getpid() + 64; tid++) {
            snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)getpid(), (int)tid);
            if (access(path, F_OK) == 0 && sleeps_in(tid, SYS_clock_nanosleep))
                _exit(0);
        }
        sched_yield();
    }
}

static void on_usr1(int sig) {
    (void)sig;
}

static int run_blocked_sleep(long n) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1; /* no SA_RESTART: the sleep returns EINTR */
    if (sigaction(SIGUSR1, &sa, NULL))
        return 2;
    struct timespec ts = {300, 0};
    if (syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL) == 0)
        return 3;
    for (long i = 0; i < n; ++i) {
        struct timespec zero = {0, 0};
        syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &zero, NULL);
    }
    return 0;
}

static int g_pipe[2];

static void* pipe_reader(void* arg) {
    char c = 0;
    (void)arg;
    return (void*)(long)syscall(SYS_read, g_pipe[0], &c, 1);
}

static int run_read_under_calls(long n) {
    pthread_t th;
    if (pipe(g_pipe) != 0 || pthread_create(&th, NULL, pipe_reader, NULL) != 0)
        return 2;
    for (;;) {
        char path[64];
        int found = 0;
        for (pid_t tid = getpid() + 1; tid < getpid() + 64 && !found; tid++) {
            snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)getpid(), (int)tid);
            found = access(path, F_OK) == 0 && sleeps_in(tid, SYS_read);
        }
        if (found)
            break;
        sched_yield();
    }
    for (long i = 1; i <= n; ++i)
        pt_add(i, 0);
    if (write(g_pipe[1], "x", 1) != 1)
        return 2;
    void* got = NULL;
    pthread_join(th, &got);
    return (long)got == 1 ? 0 : 4;
}

int main(int argc, char** argv) {
    if (argc < 3)
        return 2;
    const char* mode = argv[1];
    long n = atol(argv[2]);
    if (!strcmp(mode, "calls")) {
        long sum = 0;
        for (long i = 1; i <= n; ++i)
            sum += pt_add(i, 2 * i + 1);
        printf("pt_add calls: %ld sum: %ld\n", n, sum);
    } else if (!strcmp(mode, "fact")) {
        printf("pt_fact(%ld) = %ld\n", n, pt_fact(n));
    } else if (!strcmp(mode, "syscalls")) {
        long ppid = 0;
        for (long i = 0; i < n; ++i)
            ppid = syscall(SYS_getppid);
        long fd = syscall(SYS_openat, AT_FDCWD, PT_MISSING, O_RDONLY);
        printf("getppid: %ld x%ld openat: %ld\n", ppid, n, fd);
    } else if (!strcmp(mode, "missing")) {
        long failed = 0;
        for (long i = 0; i < n; ++i)
            failed += syscall(SYS_openat, AT_FDCWD, PT_MISSING, O_RDONLY) < 0;
        printf("openat failed: %ld of %ld\n", failed, n);
    } else if (!strcmp(mode, "threads")) {
        g_n = argc > 3 ? atol(argv[3]) : 100;
        return run_threads(n, adder, 1);
    } else if (!strcmp(mode, "forks")) {
        for (long i = 1; i <= n; ++i)
            pt_add(i, 0);
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            for (long i = 1; i <= n; ++i)
                pt_add(i, 1);
            _exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 4;
    } else if (!strcmp(mode, "rename")) {
        return run_renames(n);
    } else if (!strcmp(mode, "vfork")) {
        for (long i = 1; i <= n; ++i)
            pt_add(i, 0);
        pid_t pid = vfork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            for (long i = 1; i <= n; ++i)
                pt_add(i, 1);
            _exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 4;
    } else if (!strcmp(mode, "execs")) {
        for (long i = 0; i < n; ++i) {
            pid_t pid = fork();
            if (pid < 0)
                return 2;
            if (pid == 0) {
                char* const args[] = {"pt_workload", "syscalls", "2", NULL};
                execv(PT_MISSING, args);
                execv("/proc/self/exe", args);
                _exit(5);
            }
            int st = 0;
            if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 4;
        }
        syscall(SYS_getppid);
    } else if (!strcmp(mode, "spin")) {
        return run_threads(n, spinner, 0);
    } else if (!strcmp(mode, "usdt")) {
        usdt_ticks(n);
    } else if (!strcmp(mode, "usdt-fork")) {
        int st;
        pid_t pid = fork();

        if (pid == 0)
            _exit(usdt_ticks(n));
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 4;
    } else if (!strcmp(mode, "sleeps")) {
        return run_sleeps(n);
    } else if (!strcmp(mode, "killed")) {
        return run_killed(n);
    } else if (!strcmp(mode, "killed-thread")) {
        return run_killed_thread(n);
    } else if (!strcmp(mode, "blocked-read")) {
        char c;
        for (long i = 0; i <= n; ++i)
            if (syscall(SYS_read, 0, &c, 1) < 0)
                return 3;
    } else if (!strcmp(mode, "blocked-sleep")) {
        return run_blocked_sleep(n);
    } else if (!strcmp(mode, "read-under-calls")) {
        return run_read_under_calls(n);
    } else {
        return 2;
    }
    return 0;
}
