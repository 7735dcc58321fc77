// How every command that runs a Tracer (trace, count, hist, latency) decides to end and what
// it exits with: a --duration deadline counted from when the probes are armed, a stop signal,
// or the held command's exit; then the command's own status, or 128+N for the stop signal N
// that ended a run of a command, as the exit code.
#pragma once

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

    // -p PIDs without -f and without a command: the run also ends once every one of them has
    // exited (strace -p and perf trace -p do the same). With -f their children may live on,
    // which only the kernel's session knows: those runs end on the deadline or a signal.
    void watchPids(const std::vector<std::uint32_t>& pids) { pids_ = pids; }

    // True once a signal came, the deadline passed, the held command ended (its status is
    // kept: it ended on its own only if it ended before anything else stopped the run), or
    // every watched process exited.
    bool shouldStop();

    // The stop signal that ended the run, 0 for none.
    int stopSignal() const { return signal_; }

    // Before tracer.start(): a stop signal that came while the probes were attached (kept, 0
    // for none). A run of a command should then not start: the command was never released.
    int signalBeforeStart();

    // After tracer.stop(): a command still running (shouldStop() sent it the stop signal that
    // ended the run, as strace does) gets a second to end, then is terminated; its end is
    // described on io.err ("'ls' exited with status 0"), as is the exit of every watched
    // process. Returns runExitCode().
    int finish(Io& io, int rc);

    // The message and exit code of a run of a command that a stop signal ended before it
    // began (signalBeforeStart()): the command is not run; 128+N.
    int notStarted(Io& io, const char* cmd) const;

  private:
    Tracer& tracer_;
    const std::vector<std::string>& command_;
    std::function<int()> caught_;
    int signal_ = 0;
    std::uint64_t t0_ = 0;
    std::uint64_t deadline_ = 0;
    std::optional<int> status_;
    std::vector<std::uint32_t> pids_;
    std::uint64_t next_pid_check_ = 0;
    bool pids_gone_ = false;
};

// The exit code of a run that ended with `rc` (kExitOk unless something failed, which wins):
// the command's own code when it ended by itself (`ended_itself`, its wait status `status`);
// 128+N when the stop signal N ended the run of a command, as strace exits (the trace is
// complete, but a script must be able to tell it was cut short); otherwise 0: --duration, or
// Ctrl-C ending a trace of -p PIDs or of the whole system (as perf and bpftrace exit).
int runExitCode(int rc, bool has_command, std::optional<int> ended_itself, int stop_signal);

// The signals that end a run as Ctrl-C does (SIGINT, SIGTERM, SIGHUP): the probes stop, the
// tables or summary are printed, CMD gets the same signal and the exit code is 128+N
// (runExitCode). A closed terminal or ssh session (SIGHUP) must not lose the count. SIGHUP
// is left out when it is ignored already (nohup): the user asked for the run to outlive
// the terminal.
std::vector<int> stopSignals();

// Splits a command line at the first "--": what comes before goes to `mine`, what comes after
// (the command to run, its own options untouched) to `command`. A "--" with nothing after it
// is a UsageError.
std::optional<UsageError> splitCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>& mine,
                                       std::vector<std::string>& command);

}  // namespace probectl::cli
