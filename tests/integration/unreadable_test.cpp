// Memory a traced program may use but its tracer may not read, and set-user-ID programs,
// under the ptrace backend: said plainly, never passed off as a bad pointer or a program
// that misbehaves on its own.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Runs `cmd` through sh as uid/gid 1000 in a child; its status and output.
Ran shAsUser(const std::string& cmd) {
    int out[2];
    if (pipe(out))
        return {};
    const pid_t child = fork();
    if (child == 0) {
        close(out[0]);
        if (setgroups(0, nullptr) || setgid(1000) || setuid(1000))
            _exit(99);
        const Ran r = sh(cmd);
        (void)!write(out[1], r.out.data(), r.out.size());
        _exit(r.status & 0xff);
    }
    close(out[1]);
    Ran r;
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;)
        r.out.append(buf, static_cast<std::size_t>(n));
    close(out[0]);
    int st = 0;
    waitpid(child, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

}  // namespace

// write(2) from a memfd_secret page: the kernel copies it for the program, process_vm_readv
// refuses it to the tracer.
TEST(Unreadable, PtraceBackendNamesWhyItCouldNotRead) {
    const std::string prog = itest::workload("secret_write");
    if (sh(prog).status == 77)
        GTEST_SKIP() << "no memfd_secret on this kernel";
    const Ran p = sh("probectl trace --backend=ptrace --syscalls=write -- " + prog + " 2>&1");
    EXPECT_EQ(p.status, 0) << p.out;
    EXPECT_THAT(p.out, HasSubstr("write(1, <unreadable: EFAULT>, 7)")) << p.out;
    // The kernel backend reads in the program's own context, where the page is mapped.
    const Ran k = sh("probectl trace --syscalls=write -- " + prog + " 2>&1");
    EXPECT_EQ(k.status, 0) << k.out;
    EXPECT_THAT(k.out, HasSubstr("write(1, \"secret\\n\", 7)")) << k.out;
}

// A set-user-ID root program traced by an unprivileged user: exec keeps the user's ids.
TEST(Unreadable, SetuidExecUnderPtraceWarnsItRunsUnprivileged) {
    // The VM's id is a busybox applet, which drops set-user-ID privileges itself.
    ASSERT_EQ(sh("cp " + itest::workload("print_euid") +
                 " /tmp/suid_id && chown 0:0 /tmp/suid_id && chmod 4755 /tmp/suid_id")
                  .status,
              0);
    const Ran plain = shAsUser("/tmp/suid_id 2>&1");
    ASSERT_EQ(plain.out, "0\n") << "the set-user-ID bit has no effect here";
    const Ran p =
        shAsUser("probectl trace --backend=ptrace --syscalls=geteuid -- /tmp/suid_id 2>&1");
    EXPECT_THAT(p.out, HasSubstr("1000\n")) << p.out;
    EXPECT_THAT(p.out, HasSubstr("ran the set-user-ID file /tmp/suid_id without its privileges"))
        << p.out;
    // Root's tracer has CAP_SYS_PTRACE: exec gives the ids, and nothing is said.
    const Ran r = sh("probectl trace --backend=ptrace --syscalls=geteuid -- /tmp/suid_id 2>&1");
    EXPECT_THAT(r.out, Not(HasSubstr("set-user-ID"))) << r.out;
}
