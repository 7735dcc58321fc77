// count, hist and latency: probes that aggregate in the kernel (probectl/aggr.hpp) for as
// long as the command runs, then one table or histogram per probe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "probectl/aggr.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/session.hpp"
#include "probectl/snapshot_stacks.hpp"

namespace probectl::cli {

enum class AggrMode { Count, Hist, Latency };

struct AggrCliOptions {
    AggrMode mode = AggrMode::Count;
    std::vector<ProbeSpec> specs;
    AggrSpec aggr;                     // keys (--by), value, histogram, --max-entries
    std::vector<std::uint32_t> pids;   // -p PID
    bool follow = false;               // -f
    std::string duration_text;         // --duration as written
    double duration = 0;               // ... in seconds
    std::size_t top = 0;               // --top N, 0 = all
    bool zeros = false;                // --zeros: also the probes with no hits
    std::string format = "text";       // --format text|json|perfetto|chrome
    std::string output;                // -o FILE (perfetto, chrome: the counter tracks)
    std::vector<std::string> command;  // after "--"
    std::string from;                  // --from FILE: aggregate a recording
    std::vector<std::string> only;     // with --from: the specs given, as globs of probes
    bool verbose = false;              // -v: the names globs skipped
    std::string interval_text;         // --interval as written
    double interval = 0;               // ... in seconds, 0: one table at the end
    bool cumulative = false;           // --cumulative: --interval without zeroing
    std::string backend = "kernel";    // --backend kernel|ptrace (events aggregated here)
    bool force = false;                // --force: kernel uretprobes despite C++ exceptions
    std::string ustack = "fp";         // --ustack fp|dwarf: how --by ustack walks the stack
    std::uint32_t stack_size = 0;      // --stack-size: dwarf's copy, 0: the default
    // --pid --tid --uid --comm (task_filters.hpp)
    std::vector<std::uint32_t> match_pids, match_tids, match_uids;
    std::string match_comm;
    std::uint32_t maxactive = 0;  // --maxactive N (1..4096), 0: the kernel's default
    bool seccomp = false;  // --seccomp-bpf: ptrace backend, stops only on traced syscalls
    bool help = false;
};

Parsed<AggrCliOptions> parseAggrOptions(AggrMode mode, const std::vector<std::string>& args);
// Where the tables go, by trace's rule for its events (strace -c's too): -o FILE (not with
// perfetto|chrome, whose FILE is the timeline); else standard error with -- CMD, so that
// CMD's own output keeps standard output; else standard output.
enum class TablesTo { Stdout, Stderr, File };
TablesTo tablesTo(const AggrCliOptions& o);
boost::program_options::options_description aggrOptionsDescription(AggrMode mode,
                                                                   AggrCliOptions* o = nullptr);
// One read-out of the tables: at an --interval (`when`, the time of day) or the end (`when`
// empty). `stats` are every probe's counters in the tables' order over the span the tables
// hold: the interval's with --interval (without --cumulative), else all since the start,
// as `total` always is. But for `unreturned`, which is of the moment of the read-out: the
// calls entered and not returned (yet, unless this is the last read-out).
struct AggrReadout {
    const std::vector<AggrTable>& tables;
    const SessionStats& stats;
    const SessionStats& total;
    const std::string& when;
    // Another read-out follows: calls not returned may still return.
    bool more = false;
    // Each interval on its own: per probe (stats' order), the calls that had not returned at
    // the read-out before, so that hits + entered_before = the returns counted + unreturned.
    std::vector<std::uint64_t> entered_before = {};
};
// What prints a read-out; its error (the output could not be written) ends the run.
using AggrTablesPrinter = std::function<Result<void>(const AggrReadout& readout)>;
// The run count, hist and latency share (and trace -c): opens o.backend on o's target,
// attaches o.specs aggregating o.aggr, runs until the command exits, --duration or a
// signal, printing at each --interval and at the end; `cmd` names the errors. `started`,
// if given, is called once every probe is armed, before the command is released, with
// that time (CLOCK_MONOTONIC ns); its error ends the run. Returns the command's exit code
// as trace does.
// `tick`, when given, runs every 200 ms while the probes count, with one of their ids
// (--by ustack keeps the maps of the processes its stacks name).
// `snapshots` (--ustack=dwarf): the probes record each hit with its user stack snapshot and
// the events are aggregated here, each snapshot replaced by its unwound stack's id.
int runAggregation(const AggrCliOptions& o, const char* cmd, Io& io, const AggrTablesPrinter& print,
                   const std::function<Result<void>(std::uint64_t t0_ns)>& started = {},
                   const std::function<void(std::uint32_t probe_id)>& tick = {},
                   SnapshotStacks* snapshots = nullptr);
int runCount(const std::vector<std::string>& args, Io& io);
int runHist(const std::vector<std::string>& args, Io& io);
int runLatency(const std::vector<std::string>& args, Io& io);

}  // namespace probectl::cli

namespace probectl::cli {
// `probectl count|hist|latency --help` texts (count.cpp).
extern const char* const kCountHelp;
extern const char* const kHistHelp;
extern const char* const kLatencyHelp;
}  // namespace probectl::cli
