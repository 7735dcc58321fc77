// probectl bench --throughput without a kernel: the search for the highest lossless rate
// against fake tracers whose loss threshold is known, the verdict on one run, the report,
// and the count of events in a trace_pipe_raw page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "bench_throughput.hpp"
#include "subcommands.hpp"

namespace probectl::cli {
namespace {

using bench::Measure;
using testing::HasSubstr;

constexpr std::uint64_t kN = 20000;
constexpr unsigned kThreads = 4;

// A tracer that delivers every record once each thread's call plus gap takes at least
// `need_ns` (a rate it keeps up with), and loses some below it; each call costs `call_ns`.
struct FakeRateTracer {
    std::uint64_t call_ns = 2000, need_ns = 0;
    std::vector<std::uint64_t> gaps;
    bench::Outcome operator()(std::uint64_t gap) {
        gaps.push_back(gap);
        Measure m;
        const std::uint64_t per = call_ns + gap;
        m.elapsed_ns = kN / kThreads * per;
        m.hits = kN;
        const bool keeps_up = per >= need_ns;
        m.records = keeps_up ? kN : kN - 100;
        m.lost = keeps_up ? 0 : 100;
        return bench::measured(m);
    }
};

bench::RateSearch search(FakeRateTracer& f) {
    return bench::searchRate(
        "kernel-record", [&](std::uint64_t g) { return f(g); }, kN, kThreads);
}

TEST(BenchThroughput, UnpacedRunThatDeliversAllIsTheAnswer) {
    FakeRateTracer f;
    auto s = search(f);
    ASSERT_TRUE(s.best);
    EXPECT_EQ(s.best->gap_ns, 0u);
    EXPECT_EQ(f.gaps, std::vector<std::uint64_t>{0});
    EXPECT_DOUBLE_EQ(bench::trialRate(*s.best, kN), 2e6);  // 4 threads, 2 us a call
}

TEST(BenchThroughput, SearchFindsTheThresholdWithin20PercentInFewRuns) {
    for (std::uint64_t need : {3000u, 9000u, 50000u, 2000000u}) {
        FakeRateTracer f;
        f.need_ns = need;
        auto s = search(f);
        ASSERT_TRUE(s.best) << need;
        const std::uint64_t needed_gap = need - f.call_ns;
        EXPECT_GE(s.best->gap_ns, needed_gap) << need;
        EXPECT_LE(static_cast<double>(s.best->gap_ns), 1.2 * static_cast<double>(needed_gap))
            << need;
        EXPECT_LE(f.gaps.size(), 1u + bench::kThroughputMaxPaced) << need;
        EXPECT_EQ(s.trials.size(), f.gaps.size());
        EXPECT_FALSE(s.trials.front().complete);
        EXPECT_THAT(s.trials.front().shortfall, HasSubstr("19900 of 20000 records, 100 lost"));
    }
}

TEST(BenchThroughput, NoCompleteRunWithinTheBudgetIsNoRate) {
    FakeRateTracer f;
    f.need_ns = 1ull << 60;
    auto s = search(f);
    EXPECT_FALSE(s.best);
    EXPECT_EQ(f.gaps.size(), 1u + bench::kThroughputMaxPaced);
}

// Runs are noisy: a complete run at a larger gap may be faster than one at a smaller gap;
// the best is the fastest complete run, not the smallest gap.
TEST(BenchThroughput, BestIsTheFastestCompleteRun) {
    int run = 0;
    auto s = bench::searchRate(
        "ftrace-stream",
        [&](std::uint64_t gap) {
            Measure m;
            m.hits = m.records = kN;
            m.lost = gap == 0 ? 5 : 0;
            // The first paced run is slow, later ones (larger gap) faster.
            m.elapsed_ns = ++run == 2 ? 100000000 : 10000000 + gap;
            return bench::measured(m);
        },
        kN, kThreads);
    ASSERT_TRUE(s.best);
    ASSERT_GE(s.trials.size(), 3u);
    EXPECT_NE(s.best->gap_ns, s.trials[1].gap_ns);
    for (const auto& t : s.trials) {
        if (t.complete) {
            EXPECT_LE(bench::trialRate(t, kN), bench::trialRate(*s.best, kN));
        }
    }
}

TEST(BenchThroughput, AFailedRunEndsTheSearchSayingWhere) {
    FakeRateTracer f;
    f.need_ns = 1000000;
    auto s = bench::searchRate(
        "kernel-record",
        [&](std::uint64_t g) { return g > 0 ? bench::fail("workload killed") : f(g); }, kN,
        kThreads);
    EXPECT_FALSE(s.best);
    EXPECT_EQ(s.trials.size(), 1u);
    EXPECT_THAT(s.error, HasSubstr("failed at gap"));
    EXPECT_THAT(s.error, HasSubstr("workload killed"));
    auto skipped = bench::searchRate(
        "ftrace-stream", [](std::uint64_t) { return bench::skip("no tracefs"); }, kN, kThreads);
    EXPECT_EQ(skipped.error, "skipped: no tracefs");
}

TEST(BenchThroughput, CompleteNeedsEveryHitEveryRecordAndNothingLost) {
    Measure m;
    m.elapsed_ns = 1000;
    m.hits = m.records = kN;
    EXPECT_TRUE(bench::judge(m, kN, 0).complete);
    m.lost = 1;  // a drop counted although the count matches (a duplicate, a stale record)
    m.lost_detail = "ring full 1";
    EXPECT_FALSE(bench::judge(m, kN, 0).complete);
    EXPECT_EQ(bench::judge(m, kN, 0).shortfall, "20000 of 20000 records, 1 lost (ring full 1)");
    m.lost = 0;
    m.hits = kN - 1;
    EXPECT_FALSE(bench::judge(m, kN, 0).complete);
    m.hits = kN;
    m.records.reset();
    auto t = bench::judge(m, kN, 7);
    EXPECT_FALSE(t.complete);
    EXPECT_EQ(t.gap_ns, 7u);
    EXPECT_EQ(t.shortfall, "no record count");
}

bench::ThroughputResult result(std::uint64_t kernel_ns, std::uint64_t ftrace_ns) {
    bench::ThroughputResult r;
    r.n = kN;
    r.ring_kb = 64;
    bench::RateSearch k{"kernel-record", {}, std::nullopt, {}};
    bench::Trial lossy{0, kernel_ns / 2, false, "19000 of 20000 records, 1000 lost"};
    bench::Trial ok{1500, kernel_ns, true, {}};
    k.trials = {lossy, ok};
    k.best = ok;
    bench::RateSearch f{"ftrace-stream", {}, std::nullopt, {}};
    bench::Trial fok{0, ftrace_ns, true, {}};
    f.trials = {fok};
    f.best = fok;
    r.searches = {k, f};
    return r;
}

TEST(BenchThroughput, ReportStatesRatesRingGapAndTheAim) {
    std::ostringstream os;
    auto r = result(10000000, 20000000);  // 2e6 and 1e6 events/s
    EXPECT_DOUBLE_EQ(bench::throughputRatio(r), 2.0);
    bench::printThroughput(os, r);
    const std::string s = os.str();
    EXPECT_THAT(s, HasSubstr("ring 64 KiB per CPU for each"));
    EXPECT_THAT(s, HasSubstr("4 threads"));
    EXPECT_THAT(s, HasSubstr("N = 20000"));
    EXPECT_THAT(s, HasSubstr("kernel-record       2000000      1500       2"));
    EXPECT_THAT(s, HasSubstr("0 -> 4000000 (19000 of 20000 records, 1000 lost); 1500 -> 2000000"));
    EXPECT_THAT(s, HasSubstr("ftrace-stream       1000000         0       1"));
    EXPECT_THAT(s, HasSubstr("highest lossless rate: 2.00  aim >= 1.0: met"));
    EXPECT_THAT(s, HasSubstr("QEMU TCG"));

    std::ostringstream slow;
    bench::printThroughput(slow, result(40000000, 20000000));
    EXPECT_THAT(slow.str(), HasSubstr("rate: 0.50  aim >= 1.0: NOT met"));

    auto none = result(1, 1);
    none.searches[1].best.reset();
    none.searches[1].error = "skipped: no tracefs";
    EXPECT_TRUE(std::isnan(bench::throughputRatio(none)));
    std::ostringstream n;
    bench::printThroughput(n, none);
    EXPECT_THAT(n.str(), HasSubstr("ftrace-stream          none"));
    EXPECT_THAT(n.str(), HasSubstr("skipped: no tracefs"));
    EXPECT_THAT(n.str(), HasSubstr("rate: -  aim >= 1.0 (not both found)"));
}

// Each ftrace reader gets its own ratio line: the page counter and the library reader.
TEST(BenchThroughput, EachFtraceReaderHasItsRatio) {
    auto r = result(10000000, 20000000);
    bench::RateSearch i{"ftrace-iterate", {}, std::nullopt, {}};
    bench::Trial iok{0, 5000000, true, {}};  // 4e6 events/s
    i.trials = {iok};
    i.best = iok;
    r.searches.push_back(i);
    EXPECT_DOUBLE_EQ(bench::throughputRatio(r), 2.0);
    EXPECT_DOUBLE_EQ(bench::throughputRatio(r, "ftrace-iterate"), 0.5);
    std::ostringstream os;
    bench::printThroughput(os, r);
    EXPECT_THAT(os.str(), HasSubstr("probectl / ftrace-stream, highest lossless rate: 2.00  aim "
                                    ">= 1.0: met"));
    EXPECT_THAT(os.str(), HasSubstr("probectl / ftrace-iterate, highest lossless rate: 0.50  "
                                    "aim >= 1.0: NOT met"));
}

TEST(BenchThroughput, OptionsDefaultOffAndRingLimits) {
    auto o = parseBenchOptions({});
    ASSERT_TRUE(o);
    EXPECT_EQ(o->throughput, 0u);
    EXPECT_EQ(o->ring_kb, 64u);
    auto on = parseBenchOptions({"--throughput", "5000", "--throughput-ring", "128"});
    ASSERT_TRUE(on);
    EXPECT_EQ(on->throughput, 5000u);
    EXPECT_EQ(on->ring_kb, 128u);
    auto small = parseBenchOptions({"--throughput-ring", "4"});
    ASSERT_FALSE(small);
    EXPECT_THAT(small.error().message, HasSubstr("--throughput-ring must be 8..65536"));
}

// A trace_pipe_raw page as the kernel lays it out (64-bit): time stamp, commit, events.
struct PageBuilder {
    std::vector<unsigned char> page = std::vector<unsigned char>(4096, 0xee);
    std::size_t at = 16;
    void word(std::uint32_t w) {
        std::memcpy(page.data() + at, &w, 4);
        at += 4;
    }
    void data(unsigned type_len, std::size_t payload_words) {
        word(type_len | (3u << 5));
        for (std::size_t i = 0; i < payload_words; ++i)
            word(0);
    }
    void commit(std::uint64_t flags = 0) {
        const std::uint64_t c = (at - 16) | flags;
        std::memcpy(page.data() + 8, &c, 8);
    }
};

TEST(BenchThroughput, RawPageEventsAreCountedSkippingTimeAndPadding) {
    PageBuilder b;
    b.data(6, 6);  // a 24-byte kprobe event: type_len 6
    b.word(30);    // time extend: 8 bytes
    b.word(0);
    b.data(6, 6);
    b.word(0);  // type 0: length in the next word (itself and 36 bytes)
    b.word(40);
    for (int i = 0; i < 9; ++i)
        b.word(0);
    b.word(29 | (1u << 5));  // a discarded event (padding with a delta), 20 bytes in all
    b.word(16);
    b.word(0), b.word(0), b.word(0);
    b.data(6, 6);
    b.commit();
    auto p = bench::parseRawPage(b.page.data(), b.page.size());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->events, 4u);
    EXPECT_FALSE(p->missed);

    b.commit(1ull << 31);
    p = bench::parseRawPage(b.page.data(), b.page.size());
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->missed);
    EXPECT_EQ(p->events, 4u);
}

TEST(BenchThroughput, RawPageEndsAtNullPaddingAndRejectsOverruns) {
    PageBuilder b;
    b.data(6, 6);
    b.word(29);  // padding with no delta: the rest of the page
    b.word(0);
    b.commit();
    auto p = bench::parseRawPage(b.page.data(), b.page.size());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->events, 1u);

    PageBuilder bad;
    bad.data(6, 6);
    bad.commit();
    bad.word(0);                      // a type-0 event past the commit is not read
    const std::uint64_t past = 4096;  // a commit longer than the page
    std::memcpy(bad.page.data() + 8, &past, 8);
    EXPECT_FALSE(bench::parseRawPage(bad.page.data(), bad.page.size()));

    PageBuilder zero;
    zero.word(0);  // type 0 with a zero length would never advance
    zero.word(0);
    zero.commit();
    EXPECT_FALSE(bench::parseRawPage(zero.page.data(), zero.page.size()));
    EXPECT_FALSE(bench::parseRawPage(zero.page.data(), 8));
}

}  // namespace
}  // namespace probectl::cli
