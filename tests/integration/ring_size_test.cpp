// The buffer_kb module parameter at its edges: out-of-range values are refused when written,
// and no value, nor a tracer killed while its session's ring is allocated, makes the kernel
// WARN (the suite's kernel-log check fails the run on any WARNING).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::why;

namespace {

constexpr const char* kParam = "/sys/module/probectl/parameters/buffer_kb";

// Writes the parameter; false when the kernel refused the value.
bool setRingKb(unsigned long long kb) {
    std::ofstream f(kParam);
    f << kb << std::flush;
    return static_cast<bool>(f);
}

unsigned long long ringKb() {
    return std::stoull(itest::readFile(kParam));
}

unsigned long long memAvailableKb() {
    // "MemAvailable:   1234 kB" (some lines have no unit, so read line by line).
    std::ifstream f("/proc/meminfo");
    for (std::string line; std::getline(f, line);)
        if (line.starts_with("MemAvailable:"))
            return std::stoull(line.substr(line.find(':') + 1));
    return 0;
}

// Restores the parameter at the end of a test.
struct SavedRingKb {
    unsigned long long kb = ringKb();
    ~SavedRingKb() { setRingKb(kb); }
};

// Creating a session (its ring) with the current buffer_kb.
probectl::Result<void> createSession() {
    auto c = itest::connectOrDie();
    return c.setSessionTgids({static_cast<std::uint32_t>(getpid())});
}

}  // namespace

TEST(RingSize, EdgesGiveASessionOrAReasonAndNoWarning) {
    SavedRingKb saved;
    for (unsigned long long bad : {0ull, 7ull, 1048577ull}) {
        EXPECT_FALSE(setRingKb(bad)) << bad << " KiB was accepted";
        EXPECT_EQ(ringKb(), saved.kb) << "after writing " << bad;
    }
    ASSERT_TRUE(setRingKb(8));
    auto r = createSession();
    EXPECT_TRUE(r.ok()) << why(r);
    // The maximum, and a size one CPU's ring fits in but not every CPU's: refused with
    // the parameter's name (ring_buffer_alloc WARNs when a later CPU fails).
    const unsigned long long avail = memAvailableKb();
    ASSERT_GT(avail, 0u);
    for (unsigned long long kb : {1048576ull, avail * 6 / 10}) {
        ASSERT_TRUE(setRingKb(kb)) << kb;
        r = createSession();
        ASSERT_FALSE(r.ok()) << kb << " KiB per CPU with " << avail << " KiB available";
        EXPECT_NE(r.error().extack.find("buffer_kb"), std::string::npos) << why(r);
    }
}

// ring_buffer_alloc() gives up on a task with a fatal signal pending, and WARNs when that
// happens on any CPU after the first: a tracer killed while it creates its session.
TEST(RingSize, TracerKilledWhileItsRingIsAllocatedLeavesNoWarning) {
    SavedRingKb saved;
    // The kills are timed as shares of the unkilled allocation, so a smaller ring on the
    // debug kernel (where allocating 64 MiB per CPU takes seconds) keeps the same race.
    ASSERT_TRUE(setRingKb(itest::debugKernel() ? 16 * 1024 : 64 * 1024));
    auto once = [](int kill_after_us) {
        int go[2];
        if (pipe(go))
            return -1L;
        const pid_t child = fork();
        if (child == 0) {
            close(go[0]);
            auto c = probectl::Client::connect();
            if (write(go[1], "x", 1) != 1 || !c)
                _exit(2);
            _exit(c->setSessionTgids({static_cast<std::uint32_t>(getpid())}) ? 0 : 1);
        }
        close(go[1]);
        char x;
        const bool started = read(go[0], &x, 1) == 1;
        close(go[0]);
        const auto t0 = std::chrono::steady_clock::now();
        if (kill_after_us >= 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
            kill(child, SIGKILL);
        }
        int st = 0;
        waitpid(child, &st, 0);
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
        return started ? static_cast<long>(us) : -1L;
    };
    // How long creating the session takes unkilled, then kills spread over its second half
    // (the other CPU's buffer).
    const long whole = once(-1);
    ASSERT_GT(whole, 0);
    for (int i = 0; i < 12; ++i)
        once(static_cast<int>(whole * (40 + 5 * i) / 100));
    EXPECT_TRUE(setRingKb(8));
    auto r = createSession();
    EXPECT_TRUE(r.ok()) << why(r);
}
