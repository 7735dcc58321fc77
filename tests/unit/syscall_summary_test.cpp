// trace -c: strace -c's table from errno-keyed latency tables, and the options around it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "syscall_summary.hpp"

using namespace probectl;
using namespace probectl::cli;
using ::testing::HasSubstr;

namespace {

// One syscall's table: (errno, calls, ns) per key.
AggrTable summaryTable(const std::string& spec,
                       std::vector<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>> keys) {
    AggrTable t;
    t.spec = spec;
    t.key_names = {"errno"};
    t.value = AggrValue::Latency;
    for (auto [err, calls, ns] : keys) {
        AggrEntry e;
        FetchedValue v;
        v.name = "errno";
        v.type = FetchType::S64;
        v.raw = static_cast<std::uint64_t>(err);
        e.key = {v};
        e.count = calls;
        e.sum = ns;
        t.entries.push_back(e);
    }
    return t;
}

}  // namespace

TEST(SyscallSummary, StraceTableByTimeWithTotal) {
    std::vector<AggrTable> tables = {
        summaryTable("syscall:getppid", {{0, 100, 50'000}}),
        summaryTable("syscall:openat", {{0, 3, 30'000}, {-2, 7, 120'000}}),
        summaryTable("syscall:read", {}),  // no call: no row
    };
    const auto rows = syscallRows(tables);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].name, "openat");
    EXPECT_EQ(rows[0].calls, 10u);
    EXPECT_EQ(rows[0].errors, 7u);
    EXPECT_EQ(rows[1].name, "getppid");
    EXPECT_EQ(formatSyscallSummary(rows),
              "% time     seconds  usecs/call     calls    errors syscall\n"
              "------ ----------- ----------- --------- --------- ----------------\n"
              " 75.00    0.000150          15        10         7 openat\n"
              " 25.00    0.000050           0       100           getppid\n"
              "------ ----------- ----------- --------- --------- ----------------\n"
              "100.00    0.000200           1       110         7 total\n");
}

// One call shows the same digits in seconds and usecs/call: both from the microseconds
// rounded (before the fix: "1.877253  1877252", seconds rounded and usecs/call truncated;
// seen failing).
TEST(SyscallSummary, OneCallSameDigitsInSecondsAndUsecsPerCall) {
    const std::string table =
        formatSyscallSummary({{"clock_nanosleep", 1'877'252'600, 1, 0}, {"read", 499, 1, 0}});
    EXPECT_NE(table.find("100.00    1.877253     1877253         1           clock_nanosleep\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("  0.00    0.000000           0         1           read\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("100.00    1.877253      938626         2           total\n"),
              std::string::npos)
        << table;
}

TEST(SyscallSummary, LossesAreSaid) {
    std::vector<AggrTable> tables = {summaryTable("syscall:getppid", {{0, 1, 1}})};
    SessionStats st;
    st.probes.resize(1);
    EXPECT_EQ(syscallSummaryLosses(tables, st), "");
    st.probes[0].nmissed = 2;
    tables[0].overflow = 3;
    EXPECT_EQ(syscallSummaryLosses(tables, st),
              "5 calls not counted: 2 unpaired (kretprobe instances short: raise --maxactive), 3 "
              "map full, 0 nested");
}

TEST(SyscallSummary, OptionsOfTraceC) {
    auto all = parseTraceOptions({"--syscalls=all", "-c", "--", "ls"});
    ASSERT_TRUE(all) << all.error().message;
    EXPECT_TRUE(all->summary_only);
    ASSERT_EQ(all->specs.size(), 1u);
    EXPECT_EQ(all->specs[0].text, "syscall:*");
    auto kp = parseTraceOptions({"-c", "kprobe:vfs_read"});
    ASSERT_FALSE(kp);
    EXPECT_THAT(kp.error().message, HasSubstr("-c counts syscalls: 'kprobe:vfs_read' is not one"));
    // exit_group never returns: no row, as in strace -c, and no probe (the kernel's latency
    // map needs a return); alone it leaves nothing to count.
    auto eg = parseTraceOptions({"--syscalls=getppid,exit_group", "-c", "--", "ls"});
    ASSERT_TRUE(eg) << eg.error().message;
    const auto probed = summarySpecs(eg->specs);
    ASSERT_EQ(probed.size(), 1u);
    EXPECT_EQ(probed[0].text, "syscall:getppid");
    EXPECT_EQ(summarySpecs(all->specs).size(), 1u) << "syscall:* stays";
    auto only = parseTraceOptions({"--syscalls=exit_group,exit", "-c", "--", "ls"});
    ASSERT_FALSE(only);
    EXPECT_THAT(only.error().message, HasSubstr("exit_group never returns"));
    auto out = parseTraceOptions({"-c", "syscall:read", "-o", "/tmp/x"});
    ASSERT_FALSE(out);
    EXPECT_THAT(out.error().message, HasSubstr("it takes no -o or --format"));
    EXPECT_TRUE(parseTraceOptions({"-c", "syscall:read", "--backend", "ptrace", "--", "ls"}));
}
