// probectl bench without a kernel: option checks, the exact-hit verdict, the derived
// figures (overhead per hit, ratios) and the CSV, on rows whose numbers are known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "bench.hpp"
#include "bench_output.hpp"
#include "subcommands.hpp"

namespace probectl::cli {
namespace {

using bench::Measure;
using bench::Row;
using testing::HasSubstr;

TEST(BenchOptions, DefaultsAndLimits) {
    auto o = parseBenchOptions({});
    ASSERT_TRUE(o);
    EXPECT_EQ(o->count, 10000u);
    EXPECT_EQ(o->threads, 4u);
    EXPECT_FALSE(o->workload.empty());
    EXPECT_FALSE(parseBenchOptions({"-n", "0"}));
    EXPECT_FALSE(parseBenchOptions({"--threads", "65"}));
    EXPECT_FALSE(parseBenchOptions({"--repeat", "0"}));
    EXPECT_FALSE(parseBenchOptions({"extra"}));
    // --attach: as many as one session may hold; past it probectl's adds would fail.
    EXPECT_EQ(parseBenchOptions({"--attach", "4096"})->attach, 4096u);
    EXPECT_EQ(parseBenchOptions({"--attach", "0"})->attach, 0u);
    auto many = parseBenchOptions({"--attach", "4097"});
    ASSERT_FALSE(many);
    EXPECT_THAT(many.error().message, HasSubstr("--attach must be 0..4096: one probectl session "
                                                "holds at most 4096 probes"));
    auto empty_dir = parseBenchOptions({"-o", ""});
    ASSERT_FALSE(empty_dir);
    EXPECT_EQ(empty_dir.error().message,
              "-o '': give a directory name (leave -o out to write to ./probectl-bench)");
}

// -n -1 once said "0 or more" while -n 0 said 1..100000000: every refusal names the range
// that is accepted.
TEST(BenchOptions, EveryRefusedNumberNamesTheAcceptedRange) {
    for (const auto& [args, text] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"-n", "-1"}, "--count must be 1..100000000; got '-1'"},
             {{"-n", "0"}, "--count must be 1..100000000; got '0'"},
             {{"-n", "100000001"}, "--count must be 1..100000000; got '100000001'"},
             {{"-n", "x"}, "--count must be 1..100000000; got 'x'"},
             {{"--threads", "-2"}, "--threads must be 1..64; got '-2'"},
             {{"--repeat", "101"}, "--repeat must be 1..100; got '101'"},
             {{"--throughput", "-1"}, "--throughput must be 0..100000000 records per run"},
             {{"--throughput-ring", "4"}, "--throughput-ring must be 8..65536 KiB"}}) {
        auto o = parseBenchOptions(args);
        ASSERT_FALSE(o) << args.front();
        EXPECT_THAT(o.error().message, HasSubstr(text));
    }
    EXPECT_EQ(parseBenchOptions({"-n", "1"})->count, 1u);
    EXPECT_EQ(parseBenchOptions({"-n", "100000000"})->count, 100000000u);
}

TEST(BenchOptions, EmptyOutputDirectoryAndTracerNames) {
    auto empty_dir = parseBenchOptions({"-o", ""});
    ASSERT_FALSE(empty_dir);
    EXPECT_EQ(empty_dir.error().message,
              "-o '': give a directory name (leave -o out to write to ./probectl-bench)");
    auto bad = parseBenchOptions({"--tracers", "ptrace,dtrace"});
    ASSERT_FALSE(bad);
    EXPECT_THAT(bad.error().message, HasSubstr("unknown tracer 'dtrace'"));
    auto some = parseBenchOptions({"--tracers", "ptrace,strace", "--no-plot"});
    ASSERT_TRUE(some);
    EXPECT_EQ(some->only, (std::vector<std::string>{"ptrace", "strace"}));
    EXPECT_FALSE(some->plot);
}

// --tracers "" once ran every tracer; a stray comma is no tracer either.
TEST(BenchOptions, EmptyTracerNamesAreUsageErrors) {
    for (const std::string list : {"", "ptrace,", ",ptrace", "ptrace,,strace", "untraced"}) {
        auto o = parseBenchOptions({"--tracers", list});
        ASSERT_FALSE(o) << "'" << list << "'";
        EXPECT_THAT(o.error().message, HasSubstr("known: floor,")) << list;
        EXPECT_THAT(o.error().message, HasSubstr("ltrace")) << list;
    }
    auto with_untraced = parseBenchOptions({"--tracers", "untraced,ptrace"});
    ASSERT_TRUE(with_untraced);
    EXPECT_EQ(with_untraced->only, std::vector<std::string>{"ptrace"});
}

Row row(const char* mode, const char* tracer, std::uint64_t ns, std::optional<std::uint64_t> hits,
        std::uint64_t untraced, std::optional<std::uint64_t> records = std::nullopt) {
    Row r;
    r.workload = {"/w", mode, 1000, 1};
    r.tracer = tracer;
    Measure m;
    m.elapsed_ns = ns;
    m.hits = hits;
    m.records = records;
    r.outcome = bench::measured(m);
    r.untraced_ns = untraced;
    return r;
}

std::vector<Row> sample() {
    return {
        row("calls", "untraced", 10000, std::nullopt, 10000),
        row("calls", "floor", 1010000, 1000, 10000),                // 1000 ns/hit overhead
        row("calls", "kernel-record", 1110000, 1000, 10000, 1000),  // 1100
        row("calls", "ptrace", 44010000, 1000, 10000),              // 44000
        row("syscalls", "untraced", 20000, std::nullopt, 20000),
        row("syscalls", "kernel-record", 320000, 1000, 20000, 999),  // 300, one record short
        row("syscalls", "ftrace", 420000, 1000, 20000),              // 400
        row("syscalls", "strace", 90020000, 998, 20000),             // 90000, two short
    };
}

// --threads 1 once ran every single-threaded workload twice.
TEST(BenchOptions, EachWorkloadOnce) {
    auto one = bench::standardWorkloads("/w", 10, 1);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(one[0].label(), "calls/1t");
    EXPECT_EQ(one[1].label(), "syscalls/1t");
    auto four = bench::standardWorkloads("/w", 10, 4);
    ASSERT_EQ(four.size(), 4u);
    EXPECT_EQ(four[1].label(), "calls/4t");
    EXPECT_EQ(four[3].label(), "syscalls/4t");
}

TEST(BenchReport, OverheadIsPerExpectedHitOverUntraced) {
    auto rows = sample();
    EXPECT_DOUBLE_EQ(bench::nsPerHit(rows[1]), 1010.0);
    EXPECT_DOUBLE_EQ(bench::overheadPerHit(rows[1]), 1000.0);
    EXPECT_EQ(bench::reference(rows, rows[3]), &rows[2]);
    EXPECT_EQ(bench::reference(rows, rows[7]), &rows[5]);
}

TEST(BenchReport, ExactMeansEveryHitAndEveryRecord) {
    auto rows = sample();
    EXPECT_TRUE(bench::exactHits(rows[0]));
    EXPECT_TRUE(bench::exactHits(rows[2]));
    EXPECT_FALSE(bench::exactHits(rows[5]));  // 1000 hits, 999 records
    EXPECT_FALSE(bench::exactHits(rows[7]));
    std::ostringstream os;
    bench::printProblems(os, rows);
    EXPECT_THAT(os.str(), HasSubstr("INEXACT: syscalls/1t strace: saw 998 hits for 1000 calls"));
    EXPECT_THAT(os.str(), HasSubstr("syscalls/1t kernel-record: saw 1000 hits, 999 records"));
    EXPECT_THAT(os.str(), testing::Not(HasSubstr("calls/1t ptrace")));
}

TEST(BenchReport, FiguresAreTheIssuesRatios) {
    auto f = bench::figures(sample());
    ASSERT_EQ(f.size(), 20u);
    EXPECT_DOUBLE_EQ(f[0].value, 1.1);    // kernel-record / floor
    EXPECT_DOUBLE_EQ(f[1].value, 40.0);   // ptrace / kernel-record
    EXPECT_DOUBLE_EQ(f[2].value, 0.75);   // kernel-record / ftrace
    EXPECT_DOUBLE_EQ(f[3].value, 300.0);  // strace / kernel-record
    EXPECT_TRUE(std::isnan(f[4].value));  // no ftrace-stream row in the sample
    auto none = bench::figures({sample()[0]});
    EXPECT_TRUE(std::isnan(none[0].value));
}

TEST(BenchReport, EndToEndFiguresCompareTraceWithTracePipe) {
    auto rows = sample();
    rows.push_back(row("syscalls", "ftrace-stream", 520000, 1000, 20000));  // 500
    rows.push_back(row("syscalls", "trace-text", 2020000, 1000, 20000));    // 2000
    rows.push_back(row("syscalls", "trace-json", 3020000, 1000, 20000));    // 3000
    rows.push_back(row("syscalls", "ftrace-pipe", 1020000, 1000, 20000));   // 1000
    auto f = bench::figures(rows);
    EXPECT_DOUBLE_EQ(f[4].value, 0.6);  // kernel-record / ftrace-stream
    EXPECT_DOUBLE_EQ(f[6].value, 2.0);  // trace-text / ftrace-pipe
    EXPECT_DOUBLE_EQ(f[7].value, 3.0);  // trace-json / ftrace-pipe
    EXPECT_EQ(f[7].aim, "<= 1.5");
}

// kernel-record's equal-work pair: ftrace's library reader (ftrace-stream only counts).
TEST(BenchReport, RecordFiguresAgainstTheLibraryReader) {
    auto rows = sample();
    rows.push_back(row("syscalls", "ftrace-iterate", 1020000, 1000, 20000));  // 1000
    auto f = bench::figures(rows);
    ASSERT_EQ(f[18].name, "kernel kprobe record / ftrace-iterate");
    EXPECT_DOUBLE_EQ(f[18].value, 0.3);  // kernel-record 300 / ftrace-iterate 1000
    EXPECT_EQ(f[18].aim, "<= 1.0");
    EXPECT_EQ(f[19].name, "kernel uprobe record / ftrace-iterate");
    EXPECT_TRUE(std::isnan(f[19].value));  // no calls/1t ftrace-iterate row
    std::ostringstream os;
    bench::printEqualWork(os);
    EXPECT_THAT(os.str(), HasSubstr("kernel-record  ~ ftrace-iterate"));
    EXPECT_THAT(os.str(), HasSubstr("kernel-record  > ftrace-stream"));
}

TEST(BenchReport, StartUpIsSubtractedFromEndToEndRows) {
    static int calls;
    calls = 0;
    auto fake = [](const bench::Workload& w) {
        ++calls;
        bench::Measure m;
        m.elapsed_ns = 7;
        m.wall_ns = w.n == 0 ? 800 : 5800;
        return bench::measured(m);
    };
    bench::Workload w{"/w", "syscalls", 1000, 1};
    auto o = bench::lessStartUp(+fake, w);
    ASSERT_TRUE(o.measure);
    EXPECT_EQ(o.measure->elapsed_ns, 5000u);
    EXPECT_EQ(calls, 2);
}

TEST(BenchReport, CsvHasEveryRowAndQuotesText) {
    auto rows = sample();
    Row skipped;
    skipped.workload = {"/w", "calls", 1000, 1};
    skipped.tracer = "ltrace";
    skipped.outcome = bench::skip("no \"ltrace\" in PATH");
    rows.push_back(skipped);
    std::ostringstream os;
    bench::writeCsv(os, rows);
    const std::string csv = os.str();
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + static_cast<long>(rows.size()));
    EXPECT_THAT(csv, HasSubstr("calls,1,ptrace,1000,1000,,0,yes,44010000,44010.0,44000.0,40.000"));
    EXPECT_THAT(csv, HasSubstr("calls,1,ltrace,1000,,,,,,,,,\"no \"\"ltrace\"\" in PATH\",\"\""));
}

// kernel-aggregate against kernel-count (aim 1.3) and the hist triggers (aim 1.0), per
// workload, from overheads known in advance.
TEST(BenchReport, AggregateFiguresCompareWithCountAndHistTriggers) {
    auto rows = sample();
    rows.push_back(row("calls", "kernel-count", 810000, 1000, 10000));               // 800
    rows.push_back(row("calls", "kernel-aggregate", 1010000, 1000, 10000, 1000));    // 1000
    rows.push_back(row("syscalls", "kernel-count", 220000, 1000, 20000));            // 200
    rows.push_back(row("syscalls", "kernel-aggregate", 280000, 1000, 20000, 1000));  // 260
    rows.push_back(row("syscalls", "ftrace-hist", 540000, 1000, 20000, 1000));       // 520
    rows.push_back(row("syscalls", "ftrace-hist-log2", 670000, 1000, 20000, 1000));  // 650
    auto f = bench::figures(rows);
    ASSERT_EQ(f.size(), 20u);
    EXPECT_EQ(f[8].num_tracer, "kernel-aggregate");
    EXPECT_EQ(f[8].den_tracer, "kernel-count");
    EXPECT_EQ(f[8].aim, "<= 1.3");
    EXPECT_DOUBLE_EQ(f[8].value, 1.25);    // calls
    EXPECT_DOUBLE_EQ(f[9].value, 1.3);     // syscalls
    EXPECT_TRUE(std::isnan(f[10].value));  // no calls ftrace-hist row
    EXPECT_DOUBLE_EQ(f[11].value, 0.5);
    EXPECT_DOUBLE_EQ(f[13].value, 0.4);
    EXPECT_EQ(f[13].aim, "<= 1.0");
    std::ostringstream os;
    bench::printFigures(os, rows);
    EXPECT_THAT(os.str(), HasSubstr("kernel kprobe aggregate / ftrace hist pid,log2"));
    EXPECT_THAT(os.str(), HasSubstr("0.40  (kernel-aggregate 260 / ftrace-hist-log2 650"));
}

// The stack rows divide by kernel-record of the same workload: the kernel stack on the
// kprobe (syscalls), both user stack forms on the uprobe (calls).
TEST(BenchReport, StackFiguresCompareWithThePlainRecord) {
    auto rows = sample();  // kernel-record: 1100 (calls), 300 (syscalls)
    rows.push_back(row("syscalls", "kernel-kstack", 620000, 1000, 20000, 1000));      // 600
    rows.push_back(row("calls", "kernel-ustack", 1660000, 1000, 10000, 1000));        // 1650
    rows.push_back(row("calls", "kernel-ustack-dwarf", 3310000, 1000, 10000, 1000));  // 3300
    auto f = bench::figures(rows);
    ASSERT_EQ(f.size(), 20u);
    EXPECT_EQ(f[14].workload, "syscalls/1t");
    EXPECT_EQ(f[14].num_tracer, "kernel-kstack");
    EXPECT_EQ(f[14].den_tracer, "kernel-record");
    EXPECT_DOUBLE_EQ(f[14].value, 2.0);
    EXPECT_EQ(f[15].num_tracer, "kernel-ustack");
    EXPECT_DOUBLE_EQ(f[15].value, 1.5);
    EXPECT_EQ(f[16].num_tracer, "kernel-ustack-dwarf");
    EXPECT_EQ(f[16].workload, "calls/1t");
    EXPECT_DOUBLE_EQ(f[16].value, 3.0);
    EXPECT_TRUE(f[16].aim.empty());
}

// An untraced run slowed by a busy host makes overheads negative: no ratio of those.
TEST(BenchReport, NoFigureFromANegativeOverhead) {
    auto rows = sample();
    rows.push_back(row("syscalls", "kernel-count", 10000, 1000, 20000));            // -10
    rows.push_back(row("syscalls", "kernel-aggregate", 30000, 1000, 20000, 1000));  // 10
    auto f = bench::figures(rows);
    EXPECT_DOUBLE_EQ(f[9].num_ns, 10.0);
    EXPECT_DOUBLE_EQ(f[9].den_ns, -10.0);
    EXPECT_TRUE(std::isnan(f[9].value));
}

// Every tracer skipped once exited 0 with an empty table: nothing ran, and why.
TEST(BenchReport, NoTracerRanSaysWhyEachWasSkipped) {
    std::vector<Row> rows = {row("calls", "untraced", 10000, std::nullopt, 10000)};
    for (const char* mode : {"calls", "syscalls"})
        for (const char* tracer : {"kernel-record", "floor", "strace"}) {
            Row r;
            r.workload = {"/w", mode, 1000, 1};
            r.tracer = tracer;
            r.outcome = std::string_view(tracer) == "strace"
                            ? bench::fail("strace exited with 1")
                            : bench::skip(std::string_view(tracer) == "floor"
                                              ? "no tracefs"
                                              : "kernel backend unavailable");
            rows.push_back(r);
        }
    EXPECT_EQ(bench::noTracerRan(rows),
              "no tracer ran, nothing was measured\n"
              "  kernel-record: skipped: kernel backend unavailable\n"
              "  floor: skipped: no tracefs\n"
              "  strace: failed: strace exited with 1");
    rows.push_back(row("syscalls", "ptrace", 90020000, 1000, 20000));
    EXPECT_EQ(bench::noTracerRan(rows), "");
}

// gnuplot with nothing to draw (every overhead '?') once left a 0-byte bench.png.
TEST(BenchReport, AFailedPlotLeavesNoImage) {
    if (bench::findInPath("gnuplot").empty())
        GTEST_SKIP() << "no gnuplot";
    char tmpl[] = "/tmp/bench_plot_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    // Slower untraced than traced (a busy host): no overhead above zero to plot.
    bench::writePlot(dir,
                     {row("calls", "untraced", 10000, std::nullopt, 10000),
                      row("calls", "ptrace", 9000, 1000, 10000)},
                     "t");
    EXPECT_THAT(bench::drawPlot(dir), HasSubstr("gnuplot failed"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/bench.png"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/bench.svg"));
    bench::writePlot(dir,
                     {row("calls", "untraced", 10000, std::nullopt, 10000),
                      row("calls", "ptrace", 44010000, 1000, 10000)},
                     "t");
    EXPECT_EQ(bench::drawPlot(dir), "bench.png, bench.svg");
    EXPECT_GT(std::filesystem::file_size(dir + "/bench.png"), 0u);
    std::filesystem::remove_all(dir);
}

// An aggregate row is exact when the map's total count (its records) is N.
TEST(BenchReport, AggregateIsExactWhenTheMapHoldsEveryHit) {
    EXPECT_TRUE(bench::exactHits(row("calls", "kernel-aggregate", 1, 1000, 0, 1000)));
    EXPECT_FALSE(bench::exactHits(row("calls", "kernel-aggregate", 1, 1000, 0, 990)));
}

// What 6.1 to 7.2 print in events/GROUP/EVENT/hist.
TEST(BenchHist, TotalsAndEntriesOfBothTriggers) {
    const char* pid =
        "# event histogram\n#\n"
        "# trigger info: hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]\n"
        "#\n\n"
        "{ common_pid:        123 } hitcount:       1000\n"
        "{ common_pid:        456 } hitcount:          2\n\n"
        "Totals:\n    Hits: 1002\n    Entries: 2\n    Dropped: 0\n";
    auto a = bench::parseHist(pid);
    ASSERT_TRUE(a) << a.error().describe();
    EXPECT_EQ(a->hits, 1002u);
    EXPECT_EQ(a->entries, 2u);
    EXPECT_EQ(a->dropped, 0u);
    EXPECT_EQ(a->hitcount, 1002u);
    const char* log2 =
        "# trigger info: hist:keys=common_pid,x.log2:vals=hitcount:sort=hitcount:size=2048 "
        "[active]\n\n"
        "{ common_pid:        123, x: ~ 2^0        } hitcount:          1\n"
        "{ common_pid:        123, x: ~ 2^10       } hitcount:        512\n\n"
        "Totals:\n    Hits: 520\n    Entries: 2\n    Dropped: 7\n";
    auto b = bench::parseHist(log2);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->hits, 520u);
    EXPECT_EQ(b->hitcount, 513u);
    EXPECT_EQ(b->dropped, 7u);
    EXPECT_FALSE(bench::parseHist("# event histogram\n"));
}

// probectl's attach + detach per probe over ftrace's, per probe attached (ftrace may
// refuse some names).
TEST(BenchAttach, RatioIsPerProbeAttached) {
    std::vector<bench::AttachTimes> rows = {{"probectl", 1000, 3.0, 1.0, 0.5, 2.25, {}},
                                            {"ftrace", 800, 7.2, 16.8, 0.1, 9.0, {}}};
    EXPECT_DOUBLE_EQ(bench::attachRatio(rows), (4.0 / 1000) / (24.0 / 800));
    std::ostringstream os;
    bench::printAttach(os, rows);
    EXPECT_THAT(os.str(),
                HasSubstr("probectl      1000      3.000      1.000      4.000    0.500    2.250"));
    EXPECT_THAT(os.str(), HasSubstr("attach + detach per probe: 0.13  aim < 1.0"));
    rows[1].error = "no writable tracefs kprobe_events";
    EXPECT_TRUE(std::isnan(bench::attachRatio(rows)));
    std::ostringstream skipped;
    bench::printAttach(skipped, rows);
    EXPECT_THAT(skipped.str(), HasSubstr("ftrace     skipped: no writable"));
    EXPECT_THAT(skipped.str(), testing::Not(HasSubstr("per probe")));
}

// The deferred record row is compared with ftrace, which also reads only after the run;
// the live row keeps its own figures. A bench without the row gives no ratio.
TEST(BenchReport, DeferredRecordComparesWithFtrace) {
    auto rows = sample();  // ftrace (syscalls): 400
    auto f = bench::figures(rows);
    ASSERT_EQ(f.size(), 20u);
    EXPECT_EQ(f[17].num_tracer, "kernel-record-deferred");
    EXPECT_TRUE(std::isnan(f[17].value));
    rows.push_back(row("syscalls", "kernel-record-deferred", 120000, 1000, 20000, 1000));  // 100
    f = bench::figures(rows);
    EXPECT_EQ(f[17].workload, "syscalls/1t");
    EXPECT_EQ(f[17].den_tracer, "ftrace");
    EXPECT_DOUBLE_EQ(f[17].value, 0.25);
    EXPECT_EQ(f[17].aim, "<= 1.0");
    EXPECT_DOUBLE_EQ(f[2].value, 0.75);  // kernel-record / ftrace, unchanged
}

// Every tracer named in --tracers exists; the deferred row is one of them.
TEST(BenchOptions, DeferredRecordIsATracer) {
    auto o = parseBenchOptions({"--tracers", "kernel-record,kernel-record-deferred"});
    ASSERT_TRUE(o);
    EXPECT_EQ(o->only, (std::vector<std::string>{"kernel-record", "kernel-record-deferred"}));
}

}  // namespace
}  // namespace probectl::cli
