// PtraceSession: the ptrace backend's Tracer (tracer.hpp). The same shape as Session
// (session.hpp) -- open, add specs, poll/run with Event callbacks, stop() -> SessionStats --
// but built on ptrace(2)
// instead of probectl.ko, so it works on a kernel without the module (the lab baseline of
// what gdb, strace and ltrace pay per event).
//
// How each kind is done (x86-64 only):
//  uprobe:PATH:...      an int3 (0xCC) written over the first byte of the instruction at
//                       the spec's file offset, in every traced process that maps PATH
//                       (process address = mapping start + file offset - mapping offset,
//                       /proc/PID/maps). On the trap the tracer records the event from the
//                       registers, puts the byte back, single-steps the thread and writes
//                       the int3 again.
//  uretprobe:PATH:...   an entry breakpoint as above; at entry the return address is read
//                       from [rsp] and a breakpoint is put there. A return is paired with its
//                       entry by thread and stack pointer (rsp after `ret` = entry rsp + 8),
//                       so recursion pairs every return.
//  usdt:PATH:...        a breakpoint on every site of the probe; the semaphore, if any, is
//                       raised in each process while the probe exists.
//  syscall:NAME         PTRACE_SYSCALL stops (or, with ptrace_seccomp, a seccomp filter
//                       that stops only on the traced syscalls, like strace --seccomp-bpf).
//                       Arguments come from the entry stop and the return value from the
//                       exit stop (PTRACE_GET_SYSCALL_INFO); one event per call, like strace.
// kprobe, kretprobe and tracepoint specs are refused (EOPNOTSUPP): ptrace cannot see the
// kernel.
//
// Costs (why this backend exists: to be compared, see the 2007 OLS paper "Ptrace, Utrace,
// Uprobes: Lightweight, Dynamic Tracing of User Apps"): every breakpoint hit is a trap, two
// context switches to the tracer and back, several ptrace requests (GETREGS, SETREGS, two
// byte writes), a single-step (another trap and two more switches), and the stop of every
// other thread of the process around the step; every traced syscall is two stops.
//
// Threads: while one thread single-steps over a breakpoint's original byte, every other
// thread of its address space is stopped (PTRACE_INTERRUPT), so none can run through the
// probe while the int3 is out: hit counts are exact in multithreaded processes. The cost
// grows with the thread count (one interrupt and one wait per other thread per hit).
//
// Processes: fork children carry copies of the int3 bytes. Followed, they get their own
// breakpoint table (a copy); not followed, the bytes are restored in the child and it is
// detached before it runs. A vfork child shares the parent's memory, so it stays traced
// (silently, unless followed) until it execs or exits. A clone() child that shares memory
// without being a thread or a vfork (CLONE_VM alone) is treated like a fork: not supported.
// After exec the probes are placed again in the new image, and again whenever the dynamic
// linker changes its link map (a breakpoint on ld.so's _dl_debug_state, the r_debug
// rendezvous debuggers use), so libraries loaded later (dlopen too) are probed.
//
// Event fields: timestamp_ns is the tracer's CLOCK_MONOTONIC when it handled the stop;
// cpu is the tracee's rseq cpu_id (what sched_getcpu() in the tracee says; 0 without
// rseq); comm is read from /proc/TID/comm once per thread and again after exec; ip is the
// probed address in the process (for returns: the function entry). Syscall events are
// returns (is_return, syscall_returned): the entry's six arguments, the exit's retval and
// the entry-to-exit latency_ns (exit and exit_group, which never return, are reported at
// entry, not returns). Fetch arguments are not implemented in this backend.
//
// Waiting: poll() reaps with waitpid(-1, __WALL), and blocks SIGCHLD in the calling thread
// while it waits (signalfd). The process using a PtraceSession must not wait for its other
// children while the session traces (their exit status could be consumed here), and must
// not set SIGCHLD to SIG_IGN. All calls must come from the thread that called open():
// ptrace requests are only accepted from the tracing thread.
//
// If the tracer dies without stop() (SIGKILL), the kernel detaches its tracees and lets them
// run, but cannot restore the bytes this session patched: a process attached with -p then
// dies of SIGTRAP the next time it executes a probed instruction (or a pending uretprobe
// return). A command started by the session is killed with its tracer (PTRACE_O_EXITKILL),
// as the kernel backend's CLI kills CMD.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct PtraceSessionOptions {
    // Processes to attach to (every thread of each, PTRACE_SEIZE), as thread-group ids.
    std::vector<std::uint32_t> tgids;
    // A command to start (argv[0] looked up in PATH). It is forked and held before exec
    // (HeldCommand) until release(), so the probes are in place for its first instruction.
    std::vector<std::string> command;
    // Adopt the command's orphans (HeldCommand::spawn's adopt_orphans): this process
    // becomes a child subreaper for the rest of its life, and killCommand() kills every
    // process under it, the caller's other children included. For a program whose only
    // child is the command (the probectl CLI). Off: killCommand() takes the command and
    // its descendants, and a process the command daemonised runs on.
    bool adopt_orphans = false;
    // Also trace what the traced processes fork (fork, vfork, clone without CLONE_THREAD)
    // from now on, and what those exec (strace -f). Threads are always traced. Without it,
    // a forked child gets the original bytes back in its copy of memory and is detached.
    bool follow = false;
    // syscall: specs stop only on the traced syscalls through a seccomp filter installed in
    // the command before exec (SECCOMP_RET_TRACE, PTRACE_O_TRACESECCOMP; Linux 4.8+ order
    // of stops). Only with `command` (a running process cannot be given a filter), like
    // strace --seccomp-bpf. The filter stays in the command and its children after stop():
    // untraced, they see ENOSYS from the traced syscalls, as seccomp(2) documents for
    // SECCOMP_RET_TRACE without a tracer; so the command is killed when the session ends.
    bool seccomp = false;
    // Library names and paths of uprobe/usdt specs are found as this process sees them
    // (0: as the tracer sees them; see UserResolveOptions::pid).
    pid_t resolve_pid = 0;
    // Resolutions of user-space specs to reuse and keep (UserResolveCache); null: none.
    std::shared_ptr<UserResolveCache> resolve_cache;
    // Bytes of user stack (1..kUstackSnapshotMax; 0: none) copied from the stack pointer up
    // at every uprobe, uretprobe and USDT hit, after the registers, into a last value named
    // "ustack" (FetchedValue::snapshot): the layout of the kernel's store-ustack-snapshot,
    // for UserSymbolizer::snapshotLines (`trace --ustack=dwarf`). A return's registers are
    // those at the return address.
    std::uint32_t ustack_snapshot = 0;
    // add()'s first step, on every spec: an error refuses it (nothing is placed), as
    // SessionOptions::prepare refuses a spec the kernel backend's aggregation cannot fill,
    // so a glob skips the name and goes on (an aggregation's latency or $retval of exit and
    // exit_group, which never return) where a later refusal would end the whole run.
    std::function<Result<void>(const ProbeSpec&)> check;
};

// A probe this session added.
struct PtraceProbe {
    std::uint32_t id = 0;  // 1, 2, ... in the order added
    std::string spec;      // text as given
    SpecKind kind = SpecKind::Uprobe;
    // hits (uretprobe, syscall: entries), each an event unless rejected or unreturned
    std::uint64_t hits = 0;
    std::uint64_t rejected = 0;   // hits the spec's predicate (`if ...`) rejected
    std::uint64_t delivered = 0;  // events passed to a callback
    // Entries whose return was never seen, with no event: a uretprobe's (the frame was
    // unwound by longjmp or an exception, the thread died, or the session ended first) and
    // a syscall's still in progress when the session ended (it goes on after the detach).
    // A syscall whose thread died inside it is not one: the call ended with the thread,
    // an event with is_return and no return value (Event::parts without kRecordPartRetval).
    std::uint64_t unreturned = 0;
};

class PtraceSession : public Tracer {
  public:
    // Attaches to every thread of options.tgids and starts options.command held. Errors:
    // ESRCH (no such process), EPERM (ptrace not allowed: other user, Yama ptrace_scope,
    // already traced, e.g. by a debugger), EINVAL (seccomp without a command, nothing to
    // trace), errno of fork/pipe. On error nothing stays attached.
    static Result<PtraceSession> open(PtraceSessionOptions options);

    PtraceSession(PtraceSession&&) noexcept;
    PtraceSession& operator=(PtraceSession&&) noexcept;
    PtraceSession(const PtraceSession&) = delete;
    PtraceSession& operator=(const PtraceSession&) = delete;
    // stop() without a callback if it was not called; kills a command still running.
    ~PtraceSession() override;

    std::string_view backend() const override { return "ptrace"; }

    // Parses and resolves (resolveUserSpecAll for uprobe/uretprobe/usdt, the built-in
    // syscall table for syscall:) and arms the probe in every traced process that maps the
    // file (the others when they map it: after exec, and when the dynamic linker loads
    // libraries); returns its id. Errors, each message starting with the spec text:
    // EINVAL (spec syntax, column and caret; a syscall spec added after release() in
    // seccomp mode), EOPNOTSUPP (kprobe/kretprobe: kernel only),
    // ENOENT (unknown syscall name; resolution errors of user_target.hpp), EIO (a byte could
    // not be written into a process).
    Result<std::uint32_t> add(std::string_view spec);
    Result<std::uint32_t> add(const ProbeSpec& spec) override;

    // Lets the held command exec (with the seccomp filter installed first in seccomp mode),
    // handling stops until the exec has happened; events produced meanwhile (syscall:execve)
    // wait for the next poll(). Error if exec failed (errno from the child: ENOENT, EACCES)
    // or there is no held command (EINVAL).
    Result<void> release();
    // Tracer::start(): release() when there is a held command, else nothing.
    Result<void> start() override;

    // Handles ptrace stops for up to timeout_ms (< 0: until at least one event, 0: only what
    // is pending now) and delivers the events they produce; returns as soon as a batch of
    // stops produced events (threads that hit breakpoints without pause never let a batch
    // end by itself: it also ends at the timeout, or after 4096 stops). Returns the number
    // delivered (0 on timeout, and at once when no thread is traced any more: see done()).
    // EINTR (a signal arrived while waiting) is returned as an error so a signal handler
    // can end a loop; run() handles it.
    // run(): Tracer::run, which ends once nothing is traced any more (done()).
    Result<std::size_t> poll(int timeout_ms, const EventCallback& cb) override;

    // Ends tracing: stops every traced thread, delivers the hits already taken (a thread
    // stopped on a breakpoint), puts every patched byte back in every process, lowers USDT
    // semaphores, and detaches every thread (a pending signal is delivered on detach).
    // The command, if any, keeps running untraced (see commandStatus/terminateCommand).
    // A second call returns the same counters.
    Result<SessionStats> stop(const EventCallback& cb) override;

    // Every traced thread's end but those of threads whose status ptrace did not give (a
    // thread another one's exec replaced, or one reaped elsewhere), of the held command
    // before its exec, and of forked children not followed.
    bool watchTaskEnds(TaskEndCallback cb) override;
    // True once every traced thread has exited (or after stop()).
    bool done() const override;
    // The command's wait status once it ended (it is reaped by poll while traced).
    std::optional<int> commandStatus() const override;
    pid_t commandPid() const override;
    // After stop(): SIGTERM to the command, up to grace_ms for it to exit, then SIGKILL;
    // returns its wait status (the one it ended with if it had already ended).
    std::optional<int> terminateCommand(int grace_ms = 1000) override;
    // Before stop(): SIGKILL to the command and, with follow, to every process traced as its
    // descendant (one forked meanwhile dies as it is attached); their ends come through
    // poll, and done() once the last one came. True unless nothing was traced.
    bool killCommand() override;

    const std::vector<PtraceProbe>& probes() const;
    // Thread ids traced now.
    std::vector<pid_t> threads() const;

  private:
    struct Impl;  // src/ptrace/ptrace_session.cpp
    explicit PtraceSession(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
