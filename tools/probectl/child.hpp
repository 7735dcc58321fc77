// The traced command: forked, held before exec until the probes and the tgid filter are in
// place, so its first instruction is already traced; reaped (or killed) on destruction.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "probectl/result.hpp"

namespace probectl::cli {

class StoppedChild {
  public:
    // Forks; the child blocks on a pipe until release(). argv[0] is looked up in PATH.
    // The child gets PR_SET_PDEATHSIG(SIGKILL): it dies when this process dies.
    static Result<StoppedChild> spawn(const std::vector<std::string>& argv);

    StoppedChild(StoppedChild&& o) noexcept;
    StoppedChild& operator=(StoppedChild&&) = delete;
    StoppedChild(const StoppedChild&) = delete;
    // Kills (SIGKILL) and reaps the child if it is still ours.
    ~StoppedChild();

    pid_t pid() const { return pid_; }
    // Lets the child exec. Error if exec failed (errno from the child, e.g. ENOENT).
    Result<void> release();
    // Non-blocking: the wait status once the child has exited.
    std::optional<int> tryWait();
    // SIGTERM, up to `grace_ms` to exit, then SIGKILL; returns the wait status.
    int terminate(int grace_ms = 1000);
    // The shell's convention for a wait status: the exit code, or 128 + signal number.
    static int exitCode(int status);
    // "exited with status N" / "killed by signal N (NAME)"
    static std::string describeStatus(int status);

  private:
    StoppedChild() = default;
    pid_t pid_ = -1;
    int go_fd_ = -1;   // write end: one byte = "exec now", EOF = "give up"
    int err_fd_ = -1;  // read end: errno of a failed exec, EOF on success (O_CLOEXEC)
    bool reaped_ = false;
    std::string name_;
};

}  // namespace probectl::cli
