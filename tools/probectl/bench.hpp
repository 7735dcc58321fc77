// probectl bench internals: one measured run of a workload under one tracer, the tracers
// (bench_kernel.cpp, bench_ftrace.cpp, bench_peers.cpp) and the report (bench_report.cpp).
// The command itself is bench.cpp.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "probectl/result.hpp"

namespace probectl::cli::bench {

// One standard workload (tests/bench/bench_workload.c): `calls` is N calls of bench_fn(i),
// `syscalls` N getppid() syscalls; split over `threads` threads.
struct Workload {
    std::string binary;  // absolute path of bench_workload
    std::string mode;    // "calls" or "syscalls"
    std::uint64_t n = 0;
    unsigned threads = 1;
    std::uint64_t gap_ns = 0;  // each thread spins this long after every call (pacing)

    // argv running it with its timing line written to `out_file`.
    std::vector<std::string> argv(const std::string& out_file) const;
    // "calls/1t"
    std::string label() const;
};

// Each mode single-threaded, then with `threads` threads when that is more than one.
std::vector<Workload> standardWorkloads(const std::string& binary, std::uint64_t n,
                                        unsigned threads);

// What one run measured. elapsed_ns is the workload's own loop time (its output line).
struct Measure {
    std::uint64_t elapsed_ns = 0;
    // Hits the tracer reports (kernel counters, *_profile, lines of strace/ltrace output,
    // events of the ptrace backend); nullopt for the untraced run.
    std::optional<std::uint64_t> hits;
    // Records that reached the tracer's consumer (events delivered, ring entries), when it
    // has such a count distinct from hits; lost/dropped/overrun records when it says.
    std::optional<std::uint64_t> records;
    std::uint64_t lost = 0;
    // Where `lost` was counted, when the tracer has more than one counter ("dropped 3 (ring
    // full), overrun 0 (socket)"); "" otherwise.
    std::string lost_detail;
    // End-to-end rows: wall time from starting the command to its output complete.
    std::uint64_t wall_ns = 0;
};

// A tracer's outcome: a measure, or a skip reason, or an error (the run failed).
struct Outcome {
    std::optional<Measure> measure;
    std::string skipped;  // non-empty: skipped, with why
    std::string error;    // non-empty: failed, with what
};

inline Outcome skip(std::string why) {
    Outcome o;
    o.skipped = std::move(why);
    return o;
}
inline Outcome fail(std::string what) {
    Outcome o;
    o.error = std::move(what);
    return o;
}
inline Outcome measured(const Measure& m) {
    Outcome o;
    o.measure = m;
    return o;
}

struct Tracer {
    std::string name;  // column/row name: "kernel-record"
    std::string what;  // one line for the legend: what runs and with which fetch argument
    Outcome (*run)(const Workload& w);
    bool for_calls = true;
    bool for_syscalls = true;
};

// An end-to-end row (bench_e2e.cpp): `run` once with no hits and once with N; elapsed_ns
// becomes the wall-time difference, the whole command less its measured start-up.
Outcome lessStartUp(Outcome (*run)(const Workload&), const Workload& w);

// Every tracer in report order (untraced first).
const std::vector<Tracer>& tracers();

// Spawning and timing (bench_peers.cpp). Runs argv to its end with stdout and stderr
// discarded; returns the wait status. ENOENT when argv[0] cannot be executed.
Result<int> runToEnd(const std::vector<std::string>& argv);
// A fresh file name for one run's output under the bench's temporary folder.
std::string tempFile(const std::string& stem);
// Parses the workload's timing line from `file` ("... ns=ELAPSED ..."). EBADMSG when absent.
Result<std::uint64_t> readElapsed(const std::string& file);
// Runs `prefix + w's argv` and reads the workload's timing line into m.elapsed_ns, with
// the whole command's wall time in m.wall_ns; fails naming prefix[0] (or the workload).
Outcome timed(const std::vector<std::string>& prefix, const Workload& w, Measure m = {});
// This program's path (/proc/self/exe), for benches that run probectl itself.
std::string selfExe();
// Lines of `file` containing `needle`.
std::uint64_t countLines(const std::string& file, const std::string& needle);
// The first executable named `name` in PATH, or "".
std::string findInPath(const std::string& name);
// Folder for temporary files of this bench run (created on first use, removed by
// removeTempDir()).
const std::string& tempDir();
void removeTempDir();

// Writes a sysfs/tracefs setting and puts the old value back on scope exit (best effort:
// ok() is false when the write failed, e.g. without root).
class ScopedSetting {
  public:
    ScopedSetting(std::string path, const std::string& value);
    ~ScopedSetting();
    ScopedSetting(const ScopedSetting&) = delete;
    ScopedSetting& operator=(const ScopedSetting&) = delete;
    bool ok() const { return ok_; }
    static std::string current(const std::string& path);

  private:
    std::string path_, old_;
    bool ok_ = false;
};

// The totals of an ftrace hist file (events/GROUP/EVENT/hist): "Hits:", "Entries:" and
// "Dropped:" of its Totals, and the sum of its entries' hitcount. EBADMSG without a
// "Hits:" total.
struct HistTotals {
    std::uint64_t hits = 0, entries = 0, dropped = 0, hitcount = 0;
};
Result<HistTotals> parseHist(const std::string& text);

// A row of the report: a workload, a tracer and what came of it (the median run when
// repeated).
struct Row {
    Workload workload;
    std::string tracer;
    Outcome outcome;
    std::uint64_t untraced_ns = 0;  // the same workload's untraced median
};

// Attaching and detaching many kprobes at once (bench_attach.cpp): probectl (a PROBE_ADD
// each, removed in one batch when the session closes) and ftrace's kprobe_events (a line
// each, enabled as one group, a removal line each).
struct AttachTimes {
    std::string tracer;
    std::size_t probes = 0;  // attached
    double attach_s = 0;
    double detach_s = 0;
    // CPU time of this process over attach and detach: the rest of the wall time is spent
    // waiting (RCU grace periods, other CPUs, work queues).
    double user_s = 0, sys_s = 0;
    std::string error;  // non-empty: skipped, with why
};
std::vector<AttachTimes> attachBench(std::size_t n);
// The most --attach takes: probectl.ko's default max_probes, the probes one session may hold
// (kmod/limits.c); past it probectl's adds fail while ftrace's go on.
inline constexpr std::size_t kAttachMax = 4096;
// The table, then probectl's (attach + detach) time per probe over ftrace's.
void printAttach(std::ostream& out, const std::vector<AttachTimes>& rows);
// probectl's attach + detach seconds per probe / ftrace's; NAN unless both attached some.
double attachRatio(const std::vector<AttachTimes>& rows);

// Start-up (bench_startup.cpp): the median wall time of `runs` runs of a whole command
// around one getppid call of `workload`: the program alone, strace, probectl trace.
struct StartupTimes {
    std::string label;
    std::string argv;  // the command, for the table
    double median_s = 0;
    std::string error;  // non-empty: skipped, with why
    bool step = false;  // one step of start-up (no workload), not a whole traced command
};
std::vector<StartupTimes> startupBench(const std::string& workload, unsigned runs);
void printStartup(std::ostream& out, const std::vector<StartupTimes>& rows);

// Derived figures of a row (ns per hit and overhead over untraced, per expected hit).
double nsPerHit(const Row& r);
double overheadPerHit(const Row& r);
// Whether the tracer saw exactly N hits (true for untraced).
bool exactHits(const Row& r);
// The kernel-backend reference for ratios: "kernel-record" of the same workload.
const Row* reference(const std::vector<Row>& rows, const Row& r);

}  // namespace probectl::cli::bench
