// The --seccomp-bpf filter program run over every syscall number: by a small classic-BPF
// interpreter here (every instruction kind the program uses), and loaded into the kernel
// in a child, whose traced syscalls then fail with ENOSYS (SECCOMP_RET_TRACE without a
// tracer) while the others run.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "probectl/syscall_meta.hpp"
#include "ptrace/seccomp.hpp"

namespace probectl::ptrace {
namespace {

// What the kernel's classic BPF would return for `d`.
std::uint32_t runFilter(const std::vector<sock_filter>& prog, const seccomp_data& d) {
    std::uint32_t a = 0;
    for (std::size_t pc = 0; pc < prog.size();) {
        const sock_filter& in = prog[pc];
        switch (in.code) {
            case BPF_LD | BPF_W | BPF_ABS:
                std::memcpy(&a, reinterpret_cast<const char*>(&d) + in.k, sizeof(a));
                pc += 1;
                break;
            case BPF_JMP | BPF_JA:
                pc += 1 + in.k;
                break;
            case BPF_JMP | BPF_JEQ | BPF_K:
                pc += 1 + (a == in.k ? in.jt : in.jf);
                break;
            case BPF_JMP | BPF_JGT | BPF_K:
                pc += 1 + (a > in.k ? in.jt : in.jf);
                break;
            case BPF_JMP | BPF_JGE | BPF_K:
                pc += 1 + (a >= in.k ? in.jt : in.jf);
                break;
            case BPF_RET | BPF_K:
                return in.k;
            default:
                ADD_FAILURE() << "instruction " << pc << ": code " << in.code;
                return 0;
        }
    }
    ADD_FAILURE() << "the program runs past its end";
    return 0;
}

constexpr std::uint32_t kHighest = 2100;  // above every number the sets below hold

void checkEveryNumber(const std::set<std::uint64_t>& nrs) {
    auto prog = seccompProgram(nrs);
    ASSERT_TRUE(prog) << prog.error().describe();
    ASSERT_LE(prog->size(), static_cast<std::size_t>(BPF_MAXINSNS));
    std::size_t wrong = 0;
    for (std::uint32_t nr = 0; nr <= kHighest && wrong < 5; ++nr) {
        seccomp_data d{};
        d.nr = static_cast<int>(nr);
        d.arch = AUDIT_ARCH_X86_64;
        const std::uint32_t want = nrs.count(nr) ? SECCOMP_RET_TRACE : SECCOMP_RET_ALLOW;
        const std::uint32_t got = runFilter(*prog, d);
        if (got != want) {
            ++wrong;
            ADD_FAILURE() << "syscall " << nr << " of " << nrs.size() << ": " << std::hex << got
                          << " instead of " << want;
        }
        d.arch = AUDIT_ARCH_I386;  // another ABI's numbers: never traced
        EXPECT_EQ(runFilter(*prog, d), SECCOMP_RET_ALLOW) << nr;
    }
}

// The first `n` syscalls of the x86-64 table, by number.
std::set<std::uint64_t> firstSyscalls(std::size_t n) {
    std::set<std::uint64_t> out;
    for (const SyscallName& s : builtinSyscallNames())
        if (out.size() < n)
            out.insert(static_cast<std::uint64_t>(s.nr));
    return out;
}

std::set<std::uint64_t> everyOther(std::uint64_t below) {
    std::set<std::uint64_t> out;
    for (std::uint64_t nr = 0; nr < below; nr += 2)
        out.insert(nr);
    return out;
}

TEST(SeccompFilter, TracesExactlyTheGivenSyscalls) {
    checkEveryNumber({});
    checkEveryNumber({SYS_execve});
    checkEveryNumber({0});
    checkEveryNumber({0, 1, 2, 7, 8, 59, 60, 334, 435});
    for (std::size_t n : {255u, 256u, 257u, 300u})
        checkEveryNumber(firstSyscalls(n));
    checkEveryNumber(firstSyscalls(builtinSyscallNames().size()));
    // No two numbers adjacent: one range each, the largest program there can be for them.
    checkEveryNumber(everyOther(600));
    checkEveryNumber(everyOther(2042));
}

TEST(SeccompFilter, RefusesWhatBpfCannotHold) {
    auto prog = seccompProgram(everyOther(2048));  // 1024 ranges: 4101 instructions
    ASSERT_FALSE(prog);
    EXPECT_EQ(prog.error().err, E2BIG);
    EXPECT_NE(prog.error().message.find("1024 syscalls"), std::string::npos)
        << prog.error().message;
    EXPECT_NE(prog.error().message.find("--seccomp-bpf"), std::string::npos);
}

// The kernel's own verdict on the program: accepted, and it stops exactly the traced
// syscalls (ENOSYS with nobody tracing) and lets the others run.
int childVerdict(const std::set<std::uint64_t>& nrs) {
    auto prog = seccompProgram(nrs);
    if (!prog)
        return 10;
    const pid_t pid = fork();
    if (pid == 0) {
        sock_fprog fp{static_cast<unsigned short>(prog->size()), prog->data()};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
            _exit(11);
        const bool ppid_traced = syscall(SYS_getppid) < 0 && errno == ENOSYS;
        const bool pid_traced = syscall(SYS_getpid) < 0 && errno == ENOSYS;
        _exit((ppid_traced ? 1 : 0) | (pid_traced ? 2 : 0));
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return 12;
    return WEXITSTATUS(st);
}

TEST(SeccompFilter, KernelLoadsItAndStopsOnlyTracedSyscalls) {
    static_assert(SYS_getppid % 2 == 0 && SYS_getpid % 2 == 1);
    EXPECT_EQ(childVerdict({SYS_getppid}), 1);
    EXPECT_EQ(childVerdict({SYS_getpid}), 2);
    EXPECT_EQ(childVerdict(everyOther(2042)), 1);  // 2049 instructions
    // Every syscall but the two _exit makes (ENOSYS from those would leave the child no
    // way out).
    auto all = firstSyscalls(builtinSyscallNames().size());
    all.erase(SYS_exit);
    all.erase(SYS_exit_group);
    EXPECT_EQ(childVerdict(all), 3);
}

}  // namespace
}  // namespace probectl::ptrace
