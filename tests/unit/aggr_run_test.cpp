// count, hist and latency end to end on the ptrace backend (no kernel module): what they
// print and exit with for a real traced command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// `unwind_target wait FIFO` blocks in un_wait() until a byte comes: written once the tables
// printed so far hold `entered` (the interval in which the call was entered), so that the
// call certainly returns in a later interval.
class ReleaseOnceEntered : public std::stringbuf {
  public:
    ReleaseOnceEntered(int fifo, std::string entered) : fifo_(fifo), entered_(std::move(entered)) {}

  protected:
    int sync() override {
        if (!released_ && str().find(entered_) != std::string::npos)
            released_ = ::write(fifo_, "x", 1) == 1;
        return 0;
    }

  private:
    int fifo_;
    std::string entered_;
    bool released_ = false;
};

// latency with --interval of a call entered in one interval and returned in a later one:
// an interval before the last said "never returned 1" of it (or 0 on ptrace, its hits
// unbalanced), and the one it returned in "hits 0" with count 1. Every interval must
// balance: hits + entered before = count + not returned yet.
TEST(AggrRun, IntervalsBalanceACallThatReturnsInALaterInterval) {
    const std::string fifo = ::testing::TempDir() + "ctl-interval-fifo";
    ::unlink(fifo.c_str());
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Read and write: the workload's open does not wait for a writer.
    const int fd = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const std::string spec = std::string("uretprobe:") + FX_UNWIND_PATH + ":un_wait";
    auto runWith = [&](const std::string& format, const std::string& entered) {
        ReleaseOnceEntered buf(fd, entered);
        std::ostream out(&buf);
        Ran r = runOn(out, "latency",
                      {spec, "--backend", "ptrace", "--interval", "100ms", "--format", format, "-o",
                       "-", "--duration", "120", "--", FX_UNWIND_PATH, "wait", fifo});
        r.out = buf.str();
        return r;
    };

    Ran json = runWith("json", "\"hits\":1,");
    ASSERT_EQ(json.rc, 0) << json.err;
    std::istringstream lines(json.out);
    std::vector<nlohmann::json> intervals;
    for (std::string line; std::getline(lines, line);)
        intervals.push_back(nlohmann::json::parse(line));
    ASSERT_GE(intervals.size(), 2u) << json.out;
    std::uint64_t hits = 0, count = 0;
    for (std::size_t i = 0; i < intervals.size(); i++) {
        const auto& j = intervals[i];
        std::uint64_t c = 0;
        for (const auto& e : j["entries"])
            c += e["count"].get<std::uint64_t>();
        EXPECT_EQ(j["hits"].get<std::uint64_t>() + j.value("entered_before", std::uint64_t{0}),
                  c + j["unreturned"].get<std::uint64_t>())
            << "interval " << i << ": " << j.dump();
        EXPECT_EQ(j.value("final", false), i + 1 == intervals.size()) << j.dump();
        hits += j["hits"].get<std::uint64_t>();
        count += c;
    }
    EXPECT_EQ(hits, 1u) << json.out;
    EXPECT_EQ(count, 1u) << json.out;
    EXPECT_EQ(intervals.back()["unreturned"], 0u) << json.out;

    Ran text = runWith("text", "un_wait  hits 1,");
    ASSERT_EQ(text.rc, 0) << text.err;
    // Blocks, each from its time of day ("HH:MM:SS.mmm").
    std::vector<std::string> blocks;
    std::istringstream in(text.out);
    for (std::string line; std::getline(in, line);) {
        if (line.size() == 12 && line[2] == ':' && line[5] == ':' && line[8] == '.')
            blocks.emplace_back();
        if (!blocks.empty())
            blocks.back() += line + '\n';
    }
    ASSERT_GE(blocks.size(), 2u) << text.out;
    for (std::size_t i = 0; i + 1 < blocks.size(); i++)
        EXPECT_THAT(blocks[i], Not(HasSubstr("never returned"))) << blocks[i];
    const auto entered = std::find_if(blocks.begin(), blocks.end(), [](const std::string& b) {
        return b.find("un_wait  hits 1,") != std::string::npos;
    });
    ASSERT_NE(entered, blocks.end()) << text.out;
    EXPECT_THAT(*entered, HasSubstr(", entered before 0, not returned yet 1 (this interval)"));
    EXPECT_TRUE(std::any_of(entered + 1, blocks.end(), [](const std::string& b) {
        return b.find(", entered before 1, ") != std::string::npos;
    })) << text.out;
    EXPECT_THAT(blocks.back(), HasSubstr(", never returned 0 (this interval)"));
    ::close(fd);
    ::unlink(fifo.c_str());
}

}  // namespace
}  // namespace probectl::cli
