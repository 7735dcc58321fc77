// Attaching the ptrace backend to a running multithreaded process and leaving it: detach
// restores every byte and the process runs on; a SIGKILLed tracer leaves what ptrace(2)
// leaves (documented in ptrace_session.hpp). Built twice from this one file: into the host
// tests (tests/ptrace) and into the in-VM suite (tests/integration), which runs it on every
// test kernel beside the kernel backend's counterparts (backends_test.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "probectl/ptrace_session.hpp"
#include "pt_fixtures.hpp"

namespace probectl {
namespace {

using ptfx::attachOptions;
using ptfx::findText;
using ptfx::forkTracer;
using ptfx::readMem;
using ptfx::Spinner;
using ptfx::Text;

using ptfx::kWorkload;

TEST(PtraceSession, AttachToThreadsAndDetachLeavesCodeUnchanged) {
    Spinner w(kWorkload);
    ASSERT_GT(w.pid, 0);
    // Thread 0 may write before the others exist: wait until all four spinners run.
    while (w.threadCount() < 5)
        ASSERT_TRUE(w.advances());
    const Text text = findText(w.pid, kWorkload);
    ASSERT_NE(text.spin_addr, 0u);
    const std::string before = readMem(w.pid, text.start, text.end);
    ASSERT_FALSE(before.empty());

    std::set<std::uint32_t> tids;
    std::uint64_t n = 0;
    {
        auto s = PtraceSession::open(attachOptions(w.pid));
        ASSERT_TRUE(s) << s.error().describe();
        EXPECT_EQ(s->threads().size(), 5u);
        auto id = s->add("uprobe:" + kWorkload + ":pt_spin");
        ASSERT_TRUE(id) << id.error().describe();
        // Armed: the int3 is in the tracee's text (what the comparison below must undo).
        const std::string armed = readMem(w.pid, text.spin_addr, text.spin_addr + 1);
        ASSERT_EQ(armed, std::string(1, '\xcc'));
        auto cb = [&](const Event& e) {
            tids.insert(e.pid);
            EXPECT_EQ(e.ip, text.spin_addr);
            ++n;
        };
        // Every hit stops the whole process for its step: about 130 ms each on 6.1 under TCG,
        // where 2000 hits took 389 s (35 s on 6.12), so 100 hits, from all four threads.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(300);
        while (tids.size() < 4 || n < 100) {
            ASSERT_LT(std::chrono::steady_clock::now(), give_up)
                << n << " hits from " << tids.size() << " threads in 300 s";
            auto r = s->poll(1000, cb);
            ASSERT_TRUE(r) << r.error().describe();
        }
        auto st = s->stop(cb);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->probes[0].hits, n);
        EXPECT_EQ(st->probes[0].delivered, n);
    }
    EXPECT_EQ(tids.size(), 4u);
    EXPECT_EQ(readMem(w.pid, text.start, text.end), before);
    // Not traced any more, all threads alive, and it still runs.
    std::ifstream status("/proc/" + std::to_string(w.pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            EXPECT_EQ(std::stoi(line.substr(10)), 0);
        }
    }
    EXPECT_EQ(w.threadCount(), 5);
    EXPECT_TRUE(w.advances());
    int st;
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

// Threads that keep hitting one breakpoint are a stream of stops that never runs dry: every
// step over the breakpoint stops the other threads and finds some of them trapped already.
// poll() must still return at its timeout (it once handled them forever, and a caller's
// loop never ran again). 32 spinners on a few CPUs keep a trap always waiting.
TEST(PtraceSession, PollReturnsAtItsTimeoutWhileThreadsKeepHitting) {
    Spinner w(kWorkload, 32);
    ASSERT_GT(w.pid, 0);
    while (w.threadCount() < 33)
        ASSERT_TRUE(w.advances());
    auto s = PtraceSession::open(attachOptions(w.pid));
    ASSERT_TRUE(s) << s.error().describe();
    auto id = s->add("uprobe:" + kWorkload + ":pt_spin");
    ASSERT_TRUE(id) << id.error().describe();
    // If poll() never returns, the watcher ends the stream by killing the workload (then
    // poll() sees the threads exit and returns) and says so.
    std::mutex mu;
    std::condition_variable cv;
    bool polled = false;
    std::atomic<bool> stuck{false};
    std::thread watcher([&] {
        std::unique_lock lock(mu);
        if (!cv.wait_for(lock, std::chrono::seconds(120), [&] { return polled; })) {
            stuck = true;
            ::kill(w.pid, SIGKILL);
        }
    });
    std::uint64_t n = 0;
    for (int i = 0; i < 5 && !stuck; ++i) {
        auto r = s->poll(100, [&](const Event&) { ++n; });
        ASSERT_TRUE(r) << r.error().describe();
    }
    {
        std::lock_guard lock(mu);
        polled = true;
    }
    cv.notify_one();
    watcher.join();
    EXPECT_FALSE(stuck) << "poll(100) did not return within 120 s";
    EXPECT_GT(n, 0u);
    auto st = s->stop([&](const Event&) { ++n; });
    ASSERT_TRUE(st);
    EXPECT_EQ(st->probes[0].dropped, 0u);
}

// What SIGKILL of the tracer does to a -p tracee (ptrace(2): the kernel detaches the
// tracees of a dead tracer and lets them run). With syscall probes nothing was patched:
// the tracee runs on unharmed.
TEST(PtraceSession, TracerKilledWithSyscallProbesLeavesTraceeRunning) {
    Spinner w(kWorkload);
    ASSERT_GT(w.pid, 0);
    ASSERT_TRUE(w.advances());
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t tracer = forkTracer(w.pid, "syscall:write", p[1]);
    char c;
    ASSERT_EQ(::read(p[0], &c, 1), 1);
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ::close(p[0]);
    ::close(p[1]);
    EXPECT_TRUE(w.advances());
    EXPECT_TRUE(w.advances());
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

// The documented limit: ptrace has no way to put back the bytes of a tracer that died.
// The tracee is not killed by the tracer's death, but its next pass over the probe
// executes our int3 with nobody to handle it, and it dies of SIGTRAP.
TEST(PtraceSession, TracerKilledWithUprobeLeavesInt3AndTraceeDiesOfSigtrap) {
    Spinner w(kWorkload);
    ASSERT_GT(w.pid, 0);
    ASSERT_TRUE(w.advances());
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t tracer = forkTracer(w.pid, "uprobe:" + kWorkload + ":pt_spin", p[1]);
    char c;
    ASSERT_EQ(::read(p[0], &c, 1), 1);
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ::close(p[0]);
    ::close(p[1]);
    const pid_t pid = w.pid;
    // The int3 is in place (the tracer waited outside poll()), so one of four spinning
    // threads passes it at once; the bound only turns a regression into a failure.
    pid_t got = 0;
    for (int i = 0; i < 1200 && got == 0; ++i) {
        got = waitpid(pid, &st, WNOHANG);
        if (got == 0)
            ::usleep(100 * 1000);
    }
    ASSERT_EQ(got, pid) << "still running 120 s after its tracer was killed";
    w.pid = -1;
    ASSERT_TRUE(WIFSIGNALED(st)) << st;
    EXPECT_EQ(WTERMSIG(st), SIGTRAP);
}

}  // namespace
}  // namespace probectl
