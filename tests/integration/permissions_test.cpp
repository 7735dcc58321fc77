// Privileges: without CAP_SYS_ADMIN or CAP_PERFMON every command is refused, and no record
// of another socket's probes ever reaches an unprivileged socket. With CAP_PERFMON alone a
// caller may change only its own probes.
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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
    auto added = c->addSessionTgids({1});
    expectEperm("session-add", added ? 0 : added.error().err);
    auto counts = c->getSessionFilter();
    expectEperm("session-get", counts ? 0 : counts.error().err);
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

// Becomes uid/gid 1000 with CAP_PERFMON as its only capability. Returns "" or what failed.
std::string dropToPerfmonOnly() {
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, nullptr) || setgid(1000) || setuid(1000))
        return "cannot become uid 1000";
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    data[CAP_PERFMON / 32].effective = data[CAP_PERFMON / 32].permitted = 1u << (CAP_PERFMON % 32);
    if (syscall(SYS_capset, &hdr, data))
        return "capset CAP_PERFMON failed: " + std::to_string(errno);
    return "";
}

// The child's side of OthersProbesAreNotPerfmonsToChange: "" or what went wrong.
std::string perfmonChecks(std::uint32_t owned, std::uint32_t persistent) {
    if (std::string e = dropToPerfmonOnly(); !e.empty())
        return e;
    auto c = probectl::Client::connect();
    if (!c)
        return "connect failed: " + c.error().describe();
    std::string bad;
    auto expect = [&](const char* what, const probectl::Result<void>& r, int want) {
        const int got = r ? 0 : r.error().err;
        if (got != want)
            bad += std::string(what) + " gave errno " + std::to_string(got) + " (" +
                   (r ? std::string("ok") : r.error().describe()) + "); ";
        else if (want == EPERM && r.error().describe().find("CAP_SYS_ADMIN") == std::string::npos)
            bad += std::string(what) +
                   ": the refusal does not say what is needed: " + r.error().describe() + "; ";
    };
    expect("remove another session's probe", c->removeProbe(owned), EPERM);
    expect("disable another session's probe", c->disable(owned), EPERM);
    expect("enable another session's probe", c->enable(owned), EPERM);
    expect("remove root's persistent probe", c->removeProbe(persistent), EPERM);
    expect("disable root's persistent probe", c->disable(persistent), EPERM);
    // Its own: a session probe, and a persistent one changed from a second socket.
    probectl::ProbeRequest req;
    req.symbol = "__x64_sys_getppid";
    auto mine = c->addProbe(req);
    if (!mine)
        return bad + "CAP_PERFMON add failed: " + mine.error().describe();
    expect("disable own probe", c->disable(mine->id), 0);
    expect("remove own probe", c->removeProbe(mine->id), 0);
    req.flags = probectl::kProbeFlagPersistent;
    auto pers = c->addProbe(req);
    if (!pers)
        return bad + "CAP_PERFMON persistent add failed: " + pers.error().describe();
    auto other = probectl::Client::connect();
    if (!other)
        return bad + "second connect failed";
    expect("disable own persistent probe", other->disable(pers->id), 0);
    expect("remove own persistent probe", other->removeProbe(pers->id), 0);
    return bad;
}

// Runs `checks` in a forked child; returns its report ("" = all good).
template <class F>
std::string inChild(F checks) {
    int fds[2];
    if (pipe(fds))
        return "pipe failed";
    pid_t child = fork();
    if (child < 0)
        return "fork failed";
    if (child == 0) {
        close(fds[0]);
        std::string bad = checks();
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
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && report.empty()))
        report += "child ended with status " + std::to_string(status);
    return report;
}

// The CLI as uid 1000: what it says the user needs, and that what it suggests works.
std::string unprivilegedCliChecks() {
    if (setgroups(0, nullptr) || setgid(1000) || setuid(1000))
        return "cannot drop privileges";
    std::string bad;
    const itest::Ran k = itest::sh("probectl trace syscall:getppid -- true");
    if (k.status != 1 || k.out.find("sudo") == std::string::npos ||
        k.out.find("--backend=ptrace") == std::string::npos ||
        k.out.find("tgid filter") != std::string::npos)
        bad += "kernel backend: status " + std::to_string(k.status) + ": " + k.out + "; ";
    const itest::Ran p = itest::sh("probectl trace --backend=ptrace syscall:getppid -- true");
    if (p.status != 0)
        bad += "ptrace backend: status " + std::to_string(p.status) + ": " + p.out + "; ";
    // tracefs is root's: its syscall events are out of reach, not unmounted.
    if (p.out.find("is tracefs mounted") != std::string::npos ||
        (p.out.find("syscall arguments are unknown") != std::string::npos &&
         p.out.find("run as root") == std::string::npos))
        bad += "ptrace backend's tracefs note: " + p.out + "; ";
    const itest::Ran c = itest::sh("probectl count syscall:getppid -- true");
    if (c.status != 1 || c.out.find("sudo") == std::string::npos)
        bad += "count: status " + std::to_string(c.status) + ": " + c.out + "; ";
    // list, and the commands that change probes, said only the module's refusal.
    for (const char* cmd :
         {"list", "add kprobe:do_nanosleep", "remove --all", "enable 1", "disable 1"}) {
        const itest::Ran r = itest::sh(std::string("probectl ") + cmd);
        if (r.status != 1 ||
            r.out.find("needs root (CAP_SYS_ADMIN or CAP_PERFMON)") == std::string::npos ||
            r.out.find("sudo") == std::string::npos ||
            r.out.find("--backend=ptrace") != std::string::npos)
            bad += std::string(cmd) + ": status " + std::to_string(r.status) + ": " + r.out + "; ";
    }
    // Without tracefs no subsystem is known: never "no tracepoint matches".
    const itest::Ran t = itest::sh("probectl symbols 'tracepoint:sched:*'");
    if (t.out.find("no tracepoint matches") != std::string::npos ||
        (t.status != 0 && t.out.find("tracefs") == std::string::npos))
        bad += "symbols: status " + std::to_string(t.status) + ": " + t.out + "; ";
    return bad;
}

}  // namespace

// A user without privileges is told what is needed and what works without them.
TEST(Permissions, UnprivilegedCliSaysSudoOrPtrace) {
    EXPECT_EQ(inChild(unprivilegedCliChecks), "");
}

// Tracing is CAP_PERFMON's, but another user's trace is not: a caller without
// CAP_SYS_ADMIN cannot remove, disable or enable probes it does not own.
TEST(Permissions, OthersProbesAreNotPerfmonsToChange) {
    auto root = probectl::Client::connect();
    ASSERT_TRUE(root.ok()) << why(root);
    probectl::ProbeRequest req;
    req.symbol = "__x64_sys_getppid";
    auto owned = root->addProbe(req);
    ASSERT_TRUE(owned.ok()) << why(owned);
    req.flags = probectl::kProbeFlagPersistent;
    auto persistent = root->addProbe(req);
    ASSERT_TRUE(persistent.ok()) << why(persistent);

    EXPECT_EQ(inChild([&] { return perfmonChecks(owned->id, persistent->id); }), "");

    // Nothing the child was refused happened: both probes are there and enabled.
    auto list = root->listProbes();
    ASSERT_TRUE(list.ok());
    int seen = 0;
    for (const auto& p : *list)
        if (p.id == owned->id || p.id == persistent->id) {
            ++seen;
            EXPECT_TRUE(p.enabled()) << "probe " << p.id;
        }
    EXPECT_EQ(seen, 2);
    // CAP_SYS_ADMIN may change anyone's: root removes the persistent one from a new socket.
    auto admin = probectl::Client::connect();
    ASSERT_TRUE(admin.ok());
    EXPECT_TRUE(admin->removeProbe(persistent->id).ok());
    EXPECT_TRUE(admin->disable(owned->id).ok());
}

TEST(Permissions, UnprivilegedGetsEpermAndNoRecords) {
    // A privileged session records every getppid() on the machine while the unprivileged
    // process tries its luck: there are records to leak.
    Workload spinner({itest::workload("spin_getppid")});
    auto s = probectl::Session::open();
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("syscall:getppid").ok());
    spinner.release();

    EXPECT_EQ(inChild(unprivilegedChecks), "");

    size_t records = 0;
    auto st = s->stop([&](const probectl::Event&) { records++; });
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_GT(records, 0u) << "the privileged session itself must have seen records";
}
