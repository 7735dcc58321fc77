// In-kernel aggregation against the real module: workloads whose keys and values are known
// in advance (workloads/aggr_target.c), so every count, sum, min, max and histogram bucket
// is compared with what the program did; a map too small counts exactly the excess as map
// full; hits always balance. The CLI's count/hist/latency tables and JSON carry the same.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "probectl/aggr.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::AggrEntry;
using probectl::AggrHist;
using probectl::AggrSpec;
using probectl::AggrTable;
using probectl::AggrValue;
using probectl::ProbeStats;
using probectl::Session;
using probectl::SessionOptions;

namespace {

struct Aggregated {
    AggrTable table;
    ProbeStats stats;
    std::string out;  // the workload's stdout
};

// Runs argv under a session filtered on its pid, with `spec` aggregating as `a`.
Aggregated aggregate(const std::string& spec, const AggrSpec& a, std::vector<std::string> argv) {
    Workload w(std::move(argv));
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::prepareAggregation(a, req, args);
    };
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    w.release();
    std::string out;
    EXPECT_EQ(w.wait(&out), 0);
    std::size_t events = 0;
    auto st = s->stop([&](const probectl::Event&) { events++; });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    EXPECT_EQ(events, 0u) << "an aggregating probe sent records";
    const auto& p = s->probes().at(0);
    auto t = probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args);
    if (!t)
        throw std::runtime_error("read: " + why(t));
    return {std::move(*t), st->probes.at(0), out};
}

// Entries by their first key (an integer).
std::map<std::int64_t, const AggrEntry*> byKey(const AggrTable& t) {
    std::map<std::int64_t, const AggrEntry*> m;
    for (const auto& e : t.entries)
        m[probectl::fetchedSigned(e.key.at(0).type, e.key.at(0).raw)] = &e;
    return m;
}

// bpftrace's log2 buckets written out: [0] negative, [1] zero, then [2^j, 2^(j+1)) at j+2.
std::vector<std::uint64_t> log2Buckets(const std::vector<std::int64_t>& values) {
    std::vector<std::uint64_t> b(probectl::kAggrLog2Buckets);
    for (std::int64_t v : values) {
        if (v < 0) {
            b[0]++;
            continue;
        }
        if (v == 0) {
            b[1]++;
            continue;
        }
        for (int j = 0; j < 63; j++)
            if (v >= (1LL << j) && (j == 62 || v < (1LL << (j + 1)))) {
                b[j + 2]++;
                break;
            }
    }
    return b;
}

void expectAggrBalanced(const Aggregated& r) {
    EXPECT_EQ(r.stats.hits, r.table.totalCount() + r.table.overflow + r.table.nested +
                                r.table.faulted + r.stats.rejected);
    EXPECT_EQ(r.stats.dropped, 0u);
}

std::string valSpec() {
    return "uprobe:" + itest::aggrTarget() + ":ag_val k=$arg1:s64 v=$arg2:s64";
}

}  // namespace

TEST(Aggr, CountsSumsAndLog2BucketsPerKey) {
    AggrSpec a;
    a.keys = {"k"};
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Log2;
    auto r = aggregate(valSpec(), a, {itest::aggrTarget(), "values", "100"});
    expectAggrBalanced(r);
    EXPECT_EQ(r.stats.hits, 100u);
    ASSERT_EQ(r.table.entries.size(), 4u);
    EXPECT_EQ(r.table.keys, 4u);
    auto m = byKey(r.table);
    for (std::int64_t k = 0; k < 4; k++) {
        ASSERT_TRUE(m.count(k)) << k;
        const AggrEntry& e = *m[k];
        std::vector<std::int64_t> vals;
        for (std::int64_t i = k; i < 100; i += 4)
            vals.push_back(i);
        EXPECT_EQ(e.count, 25u);
        EXPECT_EQ(e.sum, static_cast<std::uint64_t>(1200 + 25 * k));
        EXPECT_EQ(static_cast<std::int64_t>(e.min), k);
        EXPECT_EQ(static_cast<std::int64_t>(e.max), 96 + k);
        EXPECT_EQ(e.buckets, log2Buckets(vals)) << "key " << k;
    }
}

TEST(Aggr, SignedValuesHaveANegativeBucket) {
    AggrSpec a;
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Log2;
    auto r = aggregate(valSpec(), a, {itest::aggrTarget(), "signed"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    const AggrEntry& e = r.table.entries[0];
    EXPECT_EQ(e.count, 7u);
    EXPECT_EQ(static_cast<std::int64_t>(e.sum), 0);
    EXPECT_EQ(static_cast<std::int64_t>(e.min), -3);
    EXPECT_EQ(static_cast<std::int64_t>(e.max), 3);
    EXPECT_EQ(e.buckets, log2Buckets({-3, -2, -1, 0, 1, 2, 3}));
    EXPECT_EQ(e.buckets[0], 3u);
}

// Integer keys and values are fetched one by one, straight into the key: a value narrower
// than 64 bits is sign-extended from its own width, as from the whole record.
TEST(Aggr, NarrowSignedValueIsSignExtended) {
    AggrSpec a;
    a.keys = {"k"};
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Log2;
    auto r = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val k=$arg1:u8 v=$arg2:s32", a,
                       {itest::aggrTarget(), "signed"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    const AggrEntry& e = r.table.entries[0];
    EXPECT_EQ(e.key.at(0).raw, 0u);
    EXPECT_EQ(e.count, 7u);
    EXPECT_EQ(static_cast<std::int64_t>(e.sum), 0);
    EXPECT_EQ(static_cast<std::int64_t>(e.min), -3);
    EXPECT_EQ(static_cast<std::int64_t>(e.max), 3);
    EXPECT_EQ(e.buckets, log2Buckets({-3, -2, -1, 0, 1, 2, 3}));
}

// A key that cannot be read still counts, under a key marked faulted, apart from the keys
// that were read; a value that cannot be read counts as faulted and in no key. ag_val's
// arguments are small integers, so reading through them faults.
TEST(Aggr, FaultedKeysAndValuesAreKeptApart) {
    AggrSpec by_two;
    by_two.keys = {"bad", "k"};
    auto r = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val bad=+0($arg1):s64 k=$arg1:s64",
                       by_two, {itest::aggrTarget(), "values", "8"});
    expectAggrBalanced(r);
    EXPECT_EQ(r.table.faulted, 0u);
    ASSERT_EQ(r.table.entries.size(), 4u);
    for (const auto& e : r.table.entries) {
        EXPECT_TRUE(e.key.at(0).faulted);
        EXPECT_FALSE(e.key.at(1).faulted);
        EXPECT_LT(e.key.at(1).raw, 4u);
        EXPECT_EQ(e.count, 2u);
    }
    AggrSpec val;
    val.keys = {"k"};
    val.value = AggrValue::Arg;
    val.value_arg = "v";
    r = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val k=$arg1:s64 v=+0($arg2):s64", val,
                  {itest::aggrTarget(), "values", "8"});
    expectAggrBalanced(r);
    EXPECT_EQ(r.table.faulted, 8u);
    EXPECT_TRUE(r.table.entries.empty());
}

// A string key longer than the map's 31 bytes was shown as if whole: two strings that
// share their first 31 bytes made one row that named neither. The kernel marks the cut key
// apart from a string of exactly 31 bytes.
TEST(Aggr, ACutStringKeyIsMarkedAndKeptApartFromAWholeOne) {
    AggrSpec by_s;
    by_s.keys = {"s"};
    auto r = aggregate("uprobe:" + itest::aggrTarget() + ":ag_str s=+0($arg1):ustring", by_s,
                       {itest::aggrTarget(), "strings"});
    expectAggrBalanced(r);
    EXPECT_EQ(r.stats.hits, 8u);
    const std::string a31(31, 'a');
    std::map<std::pair<std::string, bool>, std::uint64_t> rows;
    for (const auto& e : r.table.entries)
        rows[{e.key.at(0).str, e.key.at(0).truncated}] += e.count;
    EXPECT_EQ(rows, (std::map<std::pair<std::string, bool>, std::uint64_t>{
                        {{a31, false}, 1},
                        {{a31, true}, 5},
                        {{"tab\there", false}, 1},
                        {{"\377\376 bad", false}, 1}}));
}

// An unsigned value's last log2 bucket, [2^63, 2^64), read [-8E, 2^64) and its JSON bounds
// were negative.
TEST(Aggr, AnUnsignedValuesTopBucketHasItsOwnBounds) {
    AggrSpec h;
    h.value = AggrValue::Arg;
    h.value_arg = "v";
    h.hist = AggrHist::Log2;
    auto r = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val v=$arg2:u64", h,
                       {itest::aggrTarget(), "big"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    const AggrEntry& e = r.table.entries[0];
    EXPECT_EQ(e.buckets.at(1), 1u);   // 0
    EXPECT_EQ(e.buckets.at(65), 3u);  // 2^64 - 1 twice, 2^63
    EXPECT_EQ(e.max, ~std::uint64_t{0});
    const std::string text = probectl::formatAggrHist(r.table);
    EXPECT_NE(text.find("[8E, 16E) "), std::string::npos) << text;
    const auto top = probectl::aggrJson(r.table, 0)["entries"][0]["hist"][1];
    EXPECT_EQ(top["min"], std::uint64_t{1} << 63) << top;
    EXPECT_EQ(top["max"], ~std::uint64_t{0}) << top;
}

// The map's sums wrap at 64 bits; the table gives the true sum back from count, min and
// max (three values 2^63 + 1 apart from nothing: the u64 sum 3 * 2^63 + 3, the s64 one
// -3 * (2^63 - 1)), and says "?" where they do not pin it (0 and 2^64 - 1 in one key).
TEST(Aggr, SumsPast64BitsAreRecoveredOrSaidUnknown) {
    AggrSpec h;
    h.value = AggrValue::Arg;
    h.value_arg = "v";
    h.hist = AggrHist::Log2;
    const __int128 two63 = static_cast<__int128>(1) << 63;
    auto u = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val v=$arg2:u64", h,
                       {itest::aggrTarget(), "wrap"});
    ASSERT_EQ(u.table.entries.size(), 1u);
    auto sum = probectl::aggrSum(u.table, u.table.entries[0]);
    ASSERT_TRUE(sum);
    EXPECT_TRUE(*sum == 3 * (two63 + 1));
    auto s = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val v=$arg2:s64", h,
                       {itest::aggrTarget(), "wrap"});
    ASSERT_EQ(s.table.entries.size(), 1u);
    sum = probectl::aggrSum(s.table, s.table.entries[0]);
    ASSERT_TRUE(sum);
    EXPECT_TRUE(*sum == -3 * (two63 - 1));
    EXPECT_DOUBLE_EQ(*probectl::aggrAvg(s.table, s.table.entries[0]), -9223372036854775807.0);
    // printed exactly: through a double it was -2^63, below the minimum
    EXPECT_NE(probectl::formatAggrHist(s.table).find("count 3, avg -9223372036854775807, min "
                                                     "-9223372036854775807, max "
                                                     "-9223372036854775807"),
              std::string::npos)
        << probectl::formatAggrHist(s.table);
    auto far = aggregate("uprobe:" + itest::aggrTarget() + ":ag_val v=$arg2:u64", h,
                         {itest::aggrTarget(), "big"});
    ASSERT_EQ(far.table.entries.size(), 1u);
    EXPECT_FALSE(probectl::aggrSum(far.table, far.table.entries[0]));
    EXPECT_NE(probectl::formatAggrHist(far.table).find("avg ?"), std::string::npos);
}

TEST(Aggr, LinearBucketsWithUnderAndOver) {
    AggrSpec a;
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Linear;
    a.lin_min = 10;
    a.lin_max = 50;
    a.lin_step = 10;
    auto r = aggregate(valSpec(), a, {itest::aggrTarget(), "values", "100"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    // below 10: 0..9; four steps of 10; 50 and above: 50..99
    EXPECT_EQ(r.table.entries[0].buckets, (std::vector<std::uint64_t>{10, 10, 10, 10, 10, 50}));
}

// MIN and MAX at the ends of s64, where MAX - MIN + STEP - 1 wraps 64 bits: the step count
// once came out 0, the map got 2 buckets and each hit went to a third, past its value.
TEST(Aggr, LinearOverAllOfS64KeepsEveryHitInItsBucket) {
    AggrSpec a;
    a.keys = {"k"};
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Linear;
    a.lin_min = std::numeric_limits<std::int64_t>::min();
    a.lin_max = std::numeric_limits<std::int64_t>::max();
    a.lin_step = a.lin_max;  // [MIN, -1) [-1, MAX - 1) [MAX - 1, MAX)
    auto r = aggregate(valSpec(), a, {itest::aggrTarget(), "values", "100"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 4u);
    for (const auto& e : r.table.entries)
        EXPECT_EQ(e.buckets, (std::vector<std::uint64_t>{0, 0, 25, 0, 0}));
}

// The module checks the step count itself: a request whose count wraps to 0 in 64 bits
// (2^63 steps of 2) is refused, not given 2 buckets.
TEST(Aggr, KernelRefusesALinearStepCountThatWraps) {
    AggrSpec a;
    a.value = AggrValue::Arg;
    a.value_arg = "v";
    a.hist = AggrHist::Linear;
    a.lin_min = std::numeric_limits<std::int64_t>::min();
    a.lin_max = std::numeric_limits<std::int64_t>::max();
    a.lin_step = std::int64_t{1} << 62;
    Workload w({itest::aggrTarget(), "values", "1"});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        auto p = probectl::prepareAggregation(a, req, args);
        if (p && req.aggr)
            req.aggr->lin_step = 2;  // past libctl's own check
        return p;
    };
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add(valSpec());
    w.release();
    w.wait();
    ASSERT_FALSE(id);
    EXPECT_EQ(id.error().err, EINVAL);
    EXPECT_NE(id.error().describe().find("PROBE_AGGR linear"), std::string::npos)
        << id.error().describe();
}

TEST(Aggr, MapFullCountsTheExcess) {
    AggrSpec a;
    a.keys = {"k"};
    a.max_entries = 8;
    auto r = aggregate(valSpec(), a, {itest::aggrTarget(), "keys", "20"});
    expectAggrBalanced(r);
    EXPECT_EQ(r.stats.hits, 21u);
    EXPECT_EQ(r.table.keys, 8u);
    ASSERT_EQ(r.table.entries.size(), 8u);
    // keys 0..7 fit, the 12 after them do not; the last call is key 0 again
    EXPECT_EQ(r.table.overflow, 12u);
    auto m = byKey(r.table);
    for (std::int64_t k = 0; k < 8; k++)
        EXPECT_EQ(m.at(k)->count, k == 0 ? 2u : 1u) << k;
}

TEST(Aggr, PredicateRunsBeforeTheMap) {
    AggrSpec a;
    auto r = aggregate(valSpec() + " if v >= 60", a, {itest::aggrTarget(), "values", "100"});
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    EXPECT_EQ(r.table.entries[0].count, 40u);
    EXPECT_EQ(r.stats.rejected, 60u);
}

TEST(Aggr, TaskKeysComeFromTheKernel) {
    AggrSpec a;
    a.keys = {"comm", "pid"};
    Workload w({itest::aggrTarget(), "values", "10"});
    const auto pid = static_cast<std::uint32_t>(w.pid());
    SessionOptions o;
    o.tgids = {pid};
    o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::prepareAggregation(a, req, args);
    };
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    ASSERT_TRUE(s->add("uprobe:" + itest::aggrTarget() + ":ag_val")) << "add";
    w.release();
    EXPECT_EQ(w.wait(), 0);
    ASSERT_TRUE(s->stop({}));
    const auto& p = s->probes().at(0);
    auto t = probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args);
    ASSERT_TRUE(t) << why(t);
    ASSERT_EQ(t->entries.size(), 1u);
    EXPECT_EQ(t->entries[0].key.at(0).str, "aggr_target");
    EXPECT_EQ(t->entries[0].key.at(1).raw, pid);
    EXPECT_EQ(t->entries[0].count, 10u);
}

// A map keyed by task fields alone takes the direct path, where $pid, $tid and $cpu are
// decoded at PROBE_ADD and read straight from the task: on a kprobe (kernel context) and a
// uprobe alike, each of the workload's three threads gets its own tid key (the tid it
// printed) with exactly its own calls, all under the workload's pid, and every cpu key is
// a CPU the VM has.
TEST(Aggr, DirectTaskKeysAreTheThreadsOwn) {
    constexpr long kN = 20;
    for (const std::string& spec :
         {std::string("kprobe:__x64_sys_getppid"), "uprobe:" + itest::aggrTarget() + ":ag_val"}) {
        SCOPED_TRACE(spec);
        AggrSpec a;
        a.keys = {"pid", "tid"};
        Workload w({itest::aggrTarget(), "threads", std::to_string(kN)});
        const auto pid = static_cast<std::uint64_t>(w.pid());
        SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(pid)};
        o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
            return probectl::prepareAggregation(a, req, args);
        };
        auto s = Session::open(o);
        ASSERT_TRUE(s) << why(s);
        ASSERT_TRUE(s->add(spec)) << "add";
        AggrSpec by_cpu;
        by_cpu.keys = {"cpu"};
        o.prepare = [&by_cpu](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
            return probectl::prepareAggregation(by_cpu, req, args);
        };
        auto s_cpu = Session::open(o);
        ASSERT_TRUE(s_cpu) << why(s_cpu);
        ASSERT_TRUE(s_cpu->add(spec)) << "add";
        w.release();
        std::string out;
        EXPECT_EQ(w.wait(&out), 0);
        ASSERT_TRUE(s->stop({}));
        ASSERT_TRUE(s_cpu->stop({}));
        std::map<std::uint64_t, std::uint64_t> want;  // tid -> calls
        std::istringstream in(out);
        for (std::uint64_t tid, calls; in >> tid >> calls;)
            want[tid] = calls;
        ASSERT_EQ(want.size(), 3u) << out;
        const auto& p = s->probes().at(0);
        auto t = probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args);
        ASSERT_TRUE(t) << why(t);
        EXPECT_EQ(t->faulted, 0u);
        std::map<std::uint64_t, std::uint64_t> got;
        for (const auto& e : t->entries) {
            EXPECT_EQ(e.key.at(0).raw, pid);
            got[e.key.at(1).raw] += e.count;
        }
        EXPECT_EQ(got, want);
        const auto& pc = s_cpu->probes().at(0);
        auto tc =
            probectl::readAggregation(s_cpu->client(), pc.id, pc.resolution.request, pc.fetch_args);
        ASSERT_TRUE(tc) << why(tc);
        const long ncpu = sysconf(_SC_NPROCESSORS_CONF);
        for (const auto& e : tc->entries)
            EXPECT_LT(e.key.at(0).raw, static_cast<std::uint64_t>(ncpu));
        EXPECT_EQ(tc->totalCount(), 6u * kN);
    }
}

// Latency is time as the guest sees it, which a busy TCG host stretches: each call takes at
// least its sleep and at most what the workload measured around all of them. So: exact
// count, nothing below the shortest sleep's bucket, the 70 ms call at or above its own, and
// the sum between the sleeps and the workload's own total.
void expectSleeps(const Aggregated& r, const std::vector<std::uint64_t>& ms) {
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    const AggrEntry& e = r.table.entries[0];
    EXPECT_EQ(e.count, ms.size());
    std::uint64_t in_buckets = 0, total = 0;
    for (auto n : e.buckets)
        in_buckets += n;
    EXPECT_EQ(in_buckets, ms.size());
    for (auto m : ms)
        total += m * 1'000'000;
    const std::uint64_t lo = *std::min_element(ms.begin(), ms.end()) * 1'000'000;
    const std::uint64_t hi = *std::max_element(ms.begin(), ms.end()) * 1'000'000;
    for (std::size_t b = 0; b < probectl::bucketOf(r.table, lo); b++)
        EXPECT_EQ(e.buckets[b], 0u) << "bucket " << b;
    std::uint64_t at_or_above_hi = 0;
    for (std::size_t b = probectl::bucketOf(r.table, hi); b < e.buckets.size(); b++)
        at_or_above_hi += e.buckets[b];
    EXPECT_GE(at_or_above_hi, 1u);
    EXPECT_GE(e.min, lo);
    EXPECT_GE(e.max, hi);
    EXPECT_GE(e.sum, total);
    EXPECT_LE(e.sum, std::stoull(r.out)) << "the workload measured " << r.out;
}

TEST(Aggr, UretprobeLatencyLandsInItsLog2Buckets) {
    AggrSpec a;
    a.value = AggrValue::Latency;
    a.hist = AggrHist::Log2;
    auto r = aggregate("uretprobe:" + itest::aggrTarget() + ":ag_sleep", a,
                       {itest::aggrTarget(), "sleep", "20", "20", "70"});
    expectSleeps(r, {20, 20, 70});
}

TEST(Aggr, SyscallLatencyByRetval) {
    AggrSpec a;
    a.keys = {"retval"};
    a.value = AggrValue::Latency;
    a.hist = AggrHist::Log2;
    auto r = aggregate("syscall:clock_nanosleep", a, {itest::aggrTarget(), "sleep", "20", "70"});
    expectSleeps(r, {20, 70});
    ASSERT_EQ(r.table.entries.size(), 1u);
    EXPECT_EQ(r.table.entries[0].key.at(0).raw, 0u);  // both returned 0
}

// A kprobe on a syscall wrapper reads $argN from the user's saved registers. An aggregating
// probe fetches those only when a key or value uses $argN: keyed by them, the keys are the
// syscall's own arguments, at entry and (saved at entry) at the return; without them the
// hits still count. sys_args calls lseek(fd, 5, SEEK_SET) once.
TEST(Aggr, SyscallWrapperKeysAreTheSyscallsArguments) {
    const std::string dir = ::testing::TempDir() + "aggr_sys_args." + std::to_string(getpid());
    const std::vector<std::string> argv = {itest::workload("sys_args"), dir};
    AggrSpec by_args;
    by_args.keys = {"off", "whence"};
    for (const char* kind : {"kprobe", "kretprobe"}) {
        SCOPED_TRACE(kind);
        auto r = aggregate(std::string(kind) + ":__x64_sys_lseek off=$arg2:s64 whence=$arg3:s32",
                           by_args, argv);
        std::filesystem::remove(dir);
        expectAggrBalanced(r);
        ASSERT_EQ(r.table.entries.size(), 1u);
        EXPECT_EQ(r.table.entries[0].key.at(0).raw, 5u);
        EXPECT_EQ(r.table.entries[0].key.at(1).raw, static_cast<std::uint64_t>(SEEK_SET));
        EXPECT_EQ(r.table.entries[0].count, 1u);
    }
    auto r = aggregate("kprobe:__x64_sys_lseek", AggrSpec{}, argv);
    std::filesystem::remove(dir);
    expectAggrBalanced(r);
    ASSERT_EQ(r.table.entries.size(), 1u);
    EXPECT_EQ(r.table.entries[0].count, 1u);
}

// A kprobe map that reads no $argN takes the handler's shortest path (no argument
// registers, no record context): its keys and value come from registers and kernel memory
// as a record's would. At __x64_sys_lseek %di points to the user's saved registers, where
// si (+104) is the offset and dx (+96) the whence; sys_args calls lseek(fd, 5, SEEK_SET).
TEST(Aggr, KprobeMapWithoutArgsReadsRegistersAndMemory) {
    const std::string dir = ::testing::TempDir() + "aggr_sys_regs." + std::to_string(getpid());
    const std::vector<std::string> argv = {itest::workload("sys_args"), dir};
    AggrSpec a;
    a.keys = {"whence", "low"};
    a.value = AggrValue::Arg;
    a.value_arg = "off";
    a.hist = AggrHist::Log2;
    auto r = aggregate(
        "kprobe:__x64_sys_lseek off=+104(%di):s64 whence=+96(%di):s32 low=+104(%di):u8", a, argv);
    std::filesystem::remove(dir);
    expectAggrBalanced(r);
    EXPECT_EQ(r.table.faulted, 0u);
    ASSERT_EQ(r.table.entries.size(), 1u);
    const AggrEntry& e = r.table.entries[0];
    EXPECT_EQ(e.key.at(0).raw, static_cast<std::uint64_t>(SEEK_SET));
    EXPECT_EQ(e.key.at(1).raw, 5u);
    EXPECT_EQ(e.count, 1u);
    EXPECT_EQ(e.sum, 5u);
    EXPECT_EQ(e.buckets, log2Buckets({5}));
}

TEST(Aggr, RefusedRequestsNameTheProblem) {
    AggrSpec a;
    a.keys = {"nosuch"};
    probectl::ProbeRequest req;
    std::vector<probectl::FetchArg> args;
    auto r = probectl::prepareAggregation(a, req, args);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no key or value named 'nosuch'"), std::string::npos);
    // the kernel checks too: a key index beyond the fetch arguments
    auto c = itest::connectOrDie();
    probectl::ProbeRequest bad;
    bad.kind = probectl::ProbeKind::Kprobe;
    bad.symbol = "vfs_read";
    probectl::AggrMapSpec s;
    s.nkeys = 1;
    s.keys[0] = 3;
    bad.aggr = s;
    auto added = c.addProbe(bad);
    ASSERT_FALSE(added);
    EXPECT_EQ(added.error().err, EINVAL);
    EXPECT_NE(added.error().describe().find("PROBE_AGGR key 0"), std::string::npos)
        << added.error().describe();
}

namespace {

// The tables of count, hist and latency (on stdout; without their messages).
std::string run(const std::string& cmd) {
    std::string out;
    const bool tables = !cmd.starts_with("probectl record");
    FILE* p = popen(((tables ? itest::tablesOnly(cmd) : cmd) + " 2>/dev/null").c_str(), "r");
    if (!p)
        return out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;)
        out.append(buf, n);
    pclose(p);
    return out;
}

}  // namespace

TEST(AggrCli, CountTableAndJsonAgree) {
    const std::string spec = "'uprobe:" + itest::aggrTarget() + ":ag_val k=$arg1:s64'";
    const std::string text =
        run("probectl count " + spec + " --by k -- " + itest::aggrTarget() + " values 40");
    EXPECT_NE(text.find("K  COUNT"), std::string::npos) << text;
    for (int k = 0; k < 4; k++)
        EXPECT_NE(text.find(std::to_string(k) + "     10"), std::string::npos) << text;
    EXPECT_NE(text.find("4 keys (capacity 1024)"), std::string::npos) << text;
    const std::string js = run("probectl count " + spec + " --by k --format json -- " +
                               itest::aggrTarget() + " values 40");
    auto j = nlohmann::json::parse(js);
    EXPECT_EQ(j["hits"], 40);
    ASSERT_EQ(j["entries"].size(), 4u);
    for (const auto& e : j["entries"])
        EXPECT_EQ(e["count"], 10);
}

// A glob's keyed maps share max_map_kb: each is made for the keys an even share holds (a
// note says how many), and a key beyond is counted as map full, so the counts still add up
// to the hits. With 1 KiB for 3 probes a map of 2 integer keys fits (304 bytes on 2 CPUs);
// before, each asked for 1024 keys (155 KiB) and the glob attached none.
TEST(AggrCli, GlobMapsShareMaxMapKbAndCountWhatDoesNotFit) {
    itest::ModuleParam lim("max_map_kb", "1");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    itest::Ran r =
        itest::sh("probectl count 'uprobe:" + itest::aggrTarget() +
                  ":ag_* k=$arg1:s64' --by k -- " + itest::aggrTarget() + " keys 20 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(": attached ([0-9]+) of \\1\n"))) << r.out;
    EXPECT_NE(r.out.find("probes share the module's max_map_kb (1 KiB): each map holds up to "),
              std::string::npos)
        << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m,
        std::regex("([0-9]+) keys \\(capacity ([0-9]+)\\); map full: ([0-9]+) hits with new keys")))
        << r.out;
    const auto keys = std::stoul(m[1]), cap = std::stoul(m[2]), full = std::stoul(m[3]);
    EXPECT_EQ(keys, cap) << r.out;
    EXPECT_GE(cap, 1u) << r.out;
    EXPECT_LT(cap, 20u) << r.out;
    // keys 0..19, then 0 again: the first `cap` are held (0 twice), the rest map full
    EXPECT_EQ(full, 20 - cap) << r.out;

    // A size given is asked as given, and its refusal names the limit and the option.
    itest::Ran given = itest::sh("probectl count 'uprobe:" + itest::aggrTarget() +
                                 ":ag_* k=$arg1:s64' --by k --max-entries 1024 -- " +
                                 itest::aggrTarget() + " keys 20 2>&1");
    EXPECT_NE(given.status, 0) << given.out;
    EXPECT_NE(given.out.find("over the module's max_map_kb limit"), std::string::npos) << given.out;
    EXPECT_NE(given.out.find("--max-entries"), std::string::npos) << given.out;
}

// One probe's map was never fitted to max_map_kb: a default map of 1024 keys larger than the
// limit was refused by the kernel ("map of 152 KiB > 2 KiB"), where a glob's maps were made
// smaller (seen failing). One probe's map is sized down as a glob's are, with a note.
TEST(AggrCli, OneProbesMapIsSizedToMaxMapKbAsAGlobsAre) {
    itest::ModuleParam lim("max_map_kb", "2");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    itest::Ran r =
        itest::sh("probectl count 'uprobe:" + itest::aggrTarget() +
                  ":ag_val k=$arg1:s64' --by k -- " + itest::aggrTarget() + " keys 20 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("note: a map of 1024 keys does not fit the module's max_map_kb (2 KiB): "
                         "the probe's map holds up to "),
              std::string::npos)
        << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m,
        std::regex("([0-9]+) keys \\(capacity ([0-9]+)\\); map full: ([0-9]+) hits with new keys")))
        << r.out;
    const auto keys = std::stoul(m[1]), cap = std::stoul(m[2]), full = std::stoul(m[3]);
    EXPECT_EQ(keys, cap) << r.out;
    EXPECT_GE(cap, 1u) << r.out;
    EXPECT_LT(cap, 20u) << r.out;
    EXPECT_EQ(full, 20 - cap) << r.out;
}

// Not even one key in each map's share of max_map_kb: the maps were asked for as they were,
// and the kernel's refusal named a map of 1024 keys, not the share, the probes or what to do
// (seen failing). Refused by probectl, for a glob and for one probe alike.
TEST(AggrCli, NotEvenOneKeyFitsSaysWhyAndWhatToDo) {
    itest::ModuleParam lim("max_map_kb", "1");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    // A log2 histogram: one key's values take 560 bytes per possible CPU, twice.
    auto hist = [](const std::string& fn) {
        return itest::sh("probectl hist 'uprobe:" + itest::aggrTarget() + ":" + fn +
                         " k=$arg1:s64 v=$arg2:u64' v --by k -- " + itest::aggrTarget() +
                         " values 8 2>&1");
    };
    itest::Ran glob = hist("ag_*");
    EXPECT_NE(glob.status, 0) << glob.out;
    EXPECT_TRUE(std::regex_search(
        glob.out, std::regex("not even one key fits the map: [0-9]+ probes share the module's "
                             "max_map_kb \\(1 KiB\\), [0-9]+ bytes each, and one key of this map "
                             "needs [0-9]+ bytes \\([0-9]+ possible CPUs?\\)")))
        << glob.out;
    EXPECT_NE(glob.out.find("over the module's max_map_kb limit"), std::string::npos) << glob.out;
    for (const char* what : {"trace fewer probes", "raise the module parameter max_map_kb to ",
                             "use fewer or smaller keys"})
        EXPECT_NE(glob.out.find(what), std::string::npos) << what << "\n" << glob.out;
    itest::Ran one = hist("ag_val");
    EXPECT_NE(one.status, 0) << one.out;
    EXPECT_TRUE(std::regex_search(
        one.out, std::regex("ag_val k=\\$arg1:s64 v=\\$arg2:u64: not even one key fits the map: "
                            "the module's max_map_kb is 1 KiB and one key of this map needs "
                            "[0-9]+ bytes")))
        << one.out;
    EXPECT_NE(one.out.find("raise the module parameter max_map_kb to "), std::string::npos)
        << one.out;
    EXPECT_EQ(one.out.find("trace fewer probes"), std::string::npos) << one.out;
    // No --max-entries was given: lowering it is no advice here (it was added to every
    // max_map_kb refusal of these commands).
    EXPECT_EQ(glob.out.find("--max-entries"), std::string::npos) << glob.out;
    EXPECT_EQ(one.out.find("--max-entries"), std::string::npos) << one.out;
}

// The share note counted the probes the specs expand to, refused ones too: "12 probes share"
// when latency had refused exit and exit_group and 10 were attached (seen failing). It says
// how many attached.
TEST(AggrCli, ShareNoteCountsTheProbesAttached) {
    itest::ModuleParam lim("max_map_kb", "256");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    itest::Ran r = itest::sh("probectl latency 'syscall:e*' --by comm -- " + itest::aggrTarget() +
                             " syscalls 1 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m,
        std::regex("syscall:e\\*: attached ([0-9]+) of ([0-9]+); [^\n]*2 never return "
                   "\\(exit, exit_group\\)")))
        << r.out;
    const std::string attached = m[1];
    std::smatch note;
    ASSERT_TRUE(
        std::regex_search(r.out, note, std::regex("probectl: note: ([^\n]*max_map_kb[^\n]*)")))
        << r.out;
    const std::string said = note[1];
    EXPECT_TRUE(said.starts_with(attached + " probes share the module's max_map_kb") ||
                said.find("; " + attached + " of them attached, each map holding up to ") !=
                    std::string::npos)
        << said;
    EXPECT_FALSE(std::regex_search(said, std::regex("^[0-9]+ probes share")) &&
                 !said.starts_with(attached + " "))
        << said;
}

// A spec with several sites (a function the compiler inlined: its out-of-line copy and each
// inlined one, a probe and a map apiece) was counted as one probe when max_map_kb was shared:
// its first map took the whole budget and the next site's was refused by the kernel ("maps
// need ... > 2 KiB"), so the spec attached nothing (seen failing). Each site now gets its
// share: every map fits, the note counts the probes, and the counts add up to the calls.
TEST(AggrCli, EverySiteOfASpecGetsItsShareOfMaxMapKb) {
    itest::ModuleParam lim("max_map_kb", "2");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    const std::string file = itest::workload("inline_dwarf");
    itest::Ran r = itest::sh("probectl count 'uprobe:" + file + ":helper' --by comm --zeros -- " +
                             file + " 9 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m,
                                  std::regex("note: ([0-9]+) probes share the module's max_map_kb "
                                             "\\(2 KiB\\): each map holds up to ([0-9]+) key")))
        << r.out;
    const auto probes = std::stoul(m[1]), most = std::stoul(m[2]);
    EXPECT_GE(probes, 3u) << "the out-of-line copy, twice's and thrice's\n" << r.out;
    // One table per probe, each map no larger than its share, and every call counted:
    // helper() runs 2 * 9 + 2 times.
    std::size_t tables = 0;
    std::uint64_t calls = 0;
    const std::regex row("\ninline_dwarf +([0-9]+)\n1 key \\(capacity ([0-9]+)\\)\n");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row);
         it != std::sregex_iterator(); ++it) {
        tables++;
        calls += std::stoull((*it)[1]);
        EXPECT_LE(std::stoul((*it)[2]), most) << r.out;
    }
    EXPECT_EQ(tables, probes) << r.out;
    EXPECT_EQ(calls, 20u) << r.out;
}

TEST(AggrCli, HistPrintsBpftraceBuckets) {
    const std::string out = run("probectl hist 'uprobe:" + itest::aggrTarget() +
                                ":ag_val v=$arg2:u64' v -- " + itest::aggrTarget() + " values 8");
    // 0..7: [0] 1, [1] 1, [2, 4) 2, [4, 8) 4 (the longest bar, 52 wide)
    auto line = [](const std::string& label, std::uint64_t n, std::size_t bar) {
        std::string c = std::to_string(n);
        return label + std::string(20 - label.size(), ' ') + std::string(8 - c.size(), ' ') + c +
               " |" + std::string(bar, '@') + std::string(52 - bar, ' ') + "|\n";
    };
    EXPECT_NE(out.find(line("[0]", 1, 13) + line("[1]", 1, 13) + line("[2, 4)", 2, 26) +
                       line("[4, 8)", 4, 52)),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("count 8, avg 4, min 0, max 7"), std::string::npos) << out;
    const std::string js =
        run("probectl hist 'uprobe:" + itest::aggrTarget() +
            ":ag_val v=$arg2:u64' v --format json -- " + itest::aggrTarget() + " values 8");
    auto j = nlohmann::json::parse(js);
    const auto& h = j["entries"][0]["hist"];
    ASSERT_EQ(h.size(), 4u);
    EXPECT_EQ(h[3]["min"], 4);
    EXPECT_EQ(h[3]["max"], 7);
    EXPECT_EQ(h[3]["count"], 4);
}

// Keys the CLI prints: a cut string says so (text "...", JSON key_cut), bytes that are not
// printable are quoted in the text, and bytes that are not UTF-8 no longer abort the JSON
// ("invalid UTF-8 byte"); a recording aggregated in user space gives the same rows.
TEST(AggrCli, StringKeysCutOrNotPrintableInTextAndJson) {
    const std::string spec = "'uprobe:" + itest::aggrTarget() + ":ag_str s=+0($arg1):ustring'";
    const std::string a31(31, 'a');
    const std::string rec = "/tmp/aggr-strings.prb";
    run("probectl record " + spec + " -o " + rec + " -- " + itest::aggrTarget() + " strings");
    for (const std::string& from : {std::string(), " --from " + rec}) {
        SCOPED_TRACE(from);
        const std::string cmd = "probectl count" + (from.empty() ? " " + spec : from) + " --by s";
        const std::string tail = from.empty() ? " -- " + itest::aggrTarget() + " strings" : "";
        const std::string text = run(cmd + tail);
        EXPECT_TRUE(std::regex_search(text, std::regex("\n" + a31 + "\\.\\.\\. +5\n"))) << text;
        EXPECT_TRUE(std::regex_search(text, std::regex("\n" + a31 + " +1\n"))) << text;
        EXPECT_NE(text.find("\"tab\\there\""), std::string::npos) << text;
        EXPECT_NE(text.find("\"\\377\\376 bad\""), std::string::npos) << text;
        const std::string js = run(cmd + " --format json" + tail);
        auto j = nlohmann::json::parse(js, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << js;
        std::uint64_t cut = 0;
        for (const auto& e : j["entries"])
            if (e.contains("key_cut")) {
                EXPECT_EQ(e["key"]["s"], a31);
                EXPECT_EQ(e["key_cut"], nlohmann::json::array({"s"}));
                cut += e["count"].get<std::uint64_t>();
            }
        EXPECT_EQ(cut, 5u) << js;
        EXPECT_NE(js.find("\xef\xbf\xbd\xef\xbf\xbd bad"), std::string::npos) << js;  // U+FFFD
    }
}

// --by retval on an int function printed -1 as 4294967295 alone; --by errno on a syscall
// printed -2. Each now also reads as the trace line reads it.
TEST(AggrCli, RetvalAndErrnoKeysReadAsTheTraceLineDoes) {
    const std::string neg = itest::workload("uprobe_target");
    const std::string rv =
        run("probectl count uretprobe:" + neg + ":pc_neg --by retval -- " + neg + " neg 2");
    EXPECT_TRUE(std::regex_search(rv, std::regex("\n4294967295 \\(int -1\\) +1\n"))) << rv;
    EXPECT_TRUE(std::regex_search(rv, std::regex("\n4294967294 \\(int -2\\) +1\n"))) << rv;
    const std::string en =
        run("probectl count syscall:chdir --by errno -- " + itest::aggrTarget() + " syscalls 3");
    EXPECT_TRUE(std::regex_search(en, std::regex("\n-2 \\(ENOENT\\) +3\n"))) << en;
}

// count's --comm and hist's --uid filter in the kernel, as trace's do: another program's
// and another user's calls are FILTERED, not counted.
TEST(AggrCli, TaskFiltersKeepOnlyTheirTasksHits) {
    const std::string loop = itest::workload("getppid_loop");
    const std::string other = "/tmp/other_loop";
    ASSERT_EQ(itest::sh("cp " + loop + " " + other + " && chmod 755 " + other).status, 0);
    auto j =
        nlohmann::json::parse(run("probectl count syscall:getppid --by comm --comm "
                                  "'getppid_*' --format json -f -- sh -c '" +
                                  loop + " 30 >/dev/null; " + other + " 20 >/dev/null'"));
    ASSERT_EQ(j["entries"].size(), 1u) << j.dump();
    EXPECT_EQ(j["entries"][0]["key"]["comm"], "getppid_loop") << j.dump();
    EXPECT_EQ(j["entries"][0]["count"], 30) << j.dump();
    EXPECT_GE(j["filtered"], 20) << j.dump();
    const std::string spec = "'uprobe:" + itest::aggrTarget() + ":ag_val v=$arg2:u64'";
    const std::string hist =
        run("probectl hist " + spec + " v --uid probe --format json -f -- sh -c '" +
            itest::aggrTarget() + " values 8 >/dev/null; su -s /bin/sh probe -c \"" +
            itest::aggrTarget() + " values 4 >/dev/null\"'");
    auto h = nlohmann::json::parse(hist);
    ASSERT_EQ(h["entries"].size(), 1u) << hist;
    EXPECT_EQ(h["entries"][0]["count"], 4) << hist;
    EXPECT_EQ(h["filtered"], 8) << hist;
}

// A spec's own argument named like a task field is the key, live and from a recording
// alike (a recording counted by the task's pid), and probectl says so.
TEST(AggrCli, AnArgumentNamedLikeATaskFieldIsTheKeyAndSaidSo) {
    const std::string spec = "'uprobe:" + itest::aggrTarget() + ":ag_val pid=$arg1:s64'";
    const std::string rec = "/tmp/aggr-pid-arg.prb";
    run("probectl record " + spec + " -o " + rec + " -- " + itest::aggrTarget() + " values 8");
    for (const std::string& cmd :
         {"probectl count " + spec + " --by pid -- " + itest::aggrTarget() + " values 8",
          "probectl count --from " + rec + " --by pid"}) {
        auto r = itest::sh(cmd + " 2>&1");
        ASSERT_EQ(r.status, 0) << cmd << "\n" << r.out;
        if (cmd.find("--from") == std::string::npos) {  // the live run; its specs are given
            EXPECT_NE(
                r.out.find("note: 'pid' is the spec's argument pid=$arg1:s64, not the task's pid"),
                std::string::npos)
                << r.out;
        }
        for (int k = 0; k < 4; k++)
            EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + std::to_string(k) + " +2\n")))
                << cmd << "\n"
                << r.out;
    }
}

// count/hist --from a recording of the same workload gives the kernel map's numbers.
TEST(AggrCli, FromRecordingGivesTheKernelsAnswer) {
    const std::string spec = "'uprobe:" + itest::aggrTarget() + ":ag_val k=$arg1:s64 v=$arg2:s64'";
    const std::string rec = "/tmp/aggr-from.prb";
    const std::string live = run("probectl hist " + spec + " v --by k --format json -- " +
                                 itest::aggrTarget() + " values 100");
    run("probectl record " + spec + " -o " + rec + " -- " + itest::aggrTarget() + " values 100");
    const std::string from = run("probectl hist --from " + rec + " v --by k --format json");
    auto byK = [](const std::string& js) {
        std::map<std::int64_t, nlohmann::json> m;
        auto j = nlohmann::json::parse(js);
        for (auto e : j["entries"]) {
            const std::int64_t k = e["key"]["k"];
            m[k] = e;
        }
        return m;
    };
    auto a = byK(live), b = byK(from);
    ASSERT_EQ(a.size(), 4u) << live;
    ASSERT_EQ(b.size(), 4u) << from;
    for (const auto& [k, e] : a) {
        SCOPED_TRACE(k);
        for (const char* f : {"count", "sum", "min", "max", "hist"})
            EXPECT_EQ(e[f], b[k][f]) << f << "\nlive: " << live << "\nfrom: " << from;
    }
    // Probes are chosen by glob; none matching names what the recording holds.
    const std::string none = run("probectl count --from " + rec + " 'kprobe:*' 2>&1 | cat");
    EXPECT_NE(none.find("no recorded probe matches kprobe:*"), std::string::npos) << none;
    EXPECT_NE(none.find("ag_val"), std::string::npos) << none;
}
