// Command-line handling of every subcommand, without a kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subcommands.hpp"

using namespace probectl;
using namespace probectl::cli;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Args = std::vector<std::string>;

TEST(TraceOptions, SpecsPidsAndOptions) {
    auto o = parseTraceOptions({"syscall:openat", "-p", "12", "kretprobe:do_sys_openat2", "-p",
                                "13", "--maxactive", "64", "-o", "out.txt", "--duration", "2.5"});
    ASSERT_TRUE(o) << o.error().message;
    ASSERT_EQ(o->specs.size(), 2u);
    EXPECT_EQ(o->specs[0].kind, SpecKind::Syscall);
    EXPECT_EQ(o->specs[1].kind, SpecKind::Kretprobe);
    EXPECT_EQ(o->specs[1].maxactive, 64u);  // --maxactive reaches the kretprobe spec
    EXPECT_EQ(o->specs[0].maxactive, 64u);  // syscall: probes are kretprobes too
    EXPECT_THAT(o->pids, ElementsAre(12u, 13u));
    EXPECT_EQ(o->output, "out.txt");
    EXPECT_DOUBLE_EQ(o->duration, 2.5);
    EXPECT_TRUE(o->command.empty());
    EXPECT_FALSE(o->help);
}

TEST(TraceOptions, DurationTakesUnits) {
    for (const auto& [text, secs] : std::vector<std::pair<std::string, double>>{
             {"2", 2}, {"2.5", 2.5}, {"1s", 1}, {"500ms", 0.5}, {"2m", 120}, {"1h", 3600}}) {
        auto o = parseTraceOptions({"syscall:openat", "--duration", text});
        ASSERT_TRUE(o) << text << ": " << o.error().message;
        EXPECT_DOUBLE_EQ(o->duration, secs) << text;
        EXPECT_EQ(o->duration_text, text);
    }
    EXPECT_FALSE(parseDuration("").has_value());
    EXPECT_FALSE(parseDuration("1 s").has_value());
    EXPECT_FALSE(parseDuration("-1s").has_value());
    EXPECT_FALSE(parseDuration("0ms").has_value());
    EXPECT_FALSE(parseDuration("3d").has_value());
    // Longer than a year: a typo whose nanoseconds would overflow the deadline (it ended
    // the trace at once).
    EXPECT_FALSE(parseDuration("100000000h").has_value());
    EXPECT_FALSE(parseDuration("1e30").has_value());
    EXPECT_TRUE(parseDuration("8760h").has_value());
    auto o = parseTraceOptions({"syscall:openat", "--duration", "100000000h"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, ::testing::HasSubstr("at most"));
}

TEST(TraceOptions, EverythingAfterDoubleDashIsTheCommand) {
    auto o = parseTraceOptions({"syscall:openat", "--", "ls", "-al", "--", "-p", "1"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_THAT(o->command, ElementsAre("ls", "-al", "--", "-p", "1"));
    EXPECT_TRUE(o->pids.empty());
    ASSERT_EQ(o->specs.size(), 1u);
}

TEST(TraceOptions, OptionsAfterSpecsAndLongForms) {
    auto o = parseTraceOptions({"kprobe:vfs_read", "--attach=7", "--output", "f", "--", "true"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_THAT(o->pids, ElementsAre(7u));
    EXPECT_TRUE(o->match_pids.empty()) << "--attach is -p, not the --pid filter";
    EXPECT_EQ(o->output, "f");
    EXPECT_THAT(o->command, ElementsAre("true"));
}

TEST(TraceOptions, Help) {
    auto o = parseTraceOptions({"--help"});
    ASSERT_TRUE(o);
    EXPECT_TRUE(o->help);
    auto h = parseTraceOptions({"-h", "not-a-spec"});
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->help);
}

namespace {

struct UsageCase {
    Args args;
    const char* message_part;
};

void PrintTo(const UsageCase& c, std::ostream* os) {
    *os << "[";
    for (const auto& a : c.args)
        *os << " " << a;
    *os << " ]";
}

class TraceUsageErrors : public ::testing::TestWithParam<UsageCase> {};

}  // namespace

TEST_P(TraceUsageErrors, AreUsageErrors) {
    auto o = parseTraceOptions(GetParam().args);
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr(GetParam().message_part));
}

INSTANTIATE_TEST_SUITE_P(
    Trace, TraceUsageErrors,
    ::testing::Values(
        UsageCase{{}, "no probe spec"}, UsageCase{{"--", "ls"}, "no probe spec"},
        UsageCase{{"syscall:openat", "--"}, "'--' must be followed by a command"},
        UsageCase{{"syscall:openat", "--bogus"}, "unrecognised option '--bogus'"},
        UsageCase{{"syscall:openat", "-p"}, "the required argument for option '-p/--attach'"},
        UsageCase{{"syscall:openat", "--pid", "1,x"}, "--pid: 'x' is not a number (in '1,x')"},
        UsageCase{{"syscall:openat", "--tid", "-3"}, "--tid: '-3' is not a number"},
        // A number out of range is said to be one, with the range (it once said "is not a
        // number"); 0 is refused as -p 0 is.
        UsageCase{{"syscall:openat", "--tid", "99999999999"},
                  "--tid: '99999999999' is out of range: thread ids are 1..4194304"},
        UsageCase{{"syscall:openat", "--pid", "12,4194305"},
                  "--pid: '4194305' is out of range: process ids are 1..4194304"},
        UsageCase{{"syscall:openat", "--uid", "4294967295"},
                  "--uid: '4294967295' is out of range: user ids are 0..4294967294"},
        UsageCase{{"syscall:openat", "--pid", "0"}, "--pid 0 is not a process id"},
        UsageCase{{"syscall:openat", "--tid", "1,0"}, "--tid 0 is not a thread id"},
        UsageCase{{"syscall:openat", "--uid", "no_such_user_zz"},
                  "--uid: no user 'no_such_user_zz'"},
        UsageCase{{"syscall:openat", "--comm", ""}, "--comm needs a glob of 1..63 bytes"},
        UsageCase{{"syscall:openat", "--comm", std::string(64, 'a')}, "--comm needs a glob"},
        UsageCase{{"syscall:getpid", "--backend=ptrace", "--comm", "ls", "--", "ls"},
                  "with --backend=ptrace use -p/--attach"},
        UsageCase{{"kprobe:vfs_read if", "--", "ls"}, "expected a predicate after 'if'"},
        UsageCase{{"kprobe:vfs_read n=$arg1 if m == 1", "--", "ls"}, "unknown field 'm'"},
        UsageCase{{"syscall:openat", "-p", "abc"}, "invalid"},
        UsageCase{{"syscall:openat", "-p", "abc"}, "for option '-p/--attach' is invalid"},
        UsageCase{{"syscall:openat", "-p", "0"}, "-p 0"},
        UsageCase{{"syscall:openat", "--maxactive", "0"}, "--maxactive must be 1..4096"},
        UsageCase{{"syscall:openat", "--maxactive", "5000"}, "--maxactive must be 1..4096"},
        // A kernel (kretprobe) setting that the ptrace backend would ignore.
        UsageCase{{"syscall:openat", "--backend=ptrace", "--maxactive", "5", "--", "true"},
                  kNoMaxactiveWithPtrace},
        UsageCase{
            {"uretprobe:/bin/true:main", "--backend", "ptrace", "--maxactive", "64", "-p", "1"},
            "the ptrace backend has no kretprobes"},
        // An empty -o is a mistake, not standard output.
        UsageCase{{"syscall:openat", "-o", ""},
                  "-o '': give a file name (leave -o out to write to standard output)"},
        UsageCase{{"syscall:openat", "--output", "", "--format", "json"},
                  "-o '': give a file name"},
        UsageCase{{"syscall:openat", "--duration", "-1"}, "--duration"},
        UsageCase{{"syscall:openat", "--duration", "0"}, "--duration '0': expected a positive"},
        UsageCase{{"syscall:openat", "--duration", "5x"}, "(500ms, 10s, 2m, 1h)"},
        UsageCase{{"syscall:openat", "--duration", "ms"}, "--duration 'ms'"},
        UsageCase{{"syscall:openat", "--duration", "1.2.3s"}, "--duration '1.2.3s'"},
        // Shell-quoting mistakes: the shell split the spec or expanded its $...
        UsageCase{{"uprobe:libc:malloc", "size="},
                  "'size=' is no probe spec: fetch arguments and `if` go inside the spec's "
                  "single quotes; $... was expanded by the shell"},
        UsageCase{{"uprobe:libc:malloc size=:s64"},
                  "note: fetch arguments and `if` go inside the spec's single quotes; $... was "
                  "expanded by the shell"},
        UsageCase{{"uprobe:libc:malloc p=+0():string"}, "$... was expanded by the shell"},
        UsageCase{{"uprobe:libc:malloc a= b="}, "$... was expanded by the shell"},
        UsageCase{{"syscall:openat", "if", "$retval<0"},
                  "'if' is no probe spec: fetch arguments and `if` go inside the spec's single "
                  "quotes"},
        UsageCase{{"syscall:openat if  == 3"}, "$... was expanded by the shell"},
        UsageCase{{"syscall:openat if $comm == cat"},
                  "string literals need double quotes, \"cat\""},
        UsageCase{{"syscall:openat", "ls"},
                  "'ls' is no probe spec (TYPE:LOCATION): to trace the command, put it after "
                  "'--': probectl trace SPEC... -- ls"},
        UsageCase{{"syscall:openat", "ls", "-al"}, "put it after '--'"},
        UsageCase{{"openat"},
                  "'openat' is no probe spec (TYPE:LOCATION): did you mean "
                  "syscall:openat?"},
        UsageCase{{"syscall:openat", "--dur", "1"}, "unrecognised option"},  // no guessing
        UsageCase{{"kprobe:foo+bar"}, "(column 12)"},
        UsageCase{{"kprobe:foo+bar"}, "  kprobe:foo+bar\n             ^"},
        UsageCase{{"nosuch:thing", "--", "ls"}, "unknown probe type 'nosuch'"}));

// 'uprobe:libc:malloc size=' in single quotes expanded nothing: no hint says it did.
TEST(TraceUsage, NoExpansionHintWithoutSignsOfOne) {
    for (const std::string spec :
         {"uprobe:libc:malloc size=", "kprobe:vfs_read n=+0(", "syscall:openat if", "   "}) {
        auto o = parseTraceOptions({spec});
        ASSERT_FALSE(o) << spec;
        EXPECT_THAT(o.error().message, Not(HasSubstr("expanded by the shell"))) << spec;
    }
}

TEST(AddOptions, SpecPersistMaxactive) {
    auto o = parseAddOptions({"kretprobe:do_sys_openat2", "--persist", "--maxactive", "8"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_TRUE(o->persist);
    EXPECT_EQ(o->spec.maxactive, 8u);
    auto plain = parseAddOptions({"kprobe:vfs_read"});
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->persist);
    EXPECT_FALSE(parseAddOptions({}));
    EXPECT_FALSE(parseAddOptions({"kprobe:a", "kprobe:b"}));
    auto ma = parseAddOptions({"kprobe:vfs_read", "--maxactive", "8"});
    ASSERT_FALSE(ma);
    EXPECT_THAT(ma.error().message, HasSubstr("kretprobe: and syscall: probes"));
    // A syscall: probe is a kretprobe too: add took its --maxactive as a mistake.
    auto sys = parseAddOptions({"syscall:openat", "--maxactive", "8"});
    ASSERT_TRUE(sys) << sys.error().message;
    EXPECT_EQ(sys->spec.maxactive, 8u);
}

// add sends no fetch program or predicate: refused with the reason, not dropped in silence.
TEST(AddOptions, FetchArgumentsAndPredicatesAreRefused) {
    for (const std::string spec :
         {"uprobe:libc:malloc size=$arg1", "kprobe:vfs_read if $comm == \"ls\""}) {
        auto o = parseAddOptions({spec, "--persist"});
        ASSERT_FALSE(o) << spec;
        EXPECT_THAT(o.error().message, HasSubstr("delivers no records")) << spec;
        EXPECT_THAT(o.error().message, HasSubstr("probectl trace")) << spec;
    }
    auto o = parseAddOptions({"uprobe:libc:malloc size=$arg1"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr("add 'uprobe:libc:malloc' to count hits"));
}

// A glob is refused by the CLI with what a user can do (it once named a C++ class).
TEST(AddOptions, AGlobIsRefusedWithTheCommandThatListsItsMatches) {
    const std::pair<const char*, const char*> cases[] = {
        {"kprobe:vfs_*", "`probectl symbols 'vfs_*'` lists its matches"},
        {"uretprobe:/bin/true:ma?n", "`probectl symbols '/bin/true:ma?n'` lists its matches"},
        {"syscall:read*", "add them one at a time"},
    };
    for (const auto& [spec, part] : cases) {
        auto o = parseAddOptions({spec, "--persist"});
        ASSERT_FALSE(o) << spec;
        EXPECT_THAT(o.error().message, HasSubstr("add takes one probe, not a glob")) << spec;
        EXPECT_THAT(o.error().message, HasSubstr(part)) << spec;
        EXPECT_THAT(o.error().message, Not(HasSubstr("SpecExpander"))) << spec;
    }
}

// A C++ signature with a pointer that names a function of the file is one probe, no glob.
TEST(AddOptions, ACxxSignatureWithAPointerIsOneProbe) {
    const std::string spec = std::string("uprobe:") + FX_CXX_PATH + ":'fx::g(const char*)'";
    auto o = parseAddOptions({spec, "--persist"});
    ASSERT_TRUE(o) << o.error().message;
    auto g = parseAddOptions({std::string("uprobe:") + FX_CXX_PATH + ":'fx::g(*)'"});
    ASSERT_FALSE(g);
    EXPECT_THAT(g.error().message, HasSubstr("add takes one probe, not a glob"));
}

// resolve took a glob for one name: 'kprobe:vfs_*' was an "unknown kernel symbol",
// 'tracepoint:sched:*' an unknown tracepoint ("did you mean tracepoint:iommu:map") and
// 'uprobe:libc:str*' no function ("similar: sbrk, stat, ..."), though each matches many.
TEST(ResolveAndSymbolsOptions, AGlobIsRefusedWithTheCommandThatListsItsMatches) {
    const std::pair<const char*, const char*> cases[] = {
        {"kprobe:vfs_*", "`probectl symbols 'vfs_*'` lists its matches"},
        {"uretprobe:/bin/true:ma?n", "`probectl symbols '/bin/true:ma?n'` lists its matches"},
        {"tracepoint:sched:*", "`probectl symbols 'tracepoint:sched:*'` lists its matches"},
        {"syscall:read*", "resolve them one at a time"},
    };
    for (const auto& [spec, part] : cases) {
        auto o = parseResolveOptions({spec});
        ASSERT_FALSE(o) << spec;
        EXPECT_THAT(o.error().message, HasSubstr("resolve takes one probe, not a glob")) << spec;
        EXPECT_THAT(o.error().message, HasSubstr(part)) << spec;
    }
    const std::string exact = std::string("uprobe:") + FX_CXX_PATH + ":'fx::g(const char*)'";
    auto one = parseResolveOptions({exact});
    EXPECT_TRUE(one) << one.error().message;
}

TEST(RemoveOptions, IdsOrAll) {
    auto o = parseRemoveOptions({"3", "5"});
    ASSERT_TRUE(o);
    EXPECT_THAT(o->ids, ElementsAre(3u, 5u));
    auto all = parseRemoveOptions({"--all"});
    ASSERT_TRUE(all);
    EXPECT_TRUE(all->all);
    EXPECT_FALSE(parseRemoveOptions({}));
    EXPECT_FALSE(parseRemoveOptions({"--all", "3"}));
    auto bad = parseRemoveOptions({"3x"});
    ASSERT_FALSE(bad);
    EXPECT_THAT(bad.error().message, HasSubstr("'3x' is not a probe id"));
}

TEST(ProbeIdOptions, EnableDisable) {
    auto o = parseProbeIdOptions("enable", {"42"});
    ASSERT_TRUE(o);
    EXPECT_EQ(o->id, 42u);
    EXPECT_FALSE(parseProbeIdOptions("enable", {}));
    EXPECT_FALSE(parseProbeIdOptions("disable", {"1", "2"}));
    EXPECT_FALSE(parseProbeIdOptions("disable", {"-1"}));
}

TEST(ResolveAndSymbolsOptions, Parse) {
    auto r = parseResolveOptions({"syscall:execve", "--kallsyms", "k.txt", "--blacklist", ""});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->spec.kind, SpecKind::Syscall);
    EXPECT_EQ(r->kallsyms, "k.txt");
    EXPECT_EQ(r->blacklist, "");
    auto d = parseResolveOptions({"kprobe:x"});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->kallsyms, "/proc/kallsyms");
    EXPECT_FALSE(parseResolveOptions({}));

    auto s = parseSymbolsOptions({"sys_*", "--functions"});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->glob, "sys_*");
    EXPECT_TRUE(s->functions_only);
    EXPECT_FALSE(parseSymbolsOptions({}));
    EXPECT_FALSE(parseSymbolsOptions({"a", "b"}));
    // An unterminated bracket is a usage error, not a silent "no match".
    auto bad = parseSymbolsOptions({"["});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unterminated '['"), std::string::npos);
}

// `symbols ''` once listed every kernel symbol (an empty word matches as a substring).
TEST(ResolveAndSymbolsOptions, AnEmptyPatternIsRefused) {
    auto o = parseSymbolsOptions({""});
    ASSERT_FALSE(o);
    EXPECT_EQ(o.error().message,
              "the pattern is empty (an unset shell variable?): give a GLOB such as 'vfs_*', or "
              "'*' for every symbol");
    EXPECT_TRUE(parseSymbolsOptions({"*"}));
    EXPECT_TRUE(parseSymbolsOptions({"/bin/true:"})) << "PATH: lists a binary's functions";
}

// `symbols /bin/true 'ma*'` (PATH and GLOB as two words) once got the quoting hint only.
TEST(ResolveAndSymbolsOptions, PathAndGlobAsTwoWordsSaysPathColonGlob) {
    auto o = parseSymbolsOptions({"/bin/true", "ma*"});
    ASSERT_FALSE(o);
    EXPECT_THAT(o.error().message, HasSubstr("probectl symbols '/bin/true:ma*'"));
    auto kernel = parseSymbolsOptions({"vfs_*", "do_*"});
    ASSERT_FALSE(kernel);
    EXPECT_THAT(kernel.error().message, Not(HasSubstr("a binary's functions")));
}

TEST(ListOptions, RejectsArguments) {
    EXPECT_TRUE(parseListOptions({}));
    EXPECT_FALSE(parseListOptions({"extra"}));
    EXPECT_FALSE(parseListOptions({"--nope"}));
}

TEST(TraceOptions, HeaderNamesCommandAndPids) {
    // -p 1 -- true traces both: the header must say so.
    EXPECT_EQ(traceTarget("true", 42, {1}), " in 'true' (pid 42) and in pid 1");
    EXPECT_EQ(traceTarget("", 0, {1, 2}), " in pids 1, 2");
    EXPECT_EQ(traceTarget("ls", 7, {}), " in 'ls' (pid 7)");
    EXPECT_EQ(traceTarget("", 0, {}), " system-wide");
}

// --pid/--tid/--uid take comma lists and repeat; they fill the task match, not -p's tgids.
TEST(TraceOptions, TaskMatchLists) {
    auto o = parseTraceOptions({"syscall:getppid", "--pid", "10,11", "--pid=12", "--tid", "13",
                                "--uid", "root,1000", "--comm", "ls*", "--", "true"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_THAT(o->match_pids, ElementsAre(10u, 11u, 12u));
    EXPECT_THAT(o->match_tids, ElementsAre(13u));
    EXPECT_THAT(o->match_uids, ElementsAre(0u, 1000u));
    EXPECT_EQ(o->match_comm, "ls*");
    EXPECT_TRUE(o->pids.empty());
}
