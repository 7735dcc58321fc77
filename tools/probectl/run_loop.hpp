// How every command that runs a Tracer (trace, count, hist, latency) decides to end and what
// it exits with: a --duration deadline counted from when the probes are armed, a stop signal,
// or the held command's exit; then the command's own status as the exit code.
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
    // duration_s <= 0: no deadline. `caught` says whether a stop signal arrived.
    RunLoop(Tracer& tracer, const std::vector<std::string>& command, double duration_s,
            std::function<bool()> caught);

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

    // After tracer.stop(): a command still running is terminated; its end is described on
    // io.err ("'ls' exited with status 0"), as is the exit of every watched process. Returns the
    // command's exit code when it ended on its own and rc is kExitOk, else rc (strace and perf do
    // the same).
    int finish(Io& io, int rc);

  private:
    Tracer& tracer_;
    const std::vector<std::string>& command_;
    std::function<bool()> caught_;
    std::uint64_t t0_ = 0;
    std::uint64_t deadline_ = 0;
    std::optional<int> status_;
    std::vector<std::uint32_t> pids_;
    std::uint64_t next_pid_check_ = 0;
    bool pids_gone_ = false;
};

// Splits a command line at the first "--": what comes before goes to `mine`, what comes after
// (the command to run, its own options untouched) to `command`. A "--" with nothing after it
// is a UsageError.
std::optional<UsageError> splitCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>& mine,
                                       std::vector<std::string>& command);

}  // namespace probectl::cli
