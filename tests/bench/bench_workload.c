/* The standard workloads of `probectl bench`: loops whose iteration count is
 * known, so every tracer's hit count can be checked, timed by the workload itself so the
 * figure excludes exec, attach and tracer start-up.
 *
 *   bench_workload calls N [T]      N calls of bench_fn(i), i = 0..N-1, split over T threads
 *                                   (default 1); thread k takes i = k, k+T, k+2T, ...
 *   bench_workload syscalls N [T]   N raw getppid() syscalls, split over T threads
 *   ... [T [OUT]]                   the result line goes to file OUT instead of stdout
 *   ... [T [OUT [GAP]]]             each thread busy-waits GAP ns (a clock_gettime spin)
 *                                   after every call, lowering the offered rate; OUT "-"
 *                                   is stdout
 *
 * Prints one line on stdout: "bench_workload MODE n=N threads=T ns=ELAPSED sum=S", where
 * ELAPSED is CLOCK_MONOTONIC ns from the first thread starting its loop (all leave a
 * barrier together, so thread creation is not counted) to the last one ending it, and S is the sum
 * of bench_fn's results (calls) or of getppid's (syscalls), which keeps the compiler from dropping
 * the loop and lets a caller check the run. Exit status 2 on bad arguments. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* noipa: a real call with its own symbol, argument in %rdi, result in %rax */
__attribute__((noipa)) long bench_fn(long i) {
    return i + 1;
}

struct worker {
    pthread_t th;
    long first, step, n, sum;
    long long t0, t1, gap;
    int syscalls;
};

static pthread_barrier_t g_start;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A spin, not a sleep: the thread keeps its CPU as an unpaced one does (a sleep would lend
 * it to the tracer's reader, changing what is measured), and a wake-up costs more than
 * the gaps that matter. */
static void pause_ns(long long gap) {
    const long long until = now_ns() + gap;
    while (now_ns() < until) {
    }
}

static void* work(void* arg) {
    struct worker* w = arg;
    pthread_barrier_wait(&g_start);
    w->t0 = now_ns();
    long sum = 0;
    if (w->gap > 0)
        for (long i = w->first; i < w->n; i += w->step) {
            sum += w->syscalls ? syscall(SYS_getppid) : bench_fn(i);
            pause_ns(w->gap);
        }
    else if (w->syscalls)
        for (long i = w->first; i < w->n; i += w->step)
            sum += syscall(SYS_getppid);
    else
        for (long i = w->first; i < w->n; i += w->step)
            sum += bench_fn(i);
    w->sum = sum;
    w->t1 = now_ns();
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 3)
        return 2;
    const int syscalls = !strcmp(argv[1], "syscalls");
    if (!syscalls && strcmp(argv[1], "calls"))
        return 2;
    const long n = atol(argv[2]);
    const long t = argc > 3 ? atol(argv[3]) : 1;
    const long long gap = argc > 5 ? atoll(argv[5]) : 0;
    if (n < 0 || t < 1 || t > 64 || gap < 0)
        return 2;
    struct worker w[64];
    /* the main thread is worker 0, so T = 1 creates no thread at all */
    pthread_barrier_init(&g_start, NULL, (unsigned)t);
    for (long k = 0; k < t; ++k)
        w[k] = (struct worker){.first = k, .step = t, .n = n, .gap = gap, .syscalls = syscalls};
    for (long k = 1; k < t; ++k)
        if (pthread_create(&w[k].th, NULL, work, &w[k]) != 0)
            return 2;
    work(&w[0]);
    long sum = w[0].sum;
    long long t0 = w[0].t0, t1 = w[0].t1;
    for (long k = 1; k < t; ++k) {
        pthread_join(w[k].th, NULL);
        sum += w[k].sum;
        t0 = w[k].t0 < t0 ? w[k].t0 : t0;
        t1 = w[k].t1 > t1 ? w[k].t1 : t1;
    }
    if (argc > 4 && strcmp(argv[4], "-") && !freopen(argv[4], "w", stdout))
        return 3;
    printf("bench_workload %s n=%ld threads=%ld ns=%lld sum=%ld\n", argv[1], n, t, t1 - t0, sum);
    return 0;
}
