// probectl bench --throughput: the highest rate at which a tracer delivers every record of a
// run with none lost, probectl.ko (live reader) against ftrace's trace_pipe_raw readers,
// both with the same ring size per CPU. The search and the report are bench_throughput.cpp;
// the runs are kernel-record's and ftrace-stream's with a fixed ring (bench_kernel.cpp,
// bench_ftrace.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench.hpp"

namespace probectl::cli::bench {

// Threads of the throughput workload, all hitting the one kprobe of `syscalls`.
inline constexpr unsigned kThroughputThreads = 4;
// Paced runs after the unpaced one, at most: the row stays minutes long.
inline constexpr unsigned kThroughputMaxPaced = 8;

// One run at one pacing: each workload thread waited gap_ns after every call.
struct Trial {
    std::uint64_t gap_ns = 0;
    std::uint64_t elapsed_ns = 0;  // the workload's loop time
    bool complete = false;         // every one of the N records arrived, none lost
    std::string shortfall;         // why not complete ("19876 of 20000 records, 124 lost")
};

// Events per second of a trial: N over the loop time, all threads together.
double trialRate(const Trial& t, std::uint64_t n);

// Whether a run's measure is complete (N hits, N records, nothing lost), and if not why.
Trial judge(const Measure& m, std::uint64_t n, std::uint64_t gap_ns);

struct RateSearch {
    std::string tracer;
    std::vector<Trial> trials;  // in the order run
    std::optional<Trial> best;  // the complete trial with the highest rate
    std::string error;          // non-empty: a run was skipped or failed, with why
};

// Runs the workload at one gap (ns per call per thread) and says what came of it.
using TrialRunner = std::function<Outcome(std::uint64_t gap_ns)>;

// Unpaced first; if that loses records, gaps growing fourfold from the unpaced time per
// call of one thread (at least 1 us) until a run is complete, then bisection (geometric)
// between the largest incomplete gap and the smallest complete one, until they are within
// 20% of each other or `max_paced` paced runs were made. The best is the complete trial
// with the highest measured rate (noise can make a larger gap the faster run).
RateSearch searchRate(const std::string& tracer, const TrialRunner& run, std::uint64_t n,
                      unsigned threads, unsigned max_paced = kThroughputMaxPaced);

struct ThroughputResult {
    std::uint64_t n = 0;
    unsigned threads = kThroughputThreads;
    unsigned ring_kb = 0;
    std::vector<RateSearch> searches;  // kernel-record, then ftrace-stream, ftrace-iterate
};

// probectl's best rate over `peer`'s (ftrace-stream: a reader that counts each page's
// events; ftrace-iterate: libtracefs, each event to a callback); NAN unless both found one.
double throughputRatio(const ThroughputResult& r, const std::string& peer = "ftrace-stream");
void printThroughput(std::ostream& os, const ThroughputResult& r);

// Runs the three searches on `workload` (bench_workload) with rings of ring_kb per CPU.
ThroughputResult throughputBench(const std::string& workload, std::uint64_t n, unsigned ring_kb);

// The runs (bench_kernel.cpp, bench_ftrace.cpp): kernel-record, ftrace-stream and
// ftrace-iterate with the ring per CPU set to ring_kb instead of sized for N.
Outcome runKernelRecordRing(const Workload& w, unsigned ring_kb);
Outcome runFtraceStreamRing(const Workload& w, unsigned ring_kb);
Outcome runFtraceIterateRing(const Workload& w, unsigned ring_kb);

// Data events in one page (sub-buffer) read from trace_pipe_raw, and whether the page says
// events were lost before it (its commit field's missed-events flag). nullopt when the
// page is malformed (an event runs past the committed length).
struct RawPage {
    std::uint64_t events = 0;
    bool missed = false;
};
std::optional<RawPage> parseRawPage(const unsigned char* page, std::size_t size);

}  // namespace probectl::cli::bench
