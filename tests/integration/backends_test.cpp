// The ptrace backend and probectl.ko on the same workload: the same events (count,
// arguments, return values); and what each leaves in a running multithreaded process when
// tracing ends, or when the tracer is SIGKILLed. The ptrace backend's own attach and
// tracer-death tests (tests/ptrace/ptrace_attach_test.cpp) are built into this suite too.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"
#include "pt_fixtures.hpp"

using itest::why;
using probectl::Event;

namespace {

const std::string kPt = PT_WORKLOAD_PATH;

// What both backends must agree on for one event: its probe, entry or return, the first
// `nargs` argument registers and, for returns, the return value. Times, cpus and thread ids
// differ from run to run.
using Key = std::tuple<std::string, bool, std::vector<std::uint64_t>, std::uint64_t>;

struct Seen {
    std::multiset<Key> keys;
    std::size_t count = 0;
    int status = -1;
};

Key keyOf(const Event& e, unsigned nargs) {
    std::vector<std::uint64_t> a(e.args.begin(), e.args.begin() + nargs);
    return {std::string(e.spec), e.is_return, a, e.is_return ? e.retval : 0};
}

Seen kernelRun(const std::vector<std::string>& argv, const std::vector<std::string>& specs,
               unsigned nargs) {
    itest::Workload w(argv);
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    for (const auto& sp : specs)
        if (auto id = s->add(sp); !id)
            throw std::runtime_error("add " + sp + ": " + why(id));
    Seen seen;
    auto cb = [&](const Event& e) {
        seen.keys.insert(keyOf(e, nargs));
        ++seen.count;
    };
    w.release();
    seen.status = w.wait();
    auto st = s->stop(cb);
    EXPECT_TRUE(st) << why(st);
    if (st) {
        EXPECT_FALSE(st->anyLoss());
    }
    return seen;
}

Seen ptraceRun(const std::vector<std::string>& argv, const std::vector<std::string>& specs,
               unsigned nargs) {
    probectl::PtraceSessionOptions o;
    o.command = argv;
    auto s = probectl::PtraceSession::open(o);
    if (!s)
        throw std::runtime_error("ptrace session: " + why(s));
    for (const auto& sp : specs)
        if (auto id = s->add(sp); !id)
            throw std::runtime_error("add " + sp + ": " + why(id));
    Seen seen;
    auto cb = [&](const Event& e) {
        seen.keys.insert(keyOf(e, nargs));
        ++seen.count;
    };
    EXPECT_TRUE(s->release());
    auto r = s->run(
        cb, [&] { return s->commandStatus().has_value(); }, 50);
    EXPECT_TRUE(r) << why(r);
    auto st = s->stop(cb);
    EXPECT_TRUE(st) << why(st);
    if (auto cs = s->commandStatus())
        seen.status = *cs;
    return seen;
}

std::string fn(const char* kind, const char* name) {
    return std::string(kind) + ":" + kPt + ":" + name;
}

TEST(BackendParity, CallsAndReturnsAreTheSameEvents) {
    const std::vector<std::string> argv = {kPt, "calls", "150"};
    const std::vector<std::string> specs = {fn("uprobe", "pt_add"), fn("uretprobe", "pt_add")};
    Seen k = kernelRun(argv, specs, 2);
    Seen p = ptraceRun(argv, specs, 2);
    EXPECT_EQ(k.status, 0);
    EXPECT_EQ(p.status, 0);
    EXPECT_EQ(k.count, 300u);
    EXPECT_EQ(p.count, 300u);
    // Entries carry (i, 2i+1), returns 3i+1; the return's argument registers are whatever
    // the function left there, so only entries compare arguments.
    std::multiset<Key> kk, pk;
    for (auto keys : {std::pair{&k.keys, &kk}, std::pair{&p.keys, &pk}})
        for (Key key : *keys.first) {
            if (std::get<1>(key))
                std::get<2>(key).clear();
            keys.second->insert(key);
        }
    EXPECT_EQ(kk, pk);
    EXPECT_EQ(kk.count({fn("uretprobe", "pt_add"), true, {}, 3 * 150 + 1}), 1u);
    EXPECT_EQ(kk.count({fn("uprobe", "pt_add"), false, {150, 301}, 0}), 1u);
}

TEST(BackendParity, RecursiveReturnsAreTheSameEvents) {
    const std::vector<std::string> argv = {kPt, "fact", "10"};
    const std::vector<std::string> specs = {fn("uprobe", "pt_fact"), fn("uretprobe", "pt_fact")};
    Seen k = kernelRun(argv, specs, 1);
    Seen p = ptraceRun(argv, specs, 1);
    EXPECT_EQ(k.count, 20u);
    EXPECT_EQ(p.count, 20u);
    std::multiset<std::uint64_t> kr, pr;
    for (const auto& key : k.keys)
        if (std::get<1>(key))
            kr.insert(std::get<3>(key));
    for (const auto& key : p.keys)
        if (std::get<1>(key))
            pr.insert(std::get<3>(key));
    EXPECT_EQ(kr, pr);
    EXPECT_EQ(kr.count(3628800), 1u);  // 10!
}

TEST(BackendParity, ThreadsHittingOneProbeAreTheSameEvents) {
    const std::vector<std::string> argv = {kPt, "threads", "4", "60"};
    const std::vector<std::string> specs = {fn("uprobe", "pt_add")};
    Seen k = kernelRun(argv, specs, 2);
    Seen p = ptraceRun(argv, specs, 2);
    EXPECT_EQ(k.count, 240u);
    EXPECT_EQ(p.count, 240u);
    EXPECT_EQ(k.keys, p.keys);  // (thread k, j) for every k < 4, j < 60
}

// The kernel backend's syscall: probes record at entry (no return value); the ptrace
// backend's carry both. Compared: count, and openat's dirfd and flags (its path is an
// address that ASLR moves between runs).
TEST(BackendParity, SyscallsAreTheSameEvents) {
    const std::vector<std::string> argv = {kPt, "syscalls", "40"};
    const std::vector<std::string> specs = {"syscall:getppid", "syscall:openat"};
    auto project = [](const Seen& s) {
        std::multiset<std::tuple<std::string, std::uint64_t, std::uint64_t>> out;
        for (const auto& key : s.keys) {
            const auto& a = std::get<2>(key);
            const bool open = std::get<0>(key) == "syscall:openat";
            // dirfd is an int: only its low 32 bits are the argument
            out.insert({std::get<0>(key), open ? a[0] & 0xffffffffu : 0, open ? a[2] : 0});
        }
        return out;
    };
    Seen k = kernelRun(argv, specs, 3);
    Seen p = ptraceRun(argv, specs, 3);
    EXPECT_EQ(k.status, 0);
    EXPECT_EQ(p.status, 0);
    const auto kp = project(k), pp = project(p);
    EXPECT_EQ(kp.count({"syscall:getppid", 0, 0}), 40u);
    // openat: the workload's own, plus the dynamic loader's and stdio's (the same in both).
    EXPECT_GE(kp.size(), 41u);
    EXPECT_EQ(kp, pp);
    // The workload's own: openat(AT_FDCWD, PT_MISSING, O_RDONLY).
    EXPECT_GE(kp.count({"syscall:openat", 0xffffff9cu, 0}), 1u);
}

// A process the kernel backend attached to (a session filtered on its pid, a uprobe in
// its text) is left as it was when the session ends: same bytes, same threads, running.
TEST(BackendAttach, KernelSessionLeavesMultithreadedProcessUnchanged) {
    probectl::ptfx::Spinner w(kPt);
    ASSERT_GT(w.pid, 0);
    while (w.threadCount() < 5)
        ASSERT_TRUE(w.advances());
    const auto text = probectl::ptfx::findText(w.pid, kPt);
    ASSERT_NE(text.spin_addr, 0u);
    const std::string before = probectl::ptfx::readMem(w.pid, text.start, text.end);
    ASSERT_FALSE(before.empty());
    std::set<std::uint32_t> tids;
    {
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(w.pid)};
        auto s = probectl::Session::open(o);
        ASSERT_TRUE(s) << why(s);
        ASSERT_TRUE(s->add(fn("uprobe", "pt_spin")));
        // Armed: the kernel's uprobe put its int3 in this process's copy of the page.
        EXPECT_EQ(probectl::ptfx::readMem(w.pid, text.spin_addr, text.spin_addr + 1), "\xcc");
        std::uint64_t n = 0;
        auto cb = [&](const Event& e) {
            tids.insert(e.pid);
            ++n;
        };
        while (tids.size() < 4 || n < 2000)
            ASSERT_TRUE(s->poll(1000, cb));
        ASSERT_TRUE(s->stop(cb));
    }
    EXPECT_EQ(tids.size(), 4u);
    EXPECT_EQ(probectl::ptfx::readMem(w.pid, text.start, text.end), before);
    EXPECT_EQ(w.threadCount(), 5);
    EXPECT_TRUE(w.advances());
    int st;
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

// SIGKILL of a kernel-backend tracer: its socket closes, the module unregisters its probes
// (NETLINK_URELEASE), and the tracee runs on with its code restored -- unlike the ptrace
// backend, whose int3 stays behind (PtraceSession.TracerKilledWithUprobe...).
TEST(BackendAttach, KernelTracerKilledLeavesTraceeRunningWithCodeRestored) {
    probectl::ptfx::Spinner w(kPt);
    ASSERT_GT(w.pid, 0);
    ASSERT_TRUE(w.advances());
    const auto text = probectl::ptfx::findText(w.pid, kPt);
    const std::string before = probectl::ptfx::readMem(w.pid, text.start, text.end);
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t tracer = fork();
    if (tracer == 0) {
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(w.pid)};
        auto s = probectl::Session::open(o);
        if (!s || !s->add(fn("uprobe", "pt_spin")))
            _exit(1);
        bool seen = false;
        while (!seen)
            if (!s->poll(1000, [&](const Event&) { seen = true; }))
                _exit(2);
        (void)!::write(p[1], "r", 1);
        for (;;)
            (void)s->poll(1000, nullptr);
    }
    char c;
    ASSERT_EQ(::read(p[0], &c, 1), 1);
    EXPECT_EQ(probectl::ptfx::readMem(w.pid, text.spin_addr, text.spin_addr + 1), "\xcc");
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ::close(p[0]);
    ::close(p[1]);
    // The probe goes when the module sees the socket released, which follows the death.
    for (int i = 0; i < 100 && probectl::ptfx::readMem(w.pid, text.start, text.end) != before; ++i)
        ::usleep(50000);
    EXPECT_EQ(probectl::ptfx::readMem(w.pid, text.start, text.end), before);
    EXPECT_TRUE(w.advances());
    EXPECT_TRUE(w.advances());
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

}  // namespace
