// The trace driver: what `probectl trace` does with a Tracer, whichever backend it is. Adds
// the specs, prints the banner, lets the command go, hands every event to the sink (printer
// or trace file, trace_sink.hpp) until --duration, Ctrl-C/SIGTERM or the command's exit, then
// the summary; exits with the command's status (run_loop.hpp).
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "attach.hpp"
#include "format.hpp"
#include "probectl/kernel_maps.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/session.hpp"
#include "run_loop.hpp"
#include "subcommands.hpp"
#include "trace_sink.hpp"

namespace probectl::cli {

namespace {

// A failed write, said once, with what follows from it (`then`, if any).
void tellWriteError(Io& io, const char* cmd, const Error& e, const std::string& then) {
    if (e.message == fmt::format("cannot write {}", kStandardOutput))
        io.out_error_told = true;  // not again at exit
    io.err << fmt::format("probectl {}: {}{}{}\n", cmd, e.describe(), then.empty() ? "" : ": ",
                          then);
}

// The end of an output whose failed write was said already (`told`): only what is new, as
// the output removed because it was incomplete. kExitRuntime.
int tellWhatIsNew(Io& io, const char* cmd, const std::string& told, const Result<void>& r) {
    const std::string what = r ? std::string() : r.error().describe();
    if (what.starts_with(told + ": "))
        io.err << fmt::format("probectl {}: {}\n", cmd, what.substr(told.size() + 2));
    else if (!what.empty() && what != told)
        return runtimeError(io, cmd, r.error());
    return kExitRuntime;
}

}  // namespace

int runTrace(Tracer& tracer, const TraceOptions& o, Io& io, const SinkOpener& open_sink,
             const std::function<int()>& caught_signal,
             std::shared_ptr<UserResolveCache> resolved) {
    const char* const kCmd = o.cmd;
    const bool kernel = tracer.backend() == "kernel";
    const pid_t resolve_pid = o.pids.size() == 1 ? static_cast<pid_t>(o.pids[0]) : 0;
    const std::uint64_t arming = monotonicNs();
    auto probes = attachSpecs(
        tracer, o.specs, resolve_pid, o.verbose, io.err, false,
        [&] { return caught_signal() != 0; }, std::move(resolved));
    if (!probes)
        return runtimeError(io, kCmd,
                            kernel ? privilegeError(probes.error(), kCmd, true) : probes.error());
    auto opened = open_sink();
    if (!opened)
        return runtimeError(io, kCmd, opened.error());
    TraceSink& sink = **opened;
    // --kstack, --ustack: stacks are read by id from the session's stack map, on a socket of
    // their own (the events' socket is busy delivering the event that names the stack).
    const bool dwarf = o.ustack == "dwarf";
    std::optional<KernelStacks> stacks;
    if (o.kstack || (!o.ustack.empty() && !dwarf)) {
        auto ks = KernelStacks::open();
        if (!ks)
            return runtimeError(io, kCmd, ks.error());
        stacks.emplace(std::move(*ks));
        sink.setKernelStacks(
            [&stacks](std::uint32_t probe, std::uint32_t id) { return stacks->lines(probe, id); });
    }
    // --ustack=dwarf: each event carries its own snapshot, unwound as it is printed.
    std::optional<UserSymbolizer> snapshots;
    SnapshotWalks walks;  // for the end-of-trace line
    // Kernel backend: the maps of the address space the kernel kept for a process, read on
    // a socket of their own through a probe of the session (the latest event's).
    std::optional<KernelMapsSource> kept_maps;
    if (dwarf) {
        snapshots.emplace();
        if (kernel) {
            auto km = KernelMapsSource::open();
            if (!km)
                return runtimeError(io, kCmd, km.error());
            kept_maps.emplace(std::move(*km));
            snapshots->setMapsSource(kept_maps->source());
        }
        const std::size_t depth = o.stack_depth ? o.stack_depth : kStackDefaultDepth;
        sink.setUserSnapshots([&, depth](const Event& ev, const FetchedValue& v) {
            const UserImage image(static_cast<pid_t>(ev.tgid), v.maps_seq);
            snapshots->capture(image);
            auto lines = snapshots->snapshotLines(image, v.snapshot, v.truncated, depth);
            walks.count(lines, v.truncated);
            return lines;
        });
    }
    // --duration counts from when every probe is armed (symbol loading before it can take a
    // while), just before the command is released; so does time 0 with a command, which
    // nothing is traced in before. A process already running (-p, --pid, every process) is
    // traced from the first probe's arming on: time 0 is then, or its first events would
    // print before 0.
    RunLoop loop(tracer, o.command, o.duration, caught_signal);
    loop.followCommand(o.follow);
    // With -f the ptrace backend ends once nothing is traced any more: it sees every fork.
    if (!o.follow || tracer.backend() == "kernel")
        loop.watchPids(o.pids, o.follow);
    const bool has_command = !o.command.empty();
    const std::uint64_t t0 = has_command ? loop.t0() : arming;
    const std::string via =
        tracer.backend() == "kernel" ? std::string() : fmt::format(" with {}", tracer.backend());
    io.err << fmt::format("Tracing {} probe{}{}{}. {}\n", *probes, *probes == 1 ? "" : "s",
                          traceTarget(has_command ? o.command[0] : std::string(),
                                      has_command ? tracer.commandPid() : 0, o.pids),
                          via, caught_signal() != 0 ? kEndsNow : traceEnd(o));
    sink.begin(t0, TraceClocks::now());

    // --ustack: a process's maps are read at its first event, while it (likely) lives; its
    // user stacks are symbolized with them even after it exited.
    auto onEvent = [&](const Event& ev) {
        if (snapshots) {
            if (kept_maps)
                kept_maps->setProbe(ev.probe_id);
            // Each snapshot's own address space, the one before an exec included.
            for (const FetchedValue& v : ev.values)
                if (v.name == kUserStackArg)
                    snapshots->capture(UserImage(static_cast<pid_t>(ev.tgid), v.maps_seq));
        } else if (stacks && !o.ustack.empty()) {
            stacks->captureProcess(static_cast<pid_t>(ev.tgid), ev.probe_id);
        }
        sink.event(ev);
    };
    // A write that failed already (a recording's header; the text, chrome or perfetto header,
    // pushed out now) is found before the command is released: on a full disk or /dev/full it
    // is never run, as when the trace fails to start, rather than run untraced.
    sink.flush();
    if (auto e = sink.writeError()) {
        tellWriteError(io, kCmd, *e,
                       has_command ? fmt::format("'{}' was not run", o.command[0]) : "");
        tellWhatIsNew(io, kCmd, e->describe(), sink.finish(nullptr));  // the output removed
        return kExitRuntime;
    }
    if (has_command && loop.signalBeforeStart())
        return loop.notStarted(io, kCmd);
    if (auto r = tracer.start(); !r)
        return runtimeError(io, kCmd, r.error());

    // A failed write stops the trace at once, as perf record does: running on, every event
    // after it would be counted as delivered and never saved.
    // Where strace says "+++ exited with N +++": each traced thread's end if the backend
    // sees them, else the command's own, once every event before it is out.
    const bool ends_seen = tracer.watchTaskEnds([&sink](const TaskEnd& end) { sink.taskEnd(end); });
    std::optional<std::string> write_told;  // the failed write, as it was said
    auto shouldStop = [&] {
        sink.flush();
        if (auto e = sink.writeError(); e && !write_told) {
            write_told = e->describe();
            tellWriteError(io, kCmd, *e, "stopping the trace");
        }
        return write_told || loop.shouldStop();
    };
    int rc = kExitOk;
    if (auto r = tracer.run(onEvent, shouldStop, 50); !r)
        rc = runtimeError(io, kCmd, r.error());

    // Even after an error or a signal: drain what the backend holds and show the counters.
    // The command's end is told only if it came while it was traced.
    const std::optional<int> command_end = ends_seen ? std::nullopt : tracer.commandStatus();
    auto stats = tracer.stop(onEvent);
    if (!stats)
        return runtimeError(io, kCmd, stats.error());
    if (command_end) {
        const pid_t pid = tracer.commandPid();
        sink.taskEnd({pid, pid, *command_end});
    }
    if (auto r = sink.finish(&*stats); !r && rc == kExitOk) {
        rc = write_told ? tellWhatIsNew(io, kCmd, *write_told, r)
                        : runtimeError(io, kCmd, r.error());
    }
    if (auto w = lossWarning(*stats); !w.empty())
        io.err << w << '\n';
    if (stacks && !stats->probes.empty()) {
        // The counters as they are now: the map outlives the probes' last hits.
        (void)stacks->read(stats->probes.front().id);
        io.err << kernelStacksSummary(*stacks) << '\n';
    }
    if (dwarf) {
        const std::uint64_t unpinned = kept_maps ? kept_maps->refreshUnpinned() : 0;
        io.err << userSnapshotSummary(walks, o.stack_size ? o.stack_size : kUstackSnapshotDefault,
                                      unpinned)
               << '\n';
    }
    for (const auto& note : stats->notes)
        io.err << fmt::format("probectl {}: warning: {}\n", kCmd, note);
    // CMD's own status, or killed by the signal that killed it (strace); --duration, or a
    // signal without CMD: 0.
    return loop.finish(io, rc);
}

}  // namespace probectl::cli
