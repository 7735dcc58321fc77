#include "command/entry_hold.hpp"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>

#include "core/x86.hpp"
#include "ptrace/ptrace_ops.hpp"

namespace probectl {

namespace {

// AT_ENTRY of /proc/PID/auxv (pairs of 64-bit words; proc(5)).
Result<std::uint64_t> entryPoint(pid_t pid) {
    const std::string path = fmt::format("/proc/{}/auxv", pid);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot read {}", path));
    std::uint64_t pair[2];
    std::optional<std::uint64_t> entry;
    while (::read(fd, pair, sizeof(pair)) == static_cast<ssize_t>(sizeof(pair)) &&
           pair[0] != AT_NULL)
        if (pair[0] == AT_ENTRY)
            entry = pair[1];
    ::close(fd);
    if (!entry)
        return makeError(ENOENT, fmt::format("{} has no AT_ENTRY", path));
    return *entry;
}

void cont(pid_t pid, int sig) {
    ::ptrace(PTRACE_CONT, pid, nullptr, sig);
}

}  // namespace

Result<void> addToU16(const ptrace::ProcMem& mem, std::uint64_t addr, int delta) {
    std::uint16_t v = 0;
    if (auto r = mem.read(addr, &v, sizeof(v)); !r)
        return r;
    v = static_cast<std::uint16_t>(v + delta);
    return mem.write(addr, &v, sizeof(v));
}

Result<void> releaseToEntry(
    HeldCommand& cmd, const std::function<Result<void>(pid_t, const ptrace::ProcMem&)>& at_entry) {
    const pid_t pid = cmd.pid();
    if (auto r = ptrace::seize(pid, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL); !r)
        return r;
    if (auto r = cmd.start(); !r) {
        ::ptrace(PTRACE_DETACH, pid, nullptr, 0);
        return r;
    }
    // Bound to the address space the exec makes: opened at the exec event.
    ptrace::ProcMem mem;
    std::uint64_t entry = 0;
    std::uint8_t saved = 0;
    bool armed = false;
    for (;;) {
        int st = 0;
        if (ptrace::waitThread(pid, &st) < 0)
            return makeError(errno, fmt::format("waiting for pid {}", pid));
        const ptrace::Stop s = ptrace::classify(st);
        if (s.kind == ptrace::StopKind::Exited) {
            cmd.reaped(st);
            if (auto e = cmd.execResult(); e && !*e)
                return *e;
            return makeError(ECHILD, fmt::format("the command {} before its entry point",
                                                 HeldCommand::describeStatus(st)));
        }
        if (s.kind == ptrace::StopKind::Event && s.event() == PTRACE_EVENT_EXEC) {
            // The O_CLOEXEC error pipe closed with the exec: this reads its EOF.
            (void)cmd.execResult();
            auto e = entryPoint(pid);
            auto m = e ? ptrace::ProcMem::open(pid) : Result<ptrace::ProcMem>{e.error()};
            auto r = m ? m->read(*e, &saved, 1) : Result<void>{m.error()};
            if (r)
                r = m->write(*e, &kInt3, 1);
            if (!r) {
                ::kill(pid, SIGKILL);
                return r;
            }
            mem = std::move(*m);
            entry = *e;
            armed = true;
            cont(pid, 0);
            continue;
        }
        if (s.kind == ptrace::StopKind::Signal && s.sig() == SIGTRAP && armed) {
            auto regs = ptrace::getRegs(pid);
            if (regs && regs->rip == entry + 1) {
                auto r = mem.write(entry, &saved, 1);
                regs->rip = entry;
                if (r)
                    r = ptrace::setRegs(pid, *regs);
                if (!r) {
                    ::kill(pid, SIGKILL);
                    return r;
                }
                Result<void> done = at_entry(pid, mem);
                ::ptrace(PTRACE_DETACH, pid, nullptr, 0);
                return done;
            }
        }
        // Anything else before the entry point (a signal, job control) goes on as it would.
        cont(pid, s.kind == ptrace::StopKind::Signal ? s.sig() : 0);
    }
}

}  // namespace probectl
