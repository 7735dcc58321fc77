// probectl bench: the tracer table and the report (table, CSV, gnuplot script, figures).
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <ostream>

#include "bench.hpp"
#include "probectl/text_table.hpp"

namespace probectl::cli::bench {

Outcome runUntraced(const Workload& w);
Outcome runKernelCount(const Workload& w);
Outcome runKernelRecord(const Workload& w);
Outcome runKernelRecordDeferred(const Workload& w);
Outcome runKernelAggregate(const Workload& w);
Outcome runKernelKstack(const Workload& w);
Outcome runKernelUstack(const Workload& w);
Outcome runKernelUstackDwarf(const Workload& w);
Outcome runFtraceHistPid(const Workload& w);
Outcome runFtraceHistLog2(const Workload& w);
Outcome runFtraceFloor(const Workload& w);
Outcome runFtraceRecord(const Workload& w);
Outcome runFtraceStream(const Workload& w);
Outcome runFtraceIterate(const Workload& w);
Outcome runFtracePipe(const Workload& w);
Outcome runTraceText(const Workload& w);
Outcome runTraceJson(const Workload& w);
Outcome runPtrace(const Workload& w);
Outcome runPtraceSeccomp(const Workload& w);
Outcome runStrace(const Workload& w);
Outcome runStraceSeccomp(const Workload& w);
Outcome runLtrace(const Workload& w);

const std::vector<Tracer>& tracers() {
    static const std::vector<Tracer> t = {
        {"untraced", "the workload alone", runUntraced},
        {"floor", "ftrace probe, no argument, tracing_on=0: trap + empty handler", runFtraceFloor},
        {"kernel-count", "probectl.ko persistent probe: per-CPU hit count, no record",
         runKernelCount},
        {"kernel-record",
         "probectl.ko session probe + 1 fetch argument, records streamed (ring sized for N)",
         runKernelRecord},
        {"kernel-record-deferred",
         "the same, nothing read until the workload ends (as the ftrace row): the handler's "
         "cost without the delivery",
         runKernelRecordDeferred},
        {"kernel-kstack", "kernel-record with each hit's kernel stack (trace --kstack: a stack id)",
         runKernelKstack, false, true},
        {"kernel-ustack",
         "kernel-record with each hit's user stack walked by frame pointers (trace --ustack)",
         runKernelUstack},
        {"kernel-ustack-dwarf",
         "kernel-record with user registers and 3072 bytes of user stack (trace "
         "--ustack=dwarf), not unwound",
         runKernelUstackDwarf},
        {"kernel-aggregate",
         "the same session probe counting into a map keyed by $pid, log2 histogram of the "
         "argument, no record",
         runKernelAggregate},
        {"ftrace-hist", "the same ftrace probe with hist:keys=common_pid (not enabled: no record)",
         runFtraceHistPid},
        {"ftrace-hist-log2",
         "the same with hist:keys=common_pid,ARG.log2 (kernel-aggregate's work)",
         runFtraceHistLog2},
        {"ftrace", "kprobe_events/uprobe_events + the same fetch argument (buffer sized for N)",
         runFtraceRecord},
        {"ftrace-stream",
         "the same ftrace probe, every CPU's trace_pipe_raw read during the run (live, binary; "
         "each page's events counted)",
         runFtraceStream},
        {"ftrace-iterate",
         "the same, read live with libtracefs: each event parsed and handed to a callback, "
         "oldest first across CPUs",
         runFtraceIterate},
        {"trace-text",
         "probectl trace SPEC -o FILE -- workload: wall time less its start-up (end to end)",
         runTraceText},
        {"trace-json", "the same with --format json (JSON Lines)", runTraceJson},
        {"ftrace-pipe",
         "the same ftrace probe, trace_pipe's text copied to a file: wall time less start-up",
         runFtracePipe},
        {"ptrace", "probectl --backend=ptrace: int3 + single-step / PTRACE_SYSCALL stops",
         runPtrace},
        {"ptrace-seccomp", "probectl --backend=ptrace --seccomp-bpf", runPtraceSeccomp, false,
         true},
        {"strace", "strace -f -e trace=getppid", runStrace, false, true},
        {"strace-seccomp", "strace -f --seccomp-bpf -e trace=getppid", runStraceSeccomp, false,
         true},
        {"ltrace", "ltrace -f -x bench_fn", runLtrace, true, false},
    };
    return t;
}

double nsPerHit(const Row& r) {
    if (!r.outcome.measure || r.workload.n == 0)
        return NAN;
    return static_cast<double>(r.outcome.measure->elapsed_ns) / static_cast<double>(r.workload.n);
}

double overheadPerHit(const Row& r) {
    if (!r.outcome.measure || r.workload.n == 0)
        return NAN;
    return (static_cast<double>(r.outcome.measure->elapsed_ns) -
            static_cast<double>(r.untraced_ns)) /
           static_cast<double>(r.workload.n);
}

bool exactHits(const Row& r) {
    const auto& m = r.outcome.measure;
    if (!m)
        return false;
    if (!m->hits)
        return true;
    return *m->hits == r.workload.n && (!m->records || *m->records == r.workload.n);
}

const Row* reference(const std::vector<Row>& rows, const Row& r) {
    for (const auto& x : rows)
        if (x.tracer == "kernel-record" && x.workload.label() == r.workload.label() &&
            x.outcome.measure)
            return &x;
    return nullptr;
}

}  // namespace probectl::cli::bench
