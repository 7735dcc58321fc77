// What the CLI writes, as a user reads it in the VM: JSON that keeps the bytes of names
// that are not UTF-8, and writes that fail (a full disk, /dev/full) said and not exit 0.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;
using ::testing::HasSubstr;

namespace {

std::vector<nlohmann::json> jsonLines(const std::string& text) {
    std::vector<nlohmann::json> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        out.push_back(nlohmann::json::parse(text.substr(at, nl - at)));
    return out;
}

// Two copies of getppid_loop named g\377 and g\376 (bytes 0xff and 0xfe), and the shell
// command running the first `a` times, the second `b` times.
std::string twoNamesCommand(int a, int b) {
    const std::string dir = "/tmp/cli-bytes";
    std::filesystem::create_directories(dir);
    const std::string ff = dir + "/g\xff", fe = dir + "/g\xfe";
    for (const auto& to : {ff, fe})
        std::filesystem::copy_file(itest::workload("getppid_loop"), to,
                                   std::filesystem::copy_options::overwrite_existing);
    return "sh -c \"'" + ff + "' " + std::to_string(a) + "; '" + fe + "' " + std::to_string(b) +
           "\"";
}

}  // namespace

// count --by comm --format json merged tasks g\377 and g\376 into two entries with the same
// key {"comm":"g\ufffd"}; the text table kept them apart. comm_bytes keeps them apart in
// JSON; so do the events of trace --format json.
TEST(CliOutput, JsonKeepsBytesOfNamesThatAreNotUtf8) {
    const std::string cmd = twoNamesCommand(2, 3);
    Ran r = sh(
        itest::tablesOnly("probectl count syscall:getppid --by comm -f --format json -- " + cmd) +
        " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto tables = jsonLines(r.out);
    ASSERT_EQ(tables.size(), 1u) << r.out;
    std::map<std::string, std::uint64_t> counts;
    for (const auto& e : tables[0]["entries"]) {
        if (!e["key"].contains("comm_bytes"))
            continue;  // sh's own calls, if any
        EXPECT_EQ(e["key"]["comm"], "g\xef\xbf\xbd") << r.out;
        counts[e["key"]["comm_bytes"]] += e["count"].get<std::uint64_t>();
    }
    EXPECT_EQ(counts, (std::map<std::string, std::uint64_t>{{"67fe", 3}, {"67ff", 2}})) << r.out;

    const std::string file = "/tmp/cli-bytes.json";
    r = sh("probectl trace syscall:getppid -f --format json -o " + file + " -- " + cmd);
    ASSERT_EQ(r.status, 0) << r.out;
    std::map<std::string, int> events;
    for (const auto& j : jsonLines(itest::readFile(file)))
        if (j["type"] == "event" && j.contains("comm_bytes"))
            events[j["comm_bytes"]]++;
    EXPECT_EQ(events, (std::map<std::string, int>{{"67fe", 3}, {"67ff", 2}}))
        << itest::readFile(file);
}

// A write to stdout or stderr that failed was ignored: exit 0, output lost unsaid.
TEST(CliOutput, FailedWritesAreSaidAndExitNonZero) {
    for (const std::string cmd : {"list", "symbols vfs_read", "--help"}) {
        // In braces: sh() adds 2>&1 to the whole line.
        Ran r = sh("{ probectl " + cmd + " >/dev/full; }");
        EXPECT_EQ(r.status, 1) << cmd << ": " << r.out;
        EXPECT_THAT(r.out, HasSubstr("cannot write standard output (No space left on device)"))
            << cmd;
    }
    const std::string loop = itest::workload("getppid_loop");
    // -c's table goes to stderr; the command's own status (0) becomes 1.
    Ran ok = sh("{ probectl trace --syscalls=getppid -c -- " + loop + " 10 >/dev/null; }");
    ASSERT_EQ(ok.status, 0) << ok.out;
    EXPECT_THAT(ok.out, HasSubstr("getppid")) << ok.out;
    Ran full = sh("{ probectl trace --syscalls=getppid -c -- " + loop + " 10 2>/dev/full; }");
    EXPECT_EQ(full.status, 1) << full.out;
    // A command's non-zero status is kept.
    Ran seven = sh("{ probectl trace --syscalls=getppid -c -- sh -c '" + loop +
                   " 10; exit 7' 2>/dev/full; }");
    EXPECT_EQ(seven.status, 7) << seven.out;
}

// A disk that fills up while record (or trace -o) runs: said at once with the file and the
// reason, the trace stops and the incomplete output is removed. record ran on to the
// command's end (a summary of every event "DELIVERED", 0 lost) and only then said
// "cannot write ... (No space left on device)", leaving a cut recording.
TEST(CliOutput, AFullDiskStopsTheTraceAtOnce) {
    const std::string dir = "/tmp/cli-small-disk";
    std::filesystem::create_directories(dir);
    ASSERT_EQ(sh("mount -t tmpfs -o size=100k tmpfs " + dir).status, 0);
    // Runs for hours unless the trace stops it: a steady 1000 calls per millisecond at most.
    const std::string loop = itest::workload("getppid_loop") + " 1000000000000 1000 1000";
    for (const std::string how : {"record", "trace --format json"}) {
        SCOPED_TRACE(how);
        const std::string file = dir + "/out";
        const auto start = std::chrono::steady_clock::now();
        const Ran r = sh("probectl " + how + " syscall:getppid -o " + file + " -- " + loop);
        const auto took = std::chrono::steady_clock::now() - start;
        EXPECT_EQ(r.status, 1) << r.out;
        EXPECT_THAT(r.out, HasSubstr("cannot write " + file +
                                     " (No space left on device): stopping the trace\n"))
            << r.out;
        EXPECT_THAT(r.out, HasSubstr("removed " + file + ", as it was incomplete")) << r.out;
        EXPECT_FALSE(std::filesystem::exists(file)) << r.out;
        EXPECT_LT(took, std::chrono::seconds(60)) << r.out;
    }
    EXPECT_EQ(sh("umount " + dir).status, 0);
}
