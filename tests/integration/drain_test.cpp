// The drain is woken by the record path: a CPU that committed a quarter of its ring since
// the drain last ran queues it at once, so records stream out of a small ring at a rate no
// drain_interval_ms poll keeps up with. The poll stays, for the records that never add up
// to a wake-up.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/event_view.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::Session;

using Param = itest::ModuleParam;

namespace {

using Clock = std::chrono::steady_clock;

// Runs `between` until probe `index` of `s` counted `hits` hits or `seconds` passed (the
// caller's counts then say what was missing).
template <class Between>
testing::AssertionResult waitForHits(Session& s, std::size_t index, std::uint64_t hits, int seconds,
                                     Between&& between) {
    const auto give_up = Clock::now() + std::chrono::seconds(seconds);
    for (;;) {
        auto st = s.stats();
        if (!st.ok())
            return testing::AssertionFailure() << "stats: " << why(st);
        if (st->probes.at(index).hits >= hits || Clock::now() > give_up)
            return testing::AssertionSuccess();
        if (auto r = between(); !r)
            return r;
    }
}

// Reads `s` into `cb` while its workload runs, until probe `index` counted `hits` hits or
// `seconds` passed.
template <class Callback>
testing::AssertionResult readUntilHits(Session& s, std::size_t index, std::uint64_t hits,
                                       Callback&& cb, int seconds = 120) {
    return waitForHits(s, index, hits, seconds, [&]() -> testing::AssertionResult {
        auto n = s.poll(50, cb);
        if (!n.ok())
            return testing::AssertionFailure() << "poll: " << why(n);
        return testing::AssertionSuccess();
    });
}

// A session whose filter is `w`'s process, with `spec` added; `o` carries anything else.
probectl::Result<Session> sessionOn(const Workload& w, const std::string& spec,
                                    probectl::SessionOptions o = {}) {
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    if (!s)
        return s;
    if (auto id = s->add(spec); !id)
        return std::move(id).error();
    return s;
}

}  // namespace

// 8 KiB per CPU holds about 90 records; the workload commits 16 every millisecond or so, for
// 4000 in all, while the poll comes once a second: without a wake-up the ring is full within
// ten milliseconds and nearly every record is dropped (the next test). With it, all but a few
// arrive: the drain must run within about four milliseconds of its wake-up, which a loaded
// TCG host does not always grant, so up to 1% may be dropped, each one counted.
TEST(Drain, RecordPathWakesTheDrainBeforeASmallRingFills) {
    constexpr int kCalls = 4000;
    constexpr std::uint64_t kMostDropped = kCalls / 100;
    Param kb("buffer_kb", "8");
    Param interval("drain_interval_ms", "1000");
    ASSERT_TRUE(kb.ok() && interval.ok());

    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls), "16", "1000"});
    auto s = sessionOn(w, "kprobe:__x64_sys_getppid");
    ASSERT_TRUE(s.ok()) << why(s);
    std::size_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    // Read while it runs, until every call was counted as a hit, then one more poll period
    // for the records that have not added up to a wake-up.
    ASSERT_TRUE(readUntilHits(*s, 0, kCalls, count));
    const auto last_poll = Clock::now() + std::chrono::milliseconds(1500);
    for (;;) {
        auto st = s->stats();
        ASSERT_TRUE(st.ok()) << why(st);
        if (got + st->probes.at(0).dropped >= kCalls || Clock::now() > last_poll)
            break;
        auto n = s->poll(50, count);
        ASSERT_TRUE(n.ok()) << why(n);
    }
    // Delivered by the drain itself, not by stop()'s flush.
    const std::size_t before_stop = got;
    EXPECT_EQ(w.wait(), 0);
    auto st = s->stop(count);
    ASSERT_TRUE(st.ok()) << why(st);
    const auto& p = st->probes.at(0);
    EXPECT_EQ(got, before_stop) << "records left for stop()'s flush: the drain did not send them";
    EXPECT_EQ(p.hits, static_cast<std::uint64_t>(kCalls));
    EXPECT_EQ(p.delivered, got);
    EXPECT_EQ(p.delivered + p.dropped, p.hits) << "a hit neither delivered nor counted as dropped";
    EXPECT_LE(p.dropped, kMostDropped) << "the wake-up did not keep the small ring drained";
    EXPECT_EQ(p.nmissed, 0u);
    EXPECT_EQ(st->lost + st->overruns, 0u);
}

// wake_percent 100 leaves the drain to its poll: the same burst then overruns the 8 KiB
// ring between polls, and every hit is either delivered or counted as dropped. Over 100 is
// refused.
TEST(Drain, WakePercentHundredLeavesTheDrainToItsPoll) {
    constexpr int kCalls = 4000;
    Param kb("buffer_kb", "8");
    Param interval("drain_interval_ms", "1000");
    Param wake("wake_percent", "100");
    ASSERT_TRUE(kb.ok() && interval.ok() && wake.ok());
    {
        Param over("wake_percent", "101");
        EXPECT_FALSE(over.ok()) << "101 was accepted";
    }
    EXPECT_EQ(itest::readFile("/sys/module/probectl/parameters/wake_percent"), "100\n");

    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls), "16", "1000"});
    auto s = sessionOn(w, "kprobe:__x64_sys_getppid");
    ASSERT_TRUE(s.ok()) << why(s);
    std::uint64_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    EXPECT_EQ(w.wait(), 0);
    auto st = s->stop(count);
    ASSERT_TRUE(st.ok()) << why(st);
    const auto& p = st->probes.at(0);
    EXPECT_EQ(p.hits, static_cast<std::uint64_t>(kCalls));
    EXPECT_GT(p.dropped, 0u);
    EXPECT_EQ(got, p.delivered);
    EXPECT_EQ(p.delivered + p.dropped, static_cast<std::uint64_t>(kCalls));
}

// A new drain_interval_ms reaches a running session at once: a drain already waiting out a
// minute is run now and rearms with the new interval (it used to keep the records a
// minute). 0 and over a minute are refused.
TEST(Drain, LoweredIntervalReachesARunningSession) {
    Param interval("drain_interval_ms", "60000");
    ASSERT_TRUE(interval.ok());
    for (const char* bad : {"0", "60001"}) {
        Param refused("drain_interval_ms", bad);
        EXPECT_FALSE(refused.ok()) << bad << " was accepted";
    }
    // 40 calls, one every 100 ms: none adds up to a wake-up
    Workload w({itest::workload("getppid_loop"), "40", "1", "100000"});
    auto s = sessionOn(w, "kprobe:__x64_sys_getppid");
    ASSERT_TRUE(s.ok()) << why(s);
    std::size_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    ASSERT_TRUE(readUntilHits(*s, 0, 3, count, 30));
    EXPECT_EQ(got, 0u) << "delivered before the minute was up";
    {
        Param fast("drain_interval_ms", "10");
        ASSERT_TRUE(fast.ok());
        const auto deadline = Clock::now() + std::chrono::seconds(3);
        while (got < 3 && Clock::now() < deadline) {
            auto n = s->poll(50, count);
            ASSERT_TRUE(n.ok()) << why(n);
        }
        EXPECT_GE(got, 3u) << "the new interval did not reach the session";
    }
}

// A lone record never adds up to a wake-up: the poll still delivers it, without a FLUSH.
TEST(Drain, LoneRecordArrivesByThePoll) {
    Param interval("drain_interval_ms", "200");
    ASSERT_TRUE(interval.ok());
    Workload w({itest::workload("getppid_loop"), "1"});
    auto s = sessionOn(w, "kprobe:__x64_sys_getppid");
    ASSERT_TRUE(s.ok()) << why(s);
    std::size_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    EXPECT_EQ(w.wait(), 0);
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    while (got == 0 && Clock::now() < give_up) {
        auto n = s->poll(100, count);
        ASSERT_TRUE(n.ok()) << why(n);
    }
    EXPECT_EQ(got, 1u);
    auto st = s->stop(count);
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(got, 1u);
    EXPECT_EQ(st->probes.at(0).delivered, 1u);
    EXPECT_FALSE(st->anyLoss());
}

// Records are handed to a view callback straight from the received message (no copy): a
// command sent from the callback (here stats(), a dump of the session's thirty-odd probes,
// several KiB) must read its replies elsewhere, or they overwrite the message whose later
// records the callback has yet to see.
TEST(Drain, CommandFromAViewCallbackLeavesTheMessageIntact) {
    constexpr int kCalls = 1000;
    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls)});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    auto id = s->add("kprobe:__x64_sys_getppid");
    ASSERT_TRUE(id.ok()) << why(id);
    // Probes the workload does not hit, for a larger dump.
    for (const char* name :
         {"getuid",    "geteuid",   "getgid",    "getegid",     "gettid",    "getsid",
          "getgroups", "getresuid", "getresgid", "getrlimit",   "getrusage", "getcwd",
          "getitimer", "getcpu",    "setuid",    "setgid",      "setsid",    "setpgid",
          "setgroups", "setresuid", "setresgid", "setpriority", "setitimer", "sethostname"})
        (void)s->add(std::string("kprobe:__x64_sys_") + name);
    ASSERT_GT(s->probes().size(), 20u);
    const auto pid = static_cast<std::uint32_t>(w.pid());  // wait() forgets it
    w.release();
    EXPECT_EQ(w.wait(), 0);
    std::size_t got = 0, seen = 0, wrong = 0, commands = 0;
    const auto check = [&](const probectl::EventView& v) {
        if (v.tgid() != pid || v.comm() != "getppid_loop")
            wrong++;
        got += v.probeId() == *id;
        // Mid-message (a message carries a hundred records or more): a command now.
        if (seen++ % 50 == 1) {
            auto st = s->stats();
            ASSERT_TRUE(st.ok()) << why(st);
            commands++;
        }
    };
    // Read as the drain sends them: with no command in flight (as stop()'s FLUSH would be)
    // the records are not queued as copies but handed out from the message.
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    while (got < kCalls && Clock::now() < give_up) {
        pollfd p{s->fd(), POLLIN, 0};
        ASSERT_GE(::poll(&p, 1, 100), 0);
        auto n = s->consumeViews(check);
        ASSERT_TRUE(n.ok()) << why(n);
    }
    auto st = s->stopViews(check);
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_GT(commands, 10u);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(got, static_cast<std::size_t>(kCalls));
    EXPECT_FALSE(st->anyLoss());
}

// Received records reach a view callback straight from the message: reading the
// workload's records as the drain sends them allocates nothing, however many messages
// they take (no command in flight: one would queue them as copies).
TEST(Drain, ReceivedRecordsReachAViewCallbackWithoutAllocating) {
    constexpr int kCalls = 1000;
    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls)});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    auto id = s->add("kprobe:__x64_sys_getppid r15=+0(%di):x64");
    ASSERT_TRUE(id.ok()) << why(id);
    w.release();
    EXPECT_EQ(w.wait(), 0);
    std::size_t got = 0;
    const probectl::EventViewCallback count = [&got](const probectl::EventView& v) {
        got += v.fetchedCount() == 1;
    };
    std::size_t news = 0;
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    while (got < kCalls && Clock::now() < give_up) {
        pollfd p{s->fd(), POLLIN, 0};
        ASSERT_GE(::poll(&p, 1, 100), 0);
        const std::size_t before = itest::allocations();
        auto n = s->client().consumeViews(count);
        news += itest::allocations() - before;
        ASSERT_TRUE(n.ok()) << why(n);
    }
    EXPECT_EQ(got, static_cast<std::size_t>(kCalls));
    EXPECT_EQ(news, 0u);
}

// A burst larger than the receive buffer: the drain sends what the socket takes and leaves
// the rest in the ring, and netlink never tells it when the reader frees room. The messages
// that fill the socket say so (EVENTS_MORE), and a reader that has emptied its socket asks
// for the rest at once: every record arrives well before the next drain_interval_ms
// poll, here 5 s away, where without the request a 128 KiB socket took one poll period per
// bufferful (about 700 records).
TEST(Drain, ReaderThatEmptiesItsSocketGetsTheRestBeforeThePoll) {
    constexpr int kCalls = 4000;
    Param kb("buffer_kb", "1024");  // the whole burst fits: nothing is dropped either way
    Param interval("drain_interval_ms", "5000");
    ASSERT_TRUE(kb.ok() && interval.ok());

    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls)});
    probectl::SessionOptions o;
    o.client.rcvbuf_bytes = 64 << 10;
    o.client.force_rcvbuf = false;
    auto s = sessionOn(w, "kprobe:__x64_sys_getppid", o);
    ASSERT_TRUE(s.ok()) << why(s);
    std::size_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    EXPECT_EQ(w.wait(), 0);
    // The first bufferful comes with a wake-up or the first poll, within one interval.
    const auto give_up = Clock::now() + std::chrono::seconds(12);
    while (got == 0 && Clock::now() < give_up) {
        auto n = s->poll(50, count);
        ASSERT_TRUE(n.ok()) << why(n);
    }
    ASSERT_GT(got, 0u) << "no record within 12 s";
    // 4000 records of at least 136 bytes do not fit 128 KiB: the first poll may already have
    // asked for the rest (one poll reads up to 64 messages), the old reader had to wait.
    const auto first = Clock::now();
    const auto deadline = first + std::chrono::seconds(2);
    while (got < kCalls && Clock::now() < deadline) {
        auto n = s->poll(50, count);
        ASSERT_TRUE(n.ok()) << why(n);
    }
    EXPECT_EQ(got, static_cast<std::size_t>(kCalls))
        << "after the first bufferful, the rest waited for the drain's poll";
    auto st = s->stop(count);
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(st->probes.at(0).delivered, static_cast<std::uint64_t>(kCalls));
    EXPECT_EQ(st->probes.at(0).dropped, 0u);
    EXPECT_EQ(st->lost, 0u);
}

// What the drain reads from the ring: both event shapes (up to 112 bytes the size is in the
// event's header, larger records carry it in a word of their own), a time-extend event after
// each pause longer than the header's 27-bit time delta (134 ms), padding where a page ends,
// and pages the writer is still filling. Every record must arrive once, whole, and each
// CPU's in the order they were written. A drain that reads whole pages parses all of these
// itself: this is its test.
TEST(Drain, RecordsOfEveryRingEventShapeArriveWholeOnceEach) {
    constexpr std::uint64_t kCalls = 3000;
    Param interval("drain_interval_ms", "20");
    Param kb("buffer_kb", "2048");  // the whole run fits: nothing is dropped
    ASSERT_TRUE(interval.ok() && kb.ok());
    const std::string target = itest::workload("aggr_target");
    Workload w({target, "paced", std::to_string(kCalls), "700", "150"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    bool small = false;  // the second probe's records: the fixed part and two values, 64 bytes
    o.prepare = [&small](probectl::ProbeRequest& r,
                         std::vector<probectl::FetchArg>&) -> probectl::Result<void> {
        if (small)
            r.record_parts = 0;
        return {};
    };
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    auto big = s->add("uprobe:" + target + ":ag_val v=$arg2");
    ASSERT_TRUE(big.ok()) << why(big);
    small = true;
    auto little = s->add("uprobe:" + target + ":ag_val k=$arg1 v=$arg2");
    ASSERT_TRUE(little.ok()) << why(little);
    const std::uint32_t big_id = s->probes().at(0).id, small_id = s->probes().at(1).id;

    std::map<std::uint32_t, std::multiset<std::uint64_t>> seen;             // probe -> values
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> last;  // probe, cpu
    std::uint64_t out_of_order = 0, bad = 0;
    const auto check = [&](const Event& e) {
        const std::uint64_t v = e.values.empty() ? ~0ull : e.values.back().raw;
        seen[e.probe_id].insert(v);
        auto [it, first] = last.try_emplace({e.probe_id, e.cpu}, v);
        if (!first && v <= it->second)
            out_of_order++;
        it->second = v;
        if (e.probe_id == big_id)
            bad += e.comm != "aggr_target" || e.args[0] != v % 4 || e.args[1] != v ||
                   e.values.size() != 1;
        else
            bad += e.values.size() != 2 || e.values[0].raw != v % 4 || !e.comm.empty();
    };
    w.release();
    // Read while it runs (about 0.6 s of pauses): the 20 ms drain reads pages the writer is
    // still filling.
    ASSERT_TRUE(readUntilHits(*s, 1, kCalls, check));
    EXPECT_EQ(w.wait(), 0);
    auto st = s->stop(check);
    ASSERT_TRUE(st.ok()) << why(st);
    for (std::uint32_t id : {big_id, small_id}) {
        std::string missing, twice;
        std::uint64_t n_missing = 0, n_twice = 0;
        for (std::uint64_t i = 0; i < kCalls; i++) {
            const auto n = seen[id].count(i);
            if (n == 0 && n_missing++ < 20)
                missing += " " + std::to_string(i);
            if (n > 1 && n_twice++ < 20)
                twice += " " + std::to_string(i);
        }
        EXPECT_EQ(n_missing + n_twice, 0u)
            << "probe " << id << ": " << n_missing << " values missing (" << missing << " ), "
            << n_twice << " more than once (" << twice << " ); " << seen[id].size()
            << " records in all";
    }
    EXPECT_EQ(out_of_order, 0u) << "a CPU's records out of the order they were written";
    EXPECT_EQ(bad, 0u) << "records whose parts or values do not match their call";
    for (const auto& p : st->probes)
        EXPECT_TRUE(p.hits == kCalls && p.delivered == kCalls && p.dropped + p.nmissed == 0)
            << "probe " << p.id << ": hits " << p.hits << ", delivered " << p.delivered
            << ", dropped " << p.dropped << ", nmissed " << p.nmissed;
    EXPECT_FALSE(st->anyLoss()) << "lost " << st->lost << ", overruns " << st->overruns;
}

// A drain that has read a CPU's page up to its last record, when that CPU's next record does
// not fit in the rest of the page: the ring fills the rest with a discarded (padding) event
// and goes on in a new page, and a reader of whole pages then gets a page that holds only
// that padding. The records after it are in the next page, and the flush must still send
// them: here the last ten records of a run.
TEST(Drain, FlushReadsPastAPageOfPadding) {
    Param interval("drain_interval_ms", "5000");  // only the flushes read the ring
    ASSERT_TRUE(interval.ok());
    const std::string target = itest::workload("aggr_target");
    // On CPU 0: 37 calls, a pause, 10 more. Records of 104 bytes (all parts, no values)
    // take 108 bytes of ring: 37 fill 3996 of a page's 4080, the 38th does not fit.
    Workload w({target, "paced", "47", "37", "600"});
    auto s = sessionOn(w, "uprobe:" + target + ":ag_val");
    ASSERT_TRUE(s.ok()) << why(s);
    std::size_t got = 0;
    const auto count = [&got](const Event&) { got++; };
    w.release();
    // In the pause, read the first page up to its last record.
    ASSERT_TRUE(waitForHits(*s, 0, 37, 30, [] {
        usleep(20000);
        return testing::AssertionSuccess();
    }));
    ASSERT_TRUE(s->client().flush().ok());
    auto n = s->poll(100, count);
    ASSERT_TRUE(n.ok()) << why(n);
    EXPECT_EQ(w.wait(), 0);
    auto st = s->stop(count);
    ASSERT_TRUE(st.ok()) << why(st);
    EXPECT_EQ(st->probes.at(0).hits, 47u);
    EXPECT_EQ(got, 47u);
    EXPECT_EQ(st->probes.at(0).delivered, 47u);
    EXPECT_FALSE(st->anyLoss());
}
