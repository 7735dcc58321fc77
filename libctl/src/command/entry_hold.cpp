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

Result<long> peek(pid_t pid, std::uint64_t addr) {
    errno = 0;
    const long w = ::ptrace(PTRACE_PEEKDATA, pid, addr, nullptr);
    if (errno)
        return makeError(errno, fmt::format("cannot read address {:#x} of pid {}", addr, pid));
    return w;
}

Result<void> poke(pid_t pid, std::uint64_t addr, long word) {
    if (::ptrace(PTRACE_POKEDATA, pid, addr, word) < 0)
        return makeError(errno, fmt::format("cannot write address {:#x} of pid {}", addr, pid));
    return {};
}

void cont(pid_t pid, int sig) {
    ::ptrace(PTRACE_CONT, pid, nullptr, sig);
}

}  // namespace

Result<void> addToU16(pid_t pid, std::uint64_t addr, int delta) {
    // A semaphore is 2-byte aligned, so it never straddles the aligned word.
    const std::uint64_t word_addr = addr & ~std::uint64_t{7};
    const unsigned shift = static_cast<unsigned>(addr - word_addr) * 8;
    auto w = peek(pid, word_addr);
    if (!w)
        return w.error();
    auto bits = static_cast<std::uint64_t>(*w);
    const auto v = static_cast<std::uint16_t>((bits >> shift) + static_cast<unsigned>(delta));
    bits = (bits & ~(std::uint64_t{0xffff} << shift)) | (std::uint64_t{v} << shift);
    return poke(pid, word_addr, static_cast<long>(bits));
}

Result<void> releaseToEntry(HeldCommand& cmd, const std::function<Result<void>(pid_t)>& at_entry) {
    const pid_t pid = cmd.pid();
    if (auto r = ptrace::seize(pid, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL); !r)
        return r;
    if (auto r = cmd.start(); !r) {
        ::ptrace(PTRACE_DETACH, pid, nullptr, 0);
        return r;
    }
    std::uint64_t entry = 0;
    long saved = 0;
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
            auto w = e ? peek(pid, *e) : Result<long>{e.error()};
            if (!w) {
                ::kill(pid, SIGKILL);
                return w.error();
            }
            entry = *e;
            saved = *w;
            if (auto r = poke(pid, entry, (saved & ~0xffL) | 0xcc); !r) {
                ::kill(pid, SIGKILL);
                return r;
            }
            armed = true;
            cont(pid, 0);
            continue;
        }
        if (s.kind == ptrace::StopKind::Signal && s.sig() == SIGTRAP && armed) {
            auto regs = ptrace::getRegs(pid);
            if (regs && regs->rip == entry + 1) {
                auto r = poke(pid, entry, saved);
                regs->rip = entry;
                if (r)
                    r = ptrace::setRegs(pid, *regs);
                if (!r) {
                    ::kill(pid, SIGKILL);
                    return r;
                }
                Result<void> done = at_entry(pid);
                ::ptrace(PTRACE_DETACH, pid, nullptr, 0);
                return done;
            }
        }
        // Anything else before the entry point (a signal, job control) goes on as it would.
        cont(pid, s.kind == ptrace::StopKind::Signal ? s.sig() : 0);
    }
}

}  // namespace probectl
