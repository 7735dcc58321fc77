// count, hist and latency's read-outs (aggr_print.hpp) from tables made here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "aggr_print.hpp"
#include "format.hpp"

namespace probectl::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

AggrCliOptions options(AggrMode mode, std::vector<std::string> args) {
    auto o = parseAggrOptions(mode, args);
    EXPECT_TRUE(o) << o.error().message;
    return o ? *o : AggrCliOptions{};
}

AggrTable table(const std::string& spec, std::uint32_t id, std::uint64_t count) {
    AggrTable t;
    t.spec = spec;
    t.probe_id = id;
    t.entries.push_back({{}, count, 0, 0, 0, {}});
    return t;
}

ProbeStats probe(std::uint32_t id, std::uint64_t hits, std::uint64_t unreturned = 0) {
    ProbeStats p;
    p.id = id;
    p.hits = hits;
    p.unreturned = unreturned;
    return p;
}

FetchedValue stackId(std::uint32_t id) {
    FetchedValue f;
    f.name = kUserStackArg;
    f.type = FetchType::U32;
    f.raw = id;
    return f;
}

// A table keyed by ustack: stack id -> count.
AggrTable stackTable(const std::string& spec, std::uint32_t probe_id,
                     const std::vector<std::pair<std::uint32_t, std::uint64_t>>& counts) {
    AggrTable t;
    t.spec = spec;
    t.probe_id = probe_id;
    t.key_names = {kUserStackArg};
    for (const auto& [id, n] : counts)
        t.entries.push_back({{stackId(id)}, n, 0, 0, 0, {}});
    return t;
}

// Stack id N is "main" under "fN" (innermost first), whatever the probe.
const StackLines kStacks = [](std::uint32_t, std::uint32_t id) -> const std::vector<std::string>* {
    static std::map<std::uint32_t, std::vector<std::string>> lines;
    auto [it, added] = lines.try_emplace(id);
    if (added)
        it->second = {"f" + std::to_string(id), "main"};
    return &it->second;
};

std::string printed(const AggrCliOptions& o, const std::vector<AggrTable>& tables,
                    const SessionStats& stats, const std::string& when = {},
                    const StackLines* stacks = nullptr, std::string* err = nullptr) {
    std::ostringstream out, e;
    auto r = printAggrReadout(o, {tables, stats, stats, when}, out, e, "standard output", stacks);
    EXPECT_TRUE(r) << r.error().message;
    if (err)
        *err = e.str();
    return out.str();
}

// A stream that cannot be written is an error naming it, whatever the format.
TEST(AggrPrint, AnUnwritableOutputIsAnErrorNamingIt) {
    const std::vector<AggrTable> tables = {table("kprobe:vfs_read", 1, 5)};
    SessionStats stats;
    stats.probes = {probe(1, 5)};
    for (const char* format : {"text", "json"}) {
        auto o = options(AggrMode::Count, {"kprobe:vfs_read", "--format", format});
        std::ostringstream out, err;
        out.setstate(std::ios::badbit);
        auto r = printAggrReadout(o, {tables, stats, stats, {}}, out, err, "counts.txt");
        ASSERT_FALSE(r) << format;
        EXPECT_EQ(r.error().describe(), "cannot write counts.txt (Input/output error)");
    }
}

// Folded output of several probes: the same stack under two probes stays two stacks, each
// standing on its probe's spec as the flame graph draws it; one probe needs no such frame.
TEST(AggrPrint, FoldedStacksOfSeveralProbesStandOnTheirSpec) {
    auto o =
        options(AggrMode::Count, {"uprobe:app:a", "uprobe:app:b", "--by", "ustack", "--backend",
                                  "ptrace", "--ustack=dwarf", "--format", "folded", "--", "true"});
    const std::vector<AggrTable> two = {stackTable("uprobe:app:a", 1, {{1, 3}}),
                                        stackTable("uprobe:app:b", 2, {{1, 2}})};
    SessionStats stats;
    stats.probes = {probe(1, 3), probe(2, 2)};
    EXPECT_EQ(printed(o, two, stats, {}, &kStacks),
              "uprobe:app:a;main;f1 3\n"
              "uprobe:app:b;main;f1 2\n");
    stats.probes.resize(1);
    EXPECT_EQ(printed(o, {two[0]}, stats, {}, &kStacks), "main;f1 3\n");
}

// --top N keeps the N heaviest stacks of each probe in folded and svg output, as in text.
TEST(AggrPrint, TopKeepsTheHeaviestStacksInFoldedAndSvg) {
    const std::vector<AggrTable> tables = {stackTable("uprobe:app:a", 1, {{1, 1}, {2, 7}, {3, 4}}),
                                           stackTable("uprobe:app:b", 2, {{4, 2}, {5, 9}})};
    SessionStats stats;
    stats.probes = {probe(1, 12), probe(2, 11)};
    const std::vector<std::string> common = {"uprobe:app:a",   "uprobe:app:b", "--by",
                                             "ustack",         "--backend",    "ptrace",
                                             "--ustack=dwarf", "-p",           "1"};
    auto args = common;
    args.insert(args.end(), {"--format", "folded", "--top", "1"});
    EXPECT_EQ(printed(options(AggrMode::Count, args), tables, stats, {}, &kStacks),
              "uprobe:app:a;main;f2 7\n"
              "uprobe:app:b;main;f5 9\n");
    args = common;
    args.insert(args.end(), {"--format", "svg", "-o", "x.svg", "--top", "2"});
    const std::string svg = printed(options(AggrMode::Count, args), tables, stats, {}, &kStacks);
    for (const char* kept : {">f2 (7 hits", ">f3 (4 hits", ">f5 (9 hits", ">f4 (2 hits"})
        EXPECT_THAT(svg, HasSubstr(kept));
    EXPECT_THAT(svg, Not(HasSubstr(">f1 (")));
    EXPECT_THAT(svg, HasSubstr("top 2 stacks"));
}

// A kernel uretprobe's calls nested past the kernel's limit have no return probe: said apart
// from those that never returned, with the limit when the module reported it.
TEST(AggrPrint, ReturnsNotProbedPastTheNestingLimitAreSaidApart) {
    SessionStats stats;
    stats.probes = {probe(1, 100, 0)};
    stats.probes[0].depth_skipped = 36;
    stats.probes[0].depth_limit = 64;
    auto latency = options(AggrMode::Latency, {"uretprobe:/bin/true:main"});
    const std::string why =
        "; 36 returns not probed: nesting deeper than the kernel's uretprobe limit";
    EXPECT_THAT(printed(latency, {table("uretprobe:/bin/true:main", 1, 64)}, stats),
                HasSubstr("nmissed 0, never returned 0" + why + " of 64\n"));
    auto plain = options(AggrMode::Count, {"uretprobe:/bin/true:main"});
    EXPECT_THAT(
        printed(plain, {table("uretprobe:/bin/true:main", 1, 64)}, stats),
        HasSubstr("uretprobe:/bin/true:main: never returned 0 (not counted)" + why + " of 64\n"));
    stats.probes[0].depth_limit = 0;
    EXPECT_THAT(printed(latency, {table("uretprobe:/bin/true:main", 1, 64)}, stats),
                HasSubstr("never returned 0" + why + "\n"));
}

// count on a return probe counts returns: the entries that never returned are said, in the
// header as latency says them, and under the table of probes (only when there are some).
TEST(AggrPrint, CountOfAReturnProbeSaysTheEntriesThatNeverReturned) {
    SessionStats stats;
    stats.probes = {probe(1, 5, 4)};
    auto keyed = options(AggrMode::Count, {"uretprobe:/bin/true:main", "--by", "comm"});
    AggrTable t = table("uretprobe:/bin/true:main", 1, 1);
    t.key_names = {"comm"};
    t.entries[0].key = {FetchedValue{}};
    t.entries[0].key[0].type = FetchType::String;
    t.entries[0].key[0].str = "true";
    EXPECT_THAT(printed(keyed, {t}, stats),
                HasSubstr("uretprobe:/bin/true:main  hits 5, filtered 0, rejected 0, nmissed 0, "
                          "never returned 4\n"));
    auto plain = options(AggrMode::Count, {"uretprobe:/bin/true:main"});
    EXPECT_EQ(printed(plain, {table("uretprobe:/bin/true:main", 1, 1)}, stats),
              "PROBE                          COUNT\n"
              "uretprobe:/bin/true:main           1\n"
              "uretprobe:/bin/true:main: never returned 4 (not counted)\n");
    // A return probe shows its 0 in the header, as latency does; an entry probe nothing.
    stats.probes = {probe(1, 5, 0)};
    EXPECT_THAT(printed(keyed, {t}, stats), HasSubstr("nmissed 0, never returned 0\n"));
    t.spec = "uprobe:/bin/true:main";
    EXPECT_THAT(printed(keyed, {t}, stats), Not(HasSubstr("never returned")));
    EXPECT_THAT(printed(plain, {table("uretprobe:/bin/true:main", 1, 1)}, stats),
                Not(HasSubstr("never returned")));
}

// With --interval the header says which span its counters (and the table's) are of; JSON
// says it as "period".
TEST(AggrPrint, IntervalHeadersSayTheirSpan) {
    AggrTable t = table("kprobe:vfs_read", 1, 3);
    t.key_names = {"cpu"};
    t.entries[0].key = {FetchedValue{}};
    t.entries[0].key[0].type = FetchType::U32;
    SessionStats stats;
    stats.probes = {probe(1, 3)};
    const std::vector<std::string> by = {"kprobe:vfs_read", "--by", "cpu"};
    auto with = [&](std::vector<std::string> more) {
        auto args = by;
        args.insert(args.end(), more.begin(), more.end());
        return options(AggrMode::Count, args);
    };
    EXPECT_THAT(printed(with({"--interval", "1"}), {t}, stats, "12:00:01"),
                HasSubstr("kprobe:vfs_read  hits 3, filtered 0, rejected 0, nmissed 0 (this "
                          "interval)\n"));
    EXPECT_THAT(printed(with({"--interval", "1", "--cumulative"}), {t}, stats, "12:00:01"),
                HasSubstr("nmissed 0 (since the start)\n"));
    EXPECT_THAT(printed(with({}), {t}, stats), HasSubstr("nmissed 0\n"));
    EXPECT_THAT(printed(with({"--interval", "1", "--format", "json"}), {t}, stats, "12:00:01"),
                HasSubstr("\"time\":\"12:00:01\",\"period\":\"interval\""));
    EXPECT_THAT(printed(with({"--format", "json"}), {t}, stats), Not(HasSubstr("period")));
}

// With --by, a glob's probes that never fired are left out of the tables (they once printed
// "hits 0 ... 0 keys" each) and counted in one line; --zeros shows them. JSON has them all.
TEST(AggrPrint, KeyedTablesLeaveOutProbesWithoutHits) {
    AggrTable hit = table("syscall:read", 1, 5);
    hit.key_names = {"comm"};
    hit.entries[0].key.resize(1);
    hit.entries[0].key[0].type = FetchType::String;
    hit.entries[0].key[0].str = "cat";
    AggrTable none = hit;
    none.spec = "syscall:readv";
    none.probe_id = 2;
    none.entries.clear();
    SessionStats st;
    st.probes = {probe(1, 5), probe(2, 0)};
    const std::string text =
        printed(options(AggrMode::Count, {"syscall:read*", "--by", "comm"}), {hit, none}, st);
    EXPECT_THAT(text, HasSubstr("syscall:read  hits 5"));
    EXPECT_THAT(text, Not(HasSubstr("syscall:readv")));
    EXPECT_THAT(text, HasSubstr("(1 probe with no hits not shown; --zeros shows them)"));
    const std::string json =
        printed(options(AggrMode::Count, {"syscall:read*", "--by", "comm", "--format", "json"}),
                {hit, none}, st);
    EXPECT_THAT(json, HasSubstr("syscall:readv"));
    const std::string all = printed(
        options(AggrMode::Count, {"syscall:read*", "--by", "comm", "--zeros"}), {hit, none}, st);
    EXPECT_THAT(all, HasSubstr("syscall:readv  hits 0"));
}

// --top N says how many keys, stacks or probes it left out (a keyed table once ended with
// its N rows and nothing more), as the probes with no hits are said.
TEST(AggrPrint, TopSaysHowManyRowsItLeftOut) {
    AggrTable t;
    t.spec = "syscall:read";
    t.probe_id = 1;
    t.key_names = {"pid"};
    for (std::uint64_t pid = 1; pid <= 5; ++pid) {
        FetchedValue k;
        k.name = "pid";
        k.type = FetchType::U32;
        k.raw = pid;
        t.entries.push_back({{k}, pid * 10, 0, 0, 0, {}});
    }
    SessionStats st;
    st.probes = {probe(1, 150)};
    const std::string keyed =
        printed(options(AggrMode::Count, {"syscall:read", "--by", "pid", "--top", "2"}), {t}, st);
    EXPECT_THAT(keyed, HasSubstr("(3 keys with fewer hits not shown; --top 2 shows the 2 with "
                                 "the most)\n"));
    const std::string hist = printed(
        options(AggrMode::Hist, {"syscall:read", "pid", "--by", "pid", "--top", "4"}), {t}, st);
    EXPECT_THAT(hist, HasSubstr("(1 key with fewer hits not shown; --top 4"));
    const std::string all =
        printed(options(AggrMode::Count, {"syscall:read", "--by", "pid", "--top", "5"}), {t}, st);
    EXPECT_THAT(all, Not(HasSubstr("not shown")));

    const std::string stacks =
        printed(options(AggrMode::Count, {"uprobe:app:f", "--by", "ustack", "--top", "1"}),
                {stackTable("uprobe:app:f", 1, {{1, 5}, {2, 3}})}, st, {}, &kStacks);
    EXPECT_THAT(stacks, HasSubstr("(1 stack with fewer hits not shown; --top 1"));

    SessionStats three;
    three.probes = {probe(1, 5), probe(2, 3), probe(3, 1)};
    const std::string probes = printed(
        options(AggrMode::Count, {"syscall:read*", "--top", "1"}),
        {table("syscall:read", 1, 5), table("syscall:readv", 2, 3), table("syscall:pread64", 3, 1)},
        three);
    EXPECT_THAT(probes, HasSubstr("(2 probes with fewer hits not shown; --top 1 shows the 1 "
                                  "with the most)\n"));
}

// Keyed histograms name their keys before the first "@[...]"; a stack's count line is a row
// of columns under a header when there are keys besides the stack.
TEST(AggrPrint, KeyedHistogramsAndStackRowsNameTheirKeys) {
    AggrTable h = table("kretprobe:vfs_read", 1, 1);  // a latency histogram by comm, pid
    h.hist = AggrHist::Log2;
    h.value = AggrValue::Latency;
    h.key_names = {"comm", "pid"};
    auto& key = h.entries[0].key;
    key.resize(2);
    key[0].type = FetchType::String;
    key[0].str = "ls";
    key[1].type = FetchType::U32;
    key[1].raw = 42;
    EXPECT_EQ(formatAggrHist(h).rfind("keys: comm, pid\n@[ls, 42]:\n", 0), 0u) << formatAggrHist(h);
    h.key_names = {"comm"};
    h.entries[0].key.resize(1);
    EXPECT_EQ(formatAggrHist(h).rfind("key: comm\n@[ls]:\n", 0), 0u) << formatAggrHist(h);

    AggrTable s = stackTable("uprobe:app:a", 1, {});
    s.key_names = {"comm", kUserStackArg, "pid"};
    auto row = [&](const char* comm, std::uint32_t id, std::uint64_t pid, std::uint64_t n) {
        AggrEntry r;
        r.key.resize(3);
        r.key[0].type = FetchType::String;
        r.key[0].str = comm;
        r.key[1] = stackId(id);
        r.key[2].type = FetchType::U32;
        r.key[2].raw = pid;
        r.count = n;
        s.entries.push_back(r);
    };
    row("app", 1, 7, 123456);
    row("worker-thread", 2, 12345678, 2);
    EXPECT_EQ(stackRowKeyNames(s), (std::vector<std::string>{"comm", "pid"}));
    EXPECT_EQ(formatStackRows(stackRows(s, kStacks), 0, stackRowKeyNames(s)),
              "   COUNT  COMM           PID\n"
              "    f1\n    main\n"
              "  123456  app            7\n\n"
              "    f2\n    main\n"
              "       2  worker-thread  12345678\n\n");
    // Only a stack key: the count alone, as before.
    AggrTable only = stackTable("uprobe:app:a", 1, {{1, 3}});
    EXPECT_EQ(formatStackRows(stackRows(only, kStacks), 0, stackRowKeyNames(only)),
              "    f1\n    main\n  3\n\n");
}

// One read-out of `tables` as text: `more` read-outs follow, `before` the calls entered
// before each interval (empty: not each interval on its own).
std::string readout(const AggrCliOptions& o, const std::vector<AggrTable>& tables,
                    const SessionStats& stats, bool more, std::vector<std::uint64_t> before) {
    std::ostringstream out, err;
    auto r = printAggrReadout(o, {tables, stats, stats, "12:00:02", more, std::move(before)}, out,
                              err, "standard output");
    EXPECT_TRUE(r) << r.error().message;
    return out.str();
}

// hist of a syscall counts each call where it returns, as latency does: its headers say the
// calls entered before the interval and those never returned, as latency's, so that hits +
// entered before = count + never returned on screen. Before the fix the last read-out of
// `hist syscall:clock_nanosleep '$retval' --interval 1 -- sleep 1.5` said "hits 0 ... (this
// interval)" above a count of 1, and --cumulative's had no "never returned" (seen failing).
TEST(AggrPrint, HistOfASyscallSaysTheCallsInFlightAsLatencyDoes) {
    const std::vector<AggrTable> tables = {table("syscall:clock_nanosleep", 1, 1)};
    SessionStats stats;
    stats.probes = {probe(1, 0, 0)};
    auto hist = [&](std::vector<std::string> more) {
        std::vector<std::string> args = {"syscall:clock_nanosleep", "retval"};
        args.insert(args.end(), more.begin(), more.end());
        return options(AggrMode::Hist, args);
    };
    auto latency = [&](std::vector<std::string> more) {
        std::vector<std::string> args = {"syscall:clock_nanosleep"};
        args.insert(args.end(), more.begin(), more.end());
        return options(AggrMode::Latency, args);
    };
    const std::string last =
        "syscall:clock_nanosleep  hits 0, filtered 0, rejected 0, nmissed 0, entered before 1, "
        "never returned 0 (this interval)\n";
    EXPECT_THAT(readout(hist({"--interval", "1"}), tables, stats, false, {1}), HasSubstr(last));
    EXPECT_THAT(readout(latency({"--interval", "1"}), tables, stats, false, {1}), HasSubstr(last));
    stats.probes = {probe(1, 1, 0)};
    const std::string cumulative =
        "syscall:clock_nanosleep  hits 1, filtered 0, rejected 0, nmissed 0, never returned 0 "
        "(since the start)\n";
    EXPECT_THAT(readout(hist({"--interval", "1", "--cumulative"}), tables, stats, false, {}),
                HasSubstr(cumulative));
    EXPECT_THAT(readout(latency({"--interval", "1", "--cumulative"}), tables, stats, false, {}),
                HasSubstr(cumulative));
    // A hist of an entry's argument pairs no return: no such clause.
    AggrTable entry = table("uprobe:/bin/true:main", 1, 1);
    auto o = options(AggrMode::Hist, {"uprobe:/bin/true:main v=$arg1:u64", "v", "--interval", "1",
                                      "--cumulative", "--", "true"});
    EXPECT_THAT(readout(o, {entry}, stats, false, {}), Not(HasSubstr("never returned")));
}

// Of several probes, one whose only activity is a call in flight (entered before the
// interval, not returned yet) is shown with its header, as count shows its line: before the
// fix latency left it out as one "with no hits" (seen failing).
TEST(AggrPrint, AProbeWithACallInFlightIsShown) {
    std::vector<AggrTable> tables(3);
    const char* specs[] = {"syscall:read", "syscall:write", "syscall:pread64"};
    for (std::uint32_t i = 0; i < 3; i++) {
        tables[i].spec = specs[i];
        tables[i].probe_id = i + 1;
    }
    SessionStats stats;
    stats.probes = {probe(1, 0, 1), probe(2, 0, 0), probe(3, 0, 0)};
    auto o = options(AggrMode::Latency,
                     {"syscall:read", "syscall:write", "syscall:pread64", "--interval", "1"});
    const std::string text = readout(o, tables, stats, true, {1, 0, 0});
    EXPECT_THAT(text, HasSubstr("syscall:read  hits 0, filtered 0, rejected 0, nmissed 0, "
                                "entered before 1, not returned yet 1 (this interval)\n"));
    EXPECT_THAT(text, HasSubstr("(2 probes with no hits not shown; --zeros shows them)\n"));
    EXPECT_THAT(text, Not(HasSubstr("syscall:write")));
}

// Of several probes, one whose hits the process filter all skipped (COUNT 0, FILTERED 5)
// was hit: count without --by left its row out as one "with no hits" (seen failing), and
// count --by, hist and latency left out its table. So is one whose only hits were lost
// (nmissed) or whose map was full. Only a probe with nothing in any counter is left out.
TEST(AggrPrint, AProbeWhoseHitsWereFilteredOrLostIsShown) {
    std::vector<AggrTable> tables(4);
    const char* specs[] = {"syscall:getppid", "syscall:acct", "kprobe:vfs_read",
                           "kprobe:vfs_write"};
    for (std::uint32_t i = 0; i < 4; i++) {
        tables[i].spec = specs[i];
        tables[i].probe_id = i + 1;
    }
    tables[3].overflow = 2;  // every key beyond the map: no entry, but hits
    SessionStats stats;
    stats.probes = {probe(1, 0), probe(2, 0), probe(3, 0), probe(4, 2)};
    stats.probes[0].filtered = 5;
    stats.probes[2].nmissed = 3;
    const std::vector<std::string> specs_args = {specs[0], specs[1], specs[2],
                                                 specs[3], "--uid",  "54321"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = specs_args;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const std::string counts = printed(options(AggrMode::Count, specs_args), tables, stats);
    EXPECT_THAT(counts, ContainsRegex("syscall:getppid +0 +5\n")) << counts;
    EXPECT_THAT(counts, ContainsRegex("kprobe:vfs_read +0 +0\n")) << counts;
    EXPECT_THAT(counts, ContainsRegex("kprobe:vfs_write +0 +0\n")) << counts;
    EXPECT_THAT(counts, Not(HasSubstr("syscall:acct"))) << counts;
    EXPECT_THAT(counts, HasSubstr("(1 probe with no hits not shown; --zeros shows them)\n"))
        << counts;
    for (auto& t : tables)
        t.key_names = {"pid"};
    for (const auto mode : {AggrMode::Count, AggrMode::Latency}) {
        const std::string keyed = printed(options(mode, with({"--by", "pid"})), tables, stats);
        EXPECT_THAT(keyed, HasSubstr("syscall:getppid  hits 0, filtered 5")) << keyed;
        EXPECT_THAT(keyed, HasSubstr("kprobe:vfs_read  hits 0, filtered 0, rejected 0, nmissed 3"))
            << keyed;
        EXPECT_THAT(keyed, HasSubstr("kprobe:vfs_write  hits 2")) << keyed;
        EXPECT_THAT(keyed, Not(HasSubstr("syscall:acct"))) << keyed;
        EXPECT_THAT(keyed, HasSubstr("(1 probe with no hits not shown; --zeros shows them)\n"))
            << keyed;
    }
}

// trace's, record's and report's summary apply the same rule: of several probes, only one
// whose every counter is 0 is left out; a probe with only filtered hits, or only returns
// past the uretprobe depth limit, is a row.
TEST(AggrPrint, TheTraceSummaryLeavesOutOnlyProbesWithEveryCounterZero) {
    SessionStats stats;
    stats.probes = {probe(1, 0), probe(2, 0), probe(3, 0)};
    stats.probes[0].spec = "syscall:getppid";
    stats.probes[0].filtered = 7;
    stats.probes[1].spec = "uretprobe:/bin/app:f";
    stats.probes[1].hits = stats.probes[1].depth_skipped = 2;
    stats.probes[2].spec = "syscall:acct";
    std::ostringstream out;
    printSummary(out, stats);
    EXPECT_THAT(out.str(), HasSubstr("syscall:getppid")) << out.str();
    EXPECT_THAT(out.str(), HasSubstr("uretprobe:/bin/app:f")) << out.str();
    EXPECT_THAT(out.str(), Not(HasSubstr("syscall:acct"))) << out.str();
    EXPECT_THAT(out.str(), HasSubstr("(1 probe with no hits not shown; --zeros shows them)"))
        << out.str();
}

}  // namespace
}  // namespace probectl::cli

namespace probectl::cli {
namespace {

// --interval 250ms once labelled four read-outs a second all "14:03:27".
TEST(IntervalClock, MillisecondsOnlyForSubSecondIntervals) {
    std::tm tm{};
    tm.tm_hour = 14;
    tm.tm_min = 3;
    tm.tm_sec = 27;
    EXPECT_EQ(intervalClock(tm, 250, 0.25), "14:03:27.250");
    EXPECT_EQ(intervalClock(tm, 5, 1.5), "14:03:27.005");
    EXPECT_EQ(intervalClock(tm, 250, 2), "14:03:27");
    EXPECT_EQ(intervalClock(tm, 250, 0), "14:03:27");
}

// count --by of a syscall counts each call at its return, as hist and latency do: its header
// says "never returned" as theirs, where it had no such clause (seen failing). exit and
// exit_group, whose hit is their entry, have none.
TEST(AggrPrint, CountByOfASyscallSaysTheCallsNeverReturned) {
    AggrTable t = table("syscall:getppid", 1, 3);
    t.key_names = {"comm"};
    t.entries[0].key.resize(1);
    t.entries[0].key[0].type = FetchType::String;
    t.entries[0].key[0].str = "app";
    SessionStats stats;
    stats.probes = {probe(1, 3)};
    EXPECT_THAT(printed(options(AggrMode::Count, {"syscall:getppid", "--by", "comm"}), {t}, stats),
                HasSubstr("syscall:getppid  hits 3, filtered 0, rejected 0, nmissed 0, never "
                          "returned 0\n"));
    t.spec = "syscall:exit_group";
    EXPECT_THAT(
        printed(options(AggrMode::Count, {"syscall:exit_group", "--by", "comm"}), {t}, stats),
        HasSubstr("syscall:exit_group  hits 3, filtered 0, rejected 0, nmissed 0\n"));
}

// latency and hist without --by: each probe's map holds its one key by construction, so the
// "1 key (capacity 1)" line under every histogram said nothing (`latency 'syscall:*'` printed
// it for each probe; seen failing). The keyed maps keep it, and a keyless map's losses are
// still said.
TEST(AggrPrint, KeylessHistogramsHaveNoKeysLine) {
    auto latencyTable = [](const std::string& spec, std::uint32_t id) {
        AggrTable t = table(spec, id, 2);
        t.value = AggrValue::Latency;
        t.value_name = "latency";
        t.hist = AggrHist::Log2;
        t.keys = 1;
        t.capacity = 1;
        t.entries[0].sum = 3000;
        t.entries[0].min = 1000;
        t.entries[0].max = 2000;
        return t;
    };
    std::vector<AggrTable> tables = {latencyTable("syscall:read", 1),
                                     latencyTable("syscall:write", 2)};
    SessionStats st;
    st.probes = {probe(1, 2), probe(2, 2)};
    const std::string text = printed(options(AggrMode::Latency, {"syscall:*"}), tables, st);
    EXPECT_THAT(text, Not(HasSubstr("key")));
    EXPECT_THAT(text, Not(HasSubstr("capacity")));
    // one blank line between the probes, none at the end
    EXPECT_THAT(text, HasSubstr("max 2us\n\nsyscall:write  hits 2"));
    EXPECT_THAT(text, Not(HasSubstr("\n\n\n")));
    EXPECT_EQ(text.substr(text.size() - 2), "s\n");
    const std::string hist =
        printed(options(AggrMode::Hist, {"syscall:read", "retval"}), {tables[0]}, st);
    EXPECT_THAT(hist, Not(HasSubstr("capacity")));

    // Losses are still said, and a map full says its keys.
    tables[0].nested = 3;
    tables[1].overflow = 4;
    const std::string lossy = printed(options(AggrMode::Latency, {"syscall:*"}), tables, st);
    EXPECT_THAT(lossy, HasSubstr("max 2us\n\n3 nested hits skipped\n"));
    EXPECT_THAT(lossy, HasSubstr("1 key (capacity 1); map full: 4 hits with new keys not counted"));

    // Keyed: the keys and the capacity inform.
    AggrTable keyed = latencyTable("syscall:read", 1);
    keyed.key_names = {"comm"};
    keyed.capacity = 1024;
    keyed.entries[0].key.resize(1);
    keyed.entries[0].key[0].type = FetchType::String;
    keyed.entries[0].key[0].str = "cat";
    EXPECT_THAT(printed(options(AggrMode::Latency, {"syscall:read", "--by", "comm"}), {keyed}, st),
                HasSubstr("max 2us\n\n1 key (capacity 1024)\n"));
}

}  // namespace
}  // namespace probectl::cli
