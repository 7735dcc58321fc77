// EventAggregator: the kernel map's rules over decoded events (keys, values, buckets,
// capacity, faulted values, return-only values), and aggregating a recording with it.
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "aggr_cli.hpp"
#include "aggr_recorded.hpp"
#include "probectl/aggr_events.hpp"
#include "probectl/recording.hpp"
#include "trace_export_events.hpp"

using namespace probectl;

namespace {

Event hit(const std::string& comm, std::uint32_t tgid, std::int64_t size, bool ret = false) {
    Event e;
    e.comm = comm;
    e.tgid = tgid;
    e.pid = tgid + 1;
    e.is_return = ret;
    FetchedValue v;
    v.name = "size";
    v.type = FetchType::S64;
    v.raw = static_cast<std::uint64_t>(size);
    e.values.push_back(v);
    return e;
}

// The spec names the arguments the tests' events carry (keys must be among them) and is a
// return probe (their events have return values and latencies).
constexpr const char* kSpec =
    "uretprobe:libc:malloc size=$arg1 name=+0($arg2):string path=+0($arg2):string";

EventAggregator make(const AggrSpec& s) {
    auto a = EventAggregator::create(s, kSpec);
    EXPECT_TRUE(a) << (a ? "" : a.error().message);
    return std::move(*a);
}

}  // namespace

TEST(EventAggregator, CountsPerTaskKeyInFirstSeenOrder) {
    AggrSpec s;
    s.keys = {"comm", "pid"};
    auto a = make(s);
    for (int i = 0; i < 3; i++)
        a.add(hit("ls", 10, 1));
    a.add(hit("cat", 20, 1));
    a.add(hit("ls", 11, 1));
    const AggrTable& t = a.table();
    EXPECT_EQ(t.spec, kSpec);
    ASSERT_EQ(t.entries.size(), 3u);
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "ls, 10");
    EXPECT_EQ(t.entries[0].count, 3u);
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), "cat, 20");
    EXPECT_EQ(formatAggrKey(t, t.entries[2]), "ls, 11");
    EXPECT_EQ(t.totalCount(), 5u);
    EXPECT_EQ(t.keys, 3u);
}

// A spec's own argument named like a task field is the key, as the kernel's map takes it:
// a recording of `pid=$arg1 --by pid` counted by the task's pid instead.
TEST(EventAggregator, TheSpecsOwnArgumentComesBeforeATaskField) {
    AggrSpec s;
    s.keys = {"pid"};
    auto a = make(s);
    Event e = hit("ls", 10, 1);
    FetchedValue own;
    own.name = "pid";
    own.type = FetchType::U32;
    own.raw = 42;
    e.values.push_back(own);
    a.add(e);
    a.add(hit("ls", 10, 1));  // no such argument: the task's
    const AggrTable& t = a.table();
    ASSERT_EQ(t.entries.size(), 2u);
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "42");
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), "10");
}

TEST(EventAggregator, SignedValueGoesToTheKernelsLog2Buckets) {
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "size";
    s.hist = AggrHist::Log2;
    auto a = make(s);
    for (std::int64_t v : {-5, 0, 1, 3, 3, 1024})
        a.add(hit("x", 1, v));
    const AggrTable& t = a.table();
    ASSERT_EQ(t.entries.size(), 1u);
    const AggrEntry& e = t.entries[0];
    EXPECT_TRUE(t.is_signed);
    EXPECT_EQ(e.count, 6u);
    EXPECT_EQ(static_cast<std::int64_t>(e.min), -5);
    EXPECT_EQ(e.max, 1024u);
    EXPECT_EQ(static_cast<std::int64_t>(e.sum), 1026);
    ASSERT_EQ(e.buckets.size(), kAggrLog2Buckets);
    EXPECT_EQ(e.buckets[bucketOf(t, static_cast<std::uint64_t>(-5))], 1u);
    EXPECT_EQ(e.buckets[0], 1u);   // negative
    EXPECT_EQ(e.buckets[1], 1u);   // zero
    EXPECT_EQ(e.buckets[2], 1u);   // [1]
    EXPECT_EQ(e.buckets[3], 2u);   // [2, 4)
    EXPECT_EQ(e.buckets[12], 1u);  // [1024, 2048)
}

TEST(EventAggregator, LinearBucketsHaveUnderAndOver) {
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "size";
    s.hist = AggrHist::Linear;
    s.lin_min = 0;
    s.lin_max = 100;
    s.lin_step = 30;  // 4 steps, the last short: [0,30) [30,60) [60,90) [90,100)
    auto a = make(s);
    for (std::int64_t v : {-1, 0, 29, 30, 95, 100, 1000})
        a.add(hit("x", 1, v));
    const AggrEntry& e = a.table().entries.at(0);
    ASSERT_EQ(e.buckets.size(), 6u);
    EXPECT_EQ(e.buckets, (std::vector<std::uint64_t>{1, 2, 1, 0, 1, 2}));
}

// The ptrace backend's histogram over all of s64: a step count that wrapped 64 bits once
// left 2 buckets, and a hit of 0 indexed a third.
TEST(EventAggregator, LinearOverAllOfS64KeepsEveryHitInABucket) {
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "size";
    s.hist = AggrHist::Linear;
    s.lin_min = std::numeric_limits<std::int64_t>::min();
    s.lin_max = std::numeric_limits<std::int64_t>::max();
    s.lin_step = s.lin_max;  // 3 steps, the last one 1 long
    auto a = make(s);
    for (std::int64_t v : {s.lin_min, std::int64_t{-1}, std::int64_t{0}, s.lin_max - 1, s.lin_max})
        a.add(hit("x", 1, v));
    const AggrEntry& e = a.table().entries.at(0);
    ASSERT_EQ(e.buckets.size(), 5u);
    EXPECT_EQ(e.buckets, (std::vector<std::uint64_t>{0, 1, 2, 1, 1}));
}

TEST(EventAggregator, LatencyCountsOnlyReturns) {
    AggrSpec s;
    s.value = AggrValue::Latency;
    s.hist = AggrHist::Log2;
    auto a = make(s);
    Event entry = hit("x", 1, 0, false);
    Event ret = hit("x", 1, 0, true);
    ret.latency_ns = 1500;
    a.add(entry);
    a.add(ret);
    const AggrEntry& e = a.table().entries.at(0);
    EXPECT_EQ(e.count, 1u);
    EXPECT_EQ(e.sum, 1500u);
    EXPECT_EQ(a.table().value_name, "latency");
}

// errno is strace's failed call: -4095..-1 keeps its value, anything else is 0.
TEST(EventAggregator, ErrnoKeyIsTheFailedCallsRetvalElseZero) {
    AggrSpec s;
    s.keys = {"errno"};
    s.value = AggrValue::Latency;
    auto a = make(s);
    for (std::int64_t rv : {0, 5, -2, -2, -4095, -4096, 3}) {
        Event ret = hit("x", 1, 0, true);
        ret.retval = static_cast<std::uint64_t>(rv);
        ret.latency_ns = 10;
        a.add(ret);
    }
    a.add(hit("x", 1, 0, false));  // an entry: no return value yet
    const AggrTable& t = a.table();
    ASSERT_EQ(t.entries.size(), 3u);
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "0");
    EXPECT_EQ(t.entries[0].count, 4u);  // 0, 5, -4096 (no errno), 3
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), "-2 (ENOENT)");
    EXPECT_EQ(t.entries[1].count, 2u);
    EXPECT_EQ(formatAggrKey(t, t.entries[2]), "-4095");
    EXPECT_EQ(t.totalCount(), 7u);
}

// A return whose value is not known (the ptrace backend's syscall of a killed thread: no
// kRecordPartRetval) has its latency, but no retval or errno: not a return of 0 (it was
// counted as one, a success), nor a read that faulted (it was keyed <fault>, and as a
// value counted in `faulted`): its key part is unknown ("?"), its value counted apart.
TEST(EventAggregator, AReturnWithoutItsValueHasNoRetvalNorErrno) {
    Event ret = hit("x", 1, 0, true);
    ret.latency_ns = 10;
    ret.parts &= ~kRecordPartRetval;
    for (const char* key : {"errno", "retval"}) {
        SCOPED_TRACE(key);
        AggrSpec s;
        s.keys = {key};
        s.value = AggrValue::Latency;
        auto a = make(s);
        a.add(ret);
        const AggrTable& t = a.table();
        ASSERT_EQ(t.entries.size(), 1u);
        ASSERT_EQ(t.entries[0].key.size(), 1u);
        EXPECT_TRUE(t.entries[0].key[0].unknown);
        EXPECT_FALSE(t.entries[0].key[0].faulted);
        EXPECT_EQ(formatAggrKey(t, t.entries[0]), "?");
        EXPECT_EQ(aggrJson(t)["entries"][0]["key"][key], nullptr);
        EXPECT_EQ(t.entries[0].sum, 10u);
    }
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "retval";
    s.hist = AggrHist::Log2;
    auto a = make(s);
    a.add(ret);
    EXPECT_EQ(a.table().totalCount(), 0u);
    EXPECT_EQ(a.table().faulted, 0u);
    EXPECT_EQ(a.table().unknown, 1u);
    AggrSpec lat;
    lat.value = AggrValue::Latency;
    auto l = make(lat);
    l.add(ret);
    EXPECT_EQ(l.table().totalCount(), 1u);
}

// hist VALUE with VALUE a task field (the ptrace backend fetches no arguments): as the
// kernel's hidden argument, from the return's retval.
TEST(EventAggregator, ValueMayBeATaskField) {
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "retval";
    s.hist = AggrHist::Log2;
    auto a = make(s);
    for (std::int64_t rv : {-2, 0, 3}) {
        Event ret;
        ret.is_return = true;
        ret.retval = static_cast<std::uint64_t>(rv);
        a.add(ret);
    }
    a.add(Event{});  // an entry has no return value
    const AggrTable& t = a.table();
    ASSERT_EQ(t.entries.size(), 1u);
    EXPECT_EQ(t.entries[0].count, 3u);
    EXPECT_EQ(t.faulted, 0u);
    EXPECT_TRUE(t.is_signed);
    EXPECT_EQ(static_cast<std::int64_t>(t.entries[0].min), -2);
    EXPECT_EQ(t.entries[0].buckets[0], 1u) << "negative";
    EXPECT_EQ(t.entries[0].buckets[1], 1u) << "zero";
}

TEST(EventAggregator, MapFullCountsNewKeysAsOverflow) {
    AggrSpec s;
    s.keys = {"pid"};
    s.max_entries = 2;
    auto a = make(s);
    for (std::uint32_t pid = 1; pid <= 5; pid++)
        a.add(hit("x", pid, 0));
    a.add(hit("x", 1, 0));  // a held key still counts
    const AggrTable& t = a.table();
    EXPECT_EQ(t.entries.size(), 2u);
    EXPECT_EQ(t.overflow, 3u);
    EXPECT_EQ(t.totalCount() + t.overflow, 6u);
    EXPECT_EQ(t.capacity, 2u);
}

// As the kernel's map (prepareAggregation): one key without keys, the default with some.
TEST(EventAggregator, CapacityIsOneWithoutKeys) {
    AggrSpec s;
    EXPECT_EQ(make(s).table().capacity, 1u);
    s.keys = {"pid"};
    EXPECT_EQ(make(s).table().capacity, kAggrDefaultEntries);
}

TEST(EventAggregator, FaultedValueIsCountedApartAndMissingKeyIsAFaultedPart) {
    AggrSpec s;
    s.keys = {"name"};
    s.value = AggrValue::Arg;
    s.value_arg = "size";
    auto a = make(s);
    Event e = hit("x", 1, 7);
    e.values[0].faulted = true;
    a.add(e);
    a.add(hit("x", 1, 7));  // no "name" value: the key part is faulted
    const AggrTable& t = a.table();
    EXPECT_EQ(t.faulted, 1u);
    ASSERT_EQ(t.entries.size(), 1u);
    EXPECT_TRUE(t.entries[0].key.at(0).faulted);
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "<fault>");
}

// A key the spec's events cannot carry is refused, naming the spec, instead of counting
// every event under <fault>; a text that is no spec (a site's label) is not judged.
TEST(EventAggregator, UnknownKeyIsRefused) {
    AggrSpec s;
    s.keys = {"comm", "nosuch"};
    auto a = EventAggregator::create(s, "uprobe:libc:malloc size=$arg1");
    ASSERT_FALSE(a);
    EXPECT_TRUE(a.error().usage);
    EXPECT_EQ(a.error().message.rfind("uprobe:libc:malloc size=$arg1: no key or value named "
                                      "'nosuch' (there are: size, comm",
                                      0),
              0u)
        << a.error().message;
    EXPECT_TRUE(EventAggregator::create(s, "p"));
}

// exit and exit_group never return: the ptrace backend's aggregation refused latency and
// $retval there as the kernel does, where it counted hits with no value ("hits 1", 0 keys).
TEST(EventAggregator, SyscallsThatNeverReturnHaveNoLatency) {
    AggrSpec lat;
    lat.value = AggrValue::Latency;
    auto a = EventAggregator::create(lat, "syscall:exit_group");
    ASSERT_FALSE(a);
    EXPECT_TRUE(a.error().usage);
    EXPECT_EQ(a.error().message,
              "syscall:exit_group: exit_group never returns (the task ends in it), so it has no "
              "latency: count or trace it instead, or leave it out");
    AggrSpec by_errno;
    by_errno.keys = {"comm", "errno"};
    auto e = EventAggregator::create(by_errno, "syscall:exit");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message,
              "syscall:exit: exit never returns (the task ends in it), so it has no $errno: key "
              "by another field, or leave it out");
    EXPECT_TRUE(EventAggregator::create(AggrSpec{}, "syscall:exit_group"));
    EXPECT_TRUE(EventAggregator::create(lat, "syscall:getppid"));
}

TEST(EventAggregator, StringKeysKeepTheKernelsBound) {
    AggrSpec s;
    s.keys = {"path"};
    auto a = make(s);
    for (const std::string tail : {"a", "b"}) {
        Event e;
        FetchedValue v;
        v.name = "path";
        v.type = FetchType::String;
        v.str = std::string(40, 'p') + tail;  // equal in their first 31 bytes
        e.values.push_back(v);
        a.add(e);
    }
    const AggrTable& t = a.table();
    ASSERT_EQ(t.entries.size(), 1u);
    EXPECT_EQ(t.entries[0].count, 2u);
    EXPECT_EQ(t.entries[0].key[0].str.size(), kAggrStrLen - 1);
}

// --by uid on the ptrace backend said "events do not carry the uid", while its unknown-key
// error listed uid (and kstack) among the keys there are: both now list the same keys, the
// ones events answer.
TEST(EventAggregator, TheKeysItListsAreTheOnesItTakes) {
    AggrSpec uid;
    uid.keys = {"uid"};
    auto a = EventAggregator::create(uid, "syscall:getppid");
    ASSERT_FALSE(a);
    EXPECT_TRUE(a.error().usage);
    EXPECT_EQ(a.error().message,
              "syscall:getppid: key uid: the events probectl aggregates itself (the ptrace "
              "backend, --ustack=dwarf, a recording) do not carry the uid; they take comm, pid, "
              "tid, cpu, retval, errno, ustack (the kernel's maps take uid)");
    AggrSpec bogus;
    bogus.keys = {"bogus"};
    auto b = EventAggregator::create(bogus, "uprobe:/bin/true:main");
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().message,
              "uprobe:/bin/true:main: no key or value named 'bogus' (there are: comm, pid, tid, "
              "cpu, ustack)");
    // hist's value too: no event has one to read
    AggrSpec value;
    value.value = AggrValue::Arg;
    value.value_arg = "uid";
    value.hist = AggrHist::Log2;
    auto v = EventAggregator::create(value, "syscall:getppid");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().message.rfind("syscall:getppid: value uid: the events probectl", 0), 0u)
        << v.error().message;
    // a spec's own argument named uid is that argument
    AggrSpec own;
    own.keys = {"uid"};
    EXPECT_TRUE(EventAggregator::create(own, "uprobe:/bin/true:main uid=$arg1:u32"));
    // the kernel's rules still list uid and kstack
    AggrSpec k;
    k.keys = {"bogus"};
    auto kernel = checkAggrNames(k, {}, false);
    ASSERT_FALSE(kernel);
    EXPECT_NE(kernel.error().message.find("comm, pid, tid, uid, cpu, kstack, ustack"),
              std::string::npos)
        << kernel.error().message;
}

// hist's value is summed and bucketed as an integer: a string (comm, a string argument) or a
// stack was taken, and every hit was then said to be one "whose VALUE could not be read".
// Refused as the kernel backend refuses it (AggrRequest.HistValueMustBeAnInteger).
TEST(EventAggregator, HistValueMustBeAnInteger) {
    auto hist = [](const std::string& value) {
        AggrSpec s;
        s.value = AggrValue::Arg;
        s.value_arg = value;
        s.hist = AggrHist::Log2;
        return s;
    };
    for (const char* field : {"comm", "name"}) {
        auto a = EventAggregator::create(hist(field), kSpec);
        ASSERT_FALSE(a) << field;
        EXPECT_TRUE(a.error().usage);
        EXPECT_EQ(a.error().message, fmt::format("{}: value '{}' is not an integer", kSpec, field));
    }
    auto u = EventAggregator::create(hist("ustack"), "syscall:getppid");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().message,
              "syscall:getppid: value 'ustack' is a stack, not an integer: count --by ustack "
              "counts the hits of each stack");
    EXPECT_TRUE(EventAggregator::create(hist("size"), kSpec));
    EXPECT_TRUE(EventAggregator::create(hist("pid"), kSpec));
    EXPECT_TRUE(EventAggregator::create(hist("arg2"), "usdt:/bin/x:p:n"));
}

TEST(EventAggregator, RefusesWhatEventsCannotAnswer) {
    AggrSpec s;
    s.keys = {"uid"};
    auto a = EventAggregator::create(s, "p");
    ASSERT_FALSE(a);
    EXPECT_TRUE(a.error().usage);
    EXPECT_NE(a.error().message.find("uid"), std::string::npos);
    AggrSpec h;
    h.hist = AggrHist::Log2;
    EXPECT_FALSE(EventAggregator::create(h, "p"));
    AggrSpec many;
    many.keys = {"a", "b", "c", "d", "e"};
    EXPECT_FALSE(EventAggregator::create(many, "p"));
}

// Recording -> count/hist/latency --from: the sample run of the trace writers' tests.

namespace {

std::string sampleRecording(bool summary) {
    const std::string path = testing::TempDir() + (summary ? "/aggr.rec" : "/aggr-cut.rec");
    auto w = recordingWriter(path, 0);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->begin(1, TraceClocks{}).ok());
    for (const auto& ev : exporttest::sampleRun())
        EXPECT_TRUE((*w)->event(ev).ok());
    if (summary)
        EXPECT_TRUE((*w)->finish(exporttest::sampleStats()).ok());
    else
        EXPECT_TRUE((*w)->flush().ok());
    return path;
}

}  // namespace

TEST(AggregateRecording, CountsEveryProbeByKeyWithTheSummarysCounters) {
    AggrSpec s;
    s.keys = {"pid"};
    auto r = cli::aggregateRecording(sampleRecording(true), s, {});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->has_summary);
    ASSERT_EQ(r->tables.size(), 3u);
    ASSERT_EQ(r->stats.probes.size(), 3u);
    // Probe 2 (the uretprobe): two returns in pid 100, one in pid 200.
    const AggrTable& t = r->tables[1];
    EXPECT_EQ(t.probe_id, 2u);
    ASSERT_EQ(t.entries.size(), 2u);
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "100");
    EXPECT_EQ(t.entries[0].count, 2u);
    EXPECT_EQ(t.entries[1].count, 1u);
    EXPECT_EQ(r->stats.probes[1].id, 2u);
    EXPECT_EQ(r->stats.probes[1].hits, exporttest::sampleStats().probes[1].hits);
}

TEST(AggregateRecording, LatencyOfOneProbeChosenByGlob) {
    AggrSpec s;
    s.value = AggrValue::Latency;
    s.hist = AggrHist::Log2;
    auto r = cli::aggregateRecording(sampleRecording(false), s, {"uretprobe:*"});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(r->has_summary);
    ASSERT_EQ(r->tables.size(), 1u);
    const AggrEntry& e = r->tables[0].entries.at(0);
    EXPECT_EQ(e.count, 3u);
    EXPECT_EQ(e.min, 600u);
    EXPECT_EQ(e.max, 1300u);
    EXPECT_EQ(e.sum, 600u + 1300u + 900u);
    EXPECT_EQ(r->stats.probes[0].hits, 3u);  // no summary: the events recorded
}

TEST(AggregateRecording, NoMatchingProbeNamesThoseHeld) {
    auto r = cli::aggregateRecording(sampleRecording(true), AggrSpec{}, {"kprobe:nothing*"});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_NE(r.error().message.find("kprobe:do_sys_openat2"), std::string::npos)
        << r.error().message;
}

TEST(AggrCliOptions, FromTakesGlobsAndRefusesWhatBelongsToTheRecordingRun) {
    auto c = cli::parseAggrOptions(cli::AggrMode::Count,
                                   {"--from", "run.prb", "syscall:*", "--by", "comm"});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->from, "run.prb");
    EXPECT_EQ(c->only, std::vector<std::string>{"syscall:*"});
    EXPECT_TRUE(c->specs.empty());
    auto h = cli::parseAggrOptions(cli::AggrMode::Hist, {"--from", "run.prb", "n"});
    ASSERT_TRUE(h);
    EXPECT_EQ(h->aggr.value_arg, "n");
    EXPECT_TRUE(h->only.empty());
    EXPECT_FALSE(cli::parseAggrOptions(cli::AggrMode::Hist, {"--from", "run.prb"}));
    for (auto extra : std::vector<std::vector<std::string>>{
             {"-p", "1"}, {"--duration", "1"}, {"-f", "--", "ls"}, {"--", "ls"}}) {
        std::vector<std::string> a = {"--from", "run.prb"};
        a.insert(a.end(), extra.begin(), extra.end());
        auto r = cli::parseAggrOptions(cli::AggrMode::Count, a);
        ASSERT_FALSE(r) << extra[0];
        EXPECT_NE(r.error().message.find("--from reads a recording"), std::string::npos)
            << r.error().message;
    }
}
