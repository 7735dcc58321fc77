// Probe lifetime: owned probes die with their socket however the owner dies (unregistered
// by the module's release work after close() returns, gone before the next request is
// served), persistent ones stay until removed, disable/enable keep the probe, and rmmod
// under load, with closed sockets' probes still to unregister, is clean.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"
#include "uapi/probectl.h"

using itest::hasProbe;
using itest::listOrDie;
using itest::why;
using itest::Workload;
using probectl::Client;
using probectl::ProbeKind;
using probectl::ProbeRequest;
using probectl::Session;

TEST(Lifecycle, SigkillOfTheTracerRemovesItsProbes) {
    int ids[2];
    if (pipe(ids))
        FAIL() << "pipe";
    pid_t tracer = fork();
    ASSERT_GE(tracer, 0);
    if (tracer == 0) {
        // The tracer: adds two probes, reports their ids, then waits to be killed.
        auto s = Session::open();
        uint32_t out[2] = {0, 0};
        if (s) {
            auto a = s->add("kprobe:__x64_sys_getppid");
            auto b = s->add("kretprobe:__x64_sys_getppid");
            out[0] = a ? *a : 0;
            out[1] = b ? *b : 0;
        }
        if (write(ids[1], out, sizeof(out)) != sizeof(out))
            _exit(1);
        for (;;)
            pause();
    }
    close(ids[1]);
    uint32_t got[2] = {0, 0};
    ASSERT_EQ(read(ids[0], got, sizeof(got)), static_cast<ssize_t>(sizeof(got)));
    close(ids[0]);
    ASSERT_NE(got[0], 0u) << "tracer could not add its kprobe";
    ASSERT_NE(got[1], 0u) << "tracer could not add its kretprobe";

    Client c = itest::connectOrDie();
    auto before = listOrDie(c);
    ASSERT_TRUE(hasProbe(before, got[0]));
    ASSERT_TRUE(hasProbe(before, got[1]));
    uint64_t addr = 0;
    for (const auto& p : before)
        if (p.id == got[0])
            addr = p.addr;
    ASSERT_NE(addr, 0u);
    EXPECT_EQ(itest::kprobesListedAt(addr).size(), 2u) << "the kprobe and the kretprobe";

    kill(tracer, SIGKILL);
    waitpid(tracer, nullptr, 0);
    // The socket is released during exit, before the parent can reap the child.
    auto after = listOrDie(c);
    EXPECT_FALSE(hasProbe(after, got[0]));
    EXPECT_FALSE(hasProbe(after, got[1]));
    EXPECT_TRUE(itest::kprobesListedAt(addr).empty());
}

TEST(Lifecycle, PersistentProbeOutlivesItsSocketUntilRemoved) {
    uint32_t id = 0;
    uint64_t addr = 0;
    {
        Client c = itest::connectOrDie();
        ProbeRequest req;
        req.symbol = "__x64_sys_getppid";
        req.flags = PROBECTL_PROBE_F_PERSISTENT;
        auto r = c.addProbe(req);
        ASSERT_TRUE(r.ok()) << why(r);
        id = r->id;
        addr = r->addr;
    }
    Client c = itest::connectOrDie();
    auto probes = listOrDie(c);
    ASSERT_TRUE(hasProbe(probes, id));
    for (const auto& p : probes) {
        if (p.id != id)
            continue;
        EXPECT_TRUE(p.persistent());
        EXPECT_TRUE(p.enabled());
        EXPECT_EQ(p.owner, 0u);
        EXPECT_EQ(p.symbol, "__x64_sys_getppid");
        EXPECT_NE(p.addr, 0u);
    }
    // It counts hits while nobody owns it.
    Workload w({itest::workload("getppid_loop"), "10"});
    w.release();
    EXPECT_EQ(w.wait(), 0);
    for (const auto& p : listOrDie(c)) {
        if (p.id == id) {
            EXPECT_GE(p.hits, 10u);
        }
    }
    auto rm = c.removeProbe(id);
    ASSERT_TRUE(rm.ok()) << why(rm);
    EXPECT_EQ(itest::kprobesListedAt(addr).size(), 0u);
    EXPECT_FALSE(hasProbe(listOrDie(c), id));
}

TEST(Lifecycle, ListShowsWhatWasAdded) {
    Client c = itest::connectOrDie();
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    req.symbol = "do_sys_openat2";
    req.maxactive = 20;
    auto r = c.addProbe(req);
    ASSERT_TRUE(r.ok()) << why(r);
    bool seen = false;
    for (const auto& p : listOrDie(c)) {
        if (p.id != r->id)
            continue;
        seen = true;
        EXPECT_EQ(p.kind, ProbeKind::Kretprobe);
        EXPECT_EQ(p.symbol, "do_sys_openat2");
        EXPECT_EQ(p.addr, r->addr);
        EXPECT_NE(p.addr, 0u);
        EXPECT_EQ(p.maxactive, 20u);
        EXPECT_EQ(p.owner, c.portid());
        EXPECT_TRUE(p.enabled());
        EXPECT_FALSE(p.persistent());
    }
    EXPECT_TRUE(seen);
}

TEST(Lifecycle, DisabledProbeStaysButDoesNotFire) {
    Workload w1({itest::workload("getppid_loop"), "100"});
    probectl::SessionOptions opts;
    opts.tgids = {static_cast<uint32_t>(w1.pid())};
    auto s = Session::open(opts);
    ASSERT_TRUE(s.ok()) << why(s);
    auto id = s->add("syscall:getppid");
    ASSERT_TRUE(id.ok()) << why(id);
    ASSERT_TRUE(s->client().disable(*id).ok());
    w1.release();
    EXPECT_EQ(w1.wait(), 0);
    auto st = s->stats();
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(st->probes.at(0).hits, 0u);
    for (const auto& p : listOrDie(s->client())) {
        if (p.id == *id) {
            EXPECT_FALSE(p.enabled());
        }
    }

    Workload w2({itest::workload("getppid_loop"), "100"});
    ASSERT_TRUE(s->setTgids({static_cast<uint32_t>(w2.pid())}).ok());
    ASSERT_TRUE(s->client().enable(*id).ok());
    w2.release();
    EXPECT_EQ(w2.wait(), 0);
    size_t events = 0;
    auto end = s->stop([&](const probectl::Event&) { events++; });
    ASSERT_TRUE(end.ok()) << why(end);
    EXPECT_EQ(end->probes.at(0).hits, 100u);
    EXPECT_EQ(events, 100u);
}

namespace {

// Polls the session's counters until probe `index` has at least `hits` hits.
bool hitsReach(Session& s, std::size_t index, std::uint64_t hits) {
    for (int i = 0; i < 6000; ++i) {
        auto st = s.stats();
        if (st.ok() && st->probes.at(index).hits >= hits)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

}  // namespace

// Stopping a session stops all its probes at once: a kprobe and a syscall probe on the same
// calls count the same calls from a read of their counters (both armed, the caller stopped) to
// the stop, give or take the calls in flight during the stop. Disabled one after the other, the
// second counted calls for the first's request and the disarm of the last (text patching):
// hundreds of calls more. (Their totals differ anyway: the first was armed earlier.) Another
// session's probe on the same calls is left armed and counting.
TEST(Lifecycle, StopEndsAllProbesOfTheSessionTogether) {
    Workload spinner({itest::workload("spin_getppid")});
    probectl::SessionOptions opts;
    opts.tgids = {static_cast<uint32_t>(spinner.pid())};
    auto other = Session::open(opts);
    ASSERT_TRUE(other.ok()) << why(other);
    // Not on __x64_sys_getppid: its kprobe would keep that address armed, and the disarm
    // this test times would patch no text.
    auto theirs = other->add("tracepoint:raw_syscalls:sys_enter");
    ASSERT_TRUE(theirs.ok()) << why(theirs);
    spinner.release();
    for (int round = 0; round < 3; ++round) {
        auto s = Session::open(opts);
        ASSERT_TRUE(s.ok()) << why(s);
        ASSERT_TRUE(s->add("kprobe:__x64_sys_getppid").ok());
        ASSERT_TRUE(s->add("syscall:getppid").ok());
        ASSERT_TRUE(hitsReach(*s, 1, 100)) << "round " << round << ": the probes never fired";
        // The baseline is read with the spinner stopped: the read takes one probe's counters
        // after the other's, and under TCG the other vCPU can run hundreds of calls between.
        ASSERT_EQ(kill(spinner.pid(), SIGSTOP), 0);
        int ws = 0;
        ASSERT_EQ(waitpid(spinner.pid(), &ws, WUNTRACED), spinner.pid());
        ASSERT_TRUE(WIFSTOPPED(ws));
        auto mid = s->stats();
        ASSERT_EQ(kill(spinner.pid(), SIGCONT), 0);
        ASSERT_TRUE(mid.ok()) << why(mid);
        ASSERT_TRUE(hitsReach(*s, 1, mid->probes.at(1).hits + 200)) << "round " << round;
        auto st = s->stop([](const probectl::Event&) {});
        ASSERT_TRUE(st.ok()) << why(st);
        auto counted = [&](std::size_t i) {
            const auto& end = st->probes.at(i);
            const auto& from = mid->probes.at(i);
            return static_cast<std::int64_t>(end.hits + end.nmissed) -
                   static_cast<std::int64_t>(from.hits + from.nmissed);
        };
        EXPECT_LE(std::llabs(counted(0) - counted(1)), 3)
            << "round " << round << ": kprobe " << counted(0) << " calls, syscall " << counted(1);
    }
    auto before = other->stats();
    ASSERT_TRUE(before.ok()) << why(before);
    EXPECT_TRUE(hitsReach(*other, 0, before->probes.at(0).hits + 50))
        << "another session's probe stopped with this one";
    for (const auto& p : listOrDie(other->client())) {
        if (p.id == *theirs) {
            EXPECT_TRUE(p.enabled());
        }
    }
}

// A stop returns only once every hit that began before it has finished: the counters read
// right after it are the final ones, and every hit is delivered, dropped or unreturned. A
// return handler still running on another CPU when the stop returned (TCG can hold that vCPU
// mid-handler while this one runs the whole stop) was counted after the first read below, or
// delivered its record after the flush: `hits 26723` = delivered + dropped + unreturned - 1.
// A spinner per CPU keeps every other CPU inside a handler; another session's probe keeps
// __x64_sys_getppid armed, so the disable patches no text and waits for no other CPU on its
// own. Many rounds, as the race is narrow.
TEST(Lifecycle, CountersAreFinalWhenTheStopReturns) {
    const unsigned cpus = std::max(2u, std::thread::hardware_concurrency());
    std::deque<Workload> spinners;
    probectl::SessionOptions opts;
    for (unsigned i = 0; i < cpus; ++i) {
        spinners.emplace_back(std::vector<std::string>{itest::workload("spin_getppid")});
        opts.tgids.push_back(static_cast<uint32_t>(spinners.back().pid()));
    }
    auto other = Session::open(opts);
    ASSERT_TRUE(other.ok()) << why(other);
    ASSERT_TRUE(other->add("kprobe:__x64_sys_getppid").ok());
    for (auto& w : spinners)
        w.release();
    for (int round = 0; round < 12; ++round) {
        auto s = Session::open(opts);
        ASSERT_TRUE(s.ok()) << why(s);
        auto id = s->add("syscall:getppid a=$arg1:u64");
        ASSERT_TRUE(id.ok()) << why(id);
        ASSERT_TRUE(hitsReach(*s, 0, 200)) << "round " << round << ": the probe never fired";
        ASSERT_TRUE(s->client().disableSession().ok()) << "round " << round;
        probectl::ProbeInfo first;
        for (const auto& p : listOrDie(s->client()))
            if (p.id == *id)
                first = p;
        ASSERT_EQ(first.id, *id) << "round " << round;
        auto st = s->stop([](const probectl::Event&) {});
        ASSERT_TRUE(st.ok()) << why(st);
        const auto& end = st->probes.at(0);
        EXPECT_EQ(first.hits, end.hits) << "round " << round << ": a hit counted after the stop";
        EXPECT_EQ(first.unreturned, end.unreturned)
            << "round " << round << ": a return counted after the stop";
        EXPECT_EQ(end.hits, end.delivered + end.dropped + end.unreturned)
            << "round " << round << ": hits " << end.hits << " delivered " << end.delivered
            << " dropped " << end.dropped << " unreturned " << end.unreturned << " (session lost "
            << st->lost << ", socket overruns " << st->overruns << ")";
        // a call inside when the probe stopped is unreturned: at most one per spinner
        EXPECT_LE(end.unreturned, cpus) << "round " << round;
    }
}

// A filter of one process is checked before the filter's table; replacing it by two other
// processes must drop the first at once, and keep both new ones.
TEST(Lifecycle, ReplacedFilterDropsTheOldProcess) {
    Workload w1({itest::workload("getppid_loop"), "40"});
    Workload w2({itest::workload("getppid_loop"), "50"});
    Workload w3({itest::workload("getppid_loop"), "60"});
    probectl::SessionOptions opts;
    opts.tgids = {static_cast<uint32_t>(w1.pid())};
    auto s = Session::open(opts);
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("syscall:getppid").ok());
    ASSERT_TRUE(
        s->setTgids({static_cast<uint32_t>(w2.pid()), static_cast<uint32_t>(w3.pid())}).ok());
    w1.release();
    EXPECT_EQ(w1.wait(), 0);
    auto st = s->stats();
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(st->probes.at(0).hits, 0u) << "the replaced process was still traced";
    w2.release();
    EXPECT_EQ(w2.wait(), 0);
    w3.release();
    EXPECT_EQ(w3.wait(), 0);
    size_t events = 0;
    auto end = s->stop([&](const probectl::Event&) { events++; });
    ASSERT_TRUE(end.ok()) << why(end);
    EXPECT_EQ(end->probes.at(0).hits, 110u);
    EXPECT_EQ(events, 110u);
}

TEST(Lifecycle, FilterKeepsOtherProcessesOut) {
    Workload traced({itest::workload("getppid_loop"), "50"});
    Workload other({itest::workload("getppid_loop"), "70"});
    probectl::SessionOptions opts;
    opts.tgids = {static_cast<uint32_t>(traced.pid())};
    auto s = Session::open(opts);
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("syscall:getppid").ok());
    other.release();
    EXPECT_EQ(other.wait(), 0);
    traced.release();
    const auto want = static_cast<uint32_t>(traced.pid());
    EXPECT_EQ(traced.wait(), 0);
    size_t events = 0;
    auto st = s->stop([&](const probectl::Event& e) {
        events++;
        EXPECT_EQ(e.tgid, want);
    });
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(events, 50u);
    EXPECT_EQ(st->probes.at(0).hits, 50u);
    EXPECT_GE(st->probes.at(0).filtered, 70u);
}

// close() does not wait for the module to unregister the socket's probes: a work item does
// it. The next request, from any socket, is served only after that work, and a socket that
// gets the closed one's port id again (libnl reuses its local ports) gets a new session: no
// record or probe of the old one shows there. Handlers keep firing through all of it.
TEST(Lifecycle, ClosedSessionsAreGoneForTheNextRequest) {
    Workload spinner({itest::workload("spin_getppid")});
    spinner.release();
    std::vector<uint32_t> closed;
    for (int round = 0; round < 20; ++round) {
        auto s = Session::open();
        ASSERT_TRUE(s.ok()) << why(s);
        for (const auto& p : listOrDie(s->client()))
            for (uint32_t id : closed)
                EXPECT_NE(p.id, id) << "round " << round << ": a closed socket's probe is listed";
        auto a = s->add("kretprobe:__x64_sys_getppid");
        ASSERT_TRUE(a.ok()) << why(a);
        auto b = s->add("syscall:getppid");
        ASSERT_TRUE(b.ok()) << why(b);
        if (round == 19) {
            // The last one reads: only its own records, from its own probes.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            size_t events = 0;
            auto st = s->stop([&](const probectl::Event& e) {
                events++;
                EXPECT_TRUE(e.probe_id == *a || e.probe_id == *b) << e.probe_id;
            });
            ASSERT_TRUE(st.ok()) << why(st);
            EXPECT_GT(events, 0u);
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(round % 3 * 5));
        }
        closed.push_back(*a);
        closed.push_back(*b);
    }
    Client c = itest::connectOrDie();
    for (const auto& p : listOrDie(c))
        for (uint32_t id : closed)
            EXPECT_NE(p.id, id) << "a closed socket's probe is listed";
    EXPECT_TRUE(itest::kprobesListed("getppid").empty()) << "a closed socket's kprobe remains";
}

// rmmod during a trace: the trace ends saying the module went, not "No such file" from the
// first command that found the family gone. The module is loaded again after.
TEST(Lifecycle, TraceSaysTheModuleWasUnloaded) {
    const char* ko = std::getenv("PROBECTL_KO");
    if (!ko)
        GTEST_SKIP() << "PROBECTL_KO not set (run by tests/vm/suite)";
    Workload spinner({itest::workload("spin_getppid")});
    spinner.release();
    const std::string pid = std::to_string(spinner.pid());
    // Armed once a record is in the output (up to 120 s on the debug kernel under TCG).
    itest::Ran r = itest::sh(
        "rm -f /tmp/rmmod-trace.out; probectl trace syscall:getppid -p " + pid +
        " -o /tmp/rmmod-trace.out 2>/tmp/rmmod-trace.err & t=$!; i=0; "
        "while [ ! -s /tmp/rmmod-trace.out ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; "
        "rmmod probectl; kill -INT $t; wait $t; echo rc=$?; cat /tmp/rmmod-trace.err");
    const std::string insmod = std::string("grep -q '^probectl ' /proc/modules || insmod ") + ko;
    ASSERT_EQ(std::system(insmod.c_str()), 0);
    EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the probectl module was unloaded while this session was open"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("No such file"), std::string::npos) << r.out;
}

// Last in this file: the module is unloaded and loaded again.
TEST(Lifecycle, RmmodWhileProbesFireIsClean) {
    const char* ko = std::getenv("PROBECTL_KO");
    if (!ko)
        GTEST_SKIP() << "PROBECTL_KO not set (run by tests/vm/suite)";
    Workload spinner({itest::workload("spin_getppid")});
    spinner.release();
    {
        Client persistent = itest::connectOrDie();
        ProbeRequest req;
        req.symbol = "__x64_sys_getppid";
        req.flags = PROBECTL_PROBE_F_PERSISTENT;
        auto added = persistent.addProbe(req);
        ASSERT_TRUE(added.ok()) << why(added);
        const uint64_t addr = added->addr;
        auto s = Session::open();
        ASSERT_TRUE(s.ok()) << why(s);
        ASSERT_TRUE(s->add("kretprobe:__x64_sys_getppid").ok());
        ASSERT_TRUE(s->add("syscall:getppid").ok());
        // Polled, not a fixed wait: on the debug kernel under a loaded host the spinner may
        // not run within 300 ms (0 hits seen once).
        auto st = s->stats();
        for (int i = 0; i < 300 && st.ok() && st->probes.at(0).hits == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            st = s->stats();
        }
        ASSERT_TRUE(st.ok());
        EXPECT_GT(st->probes.at(0).hits, 0u) << "probes must be firing when the module goes";
        {
            // Closed just before rmmod: module exit unregisters these itself, or waits for
            // the release work that does (a leak or a late handler fails the debug kernel).
            auto closing = Session::open();
            ASSERT_TRUE(closing.ok()) << why(closing);
            ASSERT_TRUE(closing->add("kretprobe:__x64_sys_getppid").ok());
            ASSERT_TRUE(closing->add("syscall:getppid").ok());
        }
        EXPECT_EQ(std::system("rmmod probectl"), 0);
        EXPECT_TRUE(itest::kprobesListedAt(addr).empty());
        // The session's socket outlives the module: its commands fail, saying why.
        auto gone = s->stats();
        ASSERT_FALSE(gone.ok());
        EXPECT_EQ(gone.error().err, ENODEV) << gone.error().message;
        EXPECT_NE(gone.error().message.find("module was unloaded"), std::string::npos)
            << gone.error().message;
    }
    const std::string insmod = std::string("insmod ") + ko;
    ASSERT_EQ(std::system(insmod.c_str()), 0);
    EXPECT_TRUE(Client::connect().ok());
}
