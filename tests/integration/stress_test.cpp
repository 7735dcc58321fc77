// Load on the module's lifetime paths, for the debug kernel's detectors (KASAN, lockdep,
// kmemleak, atomic-sleep checks; tests/vm/debug.config) as much as for the results:
// probes added and removed while they fire, and tracers killed with records in flight.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Client;
using probectl::ProbeKind;
using probectl::ProbeRequest;
using probectl::Session;

namespace {

// A getppid spinner for the duration of a test.
struct Spinner {
    Workload w{{itest::workload("spin_getppid")}};
    Spinner() { w.release(); }
};

}  // namespace

TEST(Stress, ProbesAddedAndRemovedWhileTheyFire) {
    Spinner spin;
    Client c = itest::connectOrDie();
    uint64_t addr = 0;
    std::size_t events = 0;
    for (int round = 0; round < 40; ++round) {
        ProbeRequest kp;
        kp.symbol = "__x64_sys_getppid";
        ProbeRequest kr = kp;
        kr.kind = ProbeKind::Kretprobe;
        auto a = c.addProbe(kp);
        ASSERT_TRUE(a.ok()) << "round " << round << ": " << why(a);
        auto b = c.addProbe(kr);
        ASSERT_TRUE(b.ok()) << "round " << round << ": " << why(b);
        addr = a->addr;
        // Let them fire, take some of the records, and remove the probes with more in flight.
        std::this_thread::sleep_for(std::chrono::milliseconds(round % 4 * 5));
        auto n = c.consumeAtMost(1, [&](const probectl::Event&) { ++events; });
        ASSERT_TRUE(n.ok()) << why(n);
        if (round % 2) {
            ASSERT_TRUE(c.removeProbe(b->id).ok());
            ASSERT_TRUE(c.removeProbe(a->id).ok());
        } else {
            ASSERT_TRUE(c.removeProbe(a->id).ok());
            ASSERT_TRUE(c.removeProbe(b->id).ok());
        }
    }
    // What is still buffered of the removed probes is delivered, not dropped.
    ASSERT_TRUE(c.flush().ok());
    ASSERT_TRUE(c.consume([&](const probectl::Event&) { ++events; }).ok());
    EXPECT_GT(events, 0u) << "the probes never fired";
    EXPECT_TRUE(itest::kprobesListedAt(addr).empty());
}

TEST(Stress, TracersKilledWithRecordsInFlight) {
    Spinner spin;
    constexpr int kTracers = 4;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    std::vector<pid_t> tracers;
    for (int i = 0; i < kTracers; ++i) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            // Adds its probes and never reads: records pile up in the ring and the socket.
            close(ready[0]);
            auto s = Session::open();
            char ok = s && s->add("kprobe:__x64_sys_getppid") &&
                              s->add("kretprobe:__x64_sys_getppid") && s->add("syscall:getppid")
                          ? 1
                          : 0;
            if (write(ready[1], &ok, 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        tracers.push_back(pid);
    }
    close(ready[1]);
    for (int i = 0; i < kTracers; ++i) {
        char ok = 0;
        ASSERT_EQ(read(ready[0], &ok, 1), 1);
        EXPECT_EQ(ok, 1) << "a tracer could not add its probes";
    }
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (pid_t pid : tracers)
        kill(pid, SIGKILL);
    for (pid_t pid : tracers)
        waitpid(pid, nullptr, 0);
    // Each socket is released during its owner's exit, before waitpid returns; the module
    // unregisters its probes from a work item, which the next request waits for.
    Client c = itest::connectOrDie();
    itest::listOrDie(c);
    EXPECT_TRUE(itest::kprobesListed("getppid").empty()) << "probes of killed tracers remain";
}
