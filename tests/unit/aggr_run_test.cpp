// count, hist and latency end to end on the ptrace backend (no kernel module): what they
// print and exit with for a real traced command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aggr_cli.hpp"
#include "subcommands.hpp"

namespace probectl::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A child that waits to be killed, for -p: the ptrace backend attaches to its own child.
struct Child {
    Child() {
        pid = ::fork();
        if (pid == 0) {
            for (;;)
                ::pause();
        }
    }
    ~Child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    pid_t pid = -1;
};

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

        // Standard output holds the tables of a run without a command (here -p).
        std::ofstream full("/dev/full");
        ASSERT_TRUE(full);
        Child child;
        args = spec;
        args.insert(args.end(),
                    {"--backend", "ptrace", "-p", std::to_string(child.pid), "--duration", "0.1"});
        r = runOn(full, name, args);
        EXPECT_EQ(r.rc, kExitRuntime) << name << r.err;
        EXPECT_THAT(r.err, HasSubstr("probectl " + name + ": cannot write standard output"));
    }
    // The same run with room to write succeeds.
    Ran ok = run("count", {"syscall:getppid", "--backend", "ptrace", "--", "true"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_THAT(ok.err, HasSubstr("syscall:getppid"));
}

// The tables go where trace's events go: with -- CMD and no -o on stderr (CMD's own output
// keeps stdout: `count ... --format json -- CMD | jq` once failed on the mix); with -o in the
// file; without a command on stdout.
TEST(AggrRun, TheTablesOfACommandGoToStderrUnlessGivenAFile) {
    for (const std::string name : {"count", "hist", "latency"}) {
        SCOPED_TRACE(name);
        std::vector<std::string> spec = {"syscall:getppid"};
        if (name == "hist")
            spec.push_back("pid");
        std::vector<std::string> args = spec;
        args.insert(args.end(), {"--format", "json", "--backend", "ptrace", "--", "true"});
        Ran r = run(name, args);
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_THAT(r.err, HasSubstr("\"probe\":\"syscall:getppid\""));

        const std::string path = ::testing::TempDir() + "aggr-tables-" + name + ".json";
        args = spec;
        args.insert(args.end(),
                    {"--format", "json", "-o", path, "--backend", "ptrace", "--", "true"});
        r = run(name, args);
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_THAT(r.err, Not(HasSubstr("\"probe\":")));
        std::ifstream in(path);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        EXPECT_THAT(text, HasSubstr("\"probe\":\"syscall:getppid\""));

        Child child;
        args = spec;
        args.insert(args.end(), {"--format", "json", "--backend", "ptrace", "-p",
                                 std::to_string(child.pid), "--duration", "0.1"});
        r = run(name, args);
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_THAT(r.out, HasSubstr("\"probe\":\"syscall:getppid\""));
        EXPECT_THAT(r.err, Not(HasSubstr("\"probe\":")));
    }
}

// -o - is standard output for the tables, even with -- CMD (whose tables go to stderr
// without -o): it made a file named '-'. The timelines (perfetto, chrome) refuse it, as
// trace's trace files do.
TEST(AggrRun, DashOutputIsStandardOutput) {
    std::filesystem::remove("-");
    for (const std::string name : {"count", "hist", "latency"}) {
        SCOPED_TRACE(name);
        std::vector<std::string> args = {"syscall:getppid"};
        if (name == "hist")
            args.push_back("pid");
        args.insert(args.end(),
                    {"--format", "json", "-o", "-", "--backend", "ptrace", "--", "true"});
        Ran r = run(name, args);
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_THAT(r.out, HasSubstr("\"probe\":\"syscall:getppid\""));
        EXPECT_THAT(r.err, Not(HasSubstr("\"probe\":")));
        EXPECT_FALSE(std::filesystem::exists("-")) << "a file named '-' was made";
        std::filesystem::remove("-");
    }
    auto o = parseAggrOptions(AggrMode::Count, {"syscall:getppid", "-o", "-", "--", "true"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(tablesTo(*o), TablesTo::Stdout);
    for (const char* format : {"perfetto", "chrome"}) {
        auto p = parseAggrOptions(AggrMode::Count,
                                  {"syscall:getppid", "--format", format, "-o", "-", "--", "true"});
        ASSERT_FALSE(p) << format;
        EXPECT_THAT(p.error().message, HasSubstr("-o -:")) << format;
    }
}

TEST(AggrRun, WhereTheTablesGo) {
    auto to = [](const std::vector<std::string>& args) {
        auto o = parseAggrOptions(AggrMode::Count, args);
        EXPECT_TRUE(o);
        return o ? tablesTo(*o) : TablesTo::Stdout;
    };
    EXPECT_EQ(to({"syscall:getppid", "--", "true"}), TablesTo::Stderr);
    EXPECT_EQ(to({"syscall:getppid", "-o", "t.txt", "--", "true"}), TablesTo::File);
    EXPECT_EQ(to({"syscall:getppid", "--duration", "1"}), TablesTo::Stdout);
    EXPECT_EQ(to({"syscall:getppid", "-o", "t.txt", "--duration", "1"}), TablesTo::File);
    // perfetto|chrome: FILE is the timeline; the text tables follow the rule without -o.
    EXPECT_EQ(to({"syscall:getppid", "--format", "perfetto", "-o", "t.pftrace", "--", "true"}),
              TablesTo::Stderr);
    EXPECT_EQ(to({"syscall:getppid", "--format", "chrome", "-o", "t.json", "--duration", "1"}),
              TablesTo::Stdout);
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
    EXPECT_THAT(keyed.err,
                HasSubstr("hits 5, filtered 0, rejected 0, nmissed 0, never returned 4\n"));
    Ran plain = run("count", with({}));
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_THAT(plain.err, HasSubstr(spec + ": never returned 4 (not counted)\n"));
    Ran latency = run("latency", with({}));
    ASSERT_EQ(latency.rc, 0) << latency.err;
    EXPECT_THAT(latency.err, HasSubstr("never returned 4\n"));
}

// A program whose file name holds an escape sequence and a newline: the banner, the exit
// line and the PROBE columns of count's table and trace's summary printed them raw (the
// event lines already quoted them), so the name could split a line or colour the terminal.
TEST(AggrRun, ANameWithControlBytesNeverReachesTheTerminalRaw) {
    const std::string dir = ::testing::TempDir() + "ctl-name";
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/x\033[31mRED\nline2";
    std::filesystem::copy_file(FX_UNWIND_PATH, path,
                               std::filesystem::copy_options::overwrite_existing);
    const std::string quoted = "\"" + dir + "/x\\33[31mRED\\nline2";
    const std::vector<std::string> cmd = {"--backend", "ptrace", "--", path, "longjmp", "1"};
    auto with = [&](std::vector<std::string> args) {
        args.insert(args.end(), cmd.begin(), cmd.end());
        return args;
    };
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"count", with({"uprobe:" + path + ":un_jump"})},
             {"count", with({"uprobe:" + path + ":un_jump", "--by", "comm"})},
             {"trace", with({"uprobe:" + path + ":un_jump"})}}) {
        Ran r = run(name, args);
        const std::string all = r.out + r.err;
        ASSERT_EQ(r.rc, 0) << all;
        EXPECT_EQ(all.find('\033'), std::string::npos) << name << ":\n" << all;
        EXPECT_EQ(all.find("RED\n"), std::string::npos) << name << ":\n" << all;
        EXPECT_THAT(all, HasSubstr(" in " + quoted + "\" (pid ")) << name;
        EXPECT_THAT(all, HasSubstr("\n" + quoted + "\" exited with status 0\n")) << name;
        // the PROBE column (count's table, trace's summary) or count's per-probe header
        EXPECT_THAT(all, HasSubstr("\"uprobe:" + dir + "/x\\33[31mRED\\nline2:un_jump\"  "))
            << name;
    }
}

}  // namespace
}  // namespace probectl::cli
