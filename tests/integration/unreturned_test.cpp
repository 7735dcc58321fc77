// Entries that never return (longjmp, exceptions, thread exit, calls still inside when the
// trace ends) are counted as unreturned on both backends, so HITS = DELIVERED + DROPPED +
// REJECTED + UNRETURNED; kernel uretprobes are refused in files that unwind C++ exceptions.
#include <dirent.h>

#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"

using itest::why;
using probectl::Event;
using probectl::ProbeStats;
using ::testing::HasSubstr;

namespace {

struct UnreturnedTraced {
    ProbeStats stats;
    std::vector<Event> events;
    int status = -1;
    std::optional<std::string> out;  // the command's stdout (not captured by the ptrace runs)
};

void expectUnreturnedBalanced(const ProbeStats& p) {
    EXPECT_EQ(p.hits, p.delivered + p.dropped + p.rejected + p.unreturned + p.depth_skipped)
        << "hits " << p.hits << " delivered " << p.delivered << " dropped " << p.dropped
        << " rejected " << p.rejected << " unreturned " << p.unreturned << " depth_skipped "
        << p.depth_skipped;
}

UnreturnedTraced kernelRun(const std::string& spec, std::vector<std::string> argv) {
    itest::Workload w(std::move(argv));
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    UnreturnedTraced r;
    w.release();
    r.out.emplace();
    r.status = w.wait(&*r.out);
    auto st = s->stop([&](const Event& e) { r.events.push_back(e); });
    if (!st || st->probes.size() != 1)
        throw std::runtime_error("stop: " + why(st));
    r.stats = st->probes[0];
    return r;
}

UnreturnedTraced ptraceRun(const std::string& spec, std::vector<std::string> argv) {
    probectl::PtraceSessionOptions o;
    o.command = std::move(argv);
    auto s = probectl::PtraceSession::open(o);
    if (!s)
        throw std::runtime_error("ptrace session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    UnreturnedTraced r;
    auto cb = [&](const Event& e) { r.events.push_back(e); };
    EXPECT_TRUE(s->release());
    auto ran = s->run(
        cb, [&] { return s->commandStatus().has_value(); }, 50);
    EXPECT_TRUE(ran) << why(ran);
    auto st = s->stop(cb);
    if (!st || st->probes.size() != 1)
        throw std::runtime_error("stop: " + why(st));
    r.stats = st->probes[0];
    if (auto cs = s->commandStatus())
        r.status = *cs;
    return r;
}

// Threads of `pid` blocked in syscall `nr` (first field of /proc/PID/task/TID/syscall).
int threadsInSyscall(pid_t pid, int nr) {
    int n = 0;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d)
        return 0;
    while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') {
            const std::string s = itest::readFile(dir + "/" + e->d_name + "/syscall");
            // "running" while on a CPU, else the syscall number first
            n += !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) &&
                 std::stoi(s.substr(0, s.find(' '))) == nr;
        }
    closedir(d);
    return n;
}

bool waitThreadsInSyscall(pid_t pid, int nr, int want) {
    for (int i = 0; i < 1000; i++) {
        if (threadsInSyscall(pid, nr) >= want)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

constexpr int kPauseNr = 34;  // x86-64

const std::string kJump = "uretprobe:" + itest::workload("unwind_target") + ":un_jump";
// Calls of un_jump: every one but the last leaves by longjmp (fewer on the debug kernel,
// where each ptrace stop is many times slower; still far past the uretprobe nesting depth).
int jumpCalls() {
    return itest::debugKernel() ? 256 : 1024;
}

std::vector<std::string> jumpArgv() {
    return {itest::workload("unwind_target"), "longjmp", std::to_string(jumpCalls())};
}

void expectOneReturnOfAll(const UnreturnedTraced& r) {
    const std::uint64_t n = jumpCalls();
    EXPECT_EQ(r.status, 0);
    if (r.out) {
        EXPECT_EQ(*r.out, "returns=1 last=" + std::to_string(n) + "\n");
    }
    EXPECT_EQ(r.stats.hits, n);
    EXPECT_EQ(r.stats.unreturned, n - 1);
    expectUnreturnedBalanced(r.stats);
    ASSERT_EQ(r.events.size(), 1u) << "the calls left by longjmp never returned";
    EXPECT_EQ(r.events[0].args[0], n) << "the return is the last call's";
    EXPECT_EQ(r.events[0].retval, n);
    EXPECT_LT(r.events[0].latency_ns, 1'000'000'000u) << "its own call's latency";
}

}  // namespace

TEST(Unreturned, LongjmpOverUretprobeKernel) {
    expectOneReturnOfAll(kernelRun(kJump, jumpArgv()));
}

TEST(Unreturned, LongjmpOverUretprobePtrace) {
    expectOneReturnOfAll(ptraceRun(kJump, jumpArgv()));
}

// An entry probe has no return to wait for: its hits are never unreturned (they once all
// were, so every kprobe and uprobe summary showed UNRETURNED = HITS).
TEST(Unreturned, EntryProbesHaveNone) {
    const std::vector<std::string> argv = {itest::workload("getppid_loop"), "5"};
    for (const std::string& spec :
         {std::string("kprobe:__x64_sys_getppid"), "uprobe:" + argv[0] + ":main"}) {
        SCOPED_TRACE(spec);
        UnreturnedTraced r = kernelRun(spec, argv);
        EXPECT_EQ(r.status, 0);
        EXPECT_GE(r.stats.hits, 1u);
        EXPECT_EQ(r.stats.unreturned, 0u);
        expectUnreturnedBalanced(r.stats);
    }
}

TEST(Unreturned, ThreadExitInsideUretprobe) {
    const std::string spec = "uretprobe:" + itest::workload("unwind_target") + ":un_texit";
    for (bool ptrace : {false, true}) {
        SCOPED_TRACE(ptrace ? "ptrace" : "kernel");
        const std::vector<std::string> argv = {itest::workload("unwind_target"), "texit"};
        UnreturnedTraced r = ptrace ? ptraceRun(spec, argv) : kernelRun(spec, argv);
        EXPECT_EQ(r.status, 0);
        if (r.out) {
            EXPECT_EQ(*r.out, "joined\n");
        }
        EXPECT_EQ(r.stats.hits, 1u);
        EXPECT_EQ(r.stats.unreturned, 1u);
        EXPECT_TRUE(r.events.empty());
        expectUnreturnedBalanced(r.stats);
    }
}

// The trace ends while the call is still inside the function.
TEST(Unreturned, UretprobeStillInsideAtStop) {
    itest::Workload w({itest::workload("unwind_target"), "hold"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("uretprobe:" + itest::workload("unwind_target") + ":un_hold");
    ASSERT_TRUE(id) << why(id);
    w.release();
    ASSERT_TRUE(waitThreadsInSyscall(w.pid(), kPauseNr, 1));
    auto st = s->stop(nullptr);
    ASSERT_TRUE(st) << why(st);
    ASSERT_EQ(st->probes.size(), 1u);
    EXPECT_EQ(st->probes[0].hits, 1u);
    EXPECT_EQ(st->probes[0].unreturned, 1u);
    expectUnreturnedBalanced(st->probes[0]);
}

// 16 blocked calls, 10 kretprobe instances: 10 hits still inside, 6 calls never counted.
TEST(Unreturned, KretprobesInFlightAtStopAndMaxactiveMisses) {
    itest::Workload w({itest::workload("unwind_target"), "pause", "16"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.maxactive = 10;
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("kretprobe:__x64_sys_pause");
    ASSERT_TRUE(id) << why(id);
    w.release();
    ASSERT_TRUE(waitThreadsInSyscall(w.pid(), kPauseNr, 17)) << "16 threads and main in pause";
    auto st = s->stop(nullptr);
    ASSERT_TRUE(st) << why(st);
    ASSERT_EQ(st->probes.size(), 1u);
    const ProbeStats& p = st->probes[0];
    EXPECT_EQ(p.hits, 10u);
    EXPECT_EQ(p.nmissed, 7u) << "17 calls, 10 instances";
    EXPECT_EQ(p.delivered, 0u);
    EXPECT_EQ(p.unreturned, 10u);
    expectUnreturnedBalanced(p);
}

TEST(Unreturned, CxxExceptionsThroughUretprobePtrace) {
    UnreturnedTraced r = ptraceRun("uretprobe:" + itest::workload("unwind_cxx") + ":un_throw",
                                   {itest::workload("unwind_cxx"), "10"});
    EXPECT_EQ(r.status, 0) << "the program ran as untraced";
    EXPECT_EQ(r.stats.hits, 10u);
    EXPECT_EQ(r.stats.unreturned, 5u);
    ASSERT_EQ(r.events.size(), 5u);
    for (std::size_t i = 0; i < r.events.size(); ++i)
        EXPECT_EQ(r.events[i].retval, 2 * (i + 1)) << "the even calls return";
    expectUnreturnedBalanced(r.stats);
}

// The kernel's return trampoline has no unwind information: a throw through it would end
// the program, so the uretprobe is refused unless forced.
TEST(Unreturned, KernelUretprobeRefusedWhereExceptionsUnwind) {
    const std::string spec = "uretprobe:" + itest::workload("unwind_cxx") + ":un_throw";
    auto s = probectl::Session::open({});
    ASSERT_TRUE(s) << why(s);
    auto id = s->add(spec);
    ASSERT_FALSE(id) << "added a uretprobe exceptions unwind through";
    EXPECT_EQ(id.error().err, EINVAL);
    EXPECT_TRUE(id.error().usage);
    EXPECT_THAT(id.error().message, HasSubstr("exceptions"));
    EXPECT_THAT(id.error().message, HasSubstr("--force"));
    // A C program's uretprobe is not affected, and --force adds it.
    EXPECT_TRUE(s->add(kJump)) << "C file refused";
    probectl::SessionOptions forced;
    forced.uretprobe_despite_exceptions = true;
    auto f = probectl::Session::open(forced);
    ASSERT_TRUE(f) << why(f);
    auto fid = f->add(spec);
    EXPECT_TRUE(fid) << why(fid);
}

TEST(Unreturned, CliSummaryHasTheColumnAndTheEquation) {
    itest::Ran r = itest::sh("probectl trace '" + kJump + "' -- " +
                             itest::workload("unwind_target") + " longjmp 1024");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("UNRETURNED")) << r.out;
    EXPECT_THAT(r.out, ::testing::ContainsRegex("un_jump +1024 +1 +0 +0 +0 +0 +1023")) << r.out;
    EXPECT_THAT(r.out, HasSubstr("longjmp")) << "the column is explained";
}

// The kernel gives a thread at most 64 pending uretprobe returns (MAX_URETPROBE_DEPTH on
// 6.1, 6.12 and 7.2): of 100 nested calls the 36 innermost have no return probe. They are
// counted apart (depth_skipped), not as never returned; ptrace has no such limit.
namespace {

constexpr int kNest = 100;
constexpr int kKernelUretDepth = 64;

std::string nestSpec() {
    return "uretprobe:" + itest::uprobeTarget() + ":pc_nest";
}

}  // namespace

TEST(Unreturned, NestedPastTheKernelUretprobeLimitCountedApart) {
    UnreturnedTraced r =
        kernelRun(nestSpec(), {itest::uprobeTarget(), "nest", std::to_string(kNest)});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "nest=" + std::to_string(kNest) + "\n");
    EXPECT_EQ(r.stats.hits, static_cast<std::uint64_t>(kNest));
    EXPECT_EQ(r.stats.delivered, static_cast<std::uint64_t>(kKernelUretDepth));
    EXPECT_EQ(r.stats.depth_skipped, static_cast<std::uint64_t>(kNest - kKernelUretDepth));
    EXPECT_EQ(r.stats.unreturned, 0u);
    EXPECT_EQ(r.stats.nmissed, 0u);
    EXPECT_EQ(r.stats.depth_limit, static_cast<std::uint32_t>(kKernelUretDepth));
    expectUnreturnedBalanced(r.stats);
    // The outermost calls got their return probes (pc_nest(n) returns n, outermost n = 100):
    // returns come innermost first, 37 to 100.
    ASSERT_EQ(r.events.size(), static_cast<std::size_t>(kKernelUretDepth));
    for (int i = 0; i < kKernelUretDepth; i++)
        EXPECT_EQ(r.events[i].retval, static_cast<std::uint64_t>(kNest - kKernelUretDepth + 1 + i))
            << "return " << i;
}

TEST(Unreturned, NestedPastTheKernelUretprobeLimitPtraceHasNoLimit) {
    UnreturnedTraced r =
        ptraceRun(nestSpec(), {itest::uprobeTarget(), "nest", std::to_string(kNest)});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.stats.hits, static_cast<std::uint64_t>(kNest));
    EXPECT_EQ(r.stats.delivered, static_cast<std::uint64_t>(kNest));
    EXPECT_EQ(r.stats.depth_skipped, 0u);
    EXPECT_EQ(r.stats.unreturned, 0u);
    expectUnreturnedBalanced(r.stats);
}

// count and latency say why the returns are missing, not "never returned 36"; trace's
// summary has the column and explains it.
TEST(Unreturned, CliSaysReturnsNotProbedPastTheNestingLimit) {
    const std::string T = itest::uprobeTarget();
    const std::string cmd = " -- " + T + " nest " + std::to_string(kNest);
    const std::string why =
        "36 returns not probed: nesting deeper than the kernel's uretprobe limit of 64";
    itest::Ran c =
        itest::sh("probectl count 'uprobe:" + T + ":pc_nest' '" + nestSpec() + "'" + cmd + " 2>&1");
    ASSERT_EQ(c.status, 0) << c.out;
    EXPECT_THAT(c.out, HasSubstr("never returned 0 (not counted); " + why)) << c.out;
    EXPECT_THAT(c.out, ::testing::ContainsRegex("pc_nest +100( +0)?\n")) << c.out;
    EXPECT_THAT(c.out, ::testing::ContainsRegex("pc_nest +64( +0)?\n")) << c.out;

    itest::Ran l = itest::sh("probectl latency '" + nestSpec() + "'" + cmd + " 2>&1");
    ASSERT_EQ(l.status, 0) << l.out;
    EXPECT_THAT(l.out,
                HasSubstr("hits 100, filtered 0, rejected 0, nmissed 0, never returned 0; " + why))
        << l.out;

    itest::Ran t = itest::sh("probectl trace '" + nestSpec() + "'" + cmd + " 2>&1");
    ASSERT_EQ(t.status, 0) << t.out;
    EXPECT_THAT(t.out, ::testing::ContainsRegex("pc_nest +100 +64 +0 +0 +0 +0 +0 +36\n")) << t.out;
    EXPECT_THAT(t.out, HasSubstr("DEPTH_SKIPPED: uretprobe calls whose return the kernel did "
                                 "not probe"))
        << t.out;
}
