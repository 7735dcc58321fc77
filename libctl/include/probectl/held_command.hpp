// HeldCommand: the command of `trace -- CMD`, for both backends. It is forked and held
// before exec (blocked on a pipe) until the tracer has armed its probes, so its first
// instruction is already traced; it dies with the tracer (PR_SET_PDEATHSIG(SIGKILL), which
// survives exec), so a SIGKILLed probectl does not leave it running.
//
// Adopting orphans (spawn's `adopt_orphans`, opt-in: SessionOptions / PtraceSessionOptions
// adopt_orphans): the calling process becomes a child subreaper (PR_SET_CHILD_SUBREAPER,
// for the rest of its life), so the command's orphans (what it daemonises, what it leaves
// when it ends) become its children rather than init's. Tracer::killCommand then kills
// every process under the caller, so the caller must have no children of its own besides
// the command (the probectl CLI); the tracers reap the adopted ones. Without it no prctl is
// done and killCommand takes the command and its descendants only.
//
// Two ways to let it go: release() for a tracer that is not its ptrace tracer (the kernel
// backend: waits until the exec happened or failed), or start() then execResult() for one
// that is (the ptrace backend: the child stops on its way to exec, so the tracer must keep
// handling stops until execResult() answers). start() can install a seccomp filter just
// before exec: it depends on the probes, which are added after the fork.
//
// Wait statuses are waitpid(2)'s; exitCode() turns one into the shell's convention.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "probectl/result.hpp"

struct sock_filter;  // <linux/filter.h>: the seccomp program start() installs

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class HeldCommand {
  public:
    // Most BPF instructions start() accepts, the kernel's own limit (BPF_MAXINSNS): the
    // child reads them into a fixed buffer (it must not allocate between fork and exec).
    static constexpr std::size_t kMaxFilterLen = 4096;

    // No command: pid() is -1, held() false.
    HeldCommand() = default;
    // Looks argv[0] up in PATH (as execvp would) before it forks, so a missing command
    // fails here and the search's failed execs are not traced; then forks and returns once
    // the child is parked, before it execs. Call it before opening descriptors the command
    // must not inherit until exec. Errors: EINVAL (empty argv), ENOENT ("command not found
    // in PATH", or a path that does not exist), EACCES (not executable), errno of
    // pipe/fork, ECHILD (the child died before parking: the parent died meanwhile).
    // `adopt_orphans`: makes the calling process a child subreaper first (see above; errno
    // of prctl when that fails).
    static Result<HeldCommand> spawn(const std::vector<std::string>& argv,
                                     bool adopt_orphans = false);
    // The file spawn() would run for `name` (execvp's PATH search; a name with a '/' as it
    // is). Errors: ENOENT, EACCES, as spawn().
    static Result<std::string> findCommand(const std::string& name);
    HeldCommand(HeldCommand&& o) noexcept;
    // The command this one held is killed and reaped first (see the destructor).
    HeldCommand& operator=(HeldCommand&& o) noexcept;
    HeldCommand(const HeldCommand&) = delete;
    HeldCommand& operator=(const HeldCommand&) = delete;
    // Closes the pipes (a child still held exits 126), then SIGKILLs and reaps the child
    // unless it was reaped already (tryWait, terminate, reaped).
    ~HeldCommand();

    pid_t pid() const { return pid_; }
    // Spawned with adopt_orphans: the command's orphans are the caller's children.
    bool adoptsOrphans() const { return adopt_orphans_; }
    // Spawned and neither start()ed nor release()d.
    bool held() const { return go_fd_ >= 0; }

    // Lets the child exec and waits until it did. Errors: EINVAL (not held), the child's
    // errno of a failed exec ("cannot run 'CMD'": ENOENT, EACCES), errno of the pipe write.
    // Not for a ptrace tracer of the child: see start().
    Result<void> release();
    // Lets the child exec without waiting, installing `filter` first if it is not empty
    // (no_new_privs + SECCOMP_SET_MODE_FILTER). Errors: EINVAL (not held), errno of the
    // pipe write.
    Result<void> start();
    Result<void> start(const std::vector<sock_filter>& filter);
    // After start(): nullopt while the child has neither exec'd nor failed; then success
    // (exec closed the O_CLOEXEC pipe), or the child's errno of a failed exec or filter
    // install (E2BIG for a filter over kMaxFilterLen).
    std::optional<Result<void>> execResult();

    // Non-blocking wait (waitpid WNOHANG): the wait status once the child has ended.
    // Not for a ptrace tracer of the child, whose own wait loop reaps it: it reports
    // the status with reaped() instead.
    std::optional<int> tryWait();
    // The child was reaped elsewhere with this wait status.
    void reaped(int status);
    // The wait status, once reaped.
    std::optional<int> status() const { return status_; }
    // SIGTERM, up to `grace_ms` for it to exit, then SIGKILL; returns the wait status (the
    // one it ended with if it was reaped already; 0 without a command).
    int terminate(int grace_ms = 1000);

    // The shell's convention for a wait status: the exit code, or 128 + signal number.
    static int exitCode(int status);
    // "exited with status N" / "killed by signal N (NAME)"
    static std::string describeStatus(int status);

  private:
    void closePipes();
    void killAndReap();

    pid_t pid_ = -1;
    int go_fd_ = -1;   // write end: filter length (u32) + filter; EOF = give up
    int err_fd_ = -1;  // read end (O_NONBLOCK): errno from the child, EOF on exec
    std::optional<int> status_;
    std::string name_;
    bool adopt_orphans_ = false;
};

}  // namespace probectl
#pragma GCC visibility pop
