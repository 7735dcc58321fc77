// probectl trace: add probes for the life of this command, print every event, then the
// per-probe summary. With `-- CMD`, CMD is forked, held before exec until the probes and its
// tgid filter are in place, then traced until it exits.
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ext/stdio_filebuf.h>
#include <iostream>
#include <optional>

#include "child.hpp"
#include "format.hpp"
#include "probectl/session.hpp"
#include "subcommands.hpp"
#include "trace_export.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

constexpr const char* kCmd = "trace";

volatile sig_atomic_t g_stop_signal = 0;

extern "C" void onStopSignal(int sig) {
    g_stop_signal = sig;
}

// SIGINT/SIGTERM end the trace (summary still printed); installed without SA_RESTART so
// a blocked poll() returns at once. Previous handlers come back on scope exit.
class StopSignals {
  public:
    StopSignals() {
        g_stop_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = onStopSignal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    int caught() const { return g_stop_signal; }

  private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

// "12,34" (and repeated options) -> ids; `names` allows user names (getpwnam).
std::optional<UsageError> parseIdList(const po::variables_map& vm, const char* opt, bool names,
                                      std::vector<std::uint32_t>& out) {
    if (!vm.count(opt))
        return std::nullopt;
    for (const auto& arg : vm[opt].as<std::vector<std::string>>()) {
        std::size_t b = 0;
        while (b <= arg.size()) {
            std::size_t e = arg.find(',', b);
            if (e == std::string::npos)
                e = arg.size();
            const std::string item = arg.substr(b, e - b);
            char* end = nullptr;
            errno = 0;
            const unsigned long v = std::strtoul(item.c_str(), &end, 10);
            if (!item.empty() && *end == '\0' && item[0] != '-' && errno == 0 && v <= UINT32_MAX) {
                out.push_back(static_cast<std::uint32_t>(v));
            } else if (names && !item.empty()) {
                const passwd* pw = ::getpwnam(item.c_str());
                if (!pw)
                    return UsageError{fmt::format("--{}: no user '{}'", opt, item)};
                out.push_back(pw->pw_uid);
            } else {
                return UsageError{
                    fmt::format("--{}: '{}' is not a number (in '{}')", opt, item, arg)};
            }
            b = e + 1;
        }
    }
    if (out.size() > PROBECTL_MATCH_MAX_IDS)
        return UsageError{fmt::format("--{}: at most {} ids", opt, PROBECTL_MATCH_MAX_IDS)};
    return std::nullopt;
}

}  // namespace

std::string traceTarget(const std::string& command, pid_t child_pid,
                        const std::vector<std::uint32_t>& pids) {
    std::string out;
    if (!command.empty())
        out = fmt::format(" in '{}' (pid {})", command, child_pid);
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
         "uprobes are armed only in the traced processes")
        ("pid", po::value<std::vector<std::string>>()->value_name("PID,..."),
         "keep only hits in these processes (tgids; comma list, repeatable): a pure filter "
         "on top of what is traced (-p, -- CMD, or everything), evaluated in the kernel; "
         "other hits count as FILTERED")
        ("tid", po::value<std::vector<std::string>>()->value_name("TID,..."),
         "keep only hits in these threads (same rules as --pid)")
        ("uid", po::value<std::vector<std::string>>()->value_name("UID,..."),
         "keep only hits of tasks running as these users (numbers or names; real uid)")
        ("comm", po::value<std::string>(o ? &o->match_comm : nullptr)->value_name("GLOB"),
         "keep only hits of tasks whose comm (name, at most 15 bytes) matches GLOB "
         "(* ? [a-z] [!x]), e.g. --comm 'ls*'")
        ("follow,f", po::bool_switch(o ? &o->follow : nullptr),
         "also trace the processes that the traced ones fork from now on (and what they "
         "exec), like strace -f; needs -p or -- CMD")
        ("maxactive", po::value<std::uint32_t>(o ? &o->maxactive : nullptr)->value_name("N"),
         "kretprobe instances in flight (1..4096; default: the kernel's)")
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default) or json: JSON Lines, one object per event and a final summary "
         "object, the same fields as the text; with -o, a trace file for viewers: chrome "
         "(Chrome trace-event JSON), perfetto (Perfetto protobuf, for ui.perfetto.dev), "
         "ctf (a CTF 1.8 directory, for babeltrace2), record (probectl report's input)")
        ("output,o", po::value<std::string>(o ? &o->output : nullptr)->value_name("FILE"),
         "write events and summary to FILE instead of stdout")
        ("duration,d", po::value<double>(o ? &o->duration : nullptr)->value_name("SEC"),
         "stop after SEC seconds")
        ("backend", po::value<std::string>(o ? &o->backend : nullptr)->value_name("NAME"),
         "kernel (probectl.ko, the default) or ptrace (breakpoints and syscall stops from "
         "this process, like gdb and strace: no module needed, far slower; uprobe, "
         "uretprobe, usdt and syscall specs)")
        ("syscalls", po::value<std::vector<std::string>>(o ? &o->syscalls : nullptr)
             ->value_name("LIST")->composing(),
         "trace these syscalls (comma-separated names, repeatable) and print strace's "
         "lines: --syscalls=openat,execve -- ls is the in-kernel strace -e "
         "trace=openat,execve ls; the summary goes to stderr")
        ("seccomp-bpf", po::bool_switch(o ? &o->seccomp_bpf : nullptr),
         "ptrace backend: stop the command only on traced syscalls (a seccomp filter, like "
         "strace --seccomp-bpf); needs -- CMD, not -p");
    // clang-format on
    return d;
}

Parsed<TraceOptions> parseTraceOptions(const std::vector<std::string>& args) {
    TraceOptions o;
    // Everything after the first "--" is the command, untouched (its own options included).
    auto dash = std::find(args.begin(), args.end(), "--");
    std::vector<std::string> mine(args.begin(), dash);
    if (dash != args.end()) {
        o.command.assign(dash + 1, args.end());
        if (o.command.empty())
            return UsageError{"'--' must be followed by a command to run"};
    }

    auto desc = traceOptionsDescription(&o);
    po::variables_map vm;
    auto r = parsePositionals(mine, desc, "spec", "probe spec", vm);
    if (!r)
        return std::move(r).error();
    o.help = r->help;
    if (o.help)
        return o;
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
            all_specs.push_back("syscall:" + name);
            at = comma + 1;
        }
    }
    o.syscalls = std::move(names);
    if (all_specs.empty())
        return UsageError{"no probe spec given (e.g. probectl trace syscall:openat -- ls)"};
    for (const auto& s : all_specs) {
        auto spec = parseSpecArgument(s);
        if (!spec)
            return std::move(spec).error();
        o.specs.push_back(std::move(*spec));
    }
    if (vm.count("maxactive") && (o.maxactive == 0 || o.maxactive > PROBECTL_MAXACTIVE_MAX))
        return UsageError{fmt::format("--maxactive must be 1..{}", PROBECTL_MAXACTIVE_MAX)};
    for (auto& s : o.specs)
        if (s.kind == SpecKind::Kretprobe || s.kind == SpecKind::Syscall)
            s.maxactive = o.maxactive;
    if (auto e = parseIdList(vm, "pid", false, o.match_pids))
        return *e;
    if (auto e = parseIdList(vm, "tid", false, o.match_tids))
        return *e;
    if (auto e = parseIdList(vm, "uid", true, o.match_uids))
        return *e;
    if (vm.count("comm") &&
        (o.match_comm.empty() || o.match_comm.size() >= PROBECTL_MATCH_COMM_MAX))
        return UsageError{
            fmt::format("--comm needs a glob of 1..{} bytes", PROBECTL_MATCH_COMM_MAX - 1)};
    if (o.backend == "ptrace" && (!o.match_pids.empty() || !o.match_tids.empty() ||
                                  !o.match_uids.empty() || !o.match_comm.empty()))
        return UsageError{
            "--pid, --tid, --uid and --comm filter in the kernel: with "
            "--backend=ptrace use -p/--attach, or a predicate such as "
            "'uprobe:... if $comm ~ \"ls*\"'"};
    if (vm.count("duration") && !(o.duration > 0))
        return UsageError{"--duration must be a positive number of seconds"};
    for (auto pid : o.pids)
        if (pid == 0)
            return UsageError{"-p 0 is not a process id"};
    if (o.follow && o.pids.empty() && o.command.empty())
        return UsageError{"-f follows the children of -p PID or -- CMD: give one of them"};
    if (o.backend != "kernel" && o.backend != "ptrace")
        return UsageError{fmt::format("--backend must be kernel or ptrace, not '{}'", o.backend)};
    if (o.format != "text" && o.format != "json" && !TraceExport::isExportFormat(o.format))
        return UsageError{fmt::format(
            "--format must be text, json, chrome, perfetto, ctf or record, not '{}'", o.format)};
    if (TraceExport::isExportFormat(o.format) && o.output.empty())
        return UsageError{fmt::format("--format {} writes a file: give -o {}", o.format,
                                      o.format == "ctf" ? "DIR" : "FILE")};
    if (o.seccomp_bpf && (o.backend != "ptrace" || o.command.empty() || !o.pids.empty()))
        return UsageError{"--seccomp-bpf needs --backend=ptrace and -- CMD (and no -p)"};
    if (o.pids.size() + (o.command.empty() ? 0 : 1) > PROBECTL_MAX_TGIDS)
        return UsageError{fmt::format("at most {} processes can be traced", PROBECTL_MAX_TGIDS)};
    return o;
}

int runTrace(const std::vector<std::string>& args, Io& io) {
    auto parsed = parseTraceOptions(args);
    if (auto rc = parsedExit(io, kCmd, parsed))
        return *rc;
    TraceOptions& o = *parsed;

    // O_CLOEXEC: the traced command must not inherit the trace file (strace's -o does the
    // same); its descriptor numbers then match an untraced run's.
    std::optional<__gnu_cxx::stdio_filebuf<char>> filebuf;
    std::optional<std::ostream> file;
    std::ostream* out = &io.out;
    // --format chrome|perfetto|ctf|record: the writer opens -o itself (trace_export.hpp).
    auto exporter = TraceExport::open(o);
    if (!exporter)
        return runtimeError(io, kCmd, exporter.error());
    if (!o.output.empty() && !*exporter) {
        int fd = ::open(o.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return runtimeError(io, kCmd,
                                makeError(errno, fmt::format("cannot write {}", o.output)));
        filebuf.emplace(fd, std::ios::out);
        file.emplace(&*filebuf);
        out = &*file;
    }
    for (auto pid : o.pids)
        if (::kill(static_cast<pid_t>(pid), 0) < 0 && errno == ESRCH)
            return runtimeError(io, kCmd, makeError(ESRCH, fmt::format("no process {}", pid)));

    StopSignals signals;
    if (o.backend == "ptrace")
        return runTracePtrace(
            o, io, *out, [&] { return signals.caught(); }, *exporter);
    std::optional<StoppedChild> child;
    SessionOptions so;
    so.tgids = o.pids;
    so.follow = o.follow;
    so.maxactive = o.maxactive;
    so.match_pids = o.match_pids;
    so.match_tids = o.match_tids;
    so.match_uids = o.match_uids;
    so.match_comm = o.match_comm;
    if (o.pids.size() == 1)
        so.resolve_pid = static_cast<pid_t>(o.pids[0]);
    if (!o.command.empty()) {
        auto c = StoppedChild::spawn(o.command);
        if (!c)
            return runtimeError(io, kCmd, c.error());
        child.emplace(std::move(*c));
        so.tgids.push_back(static_cast<std::uint32_t>(child->pid()));
    }

    auto session = Session::open(so);
    if (!session)
        return runtimeError(io, kCmd, session.error());
    for (const auto& spec : o.specs)
        if (auto id = session->add(spec); !id)
            return runtimeError(io, kCmd, id.error());
    // Time 0 and --duration count from when every probe is armed (symbol loading before it
    // can take a while), just before the command is released.
    const std::uint64_t t0 = monotonicNs();

    io.err << fmt::format(
        "Tracing {} probe{}{}. {}\n", o.specs.size(), o.specs.size() == 1 ? "" : "s",
        traceTarget(child ? o.command[0] : std::string(), child ? child->pid() : 0, o.pids),
        child ? "Ends when the command exits or on Ctrl-C." : "Hit Ctrl-C to end.");
    const TraceLayout layout = o.layout();
    if (*exporter)
        exporter->begin(t0);
    else if (!layout.json && !layout.strace)
        *out << eventHeader() << '\n';

    std::uint64_t events = 0;
    auto onEvent = [&](const Event& ev) {
        if (*exporter)
            exporter->event(ev);
        else
            *out << formatTraceEvent(ev, t0, layout) << '\n';
        ++events;
    };

    if (child)
        if (auto r = child->release(); !r)
            return runtimeError(io, kCmd, r.error());

    const std::uint64_t deadline =
        o.duration > 0 ? t0 + static_cast<std::uint64_t>(o.duration * 1e9) : 0;
    std::optional<int> child_status;
    auto shouldStop = [&] {
        out->flush();
        if (*exporter)
            exporter->flush();
        if (signals.caught())
            return true;
        if (deadline && monotonicNs() >= deadline)
            return true;
        if (child && !child_status)
            child_status = child->tryWait();
        return child_status.has_value();
    };
    int rc = kExitOk;
    if (auto r = session->run(onEvent, shouldStop, 50); !r)
        rc = runtimeError(io, kCmd, r.error());

    // Even after an error or a signal: drain what the kernel holds and show the counters.
    auto stats = session->stop(onEvent);
    if (!stats)
        return runtimeError(io, kCmd, stats.error());
    if (*exporter) {
        if (int erc = exporter->finish(io, kCmd, *stats); erc != kExitOk && rc == kExitOk)
            rc = erc;
    } else if (layout.json) {
        *out << formatSummaryJson(*stats) << '\n';
    } else if (layout.strace) {
        out->flush();  // strace's lines only in the output; counters on stderr
        printSummary(io.err, *stats);
    } else {
        *out << '\n';
        printSummary(*out, *stats);
    }
    out->flush();
    if (auto w = lossWarning(*stats); !w.empty())
        io.err << w << '\n';
    // CMD ended on its own: its status (strace/perf style). Ended by us (--duration,
    // Ctrl-C, SIGTERM): 0, the trace did what was asked.
    const bool ended_itself = child_status.has_value();
    if (child && !child_status && child->pid() > 0)
        child_status = child->terminate();
    if (child_status)
        io.err << fmt::format("'{}' {}\n", o.command[0],
                              StoppedChild::describeStatus(*child_status));
    if (rc == kExitOk && ended_itself)
        return StoppedChild::exitCode(*child_status);
    return rc;
}

}  // namespace probectl::cli
