// The --seccomp-bpf filter: SECCOMP_RET_TRACE for the traced syscalls, SECCOMP_RET_ALLOW
// for everything else, so the tracee stops only where a probe wants it (seccomp(2),
// Documentation/userspace-api/seccomp_filter.rst for struct seccomp_data).
#include "ptrace/seccomp.hpp"

#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cerrno>
#include <cstddef>

#include "ptrace/engine.hpp"

namespace probectl::ptrace {

Result<std::vector<sock_filter>> seccompProgram(const std::set<std::uint64_t>& nrs) {
    // Runs of consecutive numbers: --syscalls=all is a few of them, not hundreds of tests.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (std::uint64_t nr : nrs) {
        if (!ranges.empty() && ranges.back().second + 1 == nr)
            ranges.back().second = nr;
        else
            ranges.emplace_back(nr, nr);
    }
    const std::size_t size = 4 + 4 * ranges.size() + 1;
    if (size > BPF_MAXINSNS)
        return makeError(E2BIG, fmt::format("the seccomp filter for {} syscalls ({} ranges of "
                                            "numbers) needs {} instructions, more than the "
                                            "kernel's {}: trace fewer syscalls, or drop "
                                            "--seccomp-bpf",
                                            nrs.size(), ranges.size(), size, BPF_MAXINSNS));
    std::vector<sock_filter> f;
    f.reserve(size);
    auto stmt = [&](unsigned short code, unsigned k) { f.push_back(BPF_STMT(code, k)); };
    auto jump = [&](unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
        f.push_back(BPF_JUMP(code, k, jt, jf));
    };
    // Another ABI (i386 via int 0x80) numbers syscalls differently: never trace it.
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
    // Ranges in ascending order, 4 instructions each, so no jump goes further than the next
    // range (conditional jump offsets are 8 bits: a chain jumping to one shared TRACE at its
    // end cannot pass 255 tests). Above the range: the next one. Below it: above every
    // earlier range and below every later one, so ALLOW.
    for (const auto& [lo, hi] : ranges) {
        jump(BPF_JMP | BPF_JGT | BPF_K, static_cast<unsigned>(hi), 3, 0);
        jump(BPF_JMP | BPF_JGE | BPF_K, static_cast<unsigned>(lo), 0, 1);
        stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    }
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    return f;
}

Result<std::vector<sock_filter>> Engine::seccompFilter() const {
    return seccompProgram(traced_syscalls_);
}

}  // namespace probectl::ptrace
