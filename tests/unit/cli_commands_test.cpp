// Subcommands that need no kernel (resolve, symbols) run end to end on fixtures; the
// others are checked for help and usage-error exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "subcommands.hpp"

using namespace probectl::cli;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct CmdRun {
    int rc;
    std::string out;
    std::string err;
};

CmdRun run(const std::string& name, const std::vector<std::string>& args) {
    std::ostringstream out, err;
    Io io{out, err};
    const Command* c = findCommand(name);
    EXPECT_NE(c, nullptr) << name;
    const int rc = c ? c->run(args, io) : -1;
    return {rc, out.str(), err.str()};
}

std::vector<std::string> withFixtures(std::vector<std::string> args) {
    const std::string dir = PROBECTL_FIXTURES;
    args.insert(args.end(),
                {"--kallsyms", dir + "/kallsyms.txt", "--blacklist", dir + "/blacklist.txt"});
    return args;
}

}  // namespace

TEST(CommandTable, EveryCommandHasHelpWithExamples) {
    const std::vector<std::string> expected = {"trace",   "record",  "report",  "count",  "hist",
                                               "latency", "add",     "list",    "remove", "enable",
                                               "disable", "resolve", "symbols", "bench"};
    ASSERT_EQ(commands().size(), expected.size());
    for (const auto& name : expected) {
        CmdRun r = run(name, {"--help"});
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
        CmdRun r = run(name, args);
        EXPECT_EQ(r.rc, kExitUsage) << name;
        EXPECT_THAT(r.err, HasSubstr("probectl " + name + ": ")) << name;
        EXPECT_THAT(r.err, HasSubstr("Try 'probectl " + name + " --help'.")) << name;
    }
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
            CmdRun r = run(name, args);
            EXPECT_EQ(r.rc, kExitUsage) << name;
            EXPECT_EQ(r.err, message + "Try 'probectl " + name + " --help'.\n") << name;
            EXPECT_EQ(r.out, "") << name;
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
        CmdRun r = run(name, {"--help"});
        EXPECT_EQ(r.rc, kExitOk) << name;
        return r.out.substr(r.out.find("Options:\n"));
    };
    EXPECT_EQ(options("resolve"),
              help + symbol_sources +
                  "  -p [ --pid ] PID                      user-space specs: find PATH and va= \n"
                  "                                        addresses in process PID\n\n");
    EXPECT_EQ(options("symbols"),
              help + "  -f [ --functions ]                    only functions (text symbols)\n" +
                  "  -p [ --pid ] PID                      PATH[:GLOB]: find PATH as process PID \n"
                  "                                        sees it\n" +
                  symbol_sources + "\n");
    for (const char* name : {"enable", "disable"})
        EXPECT_EQ(options(name), "Options:\n  -h [ --help ]         show this help\n\n") << name;
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
    CmdRun r = run("resolve", withFixtures({"syscall:getppid"}));
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("symbol:     __x64_sys_getppid\n"));
    EXPECT_THAT(r.out, HasSubstr("module:     vmlinux\n"));
    EXPECT_THAT(r.out, HasSubstr("address:    0xffffffff81001000\n"));
    EXPECT_THAT(r.out, HasSubstr("registers:  kretprobe __x64_sys_getppid (syscall wrapper"));
    EXPECT_THAT(r.out, HasSubstr("probe-able: yes\n"));
}

TEST(ResolveCommand, ModuleSymbolWithOffsetAndAddress) {
    CmdRun m = run("resolve", withFixtures({"kprobe:vfs_write+8"}));
    EXPECT_EQ(m.rc, kExitOk) << m.err;
    EXPECT_THAT(m.out, HasSubstr("address:    0xffffffff81001488"));
    CmdRun a = run("resolve", withFixtures({"kprobe:0xffffffffc0a01100"}));
    EXPECT_EQ(a.rc, kExitOk) << a.err;
    EXPECT_THAT(a.out, HasSubstr("symbol:     cleanup_module_list\n"));
    EXPECT_THAT(a.out, HasSubstr("module:     other_module\n"));
}

TEST(ResolveCommand, OffsetInsideAFunctionIsNotAYes) {
    for (const char* text : {"kprobe:do_sys_openat2+1", "kprobe:0xffffffff810011c1"}) {
        CmdRun r = run("resolve", withFixtures({text}));
        EXPECT_EQ(r.rc, kExitOk) << r.err;
        EXPECT_THAT(r.out, HasSubstr("symbol:     do_sys_openat2+0x1\n"));
        EXPECT_THAT(r.out, HasSubstr("probe-able: unknown until the kernel tries (offset inside "
                                     "the function"));
    }
}

TEST(ResolveCommand, AddressInDataOrOutsideFunctionsIsNo) {
    for (const char* text : {"kprobe:0xffffffff82000000", "kretprobe:0x1234",
                             "kprobe:0xffffffffffffffff", "kretprobe:0xffffffff81001410"}) {
        CmdRun r = run("resolve", withFixtures({text}));
        EXPECT_EQ(r.rc, kExitRuntime) << text;
        EXPECT_THAT(r.out, HasSubstr("probe-able: no\n")) << text;
    }
}

TEST(ResolveCommand, NotProbeableSaysWhyAndExitsOne) {
    CmdRun bl = run("resolve", withFixtures({"kprobe:do_int3"}));
    EXPECT_EQ(bl.rc, kExitRuntime);
    EXPECT_THAT(bl.out, HasSubstr("probe-able: no\n"));
    EXPECT_THAT(bl.out, HasSubstr("blacklist"));
    CmdRun dup = run("resolve", withFixtures({"kprobe:cleanup_module_list"}));
    EXPECT_EQ(dup.rc, kExitRuntime);
    EXPECT_THAT(dup.out, HasSubstr("names 3 functions"));
    CmdRun unknown = run("resolve", withFixtures({"kprobe:vfs_reed"}));
    EXPECT_EQ(unknown.rc, kExitRuntime);
    EXPECT_THAT(unknown.out, HasSubstr("did you mean: vfs_read"));
}

TEST(ResolveCommand, MissingKallsymsIsARuntimeError) {
    CmdRun r = run("resolve", {"kprobe:vfs_read", "--kallsyms", "/nonexistent"});
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_THAT(r.err, HasSubstr("/nonexistent"));
}

TEST(SymbolsCommand, GlobTableWithKindModuleAndProbeability) {
    CmdRun r = run("symbols", withFixtures({"cleanup_module_list"}));
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr("ADDRESS           TYPE  KIND      MODULE        PROBE"));
    EXPECT_THAT(r.out, HasSubstr("ffffffffc0a01100  t     function  other_module  no: duplicate"));
    CmdRun f = run("symbols", withFixtures({"*int3", "-f"}));
    EXPECT_EQ(f.rc, kExitOk);
    EXPECT_THAT(f.out, HasSubstr("no: kprobes blacklist  do_int3"));
    CmdRun data = run("symbols", withFixtures({"mod_*"}));
    EXPECT_THAT(data.out,
                ::testing::ContainsRegex("d +data +my_module +no: not a function +mod_data"));
    CmdRun fonly = run("symbols", withFixtures({"mod_*", "--functions"}));
    EXPECT_THAT(fonly.out, Not(HasSubstr("mod_data")));
}

TEST(SymbolsCommand, NoMatchIsARuntimeError) {
    CmdRun r = run("symbols", withFixtures({"zzz_nothing"}));
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
    CmdRun r = run("report", {path, "-o", path});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is the recording being read"));
    std::ifstream in(path);
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "precious");
    unlink(path);
}

// count -p of a process that does not exist fails as trace -p does, before the kernel.
TEST(CommandTable, CountOfAMissingProcessFails) {
    CmdRun r = run("count", {"kprobe:vfs_read", "-p", "4194303", "--duration", "1"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("no process 4194303"));
}
