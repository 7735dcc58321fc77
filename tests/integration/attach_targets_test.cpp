// What -p PID attaches to when the process does not see the files as we do: a process in
// another mount namespace with another file mounted at the probed path (resolved through
// /proc/PID/root, which is also accepted as a spec's path, as is /proc/PID/exe); a process
// whose binary was replaced on disk (its own mapping is probed, not the new file); with -f,
// the children the process has at attach time.
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"
#include "probectl/user_target.hpp"

using itest::why;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

bool sameFile(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

// `real` run as `at` in a mount namespace of its own, where `real` is bind-mounted on `at`;
// in ours `at` stays another file. Killed and reaped on destruction.
class OtherNamespace {
  public:
    OtherNamespace(const std::string& real, const std::string& at, std::vector<std::string> args) {
        pid_ = fork();
        if (pid_ == 0) {
            std::vector<char*> argv;
            for (auto& a : args)
                argv.push_back(a.data());
            argv.push_back(nullptr);
            if (unshare(CLONE_NEWNS) == 0 &&
                mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                mount(real.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) == 0)
                execv(at.c_str(), argv.data());
            _exit(127);
        }
        const std::string exe = "/proc/" + std::to_string(pid_) + "/exe";
        for (int i = 0; i < 500 && !sameFile(exe, real); i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ~OtherNamespace() {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }

  private:
    pid_t pid_ = -1;
};

// Ours: /tmp/ns-app is unwind_target (no USDT probes); theirs: uprobe_target, whose
// `hold` mode fires usdt pc:hold every 10 ms.
struct NsFixture {
    const std::string at = "/tmp/ns-app";
    NsFixture() { itest::sh("cp " + itest::workload("unwind_target") + " " + at); }
    OtherNamespace start() const {
        return OtherNamespace(itest::workload("uprobe_target"), at,
                              {at, "hold", "30", "/dev/null"});
    }
};

// Traces `pid` as -p does (resolving specs as it sees files) for 600 ms on either backend;
// the probe's counters, checked against the events seen.
probectl::ProbeStats tracePid(pid_t pid, const std::string& spec, bool ptrace,
                              bool follow = false) {
    std::unique_ptr<probectl::Tracer> tr;
    if (ptrace) {
        probectl::PtraceSessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(pid)};
        o.follow = follow;
        o.resolve_pid = pid;
        auto s = probectl::PtraceSession::open(o);
        if (!s)
            throw std::runtime_error("ptrace session: " + why(s));
        tr = std::make_unique<probectl::PtraceSession>(std::move(*s));
    } else {
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(pid)};
        o.follow = follow;
        o.resolve_pid = pid;
        auto s = probectl::Session::open(o);
        if (!s)
            throw std::runtime_error("session: " + why(s));
        tr = std::make_unique<probectl::Session>(std::move(*s));
    }
    if (auto id = tr->add(*probectl::parseProbeSpec(spec)); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    std::size_t events = 0;
    auto cb = [&](const probectl::Event&) { ++events; };
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(600);
    auto ran = tr->run(
        cb, [&] { return std::chrono::steady_clock::now() > until; }, 50);
    EXPECT_TRUE(ran) << why(ran);
    auto st = tr->stop(cb);
    if (!st || st->probes.size() != 1)
        throw std::runtime_error("stop: " + why(st));
    EXPECT_EQ(events, st->probes[0].delivered);
    return st->probes[0];
}

}  // namespace

TEST(MountNamespace, PidResolvesThroughItsRoot) {
    NsFixture fx;
    OtherNamespace ns = fx.start();
    ASSERT_TRUE(
        sameFile("/proc/" + std::to_string(ns.pid()) + "/exe", itest::workload("uprobe_target")));
    probectl::UserResolveOptions ro;
    ro.pid = ns.pid();
    probectl::ProbeSpec spec = *probectl::parseProbeSpec("usdt:" + fx.at + ":pc:hold");
    auto t = probectl::resolveUserSpec(spec, ro);
    ASSERT_TRUE(t) << why(t);
    EXPECT_THAT(t->path, StartsWith("/proc/" + std::to_string(ns.pid()) + "/root/"));

    for (bool ptrace : {false, true}) {
        SCOPED_TRACE(ptrace ? "ptrace" : "kernel");
        EXPECT_GT(tracePid(ns.pid(), "usdt:" + fx.at + ":pc:hold", ptrace).hits, 0u)
            << "fires every 10 ms";
    }
}

TEST(MountNamespace, ProcRootAndExePathsAreTheProcesssFiles) {
    NsFixture fx;
    OtherNamespace ns = fx.start();
    const std::string proc = "/proc/" + std::to_string(ns.pid());
    for (const std::string& path : {proc + "/root" + fx.at, proc + "/exe"}) {
        SCOPED_TRACE(path);
        auto t = probectl::resolveUserSpec(*probectl::parseProbeSpec("usdt:" + path + ":pc:hold"));
        ASSERT_TRUE(t) << why(t);
        EXPECT_EQ(t->path, path) << "kept for the kernel's lookup, not made a path in ours";
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(ns.pid())};
        auto s = probectl::Session::open(o);
        ASSERT_TRUE(s) << why(s);
        auto id = s->add("usdt:" + path + ":pc:hold");
        ASSERT_TRUE(id) << why(id);
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the debug kernel is slow
        auto st = s->stop(nullptr);
        ASSERT_TRUE(st) << why(st);
        EXPECT_GT(st->probes.at(0).hits, 0u);
    }
}

TEST(MountNamespace, CliTracesPidInAnotherNamespace) {
    NsFixture fx;
    OtherNamespace ns = fx.start();
    itest::Ran r = itest::sh("probectl trace -d 1 -p " + std::to_string(ns.pid()) +
                             " usdt:" + fx.at + ":pc:hold");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("usdt:" + fx.at + ":pc:hold  arg1=30")) << r.out;
}

namespace {

// `app`, a fresh copy of uprobe_target, running "hold" once its process maps it; null
// (after a failed expectation) when it never did.
std::unique_ptr<itest::Workload> runCopy(const std::string& app) {
    itest::sh("rm -f " + app + "; cp " + itest::workload("uprobe_target") + " " + app);
    auto w =
        std::make_unique<itest::Workload>(std::vector<std::string>{app, "hold", "30", "/dev/null"});
    w->release();
    const std::string exe = "/proc/" + std::to_string(w->pid()) + "/exe";
    for (int i = 0; i < 500 && !sameFile(exe, app); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(sameFile(exe, app));
    return sameFile(exe, app) ? std::move(w) : nullptr;
}

// usdt:APP:pc:hold resolved for process `pid` (-p).
probectl::Result<probectl::UserTarget> resolveFor(pid_t pid, const std::string& app) {
    probectl::UserResolveOptions ro;
    ro.pid = pid;
    return probectl::resolveUserSpec(*probectl::parseProbeSpec("usdt:" + app + ":pc:hold"), ro);
}

}  // namespace

// `mv new app` while app runs: -p probes the file the process has mapped (deleted now), not
// the new file at the path (here one without the probe at all).
TEST(ReplacedBinary, PidProbesTheFileItRuns) {
    const std::string app = "/tmp/replaced-app";
    auto running = runCopy(app);
    ASSERT_TRUE(running);
    itest::Workload& w = *running;
    ASSERT_EQ(itest::sh("cp " + itest::workload("unwind_target") + " " + app + ".new && mv " + app +
                        ".new " + app)
                  .status,
              0);
    auto t = resolveFor(w.pid(), app);
    ASSERT_TRUE(t) << why(t);
    EXPECT_THAT(t->path, HasSubstr("/map_files/"));
    EXPECT_THAT(t->how, HasSubstr("(replaced)"));
    for (bool ptrace : {false, true}) {
        SCOPED_TRACE(ptrace ? "ptrace" : "kernel");
        EXPECT_GT(tracePid(w.pid(), "usdt:" + app + ":pc:hold", ptrace).hits, 0u);
    }
}

// `rm app` while app runs: -p probes the file the process still maps. The path was
// refused before ("/tmp/removed-app: No such file or directory"), as realpath needs it.
TEST(ReplacedBinary, PidProbesTheFileItRunsAfterItsRemoval) {
    const std::string app = "/tmp/removed-app";
    auto running = runCopy(app);
    ASSERT_TRUE(running);
    itest::Workload& w = *running;
    ASSERT_EQ(itest::sh("rm " + app).status, 0);
    auto t = resolveFor(w.pid(), app);
    ASSERT_TRUE(t) << why(t);
    EXPECT_THAT(t->path, HasSubstr("/map_files/"));
    EXPECT_THAT(t->how, HasSubstr("(deleted)"));
    for (bool ptrace : {false, true}) {
        SCOPED_TRACE(ptrace ? "ptrace" : "kernel");
        EXPECT_GT(tracePid(w.pid(), "usdt:" + app + ":pc:hold", ptrace).hits, 0u);
    }
}

// -p PID -f: a child forked before the trace started is traced as well as later ones.
TEST(FollowChildren, ChildrenExistingAtAttachAreTraced) {
    const std::string t = itest::workload("uprobe_target");
    for (bool ptrace : {false, true}) {
        SCOPED_TRACE(ptrace ? "ptrace" : "kernel");
        itest::Workload w({"/bin/sh", "-c", t + " hold 30 /dev/null & wait"});
        w.release();
        // sh's child, by its parent pid (kernels without CONFIG_PROC_CHILDREN have no
        // children files)
        bool running = false;
        for (int i = 0; i < 1000 && !running; i++) {
            const itest::Ran k = itest::sh("awk '$4 == " + std::to_string(w.pid()) +
                                           " {print $1}' /proc/[0-9]*/stat 2>/dev/null");
            const std::string kid = k.out.substr(0, k.out.find('\n'));
            running = !kid.empty() && sameFile("/proc/" + kid + "/exe", t);
            if (!running)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ASSERT_TRUE(running) << "the child of sh runs uprobe_target";
        const std::string spec = "usdt:" + t + ":pc:hold";
        EXPECT_EQ(tracePid(w.pid(), spec, ptrace, false).hits, 0u) << "without -f: only sh";
        EXPECT_GT(tracePid(w.pid(), spec, ptrace, true).hits, 0u) << "with -f: its child too";
    }
}

// A probed file replaced while traced: the probe stays on the old file, so the trace says
// that processes started from the path since were not traced.
TEST(ReplacedBinary, ReplacedWhileTracedIsSaid) {
    const std::string app = "/tmp/replaced-traced";
    const std::string replace =
        "cp " + itest::workload("unwind_target") + " " + app + ".new && mv " + app + ".new " + app;
    const std::string spec = "uprobe:" + app + ":pc_add";
    itest::sh("cp " + itest::workload("uprobe_target") + " " + app);
    {
        auto s = probectl::Session::open({});
        ASSERT_TRUE(s) << why(s);
        ASSERT_TRUE(s->add(spec));
        auto before = s->stats();
        ASSERT_TRUE(before) << why(before);
        EXPECT_TRUE(before->notes.empty());
        ASSERT_EQ(itest::sh(replace).status, 0);
        auto st = s->stop(nullptr);
        ASSERT_TRUE(st) << why(st);
        ASSERT_EQ(st->notes.size(), 1u);
        EXPECT_THAT(st->notes[0], HasSubstr(app + " was replaced while traced"));
    }
    itest::sh("cp " + itest::workload("uprobe_target") + " " + app);
    {
        // Replaced once the command runs it: it goes on running (and hitting) the old file.
        probectl::PtraceSessionOptions o;
        o.command = {app, "hold", "3", "/dev/null"};
        auto s = probectl::PtraceSession::open(o);
        ASSERT_TRUE(s) << why(s);
        ASSERT_TRUE(s->add("usdt:" + app + ":pc:hold"));
        ASSERT_TRUE(s->release());
        const auto at = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        bool replaced = false;
        auto ran = s->run(
            nullptr,
            [&] {
                if (!replaced && std::chrono::steady_clock::now() > at)
                    replaced = itest::sh(replace).status == 0;
                return s->commandStatus().has_value();
            },
            50);
        EXPECT_TRUE(ran) << why(ran);
        EXPECT_TRUE(replaced);
        auto st = s->stop(nullptr);
        ASSERT_TRUE(st) << why(st);
        EXPECT_GT(st->probes.at(0).hits, 0u) << "fires every 10 ms for 2-3 s";
        ASSERT_EQ(st->notes.size(), 1u);
        EXPECT_THAT(st->notes[0], HasSubstr(app + " was replaced while traced"));
    }
    itest::sh("cp " + itest::workload("uprobe_target") + " " + app);
    // Replaced once the banner says the probe is armed.
    itest::Ran r = itest::sh("(probectl trace -d 4 " + spec +
                             " 2>&1 &) | (read -r banner; echo \"$banner\"; " + replace + "; cat)");
    EXPECT_THAT(r.out, HasSubstr("warning: " + app + " was replaced while traced")) << r.out;
}
