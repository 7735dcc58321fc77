// probectl bench in the VM: --throughput's searches find a rate at which every record
// arrived (probectl's session counters and ftrace's trace_pipe_raw pages counted), and the
// ring sizes the search sets are put back afterwards; the libtracefs reader's row runs.
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;
using ::testing::HasSubstr;

namespace {

// buffer_size_kb's size: "7 (expanded: 1408)" (not yet allocated) is 1408.
std::string ftraceKb(const std::string& text) {
    std::smatch m;
    static const std::regex expanded(R"(\(expanded: ([0-9]+)\))"), plain("^([0-9]+)");
    if (std::regex_search(text, m, expanded) || std::regex_search(text, m, plain))
        return m[1];
    return text;
}

// The rate column of TRACER's row in the throughput table, or -1 when the row is absent or
// says "none".
double rateOf(const std::string& out, const std::string& tracer) {
    std::smatch m;
    const std::regex row("\n  " + tracer + " +([0-9]+) +([0-9]+) +([0-9]+)  ");
    return std::regex_search(out, m, row) ? std::stod(m[1]) : -1;
}

TEST(BenchThroughput, BothTracersDeliverEveryRecordAtSomeRate) {
    const std::string kb = "/sys/module/probectl/parameters/buffer_kb";
    const std::string fkb = "/sys/kernel/tracing/buffer_size_kb";
    const std::string kb_before = itest::readFile(kb), fkb_before = ftraceKb(itest::readFile(fkb));
    ASSERT_FALSE(kb_before.empty()) << "probectl.ko not loaded";
    Ran r =
        sh("probectl bench -n 1 --threads 1 --tracers kernel-count --attach 0 --startup 0 "
           "--no-plot --throughput 2000 --throughput-ring 16 -o /tmp/bench-throughput "
           "--workload " +
           itest::workload("bench_workload") + " 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("ring 16 KiB per CPU for each"));
    EXPECT_GT(rateOf(r.out, "kernel-record"), 0) << r.out;
    EXPECT_GT(rateOf(r.out, "ftrace-stream"), 0) << r.out;
    EXPECT_GT(rateOf(r.out, "ftrace-iterate"), 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("probectl / ftrace-stream, highest lossless rate: "));
    EXPECT_THAT(r.out, HasSubstr("probectl / ftrace-iterate, highest lossless rate: "));
    EXPECT_EQ(itest::readFile(kb), kb_before);
    // ftrace rounds a size to whole pages of data (4080 bytes each) once the buffer exists.
    EXPECT_NEAR(std::stod(ftraceKb(itest::readFile(fkb))), std::stod(fkb_before), 4)
        << itest::readFile(fkb);
}

// ftrace-iterate's reader is libtracefs, loaded with dlopen: the row must run (not be
// skipped for want of the library in the VM) and see every event of both workloads.
TEST(BenchRows, LibtracefsReaderSeesEveryEvent) {
    Ran r =
        sh("probectl bench -n 500 --threads 1 --tracers ftrace-iterate --attach 0 "
           "--startup 0 --no-plot -o /tmp/bench-iterate --workload " +
           itest::workload("bench_workload") + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    for (const char* w : {"calls/1t", "syscalls/1t"}) {
        const std::regex row(std::string(w) + " +ftrace-iterate +500 +500 +yes ");
        EXPECT_TRUE(std::regex_search(r.out, row)) << w << " not exact:\n" << r.out;
    }
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("libtracefs1"))) << "skipped";
}

}  // namespace
