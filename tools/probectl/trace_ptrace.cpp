// probectl trace --backend=ptrace: the same command, events and summary as the kernel
// backend (trace.cpp), produced by PtraceSession instead of probectl.ko. Works on kernels
// without the module (or without module support at all).
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "child.hpp"
#include "format.hpp"
#include "probectl/ptrace_session.hpp"
#include "subcommands.hpp"
#include "trace_export.hpp"

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "trace";
}  // namespace

int runTracePtrace(const TraceOptions& o, Io& io, std::ostream& out,
                   const std::function<int()>& caught_signal, TraceExport& exporter) {
    PtraceSessionOptions so;
    so.tgids = o.pids;
    so.follow = o.follow;
    so.command = o.command;
    so.seccomp = o.seccomp_bpf;
    if (o.pids.size() == 1)
        so.resolve_pid = static_cast<pid_t>(o.pids[0]);

    auto session = PtraceSession::open(so);
    if (!session)
        return runtimeError(io, kCmd, session.error());
    for (const auto& spec : o.specs)
        if (auto id = session->add(spec); !id)
            return runtimeError(io, kCmd, id.error());
    const bool has_command = !o.command.empty();
    const std::uint64_t t0 = monotonicNs();

    io.err << fmt::format(
        "Tracing {} probe{}{} with ptrace. {}\n", o.specs.size(), o.specs.size() == 1 ? "" : "s",
        traceTarget(has_command ? o.command[0] : std::string(),
                    has_command ? session->commandPid() : 0, o.pids),
        has_command ? "Ends when the command exits or on Ctrl-C." : "Hit Ctrl-C to end.");
    const TraceLayout layout = o.layout();
    if (exporter)
        exporter.begin(t0);
    else if (!layout.json && !layout.strace)
        out << eventHeader() << '\n';

    auto onEvent = [&](const Event& ev) {
        if (exporter)
            exporter.event(ev);
        else
            out << formatTraceEvent(ev, t0, layout) << '\n';
    };
    if (has_command)
        if (auto r = session->release(); !r)
            return runtimeError(io, kCmd, r.error());

    const std::uint64_t deadline =
        o.duration > 0 ? t0 + static_cast<std::uint64_t>(o.duration * 1e9) : 0;
    auto shouldStop = [&] {
        out.flush();
        if (exporter)
            exporter.flush();
        if (caught_signal())
            return true;
        if (deadline && monotonicNs() >= deadline)
            return true;
        return has_command && session->commandStatus().has_value();
    };
    int rc = kExitOk;
    if (auto r = session->run(onEvent, shouldStop, 50); !r)
        rc = runtimeError(io, kCmd, r.error());

    // After an error or a signal too: every byte goes back, every thread is detached.
    auto stats = session->stop(onEvent);
    if (!stats)
        return runtimeError(io, kCmd, stats.error());
    if (exporter) {
        if (int erc = exporter.finish(io, kCmd, *stats); erc != kExitOk && rc == kExitOk)
            rc = erc;
    } else if (layout.json) {
        out << formatSummaryJson(*stats) << '\n';
    } else if (layout.strace) {
        out.flush();
        printSummary(io.err, *stats);
    } else {
        out << '\n';
        printSummary(out, *stats);
    }
    out.flush();
    if (auto w = lossWarning(*stats); !w.empty())
        io.err << w << '\n';
    std::optional<int> status = session->commandStatus();
    const bool ended_itself = status.has_value();
    if (has_command && !status)
        status = session->terminateCommand();
    if (has_command && status)
        io.err << fmt::format("'{}' {}\n", o.command[0], StoppedChild::describeStatus(*status));
    if (rc == kExitOk && ended_itself)
        return StoppedChild::exitCode(*status);
    return rc;
}

}  // namespace probectl::cli
