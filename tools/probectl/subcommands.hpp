// Option structs and parsers of every subcommand, declared together so unit tests can check
// command-line handling without a kernel. Each subcommand's code lives in its own file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "format.hpp"
#include "probectl/client.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli {

// trace.cpp
struct TraceOptions {
    std::vector<ProbeSpec> specs;     // parsed; a bad spec is a usage error
    std::vector<std::uint32_t> pids;  // -p/--attach PID (repeatable): tgid filter
    // --pid, --tid, --uid (lists), --comm GLOB: the session's task match (pure filters)
    std::vector<std::uint32_t> match_pids, match_tids, match_uids;
    std::string match_comm;
    std::uint32_t maxactive = 0;        // --maxactive N for kretprobes (1..4096), 0 = default
    bool force = false;                 // --force: uretprobes in files that unwind exceptions
    std::string output;                 // -o FILE, "" = stdout (stderr with -- CMD), "-" = stdout
    double duration = 0;                // --duration in seconds, 0 = until Ctrl-C / command exit
    std::string duration_text;          // --duration as written: 2, 1.5, 500ms, 10s, 2m, 1h
    std::vector<std::string> command;   // everything after "--"
    bool follow = false;                // -f: also the processes they fork from now on
    std::string backend = "kernel";     // --backend kernel|ptrace
    std::string format = "text";        // --format text|json (JSON Lines)|chrome|
                                        // perfetto|ctf|record (trace_sink.hpp)
    bool seccomp_bpf = false;           // --seccomp-bpf (ptrace backend with -- CMD)
    bool verbose = false;               // -v: the names globs skipped
    std::vector<std::string> syscalls;  // --syscalls A,B: syscall:A syscall:B, strace lines
    bool summary_only = false;          // -c: strace -c's table instead of the events
    bool zeros = false;                 // --zeros: the summary's rows of probes never hit too
    bool kstack = false;                // --kstack: each event's kernel stack
    std::uint32_t stack_depth = 0;      // --stack-depth N (1..127), 0 = the default (64)
    std::string ustack;                 // --ustack[=fp|dwarf]: each event's user stack; "" = none
    std::uint32_t stack_size = 0;       // --stack-size BYTES (dwarf), 0 = the default
    bool help = false;
    const char* cmd = "trace";  // the command the errors name: trace, or record

    // --syscalls: text output is strace's lines (summary on stderr), pid-prefixed with -f
    // or several processes, like strace -f -o FILE.
    // With -- CMD and no -o the trace goes to stderr, as strace's does (-o -: stdout).
    TraceLayout layout() const {
        return {format == "json", !syscalls.empty() && format != "json",
                follow || pids.size() + (command.empty() ? 0 : 1) > 1,
                !command.empty() && output.empty(), zeros};
    }
};
// `cmd` is the command being run (trace, or record: trace --format record).
Parsed<TraceOptions> parseTraceOptions(const std::vector<std::string>& args,
                                       const char* cmd = "trace");
boost::program_options::options_description traceOptionsDescription(TraceOptions* o = nullptr);
int runTrace(const std::vector<std::string>& args, Io& io);
// runTrace with the errors naming `cmd` (record runs trace --format record).
int runTraceAs(const std::vector<std::string>& args, Io& io, const char* cmd);
// trace_driver.cpp: the trace itself, the same for every backend (options already checked,
// `tracer` opened with o's target): adds o.specs, opens the sink (only then: a refused spec
// leaves an existing -o FILE as it was), prints the banner, events to the sink until
// --duration, caught_signal() (the SIGINT/SIGTERM caught so far, 0 for none) or the
// command's exit, then the summary. Returns the exit code of runEnd() (run_loop.hpp): the
// command's own, 128+N when a signal N killed it or a stop signal N ended a command that
// outlived it (main then dies of N: takeExitSignal()), else 0, or 1 after a runtime error.
// `resolved`: what the tracer keeps of the user-space files it reads, for the expansions
// of globs to share.
class TraceSink;  // trace_sink.hpp
using SinkOpener = std::function<Result<std::unique_ptr<TraceSink>>()>;
int runTrace(Tracer& tracer, const TraceOptions& o, Io& io, const SinkOpener& open_sink,
             const std::function<int()>& caught_signal,
             std::shared_ptr<UserResolveCache> resolved = nullptr);
// --duration's TIME in seconds: a positive number, with an optional unit ms, s, m or h;
// nullopt when it is none.
// The ptrace backend traces only the processes it starts or attaches to: nothing system-wide.
inline constexpr const char* kPtraceNeedsTarget =
    "--backend=ptrace traces only processes it starts or attaches to: give -p PID or -- CMD "
    "(system-wide tracing needs the kernel backend)";
// The longest --duration: a year. Longer is a typo, and its nanoseconds would overflow.
inline constexpr double kMaxDurationSec = 365.0 * 24 * 3600;
std::optional<double> parseDuration(const std::string& text);
// The usage error for a --duration (or count's --interval: `option`) parseDuration()
// refused.
std::string durationError(const std::string& text, std::string_view option = "--duration");
// How the "Tracing N probes..." line says the trace ends: with the command, after
// --duration (as written), on Ctrl-C.
std::string traceEnd(const TraceOptions& o);
// The banner's end: "Ends after 2s or on Ctrl-C." etc.; `duration_text` as the user wrote
// --duration, empty without one; `watched_pids` -p PIDs, with `follow` (-f) waited for with
// what they fork.
std::string endsWhen(const std::string& duration_text, bool has_command,
                     std::size_t watched_pids = 0, bool follow = false);
// The banner's end once a stop signal came while the probes were attached: the run ends at
// once, whatever endsWhen() would say.
inline constexpr const char* kEndsNow = "Ending now: a stop signal came while attaching.";
// ESRCH "no process PID" for the first of `pids` that does not exist (-p of a typo'd pid
// must not trace nothing in silence).
std::optional<Error> missingProcess(const std::vector<std::uint32_t>& pids);
// -p given twice for one process: once (the order kept).
void uniquePids(std::vector<std::uint32_t>& pids);
// What the "Tracing N probes..." line says is traced: " in 'CMD' (pid N)", " in pids A, B",
// both joined with "and" (-p and -- CMD trace both), or " system-wide".
std::string traceTarget(const std::string& command, pid_t child_pid,
                        const std::vector<std::uint32_t>& pids);

// report.cpp: report FILE [--format F] [-o OUT]; record SPEC... -o FILE (trace's options).
struct ReportOptions {
    std::string file;
    std::string format = "text";
    std::string output;
    bool zeros = false;  // --zeros: the summary's rows of probes never hit too
};
boost::program_options::options_description reportOptionsDescription(ReportOptions* o = nullptr);
int runReport(const std::vector<std::string>& args, Io& io);
int runRecord(const std::vector<std::string>& args, Io& io);

// add.cpp
struct AddOptions {
    ProbeSpec spec;
    bool persist = false;
    std::uint32_t maxactive = 0;
    bool force = false;
    bool help = false;
};
Parsed<AddOptions> parseAddOptions(const std::vector<std::string>& args);
boost::program_options::options_description addOptionsDescription(AddOptions* o = nullptr);
int runAdd(const std::vector<std::string>& args, Io& io);

// list.cpp
struct ListOptions {
    std::string format = "text";  // --format text|json
    bool help = false;
};
Parsed<ListOptions> parseListOptions(const std::vector<std::string>& args);
boost::program_options::options_description listOptionsDescription(ListOptions* o = nullptr);
int runList(const std::vector<std::string>& args, Io& io);

// remove.cpp
struct RemoveOptions {
    std::vector<std::uint32_t> ids;
    bool all = false;
    bool help = false;
};
Parsed<RemoveOptions> parseRemoveOptions(const std::vector<std::string>& args);
boost::program_options::options_description removeOptionsDescription(RemoveOptions* o = nullptr);
int runRemove(const std::vector<std::string>& args, Io& io);

// enable_disable.cpp
struct ProbeIdOptions {
    std::uint32_t id = 0;
    bool help = false;
};
Parsed<ProbeIdOptions> parseProbeIdOptions(const char* command,
                                           const std::vector<std::string>& args);
boost::program_options::options_description probeIdOptionsDescription(ProbeIdOptions* o = nullptr);
int runEnable(const std::vector<std::string>& args, Io& io);
int runDisable(const std::vector<std::string>& args, Io& io);

// resolve.cpp
struct ResolveOptions {
    ProbeSpec spec;
    std::uint32_t maxactive = 0;
    std::uint32_t pid = 0;  // -p PID: resolve a user-space spec as that process sees files
    std::string kallsyms = "/proc/kallsyms";
    std::string blacklist = "/sys/kernel/debug/kprobes/blacklist";
    bool help = false;
};
Parsed<ResolveOptions> parseResolveOptions(const std::vector<std::string>& args);
boost::program_options::options_description resolveOptionsDescription(ResolveOptions* o = nullptr);
int runResolve(const std::vector<std::string>& args, Io& io);
// The "probe-able:" verdict for a resolved location: "yes", or "unknown until the kernel
// tries (...)" for a location inside a function (instruction boundaries are the kernel's
// check), or "yes as far as userspace can tell" without the blacklist.
std::string probeableVerdict(const Resolution& res, bool blacklist_read);

// symbols.cpp
struct SymbolsOptions {
    std::string glob;
    // PATH of `symbols PATH[:GLOB]` (the argument has a '/' or ':'): list that binary's
    // functions and USDT probes instead of kernel symbols. "" for kernel symbols.
    std::string elf_path;
    std::uint32_t pid = 0;  // -p PID: find PATH as that process sees it
    // `symbols tracepoint:SUBSYS_GLOB[:EVENT_GLOB]`: list tracepoints with their arguments.
    bool tracepoints = false;
    std::string tp_subsys = "*";
    std::string tp_event = "*";
    bool functions_only = false;
    std::string kallsyms = "/proc/kallsyms";
    std::string blacklist = "/sys/kernel/debug/kprobes/blacklist";
    bool help = false;
};
Parsed<SymbolsOptions> parseSymbolsOptions(const std::vector<std::string>& args);
boost::program_options::options_description symbolsOptionsDescription(SymbolsOptions* o = nullptr);
int runSymbols(const std::vector<std::string>& args, Io& io);

// bench.cpp
struct BenchOptions {
    std::uint64_t count = 10000;  // -n: calls (or syscalls) per workload run
    unsigned threads = 4;         // --threads: the multithreaded variant (1: none)
    unsigned repeat = 1;          // --repeat: runs per cell, the median is reported
    std::string workload;         // --workload PATH (default: the build's bench_workload)
    std::string out_dir = "probectl-bench";  // -o: bench.csv, bench.dat, bench.gp, plots
    std::vector<std::string> only;           // --tracers a,b: only these (plus untraced)
    bool plot = true;                        // --no-plot: do not run gnuplot
    std::size_t attach = 1000;               // --attach N: kprobes attached at once (0: none)
    unsigned startup = 5;                    // --startup R: runs of each start-up command
    std::uint64_t throughput = 0;            // --throughput N: lossless-rate search (0: none)
    unsigned ring_kb = 64;                   // --throughput-ring KB: its ring per CPU
    bool help = false;
};
Parsed<BenchOptions> parseBenchOptions(const std::vector<std::string>& args);
boost::program_options::options_description benchOptionsDescription(BenchOptions* o = nullptr);
int runBench(const std::vector<std::string>& args, Io& io);

// --maxactive where it sizes nothing: on the ptrace backend (kNoMaxactiveWithPtrace), or
// when no spec is of a kind with kretprobe instances (kretprobe:, syscall:). nullopt when
// it applies.
std::optional<UsageError> maxactiveError(const std::vector<ProbeSpec>& specs,
                                         std::string_view backend);
// Parses a spec argument; a bad spec is a usage error carrying the caret rendering, or
// what the word most likely was (spec_hints.hpp; `command_allowed`: trace's `-- CMD`).
Parsed<ProbeSpec> parseSpecArgument(const std::string& text, bool command_allowed = false);
// parseOnePositional for a command taking exactly one probe spec ("CMD takes exactly one
// probe spec"), parsed: the spec, or nullopt when --help was given.
Parsed<std::optional<ProbeSpec>> parseOneSpec(const char* command,
                                              const std::vector<std::string>& args,
                                              boost::program_options::options_description& desc,
                                              boost::program_options::variables_map& vm);
// The parser of a command whose options O (with .spec and .help) are OPTIONS, described by
// describe(&o), plus exactly one probe spec. `vm` receives the options for vm.count().
template <class O>
Parsed<O> parseSpecOptions(const char* command, const std::vector<std::string>& args,
                           boost::program_options::options_description (*describe)(O*),
                           boost::program_options::variables_map& vm) {
    O o;
    auto desc = describe(&o);
    auto spec = parseOneSpec(command, args, desc, vm);
    if (!spec)
        return std::move(spec).error();
    o.help = !*spec;
    if (!o.help)
        o.spec = std::move(**spec);
    return o;
}

// Connects to probectl.ko and returns run(client); a failed connect is a runtime error of
// `command` (1).
template <class F>
int withClient(Io& io, const char* command, F&& run) {
    auto client = Client::connect();
    if (!client)
        return runtimeError(io, command, client.error());
    return run(*client);
}

}  // namespace probectl::cli
