// Subcommands that need no kernel (resolve, symbols) run end to end on fixtures; the
// others are checked for help and usage-error exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "aggr_cli.hpp"
#include "command_run.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/recording.hpp"
#include "subcommands.hpp"
#include "trace_export_events.hpp"

using namespace probectl::cli;
using probectl::test::CmdRun;
using probectl::test::runCommand;
using probectl::test::withFixtures;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Command lines that are usage errors (exit 2) whose message holds the row's text.
using UsageRows = std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>;
void expectUsageErrors(const UsageRows& rows) {
    for (const auto& [command, args, text] : rows) {
        CmdRun r = runCommand(command, args);
        EXPECT_EQ(r.rc, kExitUsage) << command << ": " << r.err;
        EXPECT_THAT(r.err, HasSubstr(text)) << r.err;
    }
}

}  // namespace

TEST(CommandTable, EveryCommandHasHelpWithExamples) {
    const std::vector<std::string> expected = {"trace",   "record",  "report",  "count",  "hist",
                                               "latency", "add",     "list",    "remove", "enable",
                                               "disable", "resolve", "symbols", "bench"};
    ASSERT_EQ(commands().size(), expected.size());
    for (const auto& name : expected) {
        CmdRun r = runCommand(name, {"--help"});
        EXPECT_EQ(r.rc, kExitOk) << name;
        EXPECT_THAT(r.out, HasSubstr("Usage: probectl " + name)) << name;
        EXPECT_THAT(r.out, HasSubstr("Example")) << name;
        EXPECT_THAT(r.out, HasSubstr("--help")) << name;
    }
    EXPECT_EQ(findCommand("nope"), nullptr);
}

TEST(CommandTable, MainHelpListsEveryCommand) {
    std::ostringstream os;
    printMainHelp(os);
    for (const auto& c : commands())
        EXPECT_THAT(os.str(), HasSubstr(std::string("  ") + c.name)) << c.name;
    EXPECT_THAT(os.str(), HasSubstr("Exit status: 0 ok; 2 when the command line is wrong"));
    EXPECT_THAT(os.str(), HasSubstr("whichever part of probectl finds it; 1 when the\nsystem "
                                    "refused"));
}

TEST(CommandUsage, BadCommandLinesExitWithTwo) {
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"trace", {}},
             {"trace", {"kprobe:foo", "--format", "perfetto"}},  // needs -o
             {"trace", {"kprobe:foo", "--format", "svg", "-o", "x"}},
             {"record", {"kprobe:foo", "--format", "json", "-o", "x"}},
             {"report", {}},
             {"report", {"x.rec", "--format", "ctf"}},  // needs -o
             {"trace", {"kprobe:foo+bar"}},
             {"add", {"--persist"}},
             {"list", {"x"}},
             {"remove", {}},
             {"enable", {"x"}},
             {"disable", {}},
             {"resolve", {"kprobe:"}},
             {"symbols", {}}}) {
        CmdRun r = runCommand(name, args);
        EXPECT_EQ(r.rc, kExitUsage) << name;
        EXPECT_THAT(r.err, HasSubstr("probectl " + name + ": ")) << name;
        EXPECT_THAT(r.err, HasSubstr("Try 'probectl " + name + " --help'.")) << name;
    }
}

// "probe id 1 not found" once left the user to guess where the ids are.
TEST(ProbeIdError, AnUnknownIdSaysWhereTheIdsAre) {
    const probectl::Error e = probeIdError(probectl::makeError(
        ENOENT, "disable probe 1: probe id 1 not found", "probectl: probe id 1 not found"));
    EXPECT_EQ(e.describe(),
              "disable probe 1: probe id 1 not found; 'probectl list' shows the probes");
    const probectl::Error other =
        probeIdError(probectl::makeError(EPERM, "remove probe 2: not yours", "not yours"));
    EXPECT_EQ(other.message, "remove probe 2: not yours");
}

TEST(CommandUsage, ExactlyOneArgumentMessages) {
    for (const auto& [name, message] : std::vector<std::pair<std::string, std::string>>{
             {"add", "probectl add: add takes exactly one probe spec\n"},
             {"resolve", "probectl resolve: resolve takes exactly one probe spec\n"},
             {"symbols",
              "probectl symbols: symbols takes exactly one GLOB (quote it: 'sys_open*')\n"},
             {"enable",
              "probectl enable: enable takes exactly one probe id (see 'probectl list')\n"},
             {"disable",
              "probectl disable: disable takes exactly one probe id (see 'probectl list')\n"}}) {
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{}, std::vector<std::string>{"a", "b"}}) {
            CmdRun r = runCommand(name, args);
            EXPECT_EQ(r.rc, kExitUsage) << name;
            EXPECT_EQ(r.err, message + "Try 'probectl " + name + " --help'.\n") << name;
            EXPECT_EQ(r.out, "") << name;
        }
    }
}

// A short option means one thing in every command: -p a process, -f following forks (not
// symbols' --functions), -o the output.
TEST(CommandTable, OneMeaningPerOptionLetter) {
    const std::map<char, std::set<std::string>> meaning = {
        {'h', {"help"}},     {'p', {"attach", "pid"}},
        {'f', {"follow"}},   {'o', {"output", "output-dir"}},
        {'d', {"duration"}}, {'n', {"count"}},
        {'b', {"by"}},       {'v', {"verbose"}},
        {'i', {"interval"}}, {'c', {"summary-only"}}};
    for (const auto& c : commands()) {
        const auto desc = c.options();
        for (const auto& opt : desc.options()) {
            const std::string s = opt->canonical_display_name(
                boost::program_options::command_line_style::allow_dash_for_short);
            if (s.size() != 2 || s[0] != '-')
                continue;
            const auto m = meaning.find(s[1]);
            ASSERT_NE(m, meaning.end()) << c.name << ": new letter " << s;
            EXPECT_EQ(m->second.count(opt->long_name()), 1u)
                << c.name << ": " << s << " is --" << opt->long_name();
        }
    }
}

TEST(CommandTable, HelpOptionsOfEachCommand) {
    const std::string help = "Options:\n  -h [ --help ]                         show this help\n";
    const std::string symbol_sources =
        "  --kallsyms FILE (=/proc/kallsyms)     symbol table to read\n"
        "  --blacklist FILE (=/sys/kernel/debug/kprobes/blacklist)\n"
        "                                        kprobes blacklist to read (\"\" for none)\n";
    auto options = [](const std::string& name) {
        CmdRun r = runCommand(name, {"--help"});
        EXPECT_EQ(r.rc, kExitOk) << name;
        return r.out.substr(r.out.find("Options:\n"));
    };
    EXPECT_EQ(options("resolve"),
              help + symbol_sources +
                  "  -p [ --pid ] PID                      user-space specs: find PATH and va= \n"
                  "                                        addresses in process PID\n\n");
    EXPECT_EQ(options("symbols"),
              help + "  --functions                           only functions (text symbols)\n" +
                  "  -p [ --pid ] PID                      PATH[:GLOB]: find PATH as process PID \n"
                  "                                        sees it\n" +
                  symbol_sources + "\n");
    for (const char* name : {"enable", "disable"})
        EXPECT_EQ(options(name), "Options:\n  -h [ --help ]         show this help\n\n") << name;
    // record has no --format: its -o is not "a directory for --format ctf" as trace's is.
    const std::string record = options("record");
    EXPECT_THAT(record, HasSubstr("the recording (created or truncated; required, a file,"));
    EXPECT_THAT(record, Not(HasSubstr("--format ctf"))) << record;
    EXPECT_THAT(options("list"), HasSubstr("--format FMT"));
    EXPECT_THAT(options("list"), HasSubstr("text (default) or json"));
    EXPECT_TRUE(parseListOptions({"--format", "json"}));
    auto bad = parseListOptions({"--format", "xml"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "--format must be text or json, not 'xml'");
    for (const char* name : {"add", "remove", "trace"})
        EXPECT_THAT(options(name), Not(HasSubstr("--kallsyms"))) << name;
}

TEST(ResolveCommand, ProbeableSyscall) {
    CmdRun r = runCommand("resolve", withFixtures({"syscall:getppid"}));
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("symbol:     __x64_sys_getppid\n"));
    EXPECT_THAT(r.out, HasSubstr("module:     vmlinux\n"));
    EXPECT_THAT(r.out, HasSubstr("address:    0xffffffff81001000\n"));
    EXPECT_THAT(r.out, HasSubstr("registers:  kretprobe __x64_sys_getppid (syscall wrapper"));
    EXPECT_THAT(r.out, HasSubstr("probe-able: yes\n"));
}

TEST(ResolveCommand, ModuleSymbolWithOffsetAndAddress) {
    CmdRun m = runCommand("resolve", withFixtures({"kprobe:vfs_write+8"}));
    EXPECT_EQ(m.rc, kExitOk) << m.err;
    EXPECT_THAT(m.out, HasSubstr("address:    0xffffffff81001488"));
    CmdRun a = runCommand("resolve", withFixtures({"kprobe:0xffffffffc0a01100"}));
    EXPECT_EQ(a.rc, kExitOk) << a.err;
    EXPECT_THAT(a.out, HasSubstr("symbol:     cleanup_module_list\n"));
    EXPECT_THAT(a.out, HasSubstr("module:     other_module\n"));
}

TEST(ResolveCommand, OffsetInsideAFunctionIsNotAYes) {
    for (const char* text : {"kprobe:do_sys_openat2+1", "kprobe:0xffffffff810011c1"}) {
        CmdRun r = runCommand("resolve", withFixtures({text}));
        EXPECT_EQ(r.rc, kExitOk) << r.err;
        EXPECT_THAT(r.out, HasSubstr("symbol:     do_sys_openat2+0x1\n"));
        EXPECT_THAT(r.out, HasSubstr("probe-able: unknown until the kernel tries (offset inside "
                                     "the function"));
    }
}

TEST(ResolveCommand, AddressInDataOrOutsideFunctionsIsNo) {
    for (const char* text : {"kprobe:0xffffffff82000000", "kretprobe:0x1234",
                             "kprobe:0xffffffffffffffff", "kretprobe:0xffffffff81001410"}) {
        CmdRun r = runCommand("resolve", withFixtures({text}));
        EXPECT_EQ(r.rc, kExitRuntime) << text;
        EXPECT_THAT(r.out, HasSubstr("probe-able: no\n")) << text;
    }
}

TEST(ResolveCommand, NotProbeableSaysWhyAndExitsOne) {
    CmdRun bl = runCommand("resolve", withFixtures({"kprobe:do_int3"}));
    EXPECT_EQ(bl.rc, kExitRuntime);
    EXPECT_THAT(bl.out, HasSubstr("probe-able: no\n"));
    EXPECT_THAT(bl.out, HasSubstr("blacklist"));
    CmdRun dup = runCommand("resolve", withFixtures({"kprobe:cleanup_module_list"}));
    EXPECT_EQ(dup.rc, kExitRuntime);
    EXPECT_THAT(dup.out, HasSubstr("names 3 functions"));
    CmdRun unknown = runCommand("resolve", withFixtures({"kprobe:vfs_reed"}));
    EXPECT_EQ(unknown.rc, kExitRuntime);
    EXPECT_THAT(unknown.out, HasSubstr("did you mean: vfs_read"));
}

TEST(ResolveCommand, MissingKallsymsIsARuntimeError) {
    CmdRun r = runCommand("resolve", {"kprobe:vfs_read", "--kallsyms", "/nonexistent"});
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_THAT(r.err, HasSubstr("/nonexistent"));
}

TEST(SymbolsCommand, GlobTableWithKindModuleAndProbeability) {
    CmdRun r = runCommand("symbols", withFixtures({"cleanup_module_list"}));
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("ADDRESS           TYPE  KIND      MODULE        PROBE"));
    EXPECT_THAT(r.out, HasSubstr("ffffffffc0a01100  t     function  other_module  no: duplicate"));
    CmdRun f = runCommand("symbols", withFixtures({"*int3", "--functions"}));
    EXPECT_EQ(f.rc, kExitOk);
    EXPECT_THAT(f.out, HasSubstr("no: kprobes blacklist  do_int3"));
    CmdRun data = runCommand("symbols", withFixtures({"mod_*"}));
    EXPECT_THAT(data.out,
                ::testing::ContainsRegex("d +data +my_module +no: not a function +mod_data"));
    CmdRun fonly = runCommand("symbols", withFixtures({"mod_*", "--functions"}));
    EXPECT_THAT(fonly.out, Not(HasSubstr("mod_data")));
}

TEST(SymbolsCommand, NoMatchIsARuntimeError) {
    CmdRun r = runCommand("symbols", withFixtures({"zzz_nothing"}));
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_THAT(r.err, HasSubstr("no symbol matches '*zzz_nothing*'"));
}

// report -o must not truncate the recording it is about to read.
TEST(CommandTable, ReportRefusesToOverwriteItsInput) {
    char path[] = "/tmp/probectl-report-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "precious", 8), 8);
    close(fd);
    CmdRun r = runCommand("report", {path, "-o", path});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is the recording being read"));
    std::ifstream in(path);
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "precious");
    unlink(path);
}

// record is trace --format record, but its errors are record's own.
TEST(CommandUsage, RecordErrorsNameRecord) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"syscall:getppid"},
          {"kprobe:foo+bar", "-o", "x.rec"},
          {"syscall:getppid", "-o", "x.rec", "--duration", "0"}}) {
        CmdRun r = runCommand("record", args);
        EXPECT_EQ(r.rc, kExitUsage) << args[0];
        EXPECT_THAT(r.err, HasSubstr("probectl record: ")) << r.err;
        EXPECT_THAT(r.err, HasSubstr("Try 'probectl record --help'.")) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("probectl trace"))) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("--format"))) << r.err;
    }
    EXPECT_THAT(runCommand("record", {"syscall:getppid"}).err,
                HasSubstr("record writes a recording: give -o FILE"));
}

// record hides trace's stack and -c options: using one says record keeps no stacks, not
// that the format cannot print them (record takes no --format).
TEST(CommandUsage, RecordRefusesStacksAndSummaryInItsOwnWords) {
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--kstack"},
                                                  {"--ustack=dwarf"},
                                                  {"--stack-depth", "3"},
                                                  {"--stack-size", "512"},
                                                  {"-c"},
                                                  {"-vc"}}) {
        std::vector<std::string> args = {"syscall:openat", "-o", "x.rec", "--backend=ptrace"};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), {"--", "true"});
        CmdRun r = runCommand("record", args);
        EXPECT_EQ(r.rc, kExitUsage) << extra[0];
        EXPECT_THAT(r.err, HasSubstr(extra[0].starts_with("-c") || extra[0] == "-vc"
                                         ? "record stores events: run probectl trace -c"
                                         : "record stores no stacks"))
            << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("prints stacks with"))) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("takes no -o"))) << r.err;
    }
    // trace keeps them.
    EXPECT_TRUE(parseTraceOptions({"kprobe:vfs_read", "--kstack", "--stack-depth", "3"}));
}

// syscall: specs take no user stack yet; the advice names what the backend can probe
// instead: a kprobe on the kernel's wrapper, never on the ptrace backend (no kprobes there).
TEST(CommandUsage, SyscallUserStackAdviceFitsTheBackend) {
    auto kernel = parseTraceOptions({"syscall:openat", "--ustack"});
    ASSERT_FALSE(kernel);
    EXPECT_THAT(kernel.error().message, HasSubstr("probe kprobe:__x64_sys_openat instead"));
    auto ptrace =
        parseTraceOptions({"syscall:openat", "--ustack=dwarf", "--backend=ptrace", "--", "true"});
    ASSERT_FALSE(ptrace);
    EXPECT_THAT(ptrace.error().message, HasSubstr("probe uprobe:libc:openat instead"));
    EXPECT_THAT(ptrace.error().message, Not(HasSubstr("kprobe")));
    // What it suggests is accepted.
    EXPECT_TRUE(parseTraceOptions(
        {"uprobe:libc:openat", "--ustack=dwarf", "--backend=ptrace", "--", "true"}));
    // count says the same (one text for both).
    auto count = parseAggrOptions(
        AggrMode::Count,
        {"syscall:openat", "--by", "ustack", "--ustack=dwarf", "--backend=ptrace", "--", "true"});
    ASSERT_FALSE(count);
    EXPECT_EQ(count.error().message, "--ustack=dwarf" + ptrace.error().message.substr(8));
}

// Boost wraps "-5" into an unsigned option: -p -5 once looked for process 4294967291, and
// bench --attach -1 would have timed 2^64-1 kprobes. Each refusal states the range taken:
// -p -5 said "0 or more" though -p 0 is refused.
TEST(CommandUsage, NegativeNumbersAreUsageErrors) {
    const std::string pid = "it takes a process id (1 or more)";
    for (const auto& [cmd, args, text] :
         std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
             {"trace", {"syscall:openat", "-p", "-5"}, "'-p/--attach' is invalid: " + pid},
             {"trace", {"syscall:openat", "--attach=-5"}, "'-p/--attach' is invalid: " + pid},
             {"count", {"syscall:openat", "-p", "-1"}, "'-p/--attach' is invalid: " + pid},
             // Not a number: the same words (it had no hint at all).
             {"trace", {"syscall:openat", "-p", "abc"}, "'-p/--attach' is invalid: " + pid},
             {"count", {"syscall:openat", "-p", "1x"}, "'-p/--attach' is invalid: " + pid},
             {"resolve", {"uprobe:/bin/true:main", "-p", "-1"}, "'-p/--pid' is invalid: " + pid},
             {"bench",
              {"--attach", "-1"},
              "'--attach' is invalid: it takes a number of 0 or more"}}) {
        CmdRun r = runCommand(cmd, args);
        EXPECT_EQ(r.rc, kExitUsage) << cmd << " " << r.err;
        EXPECT_THAT(r.err, HasSubstr("for option " + text)) << r.err;
    }
    // The range stated is the one enforced.
    EXPECT_THAT(runCommand("trace", {"syscall:openat", "-p", "0"}).err,
                HasSubstr("-p 0 is not a process id"));
    // An option with a range names it (-n -3 once said "0 or more", -n 0 "1..100000000").
    CmdRun n = runCommand("bench", {"-n", "-3"});
    EXPECT_EQ(n.rc, kExitUsage) << n.err;
    EXPECT_THAT(n.err, HasSubstr("--count must be 1..100000000; got '-3'"));
    // --help still wins.
    EXPECT_EQ(runCommand("trace", {"--help", "-p", "-5"}).rc, kExitOk);
}

// --maxactive, --stack-size and --stack-depth past their type's range got Boost's bare "is
// invalid": every value outside the range names the range.
TEST(CommandUsage, StackAndMaxactiveOptionsNameTheirRange) {
    expectUsageErrors(
        {{"trace",
          {"kretprobe:vfs_read", "--maxactive", "99999999999"},
          "--maxactive must be 1..4096; got '99999999999'"},
         {"trace", {"kretprobe:vfs_read", "--maxactive", "0"}, "--maxactive must be 1..4096"},
         {"add", {"kretprobe:vfs_read", "--maxactive", "-1"}, "--maxactive must be 1..4096"},
         {"record",
          {"syscall:openat", "-o", "x.rec", "--maxactive", "-1"},
          "--maxactive must be 1..4096; got '-1'"},
         {"trace",
          {"kretprobe:vfs_read", "--ustack=dwarf", "--stack-size", "5000000000"},
          "--stack-size must be 1..3584; got '5000000000'"},
         {"count",
          {"kretprobe:vfs_read", "--by", "ustack", "--stack-size", "1e3"},
          "--stack-size must be 1..3584; got '1e3'"},
         {"trace",
          {"kretprobe:vfs_read", "--kstack", "--stack-depth", "99999999999999999999"},
          "--stack-depth must be 1..127"},
         {"count",
          {"kretprobe:vfs_read", "--by", "kstack", "--stack-depth", "128"},
          "--stack-depth must be 1..127; got '128'"}});
}

// latency's help and the NMISSED note told users to raise --maxactive, which count, hist and
// latency did not take; and trace took it silently where it sizes nothing (no kretprobe: or
// syscall: spec). Now all four take it where it applies and refuse it elsewhere.
TEST(CommandUsage, MaxactiveWhereItSizesKretprobesOnly) {
    for (AggrMode mode : {AggrMode::Count, AggrMode::Latency}) {
        auto o = parseAggrOptions(mode, {"kretprobe:vfs_read", "--maxactive", "64"});
        ASSERT_TRUE(o) << o.error().message;
        EXPECT_EQ(o->maxactive, 64u);
    }
    auto h = parseAggrOptions(AggrMode::Hist,
                              {"syscall:read n=$arg3", "n", "--maxactive", "4096", "--", "true"});
    ASSERT_TRUE(h) << h.error().message;
    EXPECT_EQ(h->maxactive, 4096u);
    expectUsageErrors({{"count",
                        {"uprobe:/bin/true:main", "--maxactive", "8", "--", "true"},
                        "and no spec given is one: drop --maxactive"},
                       {"latency",
                        {"uretprobe:/bin/true:main", "--maxactive", "8", "--", "true"},
                        "and no spec given is one"},
                       {"trace",
                        {"kprobe:vfs_read", "tracepoint:sched:sched_switch", "--maxactive", "8"},
                        "and no spec given is one"},
                       {"latency",
                        {"syscall:openat", "--backend=ptrace", "--maxactive", "5", "--", "true"},
                        "the ptrace backend has no kretprobes"},
                       // the way out is the backend that has them (it said --backend=ptrace)
                       {"count",
                        {"syscall:openat", "--backend=ptrace", "--maxactive", "5", "--", "true"},
                        "drop --maxactive, or use --backend=kernel"},
                       {"count",
                        {"--from", "x.prb", "--maxactive", "5"},
                        "--maxactive and -- CMD belong to the recording run"},
                       {"latency",
                        {"kretprobe:vfs_read", "--maxactive", "0"},
                        "--maxactive must be 1..4096; got '0'"}});
}

// --top -1 once said "a number of 0 or more" though 0 is refused too, and --max-entries
// 99999999999 said only "is invalid": each value outside the range names the range.
TEST(CommandUsage, BoundedOptionsNameTheirRange) {
    for (const auto& [args, text] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--top", "-1"}, "--top must be 1..65536 (leave it out for every key); got '-1'"},
             {{"--top", "0"}, "--top must be 1..65536 (leave it out for every key); got '0'"},
             {{"--top", "99999999999999999999"}, "--top must be 1..65536"},
             {{"--max-entries", "99999999999"},
              "--max-entries must be 1..65536; got '99999999999'"},
             {{"--max-entries", "-1"}, "--max-entries must be 1..65536; got '-1'"},
             {{"--max-entries", "65537"}, "--max-entries must be 1..65536; got '65537'"},
             {{"--max-entries", "abc"}, "--max-entries must be 1..65536; got 'abc'"},
             {{"--max-entries", ""}, "--max-entries must be 1..65536; got ''"}}) {
        std::vector<std::string> a{"syscall:openat"};
        a.insert(a.end(), args.begin(), args.end());
        CmdRun r = runCommand("count", a);
        EXPECT_EQ(r.rc, kExitUsage) << r.err;
        EXPECT_THAT(r.err, HasSubstr(text)) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("0 or more"))) << r.err;
    }
    auto ok = parseAggrOptions(AggrMode::Count,
                               {"syscall:openat", "--top", "65536", "--max-entries", "1"});
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->top, 65536u);
    EXPECT_EQ(ok->aggr.max_entries, 1u);
}

// count --interval 0 once said "--duration '0'".
TEST(CommandUsage, IntervalErrorsNameInterval) {
    auto o = parseAggrOptions(AggrMode::Count, {"syscall:openat", "--interval", "0"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr("--interval '0': expected a time of at least 100ms"));
    EXPECT_THAT(o.error().message, Not(HasSubstr("--duration")));
}

// An option's value is no misplaced spec: "--backend ptrace" once got "did you mean
// syscall:ptrace?" under an unrelated error.
TEST(CommandUsage, NoSpecHintForAnOptionsValue) {
    auto o = parseTraceOptions({"--backend", "ptrace", "syscall:openat", "-p", "99999999999"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr("'-p/--attach' is invalid"));
    EXPECT_THAT(o.error().message, Not(HasSubstr("syscall:ptrace"))) << o.error().message;
    // A command without its "--" still gets the hint.
    auto cmd = parseTraceOptions({"--backend", "ptrace", "syscall:openat", "ls", "-al"});
    ASSERT_FALSE(cmd);
    EXPECT_THAT(cmd.error().message, HasSubstr("put it after '--'"));
}

// --ustack's UNWINDER is optional, so "--ustack SPEC" gives it the spec: "no probe spec
// given" alone left the user looking for the spec they wrote.
TEST(CommandUsage, SpecTakenByUstackIsSaid) {
    auto t = parseTraceOptions({"--ustack", "uprobe:libc:malloc"});
    ASSERT_FALSE(t);
    EXPECT_THAT(t.error().message,
                HasSubstr("'uprobe:libc:malloc' went to --ustack as its value: put the spec "
                          "before --ustack"));
    auto c = parseAggrOptions(AggrMode::Count, {"--by", "ustack", "--ustack", "syscall:read"});
    ASSERT_FALSE(c);
    EXPECT_THAT(c.error().message, HasSubstr("'syscall:read' went to --ustack"));
    // Nothing to say when the value is no spec.
    auto none = parseTraceOptions({"--ustack", "fp"});
    ASSERT_FALSE(none);
    EXPECT_THAT(none.error().message, Not(HasSubstr("went to")));
}

// --backend=ptrace with neither -p nor -- CMD once failed at run time, exit 1, with
// "(Invalid argument)": it is the command line that is wrong.
TEST(CommandUsage, PtraceWithoutAProcessIsAUsageError) {
    for (const auto& [cmd, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"trace", {"--backend=ptrace", "syscall:openat", "--duration", "1"}},
             {"record", {"--backend=ptrace", "syscall:openat", "-o", "x.rec"}},
             {"count", {"--backend=ptrace", "uprobe:libc:malloc"}},
             {"hist", {"--backend=ptrace", "uprobe:libc:malloc n=$arg1", "n"}}}) {
        CmdRun r = runCommand(cmd, args);
        EXPECT_EQ(r.rc, kExitUsage) << cmd;
        EXPECT_THAT(r.err, HasSubstr("give -p PID or -- CMD")) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("Invalid argument"))) << r.err;
    }
}

// An empty spec once listed kprobe, kretprobe and syscall only.
TEST(CommandUsage, EmptySpecListsEveryKind) {
    for (const char* cmd : {"trace", "count", "record"}) {
        CmdRun r = runCommand(cmd, {"", "-o", "x"});
        EXPECT_EQ(r.rc, kExitUsage) << cmd;
        EXPECT_THAT(r.err, HasSubstr("empty probe spec")) << cmd << ": " << r.err;
        for (const auto& k : probectl::probeKinds())
            EXPECT_THAT(r.err, HasSubstr(std::string(k.name))) << cmd << ": " << r.err;
    }
}

// `hist 'syscall:exit_group r=$retval' r` said "$retval only in return probes (kretprobe:,
// uretprobe:, syscall:)", a syscall: probe's refusal naming syscall: (seen failing). Every
// command that takes the spec says the call never returns, as a usage error.
TEST(CommandUsage, RetvalOfExitSaysItNeverReturns) {
    for (const char* call : {"exit_group", "exit"}) {
        const std::string spec = fmt::format("syscall:{} r=$retval", call);
        for (const auto& [name, args] :
             std::vector<std::pair<std::string, std::vector<std::string>>>{
                 {"hist", {spec, "r"}},
                 {"count", {spec, "--by", "r"}},
                 {"latency", {spec}},
                 {"trace", {spec}},
                 {"record", {spec, "-o", "x.rec"}}}) {
            CmdRun r = runCommand(name, args);
            EXPECT_EQ(r.rc, kExitUsage) << name << ": " << r.err;
            EXPECT_THAT(r.err, HasSubstr(fmt::format("{} never returns (the task ends in it), so "
                                                     "it has no $retval",
                                                     call)))
                << name << ": " << r.err;
            EXPECT_THAT(r.err, Not(HasSubstr("only available in return probes")))
                << name << ": " << r.err;
        }
    }
}

// folded and svg are count's stack formats: hist and latency list only their own formats
// (they listed folded and svg, then refused them with count's usage).
TEST(CommandUsage, HistAndLatencyListOnlyTheirFormats) {
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"hist", {"kprobe:vfs_read n=$arg3", "n", "--format", "svg", "-o", "x.svg"}},
             {"hist", {"kprobe:vfs_read n=$arg3", "n", "--by", "kstack", "--format", "folded"}},
             {"latency", {"kretprobe:vfs_read", "--format", "folded"}},
             {"latency", {"kretprobe:vfs_read", "--format", "xml"}}}) {
        CmdRun r = runCommand(name, args);
        EXPECT_EQ(r.rc, kExitUsage) << fmt::format("{}", fmt::join(args, " "));
        EXPECT_THAT(r.err, HasSubstr("probectl " + name +
                                     ": --format must be text, json, perfetto or chrome, not '"))
            << r.err;
    }
    CmdRun r = runCommand("count", {"kprobe:vfs_read", "--format", "xml"});
    EXPECT_THAT(r.err, HasSubstr("--format must be text, json, folded, svg, perfetto or chrome, "
                                 "not 'xml'"))
        << r.err;
}

// --format svg draws count's stacks into a file: without -o, without --by kstack|ustack, or
// with --interval it is a usage error that says what is missing.
TEST(CommandUsage, CountSvgNeedsStacksAndAFile) {
    for (const auto& [name, args, says] :
         std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
             {"count",
              {"kprobe:vfs_read", "--by", "kstack", "--format", "svg"},
              "--format svg writes a file: give -o FILE (e.g. -o flame.svg)"},
             {"count",
              {"uprobe:/bin/true:main", "--by", "ustack", "--format", "svg"},
              "give -o FILE"},
             {"count", {"kprobe:vfs_read", "--format", "svg", "-o", "x.svg"}, "--by kstack|ustack"},
             {"count",
              {"kprobe:vfs_read", "--by", "comm", "--format", "svg", "-o", "x.svg"},
              "--by kstack|ustack"},
             {"count",
              {"kprobe:vfs_read", "--by", "kstack", "--format", "svg", "-o", "x.svg", "--interval",
               "1"},
              "--interval goes with text, json or folded"}}) {
        CmdRun r = runCommand(name, args);
        EXPECT_EQ(r.rc, kExitUsage) << fmt::format("{}", fmt::join(args, " "));
        EXPECT_THAT(r.err, HasSubstr("probectl " + name + ": " + "--format svg")) << r.err;
        EXPECT_THAT(r.err, HasSubstr(says)) << r.err;
    }
    auto ok = parseAggrOptions(AggrMode::Count, {"kprobe:vfs_read", "--by", "kstack", "--format",
                                                 "svg", "-o", "flame.svg"});
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->format, "svg");
    EXPECT_EQ(ok->output, "flame.svg");
    EXPECT_TRUE(parseAggrOptions(AggrMode::Count, {"kprobe:vfs_read", "--by", "comm,kstack,ustack",
                                                   "--format", "svg", "-o", "flame.svg"}));
}

// A damaged recording is an error with the bytes the damage is in, not a recording cut short.
TEST(CommandTable, ReportOfADamagedRecordingExitsOne) {
    const std::string path = ::testing::TempDir() + "/report-damaged.rec";
    for (const std::size_t at : {8, 48 + 4, 48 + 16 + 3}) {
        {
            auto w = probectl::recordingWriter(path, 0);
            ASSERT_TRUE(w);
            ASSERT_TRUE((*w)->begin(1, {}));
            probectl::Event ev;
            ev.probe_id = 1;
            ev.spec = "syscall:getppid";
            ASSERT_TRUE((*w)->event(ev));
            ASSERT_TRUE((*w)->finish({}));
        }
        std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(static_cast<std::streamoff>(at));
        f.write("XXXX", 4);
        f.close();
        CmdRun r = runCommand("report", {path});
        EXPECT_EQ(r.rc, kExitRuntime) << at << r.err;
        EXPECT_THAT(r.err, HasSubstr(at == 8   ? "damaged in its header"
                                     : at < 64 ? "damaged in bytes 48 to 63"
                                               : "damaged in bytes 64 to "))
            << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("cut short"))) << r.err;
    }
}

// A recording cut short after its header (48 bytes: the recorder killed before its first
// block) holds nothing to report: report said nothing and exited 0 (count --from exited 1);
// both now name the file and say so, exit 1, and carry no errno text ("No such file or
// directory" read as if the file were missing).
TEST(CommandTable, ARecordingOfItsHeaderAloneIsAnError) {
    const std::string path = ::testing::TempDir() + "/report-header-only.rec";
    {
        auto w = probectl::recordingWriter(path, 0);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->begin(1, {}));
        probectl::Event ev;
        ev.probe_id = 1;
        ev.spec = "syscall:getppid";
        ASSERT_TRUE((*w)->event(ev));
        ASSERT_TRUE((*w)->finish({}));
    }
    std::filesystem::resize_file(path, 48);
    for (const std::string format : {"text", "json"}) {
        CmdRun r = runCommand("report", {path, "--format", format});
        EXPECT_EQ(r.rc, kExitRuntime) << r.err;
        EXPECT_EQ(r.out, "") << format;
        EXPECT_THAT(r.err, HasSubstr("probectl report: " + path +
                                     ": recording ends at byte 48 after 0 complete blocks"))
            << r.err;
        EXPECT_THAT(r.err, HasSubstr("it holds no event to report\n")) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("(No such file"))) << r.err;
    }
    CmdRun c = runCommand("count", {"--from", path});
    EXPECT_EQ(c.rc, kExitRuntime) << c.err;
    EXPECT_THAT(c.err, HasSubstr("probectl count: " + path + ": the recording holds no probe: "))
        << c.err;
    EXPECT_THAT(c.err, Not(HasSubstr("(No such file"))) << c.err;
}

// A real recording (the ptrace backend) damaged in the middle, as a disk or a copy damages
// one: count, hist and latency --from printed the counts before the damage with only a note
// and exited 0, and report --format chrome|perfetto|ctf -o OUT exited 1 but left OUT with
// the events before it. Damage is an error for every reader, and an output is complete or
// absent; a recording cut short at its end is still read to its last block, with a note.
TEST(CommandTable, ADamagedRecordingIsAnErrorForEveryReader) {
    const std::string dir = ::testing::TempDir() + "damaged-rec";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string good = dir + "/good.rec", bad = dir + "/bad.rec", cut = dir + "/cut.rec";
    const std::string entry = std::string("uprobe:") + FX_UNWIND_PATH + ":un_jump";
    const std::string ret = std::string("uretprobe:") + FX_UNWIND_PATH + ":un_jump";
    CmdRun rec = runCommand("record", {entry, ret, "--backend=ptrace", "-o", good, "--",
                                       FX_UNWIND_PATH, "longjmp", "1000"});
    ASSERT_EQ(rec.rc, 0) << rec.err;
    std::ifstream in(good, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(whole.size(), 4000u);
    const std::vector<std::pair<std::string, std::vector<std::string>>> readers = {
        {"count", {"--from", bad}},
        {"hist", {"--from", bad, "pid"}},
        {"latency", {"--from", bad}},
    };
    for (const std::size_t at : {std::size_t{2000}, whole.size() / 2}) {
        SCOPED_TRACE(at);
        std::string damaged = whole;
        damaged.replace(at, 4, "XXXX");
        std::ofstream(bad, std::ios::binary | std::ios::trunc) << damaged;
        for (const auto& [name, args] : readers) {
            CmdRun r = runCommand(name, args);
            EXPECT_EQ(r.rc, kExitRuntime) << name << ": " << r.out << r.err;
            EXPECT_THAT(r.err, HasSubstr("damaged in bytes")) << name;
            EXPECT_THAT(r.err, HasSubstr("not aggregated")) << name;
            EXPECT_EQ(r.out, "") << name;
            // with -o, no file is left either
            const std::string out = dir + "/" + name + ".txt";
            std::vector<std::string> to_file = args;
            to_file.insert(to_file.end(), {"-o", out});
            EXPECT_EQ(runCommand(name, to_file).rc, kExitRuntime) << name;
            EXPECT_FALSE(std::filesystem::exists(out)) << name;
        }
        for (const std::string format : {"chrome", "perfetto", "ctf", "json", "text"}) {
            const std::string out = dir + "/out." + format;
            CmdRun r = runCommand("report", {bad, "--format", format, "-o", out});
            EXPECT_EQ(r.rc, kExitRuntime) << format << ": " << r.err;
            EXPECT_THAT(r.err, HasSubstr("damaged in bytes")) << format;
            EXPECT_THAT(r.err, HasSubstr("removed " + out + ", as it was incomplete")) << format;
            EXPECT_FALSE(std::filesystem::exists(out)) << format;
        }
        // On standard output what came before the damage is printed, and the exit is 1.
        EXPECT_EQ(runCommand("report", {bad}).rc, kExitRuntime);
    }
    // Cut short at its end (the recorder killed): read to its last block, with a note.
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() - 10);
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"count", {"--from", cut}}, {"hist", {"--from", cut, "pid"}}}) {
        CmdRun r = runCommand(name, args);
        EXPECT_EQ(r.rc, 0) << name << ": " << r.err;
        EXPECT_THAT(r.err, HasSubstr("cut short")) << name;
        EXPECT_THAT(r.out, HasSubstr(entry)) << name;
    }
    const std::string chrome = dir + "/cut.json";
    CmdRun r = runCommand("report", {cut, "--format", "chrome", "-o", chrome});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(chrome));
}

// The module's EPERM says what is needed and what works without it, not the failed step.
TEST(CommandErrors, PrivilegeErrorSaysSudoOrPtrace) {
    const probectl::Error refused =
        probectl::makeError(EPERM, "set tgid filter: CAP_SYS_ADMIN or CAP_PERFMON required",
                            "CAP_SYS_ADMIN or "
                            "CAP_PERFMON required");
    const std::string t = privilegeError(refused, "trace", true).describe();
    EXPECT_THAT(t, HasSubstr("trace with probectl.ko needs root"));
    EXPECT_THAT(t, HasSubstr("sudo"));
    EXPECT_THAT(t, HasSubstr("--backend=ptrace"));
    EXPECT_THAT(t, Not(HasSubstr("tgid filter")));
    EXPECT_THAT(privilegeError(refused, "count", false).describe(), Not(HasSubstr("--backend")));
    // A file this user may not read is no matter of probectl.ko's privileges.
    const probectl::Error file = probectl::makeError(EACCES, "cannot read /root/app");
    EXPECT_EQ(privilegeError(file, "trace", true).message, file.message);
    // Nor a CAP_PERFMON caller's refusal of another's probe (remove, enable, disable, which
    // now say the unprivileged caller's as trace does): root would be the wrong advice.
    const probectl::Error others = probectl::makeError(
        EPERM, "remove probe 3: probe 3 is another session's (port 9): needs CAP_SYS_ADMIN");
    EXPECT_EQ(privilegeError(others, "remove", false).message, others.message);
}

// count -p of a process that does not exist fails as trace -p does, before the kernel.
TEST(CommandTable, CountOfAMissingProcessFails) {
    CmdRun r = runCommand("count", {"kprobe:vfs_read", "-p", "4194303", "--duration", "1"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("no process 4194303"));
}

// -p of a thread's id: the kernel backend traced nothing of it and ptrace its whole process
// under the thread's id. Refused on both, naming the process to give instead.
TEST(CommandTable, APidThatIsAThreadIsRefusedWithItsProcess) {
    std::atomic<pid_t> tid{0};
    std::atomic<bool> done{false};
    std::thread t([&] {
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
        while (!done)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    while (!tid)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::string want = fmt::format(
        "-p {0}: {0} is a thread of process {1}, not a process; "
        "use -p {1}",
        tid.load(), ::getpid());
    for (const std::string cmd : {"count", "trace"}) {
        CmdRun r = runCommand(cmd, {"--backend=ptrace", "syscall:getppid", "-p",
                                    std::to_string(tid.load()), "--duration", "1"});
        EXPECT_EQ(r.rc, 1) << cmd << ": " << r.err;
        EXPECT_THAT(r.err, HasSubstr(want)) << cmd;
    }
    done = true;
    t.join();
}

// The conversion's progress goes to stderr only when it is a terminal, and not over a text
// report that goes to the same terminal.
TEST(CommandTable, ReportProgressOnlyOnATerminal) {
    const std::string path = ::testing::TempDir() + "/report-progress.rec";
    const std::string out = ::testing::TempDir() + "/report-progress.txt";
    {
        auto w = probectl::recordingWriter(path, 0);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->begin(1, {}));
        probectl::Event ev;
        ev.probe_id = 1;
        ev.spec = "syscall:getppid";
        for (int i = 0; i < 10000; ++i)
            ASSERT_TRUE((*w)->event(ev));
        ASSERT_TRUE((*w)->finish({}));
    }
    auto runWith = [&](bool err_tty, bool out_tty, std::vector<std::string> args) {
        std::ostringstream o, e;
        Io io{o, e, err_tty, out_tty};
        EXPECT_EQ(findCommand("report")->run(args, io), kExitOk) << e.str();
        return e.str();
    };
    const std::string shown = runWith(true, false, {path, "-o", out});
    EXPECT_THAT(shown, HasSubstr("report: 100%"));
    EXPECT_THAT(shown, HasSubstr("10000 events"));
    EXPECT_TRUE(shown.ends_with("\r\x1b[K")) << shown;
    EXPECT_EQ(runWith(false, false, {path, "-o", out}), "");
    EXPECT_EQ(runWith(true, true, {path}), "");   // the report itself is on the terminal
    EXPECT_NE(runWith(true, false, {path}), "");  // stdout into a file or a pipe
    unlink(path.c_str());
    unlink(out.c_str());
}

// latency --from with no spec, or a glob, takes the recording's return probes and names
// the entry probes it leaves out; it once failed on the first entry probe. A glob whose
// every probe is an entry probe, or a recording with no return probe at all, is still an
// error.
TEST(CommandTable, LatencyFromARecordingLeavesOutEntryProbes) {
    const std::string path = ::testing::TempDir() + "/latency-from.rec";
    auto write = [&](const std::vector<probectl::Event>& events,
                     const probectl::SessionStats& stats) {
        auto w = probectl::recordingWriter(path, 0);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->begin(1, {}));
        for (const auto& ev : events)
            ASSERT_TRUE((*w)->event(ev));
        ASSERT_TRUE((*w)->finish(stats));
    };
    write(exporttest::sampleRun(), exporttest::sampleStats());
    CmdRun r = runCommand("latency", {"--from", path, "--format", "json"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("uretprobe:/bin/prog:work")) << r.out;
    EXPECT_THAT(r.out, Not(HasSubstr("kprobe:do_sys_openat2"))) << r.out;
    EXPECT_THAT(r.err, HasSubstr("left out, kprobe:do_sys_openat2: ")) << r.err;
    EXPECT_THAT(r.err, HasSubstr("left out, uprobe:/bin/prog:open")) << r.err;
    // The three returns of the run: 600 ns, 1300 ns and 900 ns.
    EXPECT_THAT(r.out, HasSubstr("\"count\":3,\"sum\":2800")) << r.out;

    r = runCommand("latency", {"--from", path, "kprobe:*"});
    EXPECT_EQ(r.rc, kExitUsage) << r.err;
    EXPECT_THAT(r.err, HasSubstr("kprobe:do_sys_openat2: ")) << r.err;
    // A glob that also matches a return probe leaves the others out, as with no glob; it
    // once failed on the first entry probe it matched.
    r = runCommand("latency", {"--from", path, "*", "--format", "json"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"count\":3,\"sum\":2800")) << r.out;
    EXPECT_THAT(r.err, HasSubstr("left out, kprobe:do_sys_openat2: ")) << r.err;
    r = runCommand("latency", {"--from", path, "uretprobe:*", "kprobe:*"});
    EXPECT_EQ(r.rc, kExitUsage) << r.err;
    EXPECT_THAT(r.err, HasSubstr("kprobe:do_sys_openat2: ")) << r.err;

    probectl::SessionStats entries = exporttest::sampleStats();
    entries.probes.resize(1);
    write({exporttest::entry(100, 100, 1'000'000'100, "kprobe:do_sys_openat2")}, entries);
    r = runCommand("latency", {"--from", path});
    EXPECT_EQ(r.rc, kExitUsage) << r.err;
    EXPECT_THAT(r.err, HasSubstr("kprobe:do_sys_openat2: ")) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("left out"))) << r.err;
    unlink(path.c_str());
}

// count --from aggregates in probectl, with no kernel map: its keyed table once ended in
// "3 keys (capacity 1024)", a capacity no map had. And an entry probe left out of --by
// retval was said as "$retval needs a return probe", words the user had not typed.
TEST(CommandTable, CountFromARecordingSaysNoCapacityAndTheOptionTyped) {
    const std::string path = ::testing::TempDir() + "/count-from.rec";
    {
        auto w = probectl::recordingWriter(path, 0);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->begin(1, {}));
        for (const auto& ev : exporttest::sampleRun())
            ASSERT_TRUE((*w)->event(ev));
        ASSERT_TRUE((*w)->finish(exporttest::sampleStats()));
    }
    CmdRun r = runCommand("count", {"--from", path, "--by", "retval"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    // The uretprobe's three returns: 7, -2 and 1.
    EXPECT_THAT(r.out, HasSubstr("\n3 keys\n")) << r.out;
    EXPECT_THAT(r.out, Not(HasSubstr("capacity"))) << r.out;
    EXPECT_THAT(r.err, HasSubstr("left out, kprobe:do_sys_openat2: --by retval needs a return "
                                 "probe (kretprobe:, uretprobe:, syscall:)"))
        << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("$retval"))) << r.err;
    r = runCommand("count", {"--from", path, "--by", "retval", "--format", "json"});
    EXPECT_THAT(r.out, HasSubstr("\"keys_held\":3,\"capacity\":null,")) << r.out;
    // --max-entries asks for a map's rules: its capacity is then said.
    r = runCommand("count", {"--from", path, "--by", "retval", "--max-entries", "2"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("2 keys (capacity 2); map full: 1 hits with new keys not counted"))
        << r.out;
    unlink(path.c_str());
}

// Item 9's rule, one table across commands and the layers that find the mistake: the option
// parser, the command's own checks, the spec-hint layer (a word the shell split off), the
// spec, fetch-argument and predicate parsers: exit 2 and "Try ... --help"; what the system
// refuses (a file, a symbol the table lacks): exit 1. No message repeats its errno text.
TEST(ExitCodes, OneRuleWhicheverLayerFindsTheMistake) {
    struct Row {
        std::string command;
        std::vector<std::string> args;
        int rc;
        std::string says;
    };
    const std::vector<Row> rows = {
        // option parser
        {"trace", {"--bogus", "syscall:getppid"}, kExitUsage, "unrecognised option '--bogus'"},
        {"trace", {"-p", "abc", "syscall:getppid"}, kExitUsage, "for option '-p/--attach'"},
        {"count", {"--bogus"}, kExitUsage, "unrecognised option"},
        {"latency", {"kprobe:x", "--bogus"}, kExitUsage, "unrecognised option"},
        {"bench", {"-n", "abc"}, kExitUsage, "--count must be 1..100000000; got 'abc'"},
        {"list", {"--bogus"}, kExitUsage, "unrecognised option"},
        // the command's own checks
        {"trace", {"--duration", "1x", "syscall:getppid"}, kExitUsage, "--duration '1x'"},
        {"hist", {"syscall:getppid"}, kExitUsage, "hist takes one probe spec"},
        {"remove", {"abc"}, kExitUsage, "is not a probe id"},
        {"trace",
         {"syscall:getppid", "--backend=ptrace", "--maxactive", "5", "--", "true"},
         kExitUsage,
         "--maxactive sizes a kretprobe's table"},
        {"trace", {"syscall:getppid", "-o", ""}, kExitUsage, "-o '': give a file name"},
        {"record", {"syscall:getppid", "-o", ""}, kExitUsage, "give -o FILE"},
        {"report", {"x.rec", "-o", ""}, kExitUsage, "-o '': give a file name"},
        {"count", {"syscall:getppid", "-o", ""}, kExitUsage, "-o '': give a file name"},
        {"bench", {"-o", ""}, kExitUsage, "-o '': give a directory name"},
        // '-' made a file named '-'; '' read as no FILE, or as no --from
        {"record",
         {"syscall:getppid", "-o", "-"},
         kExitUsage,
         "-o -: a recording is written to a file, not to standard output"},
        {"trace",
         {"syscall:getppid", "--format", "perfetto", "-o", "-"},
         kExitUsage,
         "-o -: --format perfetto is written to a file"},
        {"report",
         {"x.rec", "--format", "chrome", "-o", "-"},
         kExitUsage,
         "-o -: --format chrome is written to a file"},
        {"report", {""}, kExitUsage, "'' is not a file name: give the recording"},
        {"count", {"--from", ""}, kExitUsage, "--from '': give the recording's file name"},
        {"bench", {"--attach", "100000"}, kExitUsage, "--attach must be 0..4096"},
        // words the shell split off or that lack their kind or '--'
        {"trace", {"syscall:openat", "if"}, kExitUsage, "go inside the spec's single quotes"},
        {"trace", {"openat", "--", "true"}, kExitUsage, "did you mean syscall:openat?"},
        {"trace", {"syscall:getppid", "true"}, kExitUsage, "put it after '--'"},
        // spec, fetch-argument and predicate parsers
        {"trace", {"nosuchkind:foo"}, kExitUsage, "unknown probe type 'nosuchkind'"},
        {"trace", {"kprobe:foo bar="}, kExitUsage, "expected a fetch source after 'bar='"},
        {"count",
         {"kprobe:foo+bar"},
         kExitUsage,
         "expected the offset as unsigned decimal digits or 0x hex"},
        {"trace", {"syscall:openat if $comm == cat"}, kExitUsage, "string literals need double"},
        {"add", {"kprobe:foo if"}, kExitUsage, "expected a predicate after 'if'"},
        {"resolve", {"kprobe:foo+"}, kExitUsage, "expected an offset after '+'"},
        // the system refuses: files, symbols
        {"report", {"/nonexistent/x.rec"}, kExitRuntime, "cannot read /nonexistent/x.rec"},
        {"report",
         {"/dev/null"},
         kExitRuntime,
         "/dev/null is a character device and read nothing (0 bytes): no recording in it; give "
         "the file that `probectl record -o FILE` wrote"},
        {"report",
         {"/"},
         kExitRuntime,
         "/ is a directory: a recording is one file, the one `probectl record -o FILE` writes"},
        {"symbols", withFixtures({"zzz_nothing"}), kExitRuntime, "no symbol matches"},
    };
    for (const auto& row : rows) {
        const std::string what = row.command + " " + fmt::format("{}", fmt::join(row.args, " "));
        CmdRun r = runCommand(row.command, row.args);
        EXPECT_EQ(r.rc, row.rc) << what << "\n" << r.err;
        EXPECT_THAT(r.err, HasSubstr(row.says)) << what;
        EXPECT_THAT(r.err, HasSubstr("probectl " + row.command + ": ")) << what;
        if (row.rc == kExitUsage)
            EXPECT_THAT(r.err, HasSubstr("Try 'probectl " + row.command + " --help'.")) << what;
        else
            EXPECT_THAT(r.err, Not(HasSubstr("--help"))) << what;
        for (int e : {ENOENT, EINVAL, EPERM, EACCES, ENOTDIR}) {
            const std::string s = std::strerror(e);
            EXPECT_THAT(r.err, Not(HasSubstr(s + " (" + s + ")"))) << what;
            EXPECT_THAT(r.err, Not(HasSubstr("(" + s + ") (" + s + ")"))) << what;
        }
    }
}

// count, hist and latency take trace's filters on the task (they once had only -p), with
// trace's checks; the kernel applies them, so not with --backend ptrace or --from.
TEST(CommandUsage, AggregationsTakeTheTaskFilters) {
    for (auto mode : {AggrMode::Count, AggrMode::Hist, AggrMode::Latency}) {
        std::vector<std::string> spec = {"syscall:read n=$arg3"};
        if (mode == AggrMode::Hist)
            spec.push_back("n");
        auto with = [&](std::vector<std::string> more) {
            std::vector<std::string> args = spec;
            args.insert(args.end(), more.begin(), more.end());
            return parseAggrOptions(mode, args);
        };
        auto ok = with(
            {"--pid", "12,34", "--pid", "56", "--tid", "7", "--uid", "0,root", "--comm", "cc1*"});
        ASSERT_TRUE(ok) << ok.error().message;
        EXPECT_EQ(ok->match_pids, (std::vector<std::uint32_t>{12, 34, 56}));
        EXPECT_EQ(ok->match_tids, (std::vector<std::uint32_t>{7}));
        EXPECT_EQ(ok->match_uids, (std::vector<std::uint32_t>{0, 0}));
        EXPECT_EQ(ok->match_comm, "cc1*");
        for (const auto& [args, text] :
             std::vector<std::pair<std::vector<std::string>, std::string>>{
                 {{"--pid", "1,x"}, "--pid: 'x' is not a number (in '1,x')"},
                 // --pid 0 once counted nothing while -p 0 was refused.
                 {{"--pid", "0"}, "--pid 0 is not a process id (they start at 1)"},
                 {{"--tid", "99999999999"}, "--tid: '99999999999' is out of range"},
                 {{"--uid", "no_such_user_zz"}, "--uid: no user 'no_such_user_zz'"},
                 {{"--comm", ""}, "--comm needs a glob of 1..63 bytes"},
                 {{"--comm", "ls", "--backend", "ptrace", "--", "ls"},
                  "--pid, --tid, --uid and --comm filter in the kernel"}}) {
            auto bad = with(args);
            ASSERT_FALSE(bad) << args.front();
            EXPECT_THAT(bad.error().message, HasSubstr(text));
        }
        std::vector<std::string> from = {"--from", "run.prb", "--tid", "3"};
        if (mode == AggrMode::Hist)
            from.push_back("n");
        auto rec = parseAggrOptions(mode, from);
        ASSERT_FALSE(rec);
        EXPECT_THAT(rec.error().message, HasSubstr("--tid, --uid, --comm, --duration"));
    }
}

// strace -c counts every syscall unasked; `trace -c -- ls` once only said "no probe spec
// given", with an openat example that -c does not need.
TEST(CommandUsage, SummaryWithoutSpecsNamesSyscallsAll) {
    auto o = parseTraceOptions({"-c", "--", "ls"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr("--syscalls=all"));
    auto plain = parseTraceOptions({"--", "ls"});
    ASSERT_FALSE(plain);
    EXPECT_THAT(plain.error().message, Not(HasSubstr("--syscalls=all")));
}
