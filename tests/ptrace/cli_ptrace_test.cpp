// `probectl trace --backend=ptrace` end to end, through runTrace with captured streams:
// one line per event in the kernel backend's format, the same summary, CMD's exit status.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "aggr_cli.hpp"
#include "pt_fixtures.hpp"
#include "subcommands.hpp"
#include "usdt_operands_expect.hpp"

namespace probectl::cli {
namespace {

using ptfx::kWorkload;

struct Run {
    int rc = -1;
    std::string out, err;
};

Run trace(std::vector<std::string> args) {
    std::ostringstream out, err;
    Io io{out, err};
    Run r;
    r.rc = runTrace(args, io);
    r.out = out.str();
    r.err = err.str();
    return r;
}

// count, hist or latency (runCount, runHist, runLatency) with captured streams.
Run aggr(int (*cmd)(const std::vector<std::string>&, Io&), const std::vector<std::string>& args) {
    std::ostringstream out, err;
    Io io{out, err};
    Run r;
    r.rc = cmd(args, io);
    r.out = out.str();
    r.err = err.str();
    return r;
}

std::size_t countLines(const std::string& text, const std::string& needle) {
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.find(needle) != std::string::npos)
            ++n;
    return n;
}

TEST(CliPtrace, UprobeAndUretprobeLinesAndSummary) {
    const std::string entry = "uprobe:" + kWorkload + ":pt_add";
    const std::string ret = "uretprobe:" + kWorkload + ":pt_add";
    auto r = trace({"--backend=ptrace", entry, ret, "--", kWorkload, "calls", "6"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "") << "a command's trace goes to stderr, as strace's";
    EXPECT_NE(r.err.find("with ptrace"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("exited with status 0"), std::string::npos) << r.err;
    // pt_add(6, 13) then its return, 19
    EXPECT_EQ(countLines(r.err, " arg1=0x6 arg2=0xd "), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "ret=19 (0x13)"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "] pt_workload "), 12u) << r.err;
    // Summary: PROBE HITS DELIVERED DROPPED NMISSED FILTERED
    EXPECT_EQ(countLines(r.err, entry + " "), 7u) << r.err;  // 6 events + summary row
}

// count through a library unloaded and loaded again at the same address
// (tests/ptrace/redlopen.c): 7 calls in each copy, 14 in all.
TEST(CliPtrace, CountSeesALibraryLoadedAgain) {
    const std::string probe = std::string("uprobe:") + FX_DLOPEN_LIB_PATH + ":lib_calls_back";
    auto r = aggr(runCount, {"--backend=ptrace", probe, "--", FX_REDLOPEN_PATH, FX_DLOPEN_LIB_PATH,
                             "7", "again"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(" +14\n"))) << r.err;
}

TEST(CliPtrace, CommandExitStatusIsPassedOn) {
    auto r = trace({"--backend=ptrace", "syscall:getppid", "--", kWorkload, "bad-mode", "1"});
    EXPECT_EQ(r.rc, 2) << r.err;
}

TEST(CliPtrace, KernelKindsRefused) {
    // The command line's mistake on any system: a usage error, found by the backend.
    auto r = trace({"--backend=ptrace", "kprobe:do_sys_openat2", "--", kWorkload, "calls", "1"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("kprobe:do_sys_openat2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--backend=kernel"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Try 'probectl trace --help'."), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("(Operation not supported)"), std::string::npos) << r.err;
}

// Stderr less its notes: a machine without tracefs adds one (syscall arguments unknown).
std::string withoutNotes(const std::string& err) {
    std::string out;
    std::size_t at = 0;
    while (at < err.size()) {
        std::size_t end = err.find('\n', at);
        end = end == std::string::npos ? err.size() : end + 1;
        const std::string line = err.substr(at, end - at);
        if (line.find(": note: ") == std::string::npos)
            out += line;
        at = end;
    }
    return out;
}

// The kernel's name of a syscall is refused with the name to use, and nothing after it: the
// errno text "(No such file or directory)" followed the hint.
TEST(CliPtrace, KernelNameOfASyscallSaysTheNameToUse) {
    auto r = trace({"--backend=ptrace", "syscall:newuname", "--", "true"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(withoutNotes(r.err),
              "probectl trace: syscall:newuname: 'newuname' is the kernel's name of the x86-64 "
              "syscall 'uname': use syscall:uname\n");
}

// A mistyped syscall gets the kernel backend's did-you-mean on this backend too.
TEST(CliPtrace, UnknownSyscallSaysTheNamesNearIt) {
    auto r = aggr(runCount, {"--backend=ptrace", "syscall:opnat", "--", "true"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_NE(withoutNotes(r.err).find("unknown syscall 'opnat'; did you mean: openat"),
              std::string::npos)
        << r.err;
    auto t = trace({"--backend=ptrace", "syscall:getppidd", "--", "true"});
    EXPECT_NE(t.err.find("did you mean: getppid"), std::string::npos) << t.err;
}

TEST(CliPtrace, OptionChecks) {
    EXPECT_EQ(trace({"--backend=dtrace", "syscall:getppid", "--", "true"}).rc, 2);
    EXPECT_EQ(trace({"--seccomp-bpf", "syscall:getppid", "--", "true"}).rc, 2);
    EXPECT_EQ(trace({"--backend=ptrace", "--seccomp-bpf", "-p", "1", "syscall:getppid"}).rc, 2);
}

TEST(CliPtrace, SeccompSyscallLines) {
    auto r = trace({"--backend=ptrace", "--seccomp-bpf", "-f", "syscall:getppid", "--", kWorkload,
                    "syscalls", "4"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "syscall:getppid"), 5u) << r.err;  // 4 events + summary row
}

// Every execve of a followed command, as without the filter (before the fix: only those
// that failed, whose exit stop comes with no exec event first).
TEST(CliPtrace, SeccompSeesEveryExecve) {
    for (const bool seccomp : {true, false}) {
        std::vector<std::string> args = {
            "--backend=ptrace", "-f", "--syscalls=execve", "--", kWorkload, "execs", "2"};
        if (seccomp)
            args.insert(args.begin() + 1, "--seccomp-bpf");
        auto r = trace(args);
        ASSERT_EQ(r.rc, 0) << r.err;
        // 1 + 2 per child (one fails with ENOENT)
        EXPECT_EQ(countLines(r.err, "execve(\""), 5u) << seccomp << "\n" << r.err;
        EXPECT_EQ(countLines(r.err, "= -1 ENOENT"), 2u) << seccomp << "\n" << r.err;
    }
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

Run report(std::vector<std::string> args) {
    std::ostringstream out, err;
    Io io{out, err};
    Run r;
    r.rc = runReport(args, io);
    r.out = out.str();
    r.err = err.str();
    return r;
}

// Probes named by their whole location where it holds a space (was: cut at the first one).
// A const method (fx_cxx: fx::Counter::add(long) const, 3 calls) names chrome events
// "...:'fx::Counter::add(long) const'", not "...:'fx::Counter::add(long)", the non-const
// name; a USDT probe in a path with a space names its text lines (which show its values)
// by the whole quoted path.
TEST(CliPtrace, LocationWithSpacesNamesEventsWhole) {
    const std::string dir = testing::TempDir() + "/ptrace-spaced/my dir";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string location =
        std::string("uprobe:") + FX_CXX_PATH + ":'fx::Counter::add(long) const'";
    auto c = trace({"--backend=ptrace", location, "--format", "chrome", "-o", dir + "/t.json", "--",
                    FX_CXX_PATH, "3"});
    ASSERT_EQ(c.rc, 0) << c.err;
    const std::string chrome = slurp(dir + "/t.json");
    EXPECT_EQ(occurrences(chrome, "\"name\":\"" + location + "\""), 3u) << chrome;

    const std::string copy = dir + "/pt_workload";
    std::filesystem::copy_file(kWorkload, copy);
    const std::string tick = "usdt:'" + copy + "':pt:tick";
    auto r = trace({"--backend=ptrace", tick + " if arg1 >= 2", "--", copy, "usdt", "3"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, tick + "  arg1=2 arg2=4 arg3=6"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, tick + "  arg1=3 arg2=9 arg3=9"), 1u) << r.err;
}

// A syscall event of the ptrace backend is a slice in the timeline formats, as the kernel
// backend's is: from the entry to the exit, with the retval and latency_ns (before the
// fix: chrome instants, CTF without either field), also when a recording is converted.
TEST(CliPtrace, SyscallsAreSlicesInTraceFiles) {
    const std::string dir = testing::TempDir() + "/ptrace-slices";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::vector<std::string> cmd = {"--", kWorkload, "syscalls", "3"};
    auto run = [&](const char* format, const std::string& out) {
        std::vector<std::string> a = {
            "--backend=ptrace", "syscall:getppid", "--format", format, "-o", out};
        a.insert(a.end(), cmd.begin(), cmd.end());
        auto r = trace(a);
        EXPECT_EQ(r.rc, 0) << format << ": " << r.err;
    };
    run("chrome", dir + "/t.json");
    const std::string chrome = slurp(dir + "/t.json");
    EXPECT_EQ(occurrences(chrome, "\"ph\":\"X\""), 3u) << chrome;
    EXPECT_EQ(occurrences(chrome, "\"ph\":\"i\""), 0u) << chrome;
    EXPECT_EQ(occurrences(chrome, "\"dur\":"), 3u) << chrome;
    EXPECT_EQ(occurrences(chrome, "\"retval\":" + std::to_string(getpid())), 3u) << chrome;
    EXPECT_EQ(occurrences(chrome, "\"latency_ns\":"), 3u) << chrome;

    run("ctf", dir + "/ctf");
    const std::string tsdl = slurp(dir + "/ctf/metadata");
    EXPECT_EQ(occurrences(tsdl, " _retval;"), 1u) << tsdl;
    EXPECT_EQ(occurrences(tsdl, " _latency_ns;"), 1u) << tsdl;

    run("record", dir + "/rec");
    auto r = report({dir + "/rec", "--format", "chrome", "-o", dir + "/r.json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string converted = slurp(dir + "/r.json");
    EXPECT_EQ(occurrences(converted, "\"ph\":\"X\""), 3u) << converted;
    EXPECT_EQ(occurrences(converted, "\"latency_ns\":"), 3u) << converted;
    r = report({dir + "/rec"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "getppid() = " + std::to_string(getpid())), 3u) << r.out;
}

// The ptrace backend applies a spec's `if` predicate host-side with the kernel's semantics:
// rejected hits are counted, never printed, and the summary says so.
TEST(CliPtrace, PredicateOnTaskFields) {
    const std::string keep =
        "uprobe:" + kWorkload + ":pt_add if $comm == \"pt_workload\" && $tid != 0";
    auto r = trace({"--backend=ptrace", keep, "--", kWorkload, "calls", "4"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "] pt_workload "), 4u) << r.err;
    const std::string none = "uprobe:" + kWorkload + ":pt_add if $comm ~ \"zz*\" || $pid == 1";
    r = trace({"--backend=ptrace", none, "--", kWorkload, "calls", "4"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "] pt_workload "), 0u) << r.err;
    // HITS DELIVERED DROPPED NMISSED FILTERED REJECTED
    EXPECT_EQ(countLines(r.err, "4          0        0        0         0         4"), 1u) << r.err;
    // Fetch arguments do not exist with ptrace: naming one is an error at its column.
    r = trace({"--backend=ptrace", "uprobe:" + kWorkload + ":pt_add if x == 1", "--", kWorkload,
               "calls", "1"});
    EXPECT_NE(r.rc, 0);
    EXPECT_NE(r.err.find("unknown field 'x'"), std::string::npos) << r.err;
}

// $comm is the thread's comm at the hit: the process renames itself after its first call.
TEST(CliPtrace, PredicateOnCommAfterRename) {
    auto r = trace({"--backend=ptrace", "syscall:getppid if $comm == \"renamed\"", "--", kWorkload,
                    "rename", "3"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "] renamed "), 2u) << r.err;
    EXPECT_EQ(countLines(r.err, "] pt_workload "), 0u) << r.err;
    std::ostringstream out, err;
    Io io{out, err};
    ASSERT_EQ(runCount({"--backend=ptrace", "syscall:getppid", "--by", "comm", "--", kWorkload,
                        "rename", "2"},
                       io),
              0)
        << err.str();
    EXPECT_NE(err.str().find("\nrenamed          2\n"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("\nworker1          2\n"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("\npt_workload      1\n"), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("\n\"nl\\nx\"          1\n"), std::string::npos) << err.str();
}

// A syscall glob includes exit and exit_group, which never return: -c and --by errno over
// every syscall skip them (as the kernel backend does), never refuse the whole run.
TEST(CliPtrace, EverySyscallCountedThoughExitNeverReturns) {
    auto r = trace({"--backend=ptrace", "-c", "--syscalls=all", "--", kWorkload, "calls", "1"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, " execve"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, " total"), 1u) << r.err;
    std::ostringstream out, err;
    Io io{out, err};
    EXPECT_EQ(
        runCount({"--backend=ptrace", "syscall:*", "--by", "errno", "--", kWorkload, "calls", "1"},
                 io),
        0)
        << err.str();
}

// -c prints a table of syscall names, counts and times: the note that syscall arguments are
// unknown (tracefs without syscall events, or not readable: a user's ptrace run) said
// nothing about it. The lines of a trace still get it (a syscall without a decoder of its
// own then prints no arguments).
TEST(CliPtrace, SummaryOnlySaysNothingOfArguments) {
    auto r = trace({"--backend=ptrace", "--syscalls=all", "-c", "--", kWorkload, "calls", "1"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, " total"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "argument"), 0u) << r.err;
    EXPECT_EQ(countLines(r.err, "tracefs"), 0u) << r.err;
}

// exit and exit_group never return: latency and $retval of them are refused when each is
// added (so a glob skips them and goes on), and the summary says they never return, where
// they were attached with "never returned 0" and no row (and, on the kernel backend,
// summed as "refused by the kernel"). Named alone with latency, a clear usage error.
TEST(CliPtrace, ExitAndExitGroupNeverReturnSaidByTheGlob) {
    auto by_retval = aggr(runCount, {"--backend=ptrace", "-v", "syscall:*", "--by", "$retval", "--",
                                     kWorkload, "calls", "1"});
    ASSERT_EQ(by_retval.rc, 0) << by_retval.err;
    EXPECT_EQ(countLines(by_retval.err, "; 2 refused: 2 never return (exit, exit_group)"), 1u)
        << by_retval.err;
    EXPECT_EQ(countLines(by_retval.err, "refused by"), 0u) << by_retval.err;
    EXPECT_EQ(countLines(by_retval.err,
                         "  exit_group: syscall:exit_group: exit_group never returns (the "
                         "task ends in it), so it has no $retval: key by another field, or "
                         "leave it out"),
              1u)
        << by_retval.err;
    EXPECT_EQ(countLines(by_retval.err, "syscall:exit_group  hits"), 0u) << by_retval.err;

    auto glob =
        aggr(runLatency, {"--backend=ptrace", "syscall:exit*", "--", kWorkload, "calls", "1"});
    EXPECT_EQ(glob.rc, 2) << glob.err;
    EXPECT_EQ(countLines(glob.err,
                         "syscall:exit*: none attached (attached 0 of 2; 2 refused: 2 "
                         "never return (exit, exit_group))"),
              1u)
        << glob.err;

    auto alone =
        aggr(runLatency, {"--backend=ptrace", "syscall:exit_group", "--", kWorkload, "calls", "1"});
    EXPECT_EQ(alone.rc, 2) << alone.err;
    EXPECT_EQ(countLines(alone.err,
                         "syscall:exit_group: exit_group never returns (the task ends in it), "
                         "so it has no latency: count or trace it instead, or leave it out"),
              1u)
        << alone.err;
}

// One struct as request and remaining time (coreutils' sleep passes it so), cut short by a
// handled signal: the kernel writes the time left over the request before the call returns,
// so the request shown is the one read at the entry, 60.25 s as the workload asked, and the
// time left (read at the return) is less.
TEST(CliPtrace, InterruptedSleepShowsTheRequestNotTheTimeLeft) {
    auto r = trace({"--backend=ptrace", "--syscalls=nanosleep,clock_nanosleep", "--", kWorkload,
                    "sleeps", "60"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "nanosleep({tv_sec=60, tv_nsec=250000000}, {tv_sec="), 1u) << r.err;
    EXPECT_EQ(countLines(r.err,
                         "clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=60, "
                         "tv_nsec=250000000}, {tv_sec="),
              1u)
        << r.err;
    EXPECT_EQ(countLines(r.err, "= ? ERESTART_RESTARTBLOCK"), 2u) << r.err;
}

// $retval in the predicate of a return probe: pt_add returns 3i+1, so > 7 keeps 10 and 13.
TEST(CliPtrace, PredicateOnRetval) {
    auto r = trace({"--backend=ptrace", "uretprobe:" + kWorkload + ":pt_add if $retval > 7", "--",
                    kWorkload, "calls", "4"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "] pt_workload "), 2u) << r.err;
    EXPECT_EQ(countLines(r.err, "ret=10 (0xa)"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "ret=13 (0xd)"), 1u) << r.err;
    // Not at an entry.
    r = trace({"--backend=ptrace", "uprobe:" + kWorkload + ":pt_add if $retval > 7", "--",
               kWorkload, "calls", "1"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("$retval is only available in return probes"), std::string::npos) << r.err;
}

// --ustack=dwarf at leaf() of the stack-shape workloads: inlined calls nested three deep are
// a frame each (inner, then middle, then outer), and a frame a tail call removed is shown as
// gone (start called hop, which jumped to leaf) rather than merged into its caller.
// A USDT site's own arguments, as the kernel backend shows them: on each line, as keys
// of a count, and in a predicate.
TEST(CliPtrace, UsdtArgumentsInLinesCountsAndPredicates) {
    const std::string tick = "usdt:" + kWorkload + ":pt:tick";
    auto r = trace({"--backend=ptrace", tick + " if arg1 >= 2", "--", kWorkload, "usdt", "3"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "pt:tick  arg1=2 arg2=4 arg3=6"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "pt:tick  arg1=3 arg2=9 arg3=9"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, "arg1=1 "), 0u) << r.err;
    std::ostringstream out, err;
    Io io{out, err};
    ASSERT_EQ(
        runCount({"--backend=ptrace", tick, "--by", "arg2", "--", kWorkload, "usdt", "3"}, io), 0)
        << err.str();
    // With -- CMD the table is on stderr, as trace's lines are.
    EXPECT_NE(err.str().find("ARG2  COUNT\n1         1\n4         1\n9         1\n"),
              std::string::npos)
        << err.str();
}

// A forked child that -f follows reads its USDT site's arguments as its parent would: the
// child's copy of the parent's breakpoints had lost which sites have arguments, so its
// hits had none (count --by arg2 found no key to count them by).
TEST(CliPtrace, UsdtArgumentsInAFollowedChild) {
    const std::string tick = "usdt:" + kWorkload + ":pt:tick";
    std::ostringstream out, err;
    Io io{out, err};
    ASSERT_EQ(runCount({"--backend=ptrace", tick, "--by", "arg2", "-f", "--", kWorkload,
                        "usdt-fork", "3"},
                       io),
              0)
        << err.str();
    EXPECT_NE(err.str().find("ARG2  COUNT\n1         1\n4         1\n9         1\n"),
              std::string::npos)
        << err.str();
}

// USDT arguments gcc writes as array elements with an index register ("(%rbx,%r13,8)",
// "table(,%r14,8)", "shorts(%rbx,%rbx)") and as globals by symbol ("glob(%rip)",
// "4+pair(%rip)"), in a PIE, a non-PIE and a shared library (usdt_operands.c; the unit test
// UsdtNotes.SymbolOperandsResolve checks the notes still hold these forms): every hit's
// arguments are the values the program computed, in trace's lines and as count's keys.
// These operands made the whole probe unusable ("index registers are not supported").
TEST(CliPtrace, UsdtIndexAndSymbolOperands) {
    constexpr int kN = 8;
    struct Target {
        std::string file, command;
    };
    const Target targets[] = {{FX_USDT_OPS_PATH, FX_USDT_OPS_PATH},
                              {FX_USDT_OPS_NOPIE_PATH, FX_USDT_OPS_NOPIE_PATH},
                              {FX_USDT_OPS_LIB_PATH, FX_USDT_OPS_LIBUSER_PATH}};
    for (const auto& t : targets) {
        SCOPED_TRACE(t.file);
        std::vector<std::string> args = {"--backend=ptrace"};
        for (const char* probe : {"elem", "cellb", "exact"})
            args.push_back("usdt:" + t.file + ":uo:" + probe);
        args.insert(args.end(), {"--", t.command, std::to_string(kN)});
        auto r = trace(args);
        ASSERT_EQ(r.rc, 0) << r.err;
        for (const char* probe : {"elem", "cellb", "exact"}) {
            EXPECT_EQ(countLines(r.err, std::string("uo:") + probe + "  arg1="),
                      static_cast<std::size_t>(kN))
                << probe << "\n"
                << r.err;
            for (int i = 0; i < kN; i++)
                EXPECT_EQ(uofx::countLinesEnding(
                              r.err, std::string("uo:") + probe + "  " + uofx::argsText(probe, i)),
                          1u)
                    << probe << " hit " << i << ": want " << uofx::argsText(probe, i) << "\n"
                    << r.err;
        }
        EXPECT_EQ(r.err.find("<fault>"), std::string::npos) << r.err;
        // count --by arg2 of uo:elem: table[i], an array element by index register.
        auto c = aggr(runCount, {"--backend=ptrace", "usdt:" + t.file + ":uo:elem", "--by", "arg2",
                                 "--", t.command, std::to_string(kN)});
        ASSERT_EQ(c.rc, 0) << c.err;
        EXPECT_EQ(uofx::parseCountTable(c.err), uofx::argCounts("elem", 2, kN)) << c.err;
    }
}

// The COUNT of a count table's row for `probe` ("" when no row has it).
std::string rowCount(const std::string& table, const std::string& probe) {
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(probe + " ")) {
            const auto last = line.find_last_of(' ');
            return line.substr(last + 1);
        }
    return "";
}

// Overloads that differ in a pointer's const, fx::g(char*) called 3 times and
// fx::g(const char*) 4 times: each signature counts its own function, and a glob's rows name
// them as written, not mangled. Read as a glob, 'fx::g(char*)' attached both ("attached 2 of
// 2", rows _ZN2fx1gEPKc 4 and _ZN2fx1gEPc 3), and 'fx::g(const char*)' matched nothing.
TEST(CliPtrace, CxxSignaturesWithAPointerCountTheirOwnFunction) {
    const std::string bin = FX_CXX_PATH;
    const std::pair<std::string, std::string> cases[] = {
        {"fx::g(char*)", "3"}, {"fx::g(const char*)", "4"}, {"fx::g(char const *)", "4"}};
    for (const auto& [name, count] : cases) {
        const std::string spec = "uprobe:" + bin + ":'" + name + "'";
        auto r = aggr(runCount, {"--backend=ptrace", spec, "--", bin, "3"});
        ASSERT_EQ(r.rc, 0) << name << "\n" << r.err;
        EXPECT_EQ(r.err.find("attached 2"), std::string::npos) << name << "\n" << r.err;
        EXPECT_EQ(r.err.find("_ZN"), std::string::npos) << name << "\n" << r.err;
        EXPECT_EQ(rowCount(r.err, spec), count) << name << "\n" << r.err;
    }
    const std::string glob = "uprobe:" + bin + ":'fx::g*'";
    auto g = aggr(runCount, {"--backend=ptrace", glob, "--", bin, "3"});
    ASSERT_EQ(g.rc, 0) << g.err;
    EXPECT_EQ(g.err.find("_ZN"), std::string::npos) << g.err;
    EXPECT_EQ(rowCount(g.err, "uprobe:" + bin + ":'fx::g(char*)'"), "3") << g.err;
    EXPECT_EQ(rowCount(g.err, "uprobe:" + bin + ":'fx::g(char const*)'"), "4") << g.err;
}

// Operators and integer types as people write them, each counting its own function's calls
// (tests/unit/fixtures/elf/cxx.cpp, N = 3): 'fx::Vec::operator[](unsigned long)' was refused
// ("unterminated '['"), 'fx::Vec::operator->*' attached every operator whose name ends in
// '*', and 'fx::t(unsigned)' matched nothing.
TEST(CliPtrace, CxxOperatorsAndTypeSpellingsCountTheirOwnFunction) {
    const std::string bin = FX_CXX_PATH;
    const std::pair<std::string, std::string> cases[] = {
        {"fx::Vec::operator[](unsigned long)", "6"},
        {"fx::Vec::operator[](unsigned long) const", "4"},
        {"fx::Vec::operator()", "3"},
        {"fx::Vec::operator<", "4"},
        {"fx::Vec::operator<<(long)", "5"},
        {"fx::Vec::operator->*", "7"},
        {"fx::Vec::operator new[](unsigned long)", "8"},
        {"fx::Vec::operator delete[]", "8"},
        {"fx::t(unsigned)", "1"},
        {"fx::t(long int)", "2"},
        {"fx::t(short int)", "3"},
        {"fx::t(long unsigned int)", "4"},
        {"fx::t(long long int)", "5"},
        {"fx::t(signed char)", "6"},
        {"fx::t(char)", "7"},
    };
    std::vector<std::string> args = {"--backend=ptrace"};
    for (const auto& [name, count] : cases)
        args.push_back("uprobe:" + bin + ":'" + name + "'");
    args.insert(args.end(), {"--", bin, "3"});
    auto r = aggr(runCount, args);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err.find("attached "), std::string::npos) << "no glob\n" << r.err;
    for (const auto& [name, count] : cases)
        EXPECT_EQ(rowCount(r.err, "uprobe:" + bin + ":'" + name + "'"), count) << name << "\n"
                                                                               << r.err;
}

// A signature of no function whose name has overloads: the error names it and lists them.
TEST(CliPtrace, CxxSignatureOfNoOverloadListsTheOverloads) {
    const std::string bin = FX_CXX_PATH;
    for (const char* name : {"fx::g(int)", "fx::g(int*)"}) {
        auto r = aggr(runCount,
                      {"--backend=ptrace", "uprobe:" + bin + ":'" + name + "'", "--", bin, "3"});
        EXPECT_NE(r.rc, 0) << name;
        EXPECT_NE(r.err.find(std::string("no function '") + name + "'"), std::string::npos)
            << name << "\n"
            << r.err;
        EXPECT_NE(r.err.find("fx::g(char*), fx::g(char const*)"), std::string::npos) << name << "\n"
                                                                                     << r.err;
    }
}

TEST(CliPtrace, UstackDwarfNestedInlinedAndTailCallFrames) {
    auto nested = trace({"--backend=ptrace", "uprobe:" FX_INLINE_NESTED_PATH ":leaf",
                         "--ustack=dwarf", "--", FX_INLINE_NESTED_PATH, "1"});
    ASSERT_EQ(nested.rc, 0) << nested.err;
    const std::size_t leaf = nested.err.find("leaf (" FX_INLINE_NESTED_PATH ")");
    const std::size_t inner = nested.err.find("\n             inner (inlined) at ");
    const std::size_t middle = nested.err.find("\n             middle (inlined) at ");
    const std::size_t outer = nested.err.find("\n             outer+0x");
    ASSERT_NE(leaf, std::string::npos) << nested.err;
    EXPECT_LT(leaf, inner) << nested.err;
    EXPECT_LT(inner, middle) << nested.err;
    EXPECT_LT(middle, outer) << nested.err;
    EXPECT_NE(outer, std::string::npos) << nested.err;

    auto tail = trace({"--backend=ptrace", "uprobe:" FX_TAIL_PATH ":leaf", "--ustack=dwarf", "--",
                       FX_TAIL_PATH, "1"});
    ASSERT_EQ(tail.rc, 0) << tail.err;
    EXPECT_NE(tail.err.find("\n             hop (tail call: its frame is gone) at "),
              std::string::npos)
        << tail.err;
    const std::size_t gone = tail.err.find("(tail call: its frame is gone) at ");
    EXPECT_LT(tail.err.find("leaf (" FX_TAIL_PATH ")"), gone) << tail.err;
    EXPECT_LT(gone, tail.err.find("\n             start+0x")) << tail.err;
    EXPECT_EQ(countLines(tail.err, "hop2 (tail call: its frame is gone) at "), 1u) << tail.err;
    EXPECT_EQ(countLines(tail.err,
                         "[start3 called either; the frames from it to leaf were not "
                         "kept (tail calls)]"),
              1u)
        << tail.err;
}

// count, hist or latency with captured streams.
Run aggrRun(int (*run)(const std::vector<std::string>&, Io&), std::vector<std::string> args) {
    std::ostringstream out, err;
    Io io{out, err};
    Run r;
    r.rc = run(args, io);
    r.out = out.str();
    r.err = err.str();
    return r;
}

// count, hist and latency take --seccomp-bpf as trace does (they had no such option): the
// same tables with the filter as without, every execve and fork under -f included; like
// trace's, it needs --backend=ptrace and -- CMD.
TEST(CliPtrace, SeccompInCountHistAndLatency) {
    for (const bool seccomp : {false, true}) {
        SCOPED_TRACE(seccomp);
        std::vector<std::string> opts = {"--backend=ptrace", "-f"};
        if (seccomp)
            opts.push_back("--seccomp-bpf");
        const std::vector<std::string> cmd = {"--", kWorkload, "execs", "2"};
        auto with = [&](std::vector<std::string> args) {
            args.insert(args.end(), opts.begin(), opts.end());
            args.insert(args.end(), cmd.begin(), cmd.end());
            return args;
        };
        // 2N+1 getppid and execve (N of the execs fail) in all, N forks
        auto c = aggrRun(runCount, with({"syscall:getppid", "syscall:execve"}));
        ASSERT_EQ(c.rc, 0) << c.err;
        EXPECT_TRUE(std::regex_search(c.err, std::regex("\nsyscall:getppid +5\n"))) << c.err;
        EXPECT_TRUE(std::regex_search(c.err, std::regex("\nsyscall:execve +5\n"))) << c.err;
        auto l = aggrRun(runLatency, with({"syscall:getppid"}));
        ASSERT_EQ(l.rc, 0) << l.err;
        EXPECT_EQ(countLines(l.err, "count 5,"), 1u) << l.err;
        auto h = aggrRun(runHist, with({"syscall:execve", "retval"}));
        ASSERT_EQ(h.rc, 0) << h.err;
        EXPECT_EQ(countLines(h.err, "count 5,"), 1u) << h.err;
    }
    for (auto run : {runCount, runLatency}) {
        EXPECT_EQ(aggrRun(run, {"--seccomp-bpf", "syscall:getppid", "--", "true"}).rc, kExitUsage);
        EXPECT_EQ(
            aggrRun(run, {"--backend=ptrace", "--seccomp-bpf", "-p", "1", "syscall:getppid"}).rc,
            kExitUsage);
    }
    auto r = aggrRun(runHist,
                     {"--backend=kernel", "--seccomp-bpf", "syscall:read", "retval", "--", "true"});
    EXPECT_EQ(r.rc, kExitUsage);
    EXPECT_NE(r.err.find("--seccomp-bpf needs --backend=ptrace and -- CMD"), std::string::npos)
        << r.err;
}

// --seccomp-bpf without -f: the command's children inherited the filter, untraced, and each
// syscall it traps failed with ENOSYS (cat: "Error 38"). As strace's, the run goes on without
// the filter and says so, in every command that takes it. Seen failing before the fix.
TEST(CliPtrace, SeccompWithoutFollowIsOffWithAWarning) {
    const std::string dir = testing::TempDir() + "/ptrace-seccomp-nofollow";
    std::filesystem::create_directories(dir);
    const std::string src = dir + "/in", dst = dir + "/out";
    std::ofstream(src) << "hello\n";
    // "; true": the shell forks cat instead of exec'ing it.
    const std::vector<std::string> cmd = {"--", "sh", "-c", "cat " + src + " > " + dst + "; true"};
    const std::string warning =
        "warning: --seccomp-bpf needs -f (the command's children inherit the filter, and their "
        "syscalls fail untraced): off for this run";
    struct Case {
        const char* name;
        int (*run)(const std::vector<std::string>&, Io&);
        std::vector<std::string> args;
    };
    const std::vector<Case> cases = {
        {"trace", runTrace, {"syscall:openat"}},
        {"trace", runTrace, {"--syscalls=openat", "-c"}},
        {"count", runCount, {"syscall:openat"}},
        {"hist", runHist, {"syscall:openat", "retval"}},
        {"latency", runLatency, {"syscall:openat"}},
    };
    for (const bool follow : {false, true})
        for (const Case& c : cases) {
            SCOPED_TRACE(fmt::format("{} {} follow={}", c.name, fmt::join(c.args, " "), follow));
            std::vector<std::string> args = c.args;
            args.insert(args.end(), {"--backend=ptrace", "--seccomp-bpf"});
            if (follow)
                args.push_back("-f");
            args.insert(args.end(), cmd.begin(), cmd.end());
            std::filesystem::remove(dst);
            auto r = aggrRun(c.run, args);
            EXPECT_EQ(r.rc, 0) << r.err;
            EXPECT_EQ(slurp(dst), "hello\n") << r.err;
            EXPECT_EQ(countLines(r.err, fmt::format("probectl {}: {}", c.name, warning)),
                      follow ? 0u : 1u)
                << r.err;
        }
}

// A thread killed (SIGKILL) inside a traced syscall never reaches its exit stop, yet the
// kernel ended the call there: it leaves through the syscall's return, where the kernel
// backend records it (ERESTART_RESTARTBLOCK here). So ptrace reports a return at the
// thread's end with no value, strace's "= ?": a line before "+++ killed", counted by count,
// timed by latency and trace -c, no "never returned", as the kernel backend shows it; but no
// retval, which ptrace never sees (hist retval: "could not be read"; trace -c: an error, not
// a success). Seen failing before: the call had vanished (no line, count 0), then counted
// as unreturned ("never returned 1 (not counted)" under COUNT 1, in no latency).
TEST(CliPtrace, CallOfAKilledThreadEndsWithIt) {
    for (const bool seccomp : {false, true}) {
        SCOPED_TRACE(seccomp);
        std::vector<std::string> opts = {"--backend=ptrace", "-f"};
        if (seccomp)
            opts.push_back("--seccomp-bpf");
        auto with = [&](std::vector<std::string> args) {
            args.insert(args.begin(), opts.begin(), opts.end());
            for (const char* a : {"--", kWorkload.c_str(), "killed", "300"})
                args.emplace_back(a);
            return args;
        };
        auto r = trace(with({"--syscalls=clock_nanosleep"}));
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_TRUE(std::regex_search(
            r.err, std::regex("clock_nanosleep\\(CLOCK_REALTIME, 0, \\{tv_sec=300, tv_nsec=0\\}, "
                              "NULL\\) += \\?\n[^\n]*\\+\\+\\+ killed by SIGKILL \\+\\+\\+\n")))
            << r.err;
        EXPECT_EQ(countLines(r.err, "clock_nanosleep("), 1u) << r.err;
        // hits, delivered, dropped, nmissed, filtered, rejected, unreturned
        EXPECT_TRUE(std::regex_search(
            r.err, std::regex("\nsyscall:clock_nanosleep +1 +1 +0 +0 +0 +0 +0\n")))
            << r.err;
        auto c = aggrRun(runCount, with({"syscall:clock_nanosleep"}));
        ASSERT_EQ(c.rc, 0) << c.err;
        EXPECT_TRUE(std::regex_search(c.err, std::regex("\nsyscall:clock_nanosleep +1\n")))
            << c.err;
        EXPECT_EQ(countLines(c.err, "returned"), 0u) << c.err;
        auto l = aggrRun(runLatency, with({"syscall:clock_nanosleep"}));
        ASSERT_EQ(l.rc, 0) << l.err;
        EXPECT_EQ(countLines(l.err, "hits 1, filtered 0, rejected 0, nmissed 0, never returned 0"),
                  1u)
            << l.err;
        EXPECT_EQ(countLines(l.err, "count 1,"), 1u) << l.err;
        auto h = aggrRun(runHist, with({"syscall:clock_nanosleep", "retval"}));
        ASSERT_EQ(h.rc, 0) << h.err;
        EXPECT_EQ(countLines(h.err, "never returned 0"), 1u) << h.err;
        EXPECT_EQ(countLines(h.err, "1 return whose retval is not known"), 1u) << h.err;
        EXPECT_EQ(countLines(h.err, "could not be read"), 0u) << h.err;
        EXPECT_EQ(countLines(h.err, "[0]"), 0u) << h.err;
        auto s = trace(with({"--syscalls=clock_nanosleep", "-c"}));
        ASSERT_EQ(s.rc, 0) << s.err;
        // calls 1, errors 1
        EXPECT_TRUE(std::regex_search(s.err, std::regex(" 1 +1 clock_nanosleep\n"))) << s.err;
    }
}

// The killed thread's call above keyed by its return value: ptrace never saw the value, so
// the key says it is not known, "?" in text and null in JSON, as the trace line's "= ?";
// not <fault>, which says a memory read failed. Seen failing before: RETVAL and ERRNO
// "<fault>", hist retval "1 hits whose retval could not be read".
TEST(CliPtrace, AKilledCallsRetvalKeyIsUnknownNotAFault) {
    auto with = [](std::vector<std::string> args) {
        args.insert(args.begin(), {"--backend=ptrace", "-f", "syscall:clock_nanosleep"});
        for (const char* a : {"--", kWorkload.c_str(), "killed", "300"})
            args.emplace_back(a);
        return args;
    };
    for (const char* key : {"retval", "errno"}) {
        SCOPED_TRACE(key);
        auto c = aggrRun(runCount, with({"--by", key}));
        ASSERT_EQ(c.rc, 0) << c.err;
        const std::string all = c.out + c.err;
        EXPECT_EQ(all.find("<fault>"), std::string::npos) << all;
        std::string upper(key);
        for (char& ch : upper)
            ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        EXPECT_TRUE(std::regex_search(all, std::regex("\n" + upper + " +COUNT\n\\? +1\n"))) << all;
        auto j = aggrRun(runCount, with({"--by", key, "--format", "json"}));
        ASSERT_EQ(j.rc, 0) << j.err;
        EXPECT_NE(
            (j.out + j.err)
                .find(fmt::format("\"entries\":[{{\"key\":{{\"{}\":null}},\"count\":1}}]", key)),
            std::string::npos)
            << j.out << j.err;
        auto l = aggrRun(runLatency, with({"--by", key}));
        ASSERT_EQ(l.rc, 0) << l.err;
        EXPECT_EQ((l.out + l.err).find("<fault>"), std::string::npos) << l.out << l.err;
        EXPECT_NE((l.out + l.err).find("key: " + std::string(key) + "\n@[?]:\n"), std::string::npos)
            << l.out << l.err;
    }
    auto h = aggrRun(runHist, with({"retval", "--format", "json"}));
    ASSERT_EQ(h.rc, 0) << h.err;
    EXPECT_NE((h.out + h.err).find("\"faulted\":0,\"unknown\":1"), std::string::npos)
        << h.out << h.err;
}

// The killed thread's call as an event: a return, timed to the thread's end, whose value is
// not known. JSON has its latency_ns and retval null (the recording's "value unknown"), on
// a live trace and from a recording alike; the event line says why there is no value, "= ?
// (killed)" (strace's "= ?" is followed by its "+++ killed by SIGKILL +++" line, which an
// event line has not). Seen failing before: neither retval nor latency_ns in JSON, and the
// text "= ?" alone.
TEST(CliPtrace, AKilledCallsEventHasLatencyAndNoValue) {
    const std::vector<std::string> cmd = {"--", kWorkload, "killed", "300"};
    auto checkJson = [](const std::string& text) {
        std::size_t events = 0;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            if (line.find("\"type\":\"event\"") == std::string::npos)
                continue;
            events++;
            EXPECT_NE(line.find(",\"retval\":null,"), std::string::npos) << line;
            EXPECT_TRUE(std::regex_search(line, std::regex(",\"latency_ns\":[1-9][0-9]*,")))
                << line;
            EXPECT_NE(line.find("NULL) = ? (killed)\""), std::string::npos) << line;
        }
        EXPECT_EQ(events, 1u) << text;
    };
    std::vector<std::string> args = {"--backend=ptrace", "-f", "syscall:clock_nanosleep"};
    auto json = args;
    json.insert(json.end(), {"--format", "json"});
    json.insert(json.end(), cmd.begin(), cmd.end());
    auto j = trace(json);
    ASSERT_EQ(j.rc, 0) << j.err;
    checkJson(j.out + j.err);

    auto text = args;
    text.insert(text.end(), cmd.begin(), cmd.end());
    auto t = trace(text);
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_EQ(countLines(t.err, "{tv_sec=300, tv_nsec=0}, NULL) = ? (killed)"), 1u) << t.err;

    const std::string rec = testing::TempDir() + "/cli-ptrace-killed.rec";
    auto r = args;
    r.insert(r.end(), {"-o", rec});
    r.insert(r.end(), cmd.begin(), cmd.end());
    std::ostringstream rout, rerr;
    Io rio{rout, rerr};
    ASSERT_EQ(runRecord(r, rio), 0) << rerr.str();
    std::ostringstream out, err;
    Io io{out, err};
    ASSERT_EQ(runReport({"--format", "json", rec}, io), 0) << err.str();
    checkJson(out.str());
    std::ostringstream tout, terr;
    Io tio{tout, terr};
    ASSERT_EQ(runReport({rec}, tio), 0) << terr.str();
    EXPECT_EQ(countLines(tout.str(), "NULL) = ? (killed)"), 1u) << tout.str();
    std::filesystem::remove(rec);
}

// A thread blocked in a traced read while another thread's breakpoints stop the process:
// each stop's PTRACE_INTERRUPT ends the read with -ERESTARTSYS and the kernel restarts it,
// unseen by the program and by the kernel backend (one call, one return). The ptrace
// backend shows the one read too, no ERESTARTSYS return of it. Seen failing before: a
// "read(...) = ? ERESTARTSYS" line per breakpoint hit, each restart a hit of its own.
TEST(CliPtrace, OwnStopsDoNotSplitABlockedCall) {
    auto r = trace({"--backend=ptrace", "syscall:read", "uprobe:" + kWorkload + ":pt_add", "--",
                    kWorkload, "read-under-calls", "20"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(countLines(r.err, "ERESTART"), 0u) << r.err;
    EXPECT_EQ(countLines(r.err, ", \"x\", 1) = 1"), 1u) << r.err;
    EXPECT_EQ(countLines(r.err, " arg1=0x"), 20u) << r.err;
    // hits, delivered, dropped, nmissed, filtered, rejected, unreturned: as many reads as lines
    const std::size_t reads = countLines(r.err, "  read(");
    EXPECT_TRUE(std::regex_search(
        r.err, std::regex(fmt::format("\nsyscall:read +{0} +{0} +0 +0 +0 +0 +0\n", reads))))
        << r.err;
}

// A thread (not the process's first) killed inside its first traced call, as the process
// _exits: its event is made once /proc has no trace of it. Seen failing before: COMM "" in
// count --by comm and in trace's line, where strace names the thread.
TEST(CliPtrace, AThreadKilledInItsFirstCallKeepsItsComm) {
    auto c = aggrRun(runCount, {"--backend=ptrace", "-f", "syscall:clock_nanosleep", "--by", "comm",
                                "--", kWorkload, "killed-thread", "300"});
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_TRUE(std::regex_search(c.err, std::regex("\npt_workload +1\n"))) << c.err;
    EXPECT_EQ(c.err.find("\"\""), std::string::npos) << c.err;
}

// The summary rows whose counters are all 0 ("PROBE  0  0 ...").
std::size_t zeroRows(const std::string& text) {
    static const std::regex row("(^|\n)syscall:[a-z0-9_]+( +0){7}(?=\n|$)");
    return static_cast<std::size_t>(
        std::distance(std::sregex_iterator(text.begin(), text.end(), row), std::sregex_iterator()));
}

// trace 'syscall:*' printed some 340 rows of zeros in its end summary, burying the probes that
// fired (seen failing). As count does, the rows with nothing to say are left out and counted in
// one line; --zeros lists them, JSON has every probe; record's summary and report's alike.
TEST(CliPtrace, TraceSummaryLeavesOutProbesWithNoHits) {
    const std::vector<std::string> cmd = {"--", kWorkload, "calls", "1"};
    auto args = [&](std::vector<std::string> more) {
        std::vector<std::string> a = {"--backend=ptrace", "syscall:*"};
        a.insert(a.end(), more.begin(), more.end());
        a.insert(a.end(), cmd.begin(), cmd.end());
        return a;
    };
    auto t = trace(args({}));
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_EQ(zeroRows(t.err), 0u) << t.err;
    EXPECT_TRUE(std::regex_search(t.err, std::regex("\n\\(([0-9]{3}) probes with no hits not "
                                                    "shown; --zeros shows them\\)\n")))
        << t.err;
    EXPECT_TRUE(std::regex_search(t.err, std::regex("\nsyscall:execve +1 +1( +0){5}\n"))) << t.err;

    auto z = trace(args({"--zeros"}));
    ASSERT_EQ(z.rc, 0) << z.err;
    EXPECT_GT(zeroRows(z.err), 100u) << z.err;
    EXPECT_EQ(countLines(z.err, "not shown"), 0u) << z.err;

    auto j = trace(args({"--format", "json"}));
    ASSERT_EQ(j.rc, 0) << j.err;
    EXPECT_EQ(countLines(j.out + j.err, "\"probe\":\"syscall:readahead\""), 1u);
    EXPECT_EQ(countLines(j.out + j.err, "not shown"), 0u);

    const std::string rec = testing::TempDir() + "/cli-ptrace-zeros.rec";
    auto r = args({"-o", rec});
    std::ostringstream rout, rerr;
    Io rio{rout, rerr};
    ASSERT_EQ(runRecord(r, rio), 0) << rerr.str();
    EXPECT_EQ(zeroRows(rerr.str()), 0u) << rerr.str();
    EXPECT_EQ(countLines(rerr.str(), "probes with no hits not shown; --zeros shows them"), 1u)
        << rerr.str();
    for (const bool zeros : {false, true}) {
        std::ostringstream out, err;
        Io io{out, err};
        std::vector<std::string> a = {rec};
        if (zeros)
            a.push_back("--zeros");
        ASSERT_EQ(runReport(a, io), 0) << err.str();
        EXPECT_EQ(zeroRows(out.str()) > 100, zeros) << out.str();
        EXPECT_EQ(countLines(out.str(), "probes with no hits not shown; --zeros shows them"),
                  zeros ? 0u : 1u)
            << out.str();
    }
    std::filesystem::remove(rec);
}

// count --by retval of mmap and brk keyed their addresses in decimal (94478243872768); now in
// hex, as strace and their event lines print them (seen failing); JSON keeps numbers.
TEST(CliPtrace, RetvalKeysOfMmapAndBrkAreHex) {
    const std::vector<std::string> args = {"--backend=ptrace",
                                           "syscall:mmap",
                                           "syscall:brk",
                                           "--by",
                                           "retval",
                                           "--",
                                           kWorkload,
                                           "calls",
                                           "1"};
    auto t = aggr(runCount, args);
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_TRUE(std::regex_search(t.err, std::regex("RETVAL +COUNT\n0x[0-9a-f]{6,} +[0-9]+\n")))
        << t.err;
    EXPECT_FALSE(std::regex_search(t.err, std::regex("\n[0-9]{9,} +[0-9]+\n"))) << t.err;
    auto json = args;
    json.insert(json.begin() + 5, {"--format", "json"});
    auto j = aggr(runCount, json);
    ASSERT_EQ(j.rc, 0) << j.err;
    EXPECT_TRUE(std::regex_search(j.out + j.err, std::regex("\"retval\":[0-9]{9,}\\}")))
        << j.out << j.err;
}

// count syscall:openat --by retval keyed a failed call as a bare -2, where strace -c and the
// event lines name the error: it is "-2 (ENOENT)" now, as the errno key prints it, and JSON
// keeps the number and adds the name (seen failing). The loader's own opens count too: a
// run with 3 more failed openat has 3 more in that row.
TEST(CliPtrace, RetvalKeysOfAFailedSyscallNameTheError) {
    auto enoent = [](const char* n) -> long {
        auto t = aggr(runCount, {"--backend=ptrace", "syscall:openat", "--by", "retval", "--",
                                 kWorkload, "missing", n});
        EXPECT_EQ(t.rc, 0) << t.err;
        std::smatch m;
        if (!std::regex_search(t.err, m, std::regex("\n-2 \\(ENOENT\\) +([0-9]+)\n"))) {
            ADD_FAILURE() << t.err;
            return -1;
        }
        EXPECT_FALSE(std::regex_search(t.err, std::regex("\n-2 +[0-9]+\n"))) << t.err;
        return std::stol(m[1].str());
    };
    const long one = enoent("1"), four = enoent("4");
    EXPECT_GE(one, 1);
    EXPECT_EQ(four - one, 3);
    auto j = aggr(runCount, {"--backend=ptrace", "syscall:openat", "--by", "retval", "--format",
                             "json", "--", kWorkload, "missing", "2"});
    ASSERT_EQ(j.rc, 0) << j.err;
    EXPECT_TRUE(std::regex_search(
        j.out + j.err,
        std::regex("\\{\"key\":\\{\"retval\":-2\\},\"key_errno\":\\{\"retval\":\"ENOENT\"\\},"
                   "\"count\":[0-9]+\\}")))
        << j.out << j.err;
}

}  // namespace
}  // namespace probectl::cli
