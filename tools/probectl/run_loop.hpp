// How every command that runs a Tracer (trace, count, hist, latency) decides to end and how
// it ends: a --duration deadline counted from when the probes are armed, a stop signal, or
// the held command's exit; then, as strace ends, with the command's own exit code, or
// killed by the signal that killed the command (runEnd()).
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "probectl/tracer.hpp"

namespace probectl::cli {

class RunLoop {
  public:
    // duration_s <= 0: no deadline. `caught` gives the stop signal (stopSignals()) that
    // arrived, 0 for none; the first one is kept.
    RunLoop(Tracer& tracer, const std::vector<std::string>& command, double duration_s,
            std::function<int()> caught);

    // CLOCK_MONOTONIC ns when the loop was made (time 0 of the trace), and the deadline
    // (0 without --duration).
    std::uint64_t t0() const { return t0_; }

    // -p PIDs without a command: the run also ends once every one of them has exited
    // (strace -p and perf trace -p do the same); with `follow` (-f) once the processes they
    // forked exited too, as strace -f -p ends when nothing is traced any more. Checked every
    // 100 ms with the backend's count (Tracer::tracedProcesses: probectl.ko counts the
    // processes of its filter as they fork and exit, so a process forked and orphaned
    // between two checks is waited for too). A backend that does not count them (the
    // ptrace backend without -f; with -f its done() ends the run) is checked in /proc:
    // the pids, and with `follow` (an older module) their descendants at each check, which
    // misses a process forked and orphaned in between.
    void watchPids(const std::vector<std::uint32_t>& pids, bool follow);

    // -- CMD with -f: the run still ends when the command does; processes it started that
    // run on (a daemon) are then no longer traced, which finish() says.
    void followCommand(bool follow) { follow_command_ = follow; }

    // True once a signal came or the deadline passed (a held command gets the signal, or
    // SIGTERM at the deadline, and is traced while it ends by it, so that the calls it
    // interrupted are traced returning; after a second it is killed with every traced
    // process it made, and the run ends once their ends are seen), the held command ended
    // (its status is kept: it ended on its own only if it ended before anything else
    // stopped the run), or every watched process exited.
    bool shouldStop();

    // Before tracer.start(): a stop signal that came while the probes were attached (kept, 0
    // for none). A run of a command should then not start: the command was never released.
    int signalBeforeStart();

    // After tracer.stop(): a command still running (one shouldStop() could not signal, or
    // whose end the kill did not bring in time) is terminated; its end is described on
    // io.err ("'ls' exited with status 0"), as is the exit of every watched process.
    // Returns runEnd()'s code, and leaves its signal to setExitSignal().
    int finish(Io& io, int rc);

    // The message and exit code of a run of a command that a stop signal ended before it
    // began (signalBeforeStart()): the command is not run; probectl dies of the signal
    // (setExitSignal(N); 128+N is returned).
    int notStarted(Io& io, const char* cmd) const;

  private:
    Tracer& tracer_;
    const std::vector<std::string>& command_;
    std::function<int()> caught_;
    int signal_ = 0;
    // A stop signal (or --duration's SIGTERM) gives the command up to a second to end by
    // it, traced meanwhile; then it is killed (Tracer::killCommand), still traced.
    static constexpr std::uint64_t kStopGraceNs = 1'000'000'000;
    // Most the trace waits for the killed processes' ends (SIGKILL is not refused: only a
    // task stuck in the kernel takes longer).
    static constexpr std::uint64_t kKillWaitNs = 2'000'000'000;
    bool ending_ = false;          // a stop signal came or the deadline passed
    std::uint64_t grace_end_ = 0;  // CLOCK_MONOTONIC ns; 0: nothing passed on
    bool killed_ = false;          // killCommand() was called
    bool kill_ends_polled_ = false;
    std::uint64_t kill_end_ = 0;
    bool ended_by_us_ = false;  // --duration's SIGTERM or the kill ended it, not its own way
    std::uint64_t t0_ = 0;
    std::uint64_t deadline_ = 0;
    std::optional<int> status_;
    std::vector<std::uint32_t> pids_;
    bool follow_ = false;
    bool follow_command_ = false;
    bool counted_ = false;               // the tracer counts the processes (tracedProcesses)
    std::size_t forked_count_ = 0;       // processes traced besides pids_ (with follow)
    std::vector<std::uint32_t> forked_;  // descendants of pids_ seen in /proc (not counted_)
    void addDescendants();
    bool watchedExited();
    std::uint64_t next_pid_check_ = 0;
    bool pids_gone_ = false;
};

// How a run ends: its exit code, and the signal probectl is to die of (0: none; the code is
// then 128+N, for when it cannot).
struct RunEnd {
    int code = kExitOk;
    int signal = 0;
};

// The end of a run that ended with `rc` (kExitOk unless something failed, which wins), by
// strace's rule. With a command: `status` is its wait status, whatever stopped the run (a
// command that catches Ctrl-C and exits 0 ends the run with 0); a command a signal killed
// kills probectl the same way, so that a shell sees the interrupt (bash stops a loop on
// SIGINT). nullopt: probectl had to end the command itself, which --duration asks for (0),
// and a stop signal N it outlived by a second does not (killed by N). Without a command: 0
// (--duration, or Ctrl-C ending a trace of -p PIDs or of the whole system, as perf and
// bpftrace exit).
RunEnd runEnd(int rc, bool has_command, std::optional<int> status, int stop_signal);

// The signal a run's end asks probectl to die of (RunEnd::signal), kept for main(), which
// raises it once every output is complete: takeExitSignal() gives it (0: none) and clears it.
void setExitSignal(int sig);
int takeExitSignal();
// Dies of `sig` with its default action restored and unblocked, without a core dump (a
// killed command's SIGSEGV is not probectl's crash). Returns only if the signal did not kill.
void dieOf(int sig);

// The signals that end a run as Ctrl-C does (SIGINT, SIGTERM, SIGHUP): the probes stop, the
// tables or summary are printed, CMD gets the same signal and the exit code is 128+N
// (runExitCode). A closed terminal or ssh session (SIGHUP) must not lose the count. SIGHUP
// is left out when it is ignored already (nohup): the user asked for the run to outlive
// the terminal.
std::vector<int> stopSignals();

// The stop signals held pending for a run that polls for them (count, hist, latency): block()
// blocks them, after the command is spawned (it would inherit the mask) and before the probes
// are attached (seconds for a big glob); caught() takes one pending and keeps the first (0:
// none yet). Made before the tracer, so that they stay blocked while it is torn down: one
// arriving after the run's end is taken there and cannot kill probectl after a complete
// table. The destructor takes every pending one and restores the mask.
class BlockedStopSignals {
  public:
    BlockedStopSignals();
    ~BlockedStopSignals();
    BlockedStopSignals(const BlockedStopSignals&) = delete;
    BlockedStopSignals& operator=(const BlockedStopSignals&) = delete;
    void block();
    int caught();

  private:
    int take();

    sigset_t set_{};
    sigset_t old_{};
    int first_ = 0;
    bool blocked_ = false;
};

// Splits a command line at the first "--": what comes before goes to `mine`, what comes after
// (the command to run, its own options untouched) to `command`. A "--" with nothing after it
// is a UsageError.
std::optional<UsageError> splitCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>& mine,
                                       std::vector<std::string>& command);

}  // namespace probectl::cli
