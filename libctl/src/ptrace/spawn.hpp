// The command of `trace -- CMD` for the ptrace backend: forked, blocked on a pipe until
// start(); it gets PR_SET_PDEATHSIG(SIGKILL) (dies with the tracer, like the kernel
// backend's CMD). start() can hand it a seccomp filter to install just before exec:
// the filter depends on the probes, which are added after the fork.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "probectl/result.hpp"

namespace probectl::ptrace {

// Most BPF instructions start() accepts: the child reads them into a fixed buffer (it
// must not allocate between fork and exec).
inline constexpr std::size_t kMaxFilterLen = 512;

class HeldCommand {
  public:
    HeldCommand() = default;
    // Forks; the child waits for start(). Errors: EINVAL (empty argv), errno of
    // pipe/fork.
    static Result<HeldCommand> spawn(const std::vector<std::string>& argv);
    HeldCommand(HeldCommand&& o) noexcept;
    HeldCommand& operator=(HeldCommand&& o) noexcept;
    HeldCommand(const HeldCommand&) = delete;
    // Closes the pipes: a child still held exits 126.
    ~HeldCommand();

    pid_t pid() const { return pid_; }
    bool held() const { return go_fd_ >= 0; }
    // Lets the child exec, installing `filter` first if it is not empty (no_new_privs +
    // SECCOMP_SET_MODE_FILTER). Does not wait: the child is a tracee, and may stop (syscall
    // or seccomp stops) before its exec completes; the tracer must keep handling stops
    // until execResult() answers. Errors: EINVAL (not held), errno of the pipe write.
    Result<void> start(const std::vector<sock_filter>& filter = {});
    // After start(): nullopt while the child has neither exec'd nor failed; then success
    // (exec closed the O_CLOEXEC pipe), or the child's errno of a failed exec or filter
    // install (E2BIG for a filter over kMaxFilterLen).
    std::optional<Result<void>> execResult();

  private:
    pid_t pid_ = -1;
    int go_fd_ = -1;   // write end: filter length (u32) + filter, EOF = give up
    int err_fd_ = -1;  // read end (O_NONBLOCK): errno from the child, EOF on exec
    std::string name_;
};

}  // namespace probectl::ptrace
