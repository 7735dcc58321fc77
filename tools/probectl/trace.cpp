// probectl trace: options, the output (trace_sink.hpp) and the backend that runs the trace
// (trace_driver.cpp): add probes for the life of this command, print every event (or write
// a trace file), then the per-probe summary. With
// `-- CMD`, CMD is forked, held before exec until the probes and its tgid filter are in
// place, then traced until it exits.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <ext/stdio_filebuf.h>
#include <iostream>
#include <memory>
#include <optional>

#include "open_tracer.hpp"
#include "output_file.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/process_tree.hpp"
#include "probectl/strace_format.hpp"
#include "probectl/syscall_probe.hpp"
#include "record_parts.hpp"
#include "run_loop.hpp"
#include "spec_hints.hpp"
#include "subcommands.hpp"
#include "syscall_summary.hpp"
#include "task_filters.hpp"
#include "trace_sink.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

extern "C" void onStopSignal(int sig) {
    if (!g_stop_signal)
        g_stop_signal = sig;
}

// The stop signals (stopSignals(): SIGINT, SIGTERM, SIGHUP) end the trace (summary still
// printed); installed without SA_RESTART so a blocked poll() returns at once. The first one
// is kept. Previous handlers come back on scope exit.
class StopSignals {
  public:
    StopSignals() : signals_(stopSignals()), old_(signals_.size()) {
        g_stop_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = onStopSignal;
        sigemptyset(&sa.sa_mask);
        for (std::size_t i = 0; i < signals_.size(); i++)
            sigaction(signals_[i], &sa, &old_[i]);
    }
    ~StopSignals() {
        for (std::size_t i = 0; i < signals_.size(); i++)
            sigaction(signals_[i], &old_[i], nullptr);
    }
    int caught() const { return g_stop_signal; }

  private:
    std::vector<int> signals_;
    std::vector<struct sigaction> old_;
};

// Whether command-line word `word` is an option that takes the next word as its value
// ("-p", "--backend"; not "--backend=ptrace").
bool takesValue(const po::options_description& desc, const std::string& word) {
    if (!word.starts_with('-') || word.find('=') != std::string::npos)
        return false;
    const std::string name = word.starts_with("--") ? word.substr(2) : word;
    const po::option_description* d = desc.find_nothrow(name, false);
    return d && d->semantic()->max_tokens() > 0;
}

// The backend o.backend names, opened on o's target; its user-space resolutions kept in
// `resolved`.
Result<std::unique_ptr<Tracer>> openTracer(const TraceOptions& o,
                                           const std::shared_ptr<UserResolveCache>& resolved) {
    return openTracerFor(
        o, o.seccomp_bpf,
        [&](SessionOptions& so) {
            so.resolve_cache = resolved;
            so.prepare = [depth = o.stack_depth, k = o.kstack, u = !o.ustack.empty(),
                          dwarf = o.ustack == "dwarf", bytes = o.stack_size, format = o.format](
                             ProbeRequest& req, std::vector<FetchArg>& args) -> Result<void> {
                // what is printed, before the stack arguments join the fetched ones
                req.record_parts = traceRecordParts(format, args);
                if (k)
                    if (auto r = appendKernelStackArg(req, args, depth); !r)
                        return r;
                if (dwarf)
                    return appendUserStackSnapshotArg(req, args, bytes);
                if (u)
                    return appendUserStackArg(req, args, depth);
                return {};
            };
        },
        [&](PtraceSessionOptions& so) {
            so.resolve_cache = resolved;
            if (o.ustack == "dwarf")
                so.ustack_snapshot = o.stack_size ? o.stack_size : kUstackSnapshotDefault;
        });
}

}  // namespace

std::optional<double> parseDuration(const std::string& text) {
    static constexpr std::array<std::pair<std::string_view, double>, 4> kUnits{
        {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}}};
    std::size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
        digits++;
    const std::string_view unit = std::string_view(text).substr(digits);
    double scale = unit.empty() ? 1 : 0;
    for (const auto& [name, s] : kUnits)
        if (unit == name)
            scale = s;
    if (digits == 0 || scale == 0)
        return std::nullopt;
    char* end = nullptr;
    const std::string number = text.substr(0, digits);
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !(v > 0) || v * scale > kMaxDurationSec)
        return std::nullopt;
    return v * scale;
}

std::string durationError(const std::string& text, std::string_view option) {
    return fmt::format(
        "{} '{}': expected a positive time of at most {} s (a year), in "
        "seconds (2.5) or with a unit (500ms, 10s, 2m, 1h); leave it out {}",
        option, text, static_cast<long>(kMaxDurationSec),
        option == "--duration" ? "to trace until Ctrl-C" : "for one table at the end");
}

std::optional<Error> missingProcess(const std::vector<std::uint32_t>& pids) {
    for (auto pid : pids) {
        if (::kill(static_cast<pid_t>(pid), 0) < 0 && errno == ESRCH)
            return makeError(ESRCH, fmt::format("no process {}", pid));
        // The kernel backend filters by process and saw nothing of a thread's id, where
        // ptrace attached its whole process: neither is what -p TID asked.
        // A thread's id is no process id, though kill(2) and /proc take it.
        if (const auto tgid = static_cast<std::uint32_t>(processOf(static_cast<pid_t>(pid)));
            tgid && tgid != pid)
            return makeError(ESRCH, fmt::format("-p {0}: {0} is a thread of process {1}, not a "
                                                "process; use -p {1} (every thread of it is "
                                                "traced), with --tid {0} for this thread's hits "
                                                "only",
                                                pid, tgid));
    }
    return std::nullopt;
}

void uniquePids(std::vector<std::uint32_t>& pids) {
    std::vector<std::uint32_t> seen;
    for (auto pid : pids)
        if (std::find(seen.begin(), seen.end(), pid) == seen.end())
            seen.push_back(pid);
    pids = std::move(seen);
}

std::string endsWhen(const std::string& duration_text, bool has_command, std::size_t watched_pids,
                     bool follow) {
    // As written, with the unit plain seconds leave out.
    const bool plain =
        !duration_text.empty() && std::isdigit(static_cast<unsigned char>(duration_text.back()));
    const std::string after = duration_text.empty()
                                  ? std::string()
                                  : fmt::format("after {}{}", duration_text, plain ? "s" : "");
    const char* ender = has_command                   ? "the command exits"
                        : watched_pids == 1 && follow ? "the process and what it forks exit"
                        : watched_pids == 1           ? "the process exits"
                        : watched_pids > 1 && follow  ? "the processes and what they fork exit"
                        : watched_pids > 1            ? "the processes exit"
                                                      : nullptr;
    if (ender)
        return after.empty() ? fmt::format("Ends when {} or on Ctrl-C.", ender)
                             : fmt::format("Ends when {}, {} or on Ctrl-C.", ender, after);
    return after.empty() ? "Hit Ctrl-C to end." : fmt::format("Ends {} or on Ctrl-C.", after);
}

std::string traceEnd(const TraceOptions& o) {
    return endsWhen(o.duration > 0 ? o.duration_text : std::string(), !o.command.empty(),
                    o.pids.size(), o.follow);
}

std::string traceTarget(const std::string& command, pid_t child_pid,
                        const std::vector<std::uint32_t>& pids) {
    std::string out;
    if (!command.empty())
        out = fmt::format(" in {} (pid {})", shownQuoted(command), child_pid);
    if (!pids.empty())
        out += fmt::format("{} pid{} {}", command.empty() ? " in" : " and in",
                           pids.size() == 1 ? "" : "s", fmt::join(pids, ", "));
    return out.empty() ? " system-wide" : out;
}

po::options_description traceOptionsDescription(TraceOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("attach,p", po::value<std::vector<std::uint32_t>>(o ? &o->pids : nullptr)
             ->value_name("PID"),
         "trace process PID (repeatable, at most 64; like strace -p/--attach); with one -p, "
         "library names and paths in uprobe/usdt specs are found as PID sees them, and "
         "uprobes are armed only in the traced processes");
    addTaskFilterOptions(d, o ? &o->match_comm : nullptr);
    d.add_options()
        ("follow,f", po::bool_switch(o ? &o->follow : nullptr),
         "also trace the children of the traced processes, those running already and those "
         "forked from now on (and what they exec), like strace -f; needs -p or -- CMD")
        ("maxactive", bounded<std::uint32_t>(o ? &o->maxactive : nullptr, "maxactive", 1, PROBECTL_MAXACTIVE_MAX)->value_name("N"),
         "kretprobe instances in flight (1..4096; default: the kernel's); kernel backend only")
        ("force", po::bool_switch(o ? &o->force : nullptr),
         "add kernel uretprobes in files that unwind C++ exceptions (refused by default: "
         "an exception thrown through a probed call ends the program)")
        ("verbose,v", po::bool_switch(o ? &o->verbose : nullptr),
         "list each name a glob (kprobe:vfs_*) matched but did not attach, and why")
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default) or json: JSON Lines, one object per event and a final summary "
         "object, the same fields as the text (a string that is not UTF-8 also has "
         "NAME_bytes, its bytes in hex); with -o, a trace file for viewers: chrome "
         "(Chrome trace-event JSON), perfetto (Perfetto protobuf, for ui.perfetto.dev), "
         "ctf (a CTF 1.8 directory, for babeltrace2), record (probectl report's input)")
        ("output,o", po::value<std::string>(o ? &o->output : nullptr)->value_name("FILE"),
         "write events and summary to FILE instead of stdout (a directory for --format ctf; "
         "'-' is stdout for text and json, even with -- CMD); a write to it that fails (a "
         "full disk) stops the trace and removes FILE, incomplete")
        ("duration,d", po::value<std::string>(o ? &o->duration_text : nullptr)
             ->value_name("TIME"),
         "stop after TIME: seconds (2.5), or with a unit: 500ms, 10s, 2m, 1h")
        ("backend", po::value<std::string>(o ? &o->backend : nullptr)->value_name("NAME"),
         "kernel (probectl.ko, the default) or ptrace (breakpoints and syscall stops from "
         "this process, like gdb and strace: no module needed, far slower; uprobe, "
         "uretprobe, usdt and syscall specs)")
        ("syscalls", po::value<std::vector<std::string>>(o ? &o->syscalls : nullptr)
             ->value_name("LIST")->composing(),
         "trace these syscalls (comma-separated names, repeatable) and print strace's "
         "lines: --syscalls=openat,execve -- ls is the in-kernel strace -e "
         "trace=openat,execve ls; the summary goes to stderr; all: every syscall")
        ("summary-only,c", po::bool_switch(o ? &o->summary_only : nullptr),
         "count the syscalls instead of printing them, and print strace -c -w's table on "
         "stderr at the end: % time, seconds (entry-to-return wall time, as strace -w; not "
         "strace -c's system time), usecs/call, calls, errors (-4095..-1 returned), by "
         "time; kept in probectl.ko's maps, so no call is dropped (ptrace backend: counted "
         "from its events)")
        ("zeros", po::bool_switch(o ? &o->zeros : nullptr),
         "also list the probes with no hits in the summary (of several probes, e.g. a "
         "glob's, those whose counters are all 0 are left out and counted in one line; "
         "JSON always has every probe)")
        ("kstack", po::bool_switch(o ? &o->kstack : nullptr),
         "print each event's kernel stack under it, one frame per line (SYMBOL+0xOFF "
         "[MODULE], innermost first; JSON: the array \"kstack\"); kprobe, kretprobe, "
         "tracepoint and syscall specs (a syscall's is taken at its entry: the syscall's "
         "function on the entry path); stacks are kept once per session, by id; kernel "
         "backend only")
        ("ustack", po::value<std::string>(o ? &o->ustack : nullptr)
             ->implicit_value("fp")->value_name("UNWINDER"),
         "print each event's user stack under it (after --kstack's), one frame per line "
         "(FUNC+0xOFF (FILE), innermost first; JSON: the array \"ustack\"); UNWINDER fp "
         "(the default) walks frame pointers: code built with -fomit-frame-pointer ends it "
         "early; dwarf copies the registers and the top of the user stack (--stack-size) "
         "at each hit and unwinds it here by the files' DWARF call frame information, like "
         "perf --call-graph dwarf (a walk that ends early says why in its last line; both "
         "backends); frames get 'at FILE:LINE' and inlined calls where DWARF says; any "
         "spec but syscall: ones")
        ("stack-depth", bounded<std::uint32_t>(o ? &o->stack_depth : nullptr, "stack-depth", 1, PROBECTL_STACK_MAX_DEPTH)
             ->value_name("N"),
         "frames a stack keeps (1..127, default 64); deeper stacks end with '...' and count "
         "as truncated")
        ("stack-size", bounded<std::uint32_t>(o ? &o->stack_size : nullptr, "stack-size", 1, PROBECTL_USTACK_SNAPSHOT_MAX)
             ->value_name("BYTES"),
         fmt::format("--ustack=dwarf: bytes of user stack copied at each hit (1..{}, default "
                     "{}; a record holds one page); a stack deeper than that stops unwinding "
                     "where the copy ends",
                     PROBECTL_USTACK_SNAPSHOT_MAX, PROBECTL_USTACK_SNAPSHOT_DEFAULT)
             .c_str())
        ("seccomp-bpf", po::bool_switch(o ? &o->seccomp_bpf : nullptr),
         "ptrace backend: stop the command only on traced syscalls (a seccomp filter, like "
         "strace --seccomp-bpf); needs -f and -- CMD, not -p (without -f: off, with a warning)");
    // clang-format on
    return d;
}

Parsed<TraceOptions> parseTraceOptions(const std::vector<std::string>& args, const char* cmd) {
    TraceOptions o;
    o.cmd = cmd;
    // Everything after the first "--" is the command, untouched (its own options included).
    std::vector<std::string> mine;
    if (auto e = splitCommand(args, mine, o.command))
        return *e;

    auto desc = traceOptionsDescription(&o);
    po::variables_map vm;
    auto r = parsePositionals(mine, desc, "spec", "probe spec", vm);
    if (!r) {
        // `trace syscall:openat ls -al`: -al is no option here because ls lacks its `--`.
        // An option's value (--backend ptrace) is no spec to hint about.
        for (std::size_t i = 0; i < mine.size(); i++)
            if (!mine[i].starts_with('-') && (i == 0 || !takesValue(desc, mine[i - 1])) &&
                !parseProbeSpec(mine[i]))
                if (std::string hint = notASpecHint(mine[i], true); !hint.empty())
                    return UsageError{r.error().message + "\n" + hint};
        return std::move(r).error();
    }
    o.help = r->help;
    if (o.help)
        return o;
    // record shares this parser but not these options: say so in record's words, not in
    // trace's about formats.
    if (std::string_view(cmd) == "record")
        for (const char* opt : {"kstack", "ustack", "stack-depth", "stack-size", "summary-only"})
            if (vm.count(opt) && !vm[opt].defaulted())
                return UsageError{
                    std::string_view(opt) == "summary-only"
                        ? std::string("-c prints strace's table instead of events, and record "
                                      "stores events: run probectl trace -c")
                        : fmt::format("record stores no stacks: --{} goes with probectl trace "
                                      "(--format text or json)",
                                      opt)};
    const auto& specs = r->values;
    // --syscalls=a,b --syscalls c: one syscall:NAME spec per name, after the SPECs.
    std::vector<std::string> all_specs = specs;
    std::vector<std::string> names;
    for (const auto& list : o.syscalls) {
        std::size_t at = 0;
        while (at <= list.size()) {
            std::size_t comma = std::min(list.find(',', at), list.size());
            std::string name = list.substr(at, comma - at);
            if (name.empty())
                return UsageError{fmt::format("--syscalls '{}': empty syscall name", list)};
            names.push_back(name);
            all_specs.push_back("syscall:" + (name == "all" ? std::string("*") : name));
            at = comma + 1;
        }
    }
    o.syscalls = std::move(names);
    if (all_specs.empty()) {
        // strace -c counts every syscall unasked; here that is a choice to make.
        if (o.summary_only)
            return UsageError{
                "no probe spec given: -c counts the syscalls it is given, e.g. "
                "probectl trace -c --syscalls=all -- ls (every syscall, as strace -c)"};
        return UsageError{"no probe spec given (e.g. probectl trace syscall:openat -- ls)" +
                          specTakenAsValueHint("--ustack", o.ustack)};
    }
    for (const auto& s : all_specs) {
        auto spec = parseSpecArgument(s, true);
        if (!spec)
            return std::move(spec).error();
        o.specs.push_back(std::move(*spec));
    }
    for (auto& s : o.specs)
        if (kindInfo(s.kind).maxactive)
            s.maxactive = o.maxactive;
    if (auto e =
            parseTaskFilters(vm, o.backend, o.match_pids, o.match_tids, o.match_uids, o.match_comm))
        return *e;
    if (vm.count("duration")) {
        auto secs = parseDuration(o.duration_text);
        if (!secs)
            return UsageError{durationError(o.duration_text)};
        o.duration = *secs;
    }
    for (auto pid : o.pids)
        if (pid == 0)
            return UsageError{"-p 0 is not a process id"};
    uniquePids(o.pids);
    if (o.follow && o.pids.empty() && o.command.empty())
        return UsageError{"-f follows the children of -p PID or -- CMD: give one of them"};
    if (o.backend != "kernel" && o.backend != "ptrace")
        return UsageError{fmt::format("--backend must be kernel or ptrace, not '{}'", o.backend)};
    if (o.format != "text" && o.format != "json" && !isFileFormat(o.format))
        return UsageError{fmt::format(
            "--format must be text, json, chrome, perfetto, ctf or record, not '{}'", o.format)};
    if (isFileFormat(o.format) && o.output.empty())
        return UsageError{std::string_view(cmd) == "record"
                              ? std::string("record writes a recording: give -o FILE")
                              : fmt::format("--format {} writes a file: give -o {}", o.format,
                                            o.format == "ctf" ? "DIR" : "FILE")};
    if (auto e = emptyOutputError(vm))
        return *e;
    // It made a file named '-': a binary trace is for a file, not a terminal or pipe.
    if (isFileFormat(o.format) && isStandardOutputName(o.output))
        return UsageError{fmt::format(
            "-o -: {} is written to a file, not to standard output: give a file name (./- for "
            "one named '-')",
            std::string_view(cmd) == "record" ? std::string("a recording")
                                              : fmt::format("--format {}", o.format))};
    if (auto e = seccompBpfError(o, o.seccomp_bpf))
        return *e;
    if (o.summary_only) {
        for (const auto& s : o.specs)
            if (s.kind != SpecKind::Syscall)
                return UsageError{fmt::format(
                    "-c counts syscalls: '{}' is not one (give --syscalls=LIST or syscall: specs)",
                    s.text)};
        if (!o.output.empty() || o.format != "text")
            return UsageError{"-c prints strace's table on stderr: it takes no -o or --format"};
        if (summarySpecs(o.specs).empty())
            return UsageError{fmt::format(
                "-c counts calls at their return, as strace -c: {} never returns (no row in "
                "the table); give a syscall that returns",
                o.specs.front().symbol)};
    }
    if (o.pids.size() + (o.command.empty() ? 0 : 1) > PROBECTL_MAX_TGIDS)
        return UsageError{fmt::format("at most {} processes can be traced", PROBECTL_MAX_TGIDS)};
    const bool stacks = o.kstack || !o.ustack.empty();
    if (vm.count("stack-depth") && !stacks)
        return UsageError{"--stack-depth goes with --kstack or --ustack"};
    if (vm.count("stack-size") && o.ustack != "dwarf")
        return UsageError{"--stack-size goes with --ustack=dwarf"};
    if (!o.ustack.empty()) {
        if (o.ustack != "fp" && o.ustack != "dwarf")
            return UsageError{fmt::format(
                "--ustack={}: the unwinders are fp (frame pointers) and dwarf", o.ustack)};
        if (o.backend != "kernel" && o.ustack != "dwarf")
            return UsageError{
                "--ustack=fp walks frame pointers in probectl.ko: with "
                "--backend=ptrace use --ustack=dwarf"};
        if (isFileFormat(o.format) || o.summary_only)
            return UsageError{"--ustack prints stacks with --format text or json"};
        for (const auto& s : o.specs)
            if (s.kind == SpecKind::Syscall)
                return UsageError{syscallUserStackRefusal("--ustack", s.text, s.symbol, o.backend)};
    }
    if (vm.count("maxactive"))
        if (auto e = maxactiveError(o.specs, o.backend))
            return *e;
    if (o.kstack) {
        if (o.backend != "kernel")
            return UsageError{fmt::format("--kstack: {}", kNoKernelStacksWithPtrace)};
        if (isFileFormat(o.format) || o.summary_only)
            return UsageError{"--kstack prints stacks with --format text or json"};
        for (const auto& s : o.specs)
            if (s.kind != SpecKind::Kprobe && s.kind != SpecKind::Kretprobe &&
                s.kind != SpecKind::Tracepoint && s.kind != SpecKind::Syscall)
                return UsageError{fmt::format(
                    "--kstack: '{}' is no kprobe, kretprobe, tracepoint or syscall spec (a "
                    "user-space probe's kernel stack would be the breakpoint's handling)",
                    s.text)};
    }
    // Last: a specific refusal of the options says more.
    if (o.backend == "ptrace" && o.pids.empty() && o.command.empty())
        return UsageError{kPtraceNeedsTarget};
    return o;
}

int runTrace(const std::vector<std::string>& args, Io& io) {
    return runTraceAs(args, io, "trace");
}

int runTraceAs(const std::vector<std::string>& args, Io& io, const char* kCmd) {
    // First: a Ctrl-C/SIGTERM while the syscall table or the specs are read must end the
    // trace too. A shell's background job starts with SIGINT ignored, so a signal before
    // this point would be lost and the trace would run on.
    StopSignals signals;
    auto parsed = parseTraceOptions(args, kCmd);
    if (auto rc = parsedExit(io, kCmd, parsed))
        return *rc;
    TraceOptions& o = *parsed;
    o.seccomp_bpf = seccompFilterOn(o, o.seccomp_bpf, io.err, kCmd);

    if (auto e = missingProcess(o.pids))
        return runtimeError(io, kCmd, *e);

    // Both backends decode syscall lines from the same table: say when it lacks arguments
    // for the syscalls traced (the table reads their formats on first use). -c prints no
    // arguments: nothing to say there.
    bool any_syscall = false;
    for (const ProbeSpec& s : o.specs)
        if (s.kind == SpecKind::Syscall && !o.summary_only) {
            any_syscall = true;
            systemSyscallTable().find(s.symbol);
        }
    if (any_syscall)
        if (std::string note = systemSyscallTable().fallbackNote(); !note.empty())
            io.err << fmt::format("probectl {}: note: {}\n", kCmd, note);

    if (o.summary_only)
        return runSyscallSummary(o, io);
    // A glob's names are expanded, then each resolved by the tracer: from one reading of
    // each file.
    const auto resolved = std::make_shared<UserResolveCache>();
    auto tracer = openTracer(o, resolved);
    if (!tracer)
        return runtimeError(
            io, kCmd,
            o.backend == "kernel" ? privilegeError(tracer.error(), kCmd, true) : tracer.error());
    return runTrace(
        **tracer, o, io, [&] { return openTraceSink(o.format, o.output, o.layout(), io, &io.err); },
        [&] { return signals.caught(); }, resolved);
}

}  // namespace probectl::cli
