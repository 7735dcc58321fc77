// count, hist and latency end to end on the ptrace backend (no kernel module): what they
// print and exit with for a real traced command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "subcommands.hpp"

namespace probectl::cli {
namespace {

using ::testing::HasSubstr;

struct Ran {
    int rc = -1;
    std::string out, err;
};

Ran runOn(std::ostream& out, const std::string& name, const std::vector<std::string>& args) {
    std::ostringstream err;
    Io io{out, err};
    const Command* c = findCommand(name);
    EXPECT_NE(c, nullptr) << name;
    Ran r;
    r.rc = c ? c->run(args, io) : -1;
    r.err = err.str();
    return r;
}

Ran run(const std::string& name, const std::vector<std::string>& args) {
    std::ostringstream out;
    Ran r = runOn(out, name, args);
    r.out = out.str();
    return r;
}

// Each command's tables on a disk that is full, by -o or on standard output: the write
// error names where, and the run fails though the command succeeded.
TEST(AggrRun, AWriteErrorNamesTheOutputAndFails) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
        {"count", {"syscall:getppid"}},
        {"count", {"syscall:getppid", "--by", "comm", "--format", "json"}},
        {"hist", {"syscall:getppid", "pid"}},
        {"latency", {"syscall:getppid"}},
    };
    for (const auto& [name, spec] : runs) {
        std::vector<std::string> args = spec;
        args.insert(args.end(), {"--backend", "ptrace", "-o", "/dev/full", "--", "true"});
        Ran r = run(name, args);
        EXPECT_EQ(r.rc, kExitRuntime) << name << r.err;
        EXPECT_THAT(r.err, HasSubstr("probectl " + name +
                                     ": cannot write /dev/full (No space left on device)"));

        std::ofstream full("/dev/full");
        ASSERT_TRUE(full);
        args = spec;
        args.insert(args.end(), {"--backend", "ptrace", "--", "true"});
        r = runOn(full, name, args);
        EXPECT_EQ(r.rc, kExitRuntime) << name << r.err;
        EXPECT_THAT(r.err, HasSubstr("probectl " + name + ": cannot write standard output"));
    }
    // The same run with room to write succeeds.
    Ran ok = run("count", {"syscall:getppid", "--backend", "ptrace", "--", "true"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_THAT(ok.out, HasSubstr("syscall:getppid"));
}

// A write error at an --interval ends the run there, not at --duration.
TEST(AggrRun, AWriteErrorAtAnIntervalEndsTheRun) {
    const auto t0 = std::chrono::steady_clock::now();
    Ran r = run("count", {"syscall:getppid", "--backend", "ptrace", "--interval", "100ms", "-o",
                          "/dev/full", "--", "sleep", "20"});
    EXPECT_EQ(r.rc, kExitRuntime) << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot write /dev/full"));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// count on a uretprobe counts returns; the entries left by longjmp are said as latency says
// them (the workload makes 5 calls, 4 of which longjmp out).
TEST(AggrRun, CountOfAUretprobeSaysTheEntriesThatNeverReturned) {
    const std::string spec = std::string("uretprobe:") + FX_UNWIND_PATH + ":un_jump";
    const std::vector<std::string> cmd = {"--backend",    "ptrace",  "--",
                                          FX_UNWIND_PATH, "longjmp", "5"};
    auto with = [&](std::vector<std::string> args) {
        args.insert(args.begin(), spec);
        args.insert(args.end(), cmd.begin(), cmd.end());
        return args;
    };
    Ran keyed = run("count", with({"--by", "comm"}));
    ASSERT_EQ(keyed.rc, 0) << keyed.err;
    EXPECT_THAT(keyed.out,
                HasSubstr("hits 5, filtered 0, rejected 0, nmissed 0, never returned 4\n"));
    Ran plain = run("count", with({}));
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_THAT(plain.out, HasSubstr(spec + ": never returned 4 (not counted)\n"));
    Ran latency = run("latency", with({}));
    ASSERT_EQ(latency.rc, 0) << latency.err;
    EXPECT_THAT(latency.out, HasSubstr("never returned 4\n"));
}

}  // namespace
}  // namespace probectl::cli
