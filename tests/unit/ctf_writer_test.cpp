// The CTF 1.8 writer, read back with babeltrace2 (Debian 12's 2.0 reads CTF 1.8): event
// count, names, timestamps (clock cycles = ns), field values, and the discarded-event
// count it reports from the packet contexts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "probectl/trace_export.hpp"
#include "text_proto.hpp"
#include "trace_export_events.hpp"

using ::testing::HasSubstr;

namespace {

std::string writeCtf(const std::vector<probectl::Event>& events, const std::string& name,
                     const probectl::SessionStats& stats) {
    const std::string dir = testing::TempDir() + name;
    std::filesystem::remove_all(dir);
    auto w = probectl::ctfTraceWriter(dir);
    EXPECT_TRUE(w.ok());
    probectl::TraceClocks clocks{1'000'000'000, 0, 1'700'000'001'000'000'000};
    EXPECT_TRUE((*w)->begin(1'000'000'000, clocks).ok());
    for (const auto& ev : events)
        EXPECT_TRUE((*w)->event(ev).ok());
    EXPECT_TRUE((*w)->finish(stats).ok());
    return dir;
}

std::string babeltrace(const std::string& args, int* status) {
    EXPECT_STRNE(PROBECTL_BABELTRACE2, "") << "babeltrace2 not found: make deps installs it";
    return prototest::run(std::string(PROBECTL_BABELTRACE2) + " " + args + " 2>&1", status);
}

std::vector<std::string> eventLines(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        if (!l.empty() && l[0] == '[')
            lines.push_back(l);
    return lines;
}

}  // namespace

TEST(CtfWriter, Babeltrace2ReadsEveryEventWithItsFields) {
    const std::string dir = writeCtf(exporttest::sampleRun(), "/ctf-sample", {});
    int status = -1;
    const std::string out = babeltrace("--clock-cycles " + dir, &status);
    ASSERT_EQ(status, 0) << out;
    const auto lines = eventLines(out);
    ASSERT_EQ(lines.size(), 6u) << out;
    // Time order across the per-CPU streams, raw ns as cycles (20 digits); the escape
    // underscore of field names is gone.
    EXPECT_THAT(lines[0], HasSubstr("[00000000001000000100]"));
    EXPECT_THAT(lines[0], HasSubstr("kprobe:do_sys_openat2:"));
    EXPECT_THAT(lines[0], HasSubstr("cpu_id = 0"));
    EXPECT_THAT(lines[0], HasSubstr("tid = 100, pid = 100, comm = \"worker\""));
    EXPECT_THAT(lines[0], HasSubstr("arg1 = 0x10, arg2 = 0x11"));
    EXPECT_THAT(lines[1],
                HasSubstr("[00000000001000000900] (+000000000800) uretprobe:/bin/prog:work:"));
    EXPECT_THAT(lines[1], HasSubstr("r = 7, retval = 7, latency_ns = 600"));
    EXPECT_THAT(lines[2], HasSubstr("r = -2, retval = -2, latency_ns = 1300"));
    EXPECT_THAT(lines[3], HasSubstr("cpu_id = 1"));
    EXPECT_THAT(lines[3], HasSubstr("path = \"/etc/passwd\", flags = 0x80000, "
                                    "bytes = \"{1,2,3}\", bad = 0, faults = 8"));
}

// A syscall event with syscall_returned but not is_return (a ptrace recording's) has the
// fields of a return: retval and latency_ns.
TEST(CtfWriter, APtraceSyscallHasRetvalAndLatency) {
    const probectl::SyscallPlan plan = probectl::syscallPlan("getppid", nullptr);
    const std::string dir = writeCtf({exporttest::ptraceSyscall(plan)}, "/ctf-ptrace-syscall", {});
    int status = -1;
    const std::string out = babeltrace(dir, &status);
    ASSERT_EQ(status, 0) << out;
    const auto lines = eventLines(out);
    ASSERT_EQ(lines.size(), 1u) << out;
    EXPECT_THAT(lines[0], HasSubstr("call = \"getppid() = 169\", retval = 169, latency_ns = 100"));
}

TEST(CtfWriter, WallClockFromTheStartOffset) {
    const std::string dir = writeCtf(exporttest::sampleRun(), "/ctf-clock", {});
    int status = -1;
    const std::string out = babeltrace("--clock-gmt --clock-date " + dir, &status);
    ASSERT_EQ(status, 0) << out;
    // realtime - monotonic = 1700000000 s (22:13:20), plus the first event's 1.0000001 s.
    EXPECT_THAT(eventLines(out).at(0), HasSubstr("[2023-11-14 22:13:21.000000100]"));
}

TEST(CtfWriter, DiscardedEventsAreReported) {
    const std::string dir =
        writeCtf(exporttest::sampleRun(), "/ctf-discarded", exporttest::sampleStats());
    int status = -1;
    const std::string out = babeltrace(dir, &status);
    ASSERT_EQ(status, 0) << out;
    EXPECT_EQ(eventLines(out).size(), 6u) << out;
    // dropped 3 + 1, lost 2
    EXPECT_TRUE(std::regex_search(out, std::regex("discarded 6 events"))) << out;
}

TEST(CtfWriter, PacketsSplitALongStream) {
    std::vector<probectl::Event> evs;
    for (int i = 0; i < 20000; ++i)
        evs.push_back(exporttest::fetched(100, 100, 1'000'000'000 + i, "/etc/passwd"));
    const std::string dir = writeCtf(evs, "/ctf-long", {});
    EXPECT_GT(std::filesystem::file_size(dir + "/stream_0"), 10u * 64 * 1024);
    int status = -1;
    const std::string out = babeltrace("--clock-cycles " + dir, &status);
    ASSERT_EQ(status, 0) << out.substr(0, 2000);
    const auto lines = eventLines(out);
    ASSERT_EQ(lines.size(), 20000u);
    EXPECT_THAT(lines.back(), HasSubstr("[00000000001000019999]"));
}

TEST(CtfWriter, RefusesADirectoryWithFilesInIt) {
    const std::string dir = writeCtf(exporttest::sampleRun(), "/ctf-again", {});
    auto w = probectl::ctfTraceWriter(dir);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().err, EEXIST);
}

TEST(CtfWriter, EventNameIsTheWholeLocation) {
    const std::string dir = writeCtf({exporttest::spaced()}, "/ctf-spaced", {});
    int status = -1;
    const std::string out = babeltrace(dir, &status);
    ASSERT_EQ(status, 0) << out;
    const auto lines = eventLines(out);
    ASSERT_EQ(lines.size(), 1u) << out;
    EXPECT_THAT(lines[0], HasSubstr(std::string(exporttest::kSpacedName) + ":")) << out;
    EXPECT_THAT(lines[0], HasSubstr("k = 3")) << out;
}
