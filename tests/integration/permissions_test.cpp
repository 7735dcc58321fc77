// Privileges: without CAP_SYS_ADMIN or CAP_PERFMON every command is refused, and no record
// of another socket's probes ever reaches an unprivileged socket.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;

namespace {

// Runs in a forked child after dropping to uid/gid 1000; returns "" when every command was
// refused with EPERM and no record arrived, else what went wrong.
std::string unprivilegedChecks() {
    if (setgroups(0, nullptr) || setgid(1000) || setuid(1000))
        return "cannot drop privileges";
    auto c = probectl::Client::connect();
    if (!c)
        return "connect failed: " + c.error().describe();
    std::string bad;
    auto expectEperm = [&](const char* what, int err) {
        if (err != EPERM)
            bad += std::string(what) + " gave errno " + std::to_string(err) + "; ";
    };
    probectl::ProbeRequest req;
    req.symbol = "__x64_sys_getppid";
    auto add = c->addProbe(req);
    expectEperm("add", add ? 0 : add.error().err);
    auto list = c->listProbes();
    expectEperm("list", list ? 0 : list.error().err);
    auto flush = c->flush();
    expectEperm("flush", flush ? 0 : flush.error().err);
    auto filter = c->setSessionTgids({1});
    expectEperm("session-set", filter ? 0 : filter.error().err);
    auto del = c->removeProbe(1);
    expectEperm("remove", del ? 0 : del.error().err);
    size_t records = 0;
    auto got = c->poll(500, [&](const probectl::Event&) { records++; });
    if (records)
        bad += std::to_string(records) + " records reached an unprivileged socket; ";
    if (!got && got.error().err != EINTR)
        bad += "poll: " + got.error().describe();
    return bad;
}

}  // namespace

TEST(Permissions, UnprivilegedGetsEpermAndNoRecords) {
    // A privileged session records every getppid() on the machine while the unprivileged
    // process tries its luck: there are records to leak.
    Workload spinner({itest::workload("spin_getppid")});
    auto s = probectl::Session::open();
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("syscall:getppid").ok());
    spinner.release();

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(fds[0]);
        std::string bad = unprivilegedChecks();
        ssize_t n = write(fds[1], bad.data(), bad.size());
        _exit(n < 0 ? 2 : bad.empty() ? 0 : 1);
    }
    close(fds[1]);
    std::string report;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
        report.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << report;
    EXPECT_EQ(report, "");

    size_t records = 0;
    auto st = s->stop([&](const probectl::Event&) { records++; });
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_GT(records, 0u) << "the privileged session itself must have seen records";
}
