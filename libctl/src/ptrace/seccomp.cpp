// The --seccomp-bpf filter: SECCOMP_RET_TRACE for the traced syscalls, SECCOMP_RET_ALLOW
// for everything else, so the tracee stops only where a probe wants it (seccomp(2),
// Documentation/userspace-api/seccomp_filter.rst for struct seccomp_data).
#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cstddef>

#include "ptrace/engine.hpp"

namespace probectl::ptrace {

std::vector<sock_filter> Engine::seccompFilter() const {
    std::vector<sock_filter> f;
    auto stmt = [&](unsigned short code, unsigned k) { f.push_back(BPF_STMT(code, k)); };
    auto jump = [&](unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
        f.push_back(BPF_JUMP(code, k, jt, jf));
    };
    // Another ABI (i386 via int 0x80) numbers syscalls differently: never trace it.
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
    const std::size_t n = traced_syscalls_.size();
    std::size_t i = 0;
    for (std::uint64_t nr : traced_syscalls_) {
        // On a match jump over the remaining tests and the ALLOW to the TRACE.
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr),
             static_cast<unsigned char>(n - i), 0);
        ++i;
    }
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
    return f;
}

}  // namespace probectl::ptrace
