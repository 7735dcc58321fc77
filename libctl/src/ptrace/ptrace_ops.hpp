// Thin wrappers over the ptrace(2) requests and wait statuses the backend uses, so the
// engine reads as decisions rather than as errno plumbing. Request semantics: ptrace(2)
// (man-pages 6.x), sections "Stopped states" and "PTRACE_SEIZE" in particular.
#pragma once

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <string>

#include "probectl/result.hpp"

namespace probectl::ptrace {

// What a waitpid status of a traced thread means (ptrace(2) "Stopped states").
enum class StopKind {
    Exited,     // WIFEXITED / WIFSIGNALED: the thread is gone
    Syscall,    // syscall-enter or -exit stop (SIGTRAP | 0x80, PTRACE_O_TRACESYSGOOD)
    Event,      // PTRACE_EVENT_* stop other than PTRACE_EVENT_STOP (event() says which)
    Interrupt,  // PTRACE_EVENT_STOP with SIGTRAP: PTRACE_INTERRUPT or a new child's first stop
    GroupStop,  // PTRACE_EVENT_STOP with a stopping signal: job control (SIGSTOP, SIGTSTP...)
    Signal,     // signal-delivery-stop; SIGTRAP here may be a breakpoint or a single-step
};

struct Stop {
    StopKind kind = StopKind::Exited;
    int status = 0;  // the raw wait status
    int sig() const;
    int event() const { return status >> 16; }
};

Stop classify(int status);

// The options every tracee gets (fork/vfork/clone/exec events, TRACESYSGOOD).
unsigned long baseOptions();

// PTRACE_SEIZE with `options`; errno as Error naming the tid (EPERM: no permission or
// already traced; ESRCH: gone).
Result<void> seize(pid_t tid, unsigned long options);
// Blocking waitpid(tid, __WALL), EINTR retried. -1 with errno on failure (ECHILD: gone).
pid_t waitThread(pid_t tid, int* status);

Result<user_regs_struct> getRegs(pid_t tid);
Result<void> setRegs(pid_t tid, const user_regs_struct& regs);
Result<unsigned long> eventMsg(pid_t tid);

// Thread's comm now (/proc/TID/comm without the newline /proc adds; a comm may hold any
// byte but NUL, a newline too); nullopt when unreadable (the thread is gone).
std::optional<std::string> readComm(pid_t tid);
// Real uid of thread `tid` (first field of Uid: in /proc/TID/status), as the kernel's
// current_uid(); 0 if unreadable.
std::uint32_t readUid(pid_t tid);
// Whether SIGTRAP is pending for the thread itself (/proc/TID/status SigPnd, proc(5)).
bool sigtrapPending(pid_t tid);

// CLOCK_MONOTONIC, ns: the clock of Event::timestamp_ns.
std::uint64_t monotonicNowNs();

}  // namespace probectl::ptrace
