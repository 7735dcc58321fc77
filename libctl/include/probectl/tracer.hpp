// Tracer: one trace, whichever backend produces it: probectl.ko (Session, session.hpp) or
// ptrace (PtraceSession, ptrace_session.hpp). A trace driver (the CLI's `trace`) runs
// either through this interface:
//
//   open (backend options: the target's pids, follow, a held command)
//   add(spec)...              every probe armed when add returns
//   start()                   the held command, if any, is let go to exec
//   run(cb, should_stop)      events to cb until should_stop(), done(), or an error
//   stop(cb)                  the remaining events to cb, then per-probe counters
//   commandStatus() / terminateCommand()
//
// Units: timeouts and ticks in milliseconds; Event::timestamp_ns and latency_ns in ns of
// CLOCK_MONOTONIC; command statuses are waitpid(2) wait statuses (HeldCommand::exitCode
// turns one into the shell's exit code). Errors are Result values (result.hpp): an errno
// and a message that names what is at fault; nothing throws.
//
// All calls come from one thread (the ptrace backend requires the thread that opened it).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/event_view.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct SessionStats;  // session.hpp: per-probe counters, lost records

// A traced thread's end as its tracer collected it (strace's "+++ exited with N +++").
struct TaskEnd {
    pid_t tid = 0;
    pid_t tgid = 0;
    int status = 0;  // its wait status: WIFEXITED or WIFSIGNALED
};
using TaskEndCallback = std::function<void(const TaskEnd&)>;

// The processes a trace limited to processes covers (the pids it was opened with, the held
// command, and with follow what they forked), as its backend counts them.
struct TracedProcesses {
    std::uint32_t live = 0;   // not exited yet
    std::uint32_t total = 0;  // living or exited
};

class Tracer {
  public:
    virtual ~Tracer() = default;

    // "kernel" or "ptrace".
    virtual std::string_view backend() const = 0;

    // Resolves the spec and arms its probe in what is traced; returns the probe's id.
    // Errors start with the spec text: EINVAL (syntax, caret rendering), ENOENT (unknown
    // symbol, file or syscall), EOPNOTSUPP (a kind this backend cannot trace), and the
    // backend's own (kernel extack, ptrace EIO/EPERM).
    virtual Result<std::uint32_t> add(const ProbeSpec& spec) = 0;

    // What the add() calls since the last takeNotes() found that the user should know
    // before trusting the results (calls a probe cannot see, e.g. inlined copies of a function
    // a return probe cannot reach), one line or paragraph each, in order; then forgets them.
    std::vector<std::string> takeNotes();
    // Tracing starts: the held command, if any, execs (after this returns it has exec'd).
    // Nothing to do without a command. Errors: the exec's errno ("cannot run 'CMD'":
    // ENOENT, EACCES), EINVAL if the command was already started.
    virtual Result<void> start() = 0;

    // Waits up to timeout_ms (< 0: forever, 0: only what is pending) and delivers the
    // events that arrived; returns how many (0 on timeout). EINTR when a signal arrived,
    // returned so that a signal handler can end a loop.
    virtual Result<std::size_t> poll(int timeout_ms, const EventCallback& cb) = 0;

    // poll() in tick_ms steps until should_stop() returns true (checked before the first
    // poll and after every one, EINTR included) or done(). Returns the first other error.
    Result<void> run(const EventCallback& cb, const std::function<bool()>& should_stop,
                     int tick_ms = 100);

    // poll(), run() and stop() with each event as an EventView (event_view.hpp): valid
    // during the call only, read from the kernel's record without a copy (Session), or a
    // view of the Event the backend made (the default: the ptrace backend). Errors as
    // poll(), run() and stop(). An owning Event only for callers who ask
    // (EventView::toEvent).
    virtual Result<std::size_t> pollViews(int timeout_ms, const EventViewCallback& cb);
    Result<void> runViews(const EventViewCallback& cb, const std::function<bool()>& should_stop,
                          int tick_ms = 100);
    virtual Result<SessionStats> stopViews(const EventViewCallback& cb);

    // True once nothing can produce events any more (the ptrace backend: every traced
    // thread has exited). The kernel backend is never done on its own.
    virtual bool done() const = 0;

    // Ends tracing: the events still held (in the kernel's buffers, or taken by stopped
    // threads) go to `cb`, then the counters of every probe, in the order they were added.
    // The probes disarm; the command, if any, keeps running untraced.
    virtual Result<SessionStats> stop(const EventCallback& cb) = 0;

    // From now on `cb` gets each traced thread's end, with the wait status the backend
    // collected, in order with the events (after the thread's last event; from poll, run
    // and stop). False: this backend does not see them (the kernel backend: only the held
    // command's end is known, by commandStatus()).
    virtual bool watchTaskEnds(TaskEndCallback cb) {
        (void)cb;
        return false;
    }

    // How many processes the trace covers and how many of them still live, counted where
    // the processes are followed, so a fork is never missed: probectl.ko counts its
    // session's tgid filter, which a followed fork joins before the child runs (a process
    // forked and orphaned between two looks at /proc would be missed there). With follow,
    // live is 0 only once nothing traced is left to fork. Errors: ENOENT for a trace of
    // every process, EOPNOTSUPP from a backend that does not count them (the ptrace
    // backend, whose done() tells when it traces nothing any more; a module without
    // SESSION_GET).
    virtual Result<TracedProcesses> tracedProcesses();

    // The held command's pid, -1 without one.
    virtual pid_t commandPid() const = 0;
    // Its wait status once it has ended (reaped without blocking); nullopt while it runs
    // or without a command.
    virtual std::optional<int> commandStatus() const = 0;
    // After stop(): SIGTERM, up to grace_ms to exit, then SIGKILL; its wait status (the
    // one it ended with if it had already ended). nullopt without a command.
    virtual std::optional<int> terminateCommand(int grace_ms = 1000) = 0;
    // For a run that must leave nothing behind (the command, or what it started, outlived
    // a stop signal): SIGKILL to the held command if it runs and to every process under it
    // (traced with follow or not: none may run on after the tracer). With adoptsOrphans()
    // (the backend's adopt_orphans option) every process under this one instead: this
    // process is then the subreaper of the command's orphans, so what the command left
    // when it ended, and a process it daemonised, are found there too, and so would be any
    // other child of the caller's (the option is for a program whose only child is the
    // command). Without it, a process the command orphaned (reparented to init) is not
    // found. Before stop() the ends are seen as any other end (commandStatus(), task
    // ends); true when they come through poll(), done() telling when the last one did (the
    // ptrace backend), false when the call waited for them itself. This one kills the
    // command alone. Nothing without a command.
    virtual bool killCommand();
    // Whether a process the held command started still runs (not the command itself), as
    // killCommand() finds them: a descendant of the command, or with adoptsOrphans() of
    // this process.
    bool commandLeftRunning() const;
    // The held command was spawned adopting its orphans (HeldCommand::spawn): this process
    // is a child subreaper, and killCommand() takes every process under it.
    bool adoptsOrphans() const { return adopts_orphans_; }

  protected:
    Tracer() = default;
    // For the backends' add(): a note for takeNotes().
    void addNote(std::string note) { notes_.push_back(std::move(note)); }
    // For the backends' open(): the command was spawned with adopt_orphans.
    void setAdoptsOrphans(bool on) { adopts_orphans_ = on; }
    Tracer(const Tracer&) = default;
    Tracer(Tracer&&) = default;
    Tracer& operator=(const Tracer&) = default;
    Tracer& operator=(Tracer&&) = default;

  private:
    std::vector<std::string> notes_;
    bool adopts_orphans_ = false;
};

}  // namespace probectl
#pragma GCC visibility pop
