// Glob specs: the grammar takes * ? [...] in names, and SpecExpander turns a kernel glob
// into one spec per probeable name, skipping (with the reason) blacklisted, data,
// duplicate names and leaving __pfx_ padding out; fetch arguments and predicates follow
// every name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "probectl/elf_resolver.hpp"
#include "probectl/expand.hpp"
#include "probectl/session.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"
#include "readelf_util.hpp"
#include "target/no_dwarf_note.hpp"

using probectl::ElfResolver;
using probectl::hasGlob;
using probectl::KernelSymbols;
using probectl::mergeNoDwarfNotes;
using probectl::noDwarfNote;
using probectl::parseProbeSpec;
using probectl::resolveUserSpec;
using probectl::SpecExpander;

namespace {

const char* const kKallsyms =
    "ffffffff81000100 T do_sys_open\n"
    "ffffffff810000f0 t __pfx_do_sys_open\n"
    "ffffffff81000200 t do_sys_poll\n"
    "ffffffff81000300 T do_syscall_64\n"
    "ffffffff81000400 t do_sys_dup\n"
    "ffffffff81000500 t do_sys_dup\n"
    "ffffffff82000000 D do_sys_table\n"
    "ffffffff81000600 T vfs_read\n"
    "ffffffff81000700 T __x64_sys_getppid\n"
    "ffffffff81000800 T __x64_sys_getpid\n"
    "ffffffff81000900 T __x64_sys_read\n"
    "ffffffff81000a00 T _etext\n";
const char* const kBlacklist = "0xffffffff81000300-0xffffffff81000380\tdo_syscall_64\n";

}  // namespace

TEST(Expand, GrammarTakesGlobsInNames) {
    for (const char* s :
         {"kprobe:vfs_*", "kretprobe:do_sys_?pen", "syscall:get*",
          "tracepoint:sched:sched_process_*", "uprobe:/bin/x:ag_[a-z]*", "uretprobe:libc:mall*"}) {
        auto p = parseProbeSpec(s);
        ASSERT_TRUE(p.ok()) << s << ": " << p.error().render();
        EXPECT_TRUE(hasGlob(*p)) << s;
    }
    EXPECT_FALSE(hasGlob(*parseProbeSpec("kprobe:vfs_read")));
    EXPECT_FALSE(parseProbeSpec("kprobe:vfs_*+4").ok());
    EXPECT_FALSE(parseProbeSpec("kprobe:vfs_[ab").ok());
}

TEST(Expand, KernelGlobSkipsWhatCannotBeProbed) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    auto e = x.expand(*parseProbeSpec("kprobe:do_sys* n=$arg1:u32 if n > 2"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    ASSERT_EQ(e->specs.size(), 2u);
    EXPECT_EQ(e->specs[0].text, "kprobe:do_sys_open n=$arg1:u32 if n > 2");
    EXPECT_EQ(e->specs[1].symbol, "do_sys_poll");
    ASSERT_EQ(e->specs[1].fetch_args.size(), 1u);
    EXPECT_EQ(e->specs[1].predicate, "n > 2");
    std::map<std::string, std::string> skipped;
    for (const auto& s : e->skipped)
        skipped[s.name] = s.reason;
    EXPECT_EQ(skipped, (std::map<std::string, std::string>{{"do_sys_dup", "duplicate"},
                                                           {"do_sys_table", "data"},
                                                           {"do_syscall_64", "blacklisted"}}));
    EXPECT_EQ(e->matched(), 5u);

    probectl::AttachReport r;
    r.spec = "kprobe:do_sys*";
    r.glob = true;
    r.ids = {1, 2};
    r.matched = e->matched();
    r.skipped = e->skipped;
    r.skipped.push_back({"do_sys_open", "refused by the kernel", "EINVAL"});
    r.skipped.push_back({"do_sys_x", "blacklisted", ""});
    EXPECT_EQ(r.summary(),
              "kprobe:do_sys*: attached 2 of 5; 5 refused: 2 blacklisted, 1 data, 1 duplicate, "
              "1 refused by the kernel");
    EXPECT_NE(r.details().find("  do_sys_open: refused by the kernel: EINVAL\n"),
              std::string::npos);
}

// 7.2 lists its syscall metadata as text ('t') in the data section: a glob skipped it as
// "refused by the kernel" there and as "data" on 6.12. A text symbol outside the kernel's
// text (and init text) is data on every kernel; init text is code, but freed after boot
// (below).
TEST(Expand, TextLettersOutsideTheTextAreData) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T do_sys_open\n"
        "ffffffff81000a00 T _etext\n"
        "ffffffff82000000 T _sinittext\n"
        "ffffffff82000100 t do_sys_init\n"
        "ffffffff82000200 T _einittext\n"
        "ffffffff83000000 t do_sys_meta\n",
        "");
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    auto e = x.expand(*parseProbeSpec("kprobe:do_sys_*"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    std::vector<std::string> names;
    for (const auto& s : e->specs)
        names.push_back(s.symbol);
    EXPECT_EQ(names, (std::vector<std::string>{"do_sys_open"}));
    ASSERT_EQ(e->skipped.size(), 2u);
    EXPECT_EQ(e->skipped[0].name, "do_sys_init");
    EXPECT_EQ(e->skipped[0].reason, "init code");
    EXPECT_EQ(e->skipped[1].name, "do_sys_meta");
    EXPECT_EQ(e->skipped[1].reason, "data");
}

TEST(Expand, SyscallGlobNamesSyscalls) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    auto e = x.expand(*parseProbeSpec("syscall:getp*"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    ASSERT_EQ(e->specs.size(), 2u);
    EXPECT_EQ(e->specs[0].text, "syscall:getpid");
    EXPECT_EQ(e->specs[1].text, "syscall:getppid");
    auto none = x.expand(*parseProbeSpec("syscall:nosuch*"));
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().message, "syscall:nosuch*: the glob matches no syscall");
}

// A syscall glob means x86-64's syscalls by their names: kallsyms also has the wrappers of
// 32-bit syscalls (chown16, clock_gettime32), which no 64-bit program calls, and the old
// functions of renamed ones (__x64_sys_uname; x86-64's uname is __x64_sys_newuname).
TEST(Expand, SyscallGlobMeansX64Syscalls) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T __x64_sys_uname\n"
        "ffffffff81000200 T __x64_sys_newuname\n"
        "ffffffff81000300 T __x64_sys_chown16\n"
        "ffffffff81000400 T __x64_sys_umount\n"
        "ffffffff81000500 T __x64_sys_chown\n"
        "ffffffff81000600 T __x64_sys_clock_gettime32\n"
        "ffffffff81000700 T __x64_sys_oldumount\n"
        "ffffffff81000a00 T _etext\n",
        "");
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    auto e = x.expand(*parseProbeSpec("syscall:*"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    std::vector<std::string> names;
    for (const auto& s : e->specs)
        names.push_back(s.text);
    EXPECT_EQ(names,
              (std::vector<std::string>{"syscall:chown", "syscall:umount2", "syscall:uname"}));
    EXPECT_TRUE(e->skipped.empty());

    auto uname = ks->resolve(*parseProbeSpec("syscall:uname"));
    ASSERT_TRUE(uname.ok()) << uname.error().describe();
    EXPECT_EQ(uname->symbol, "__x64_sys_newuname");
    auto umount = ks->resolve(*parseProbeSpec("syscall:umount2"));
    ASSERT_TRUE(umount.ok()) << umount.error().describe();
    EXPECT_EQ(umount->symbol, "__x64_sys_umount");
    auto kernel_name = ks->resolve(*parseProbeSpec("syscall:newuname"));
    ASSERT_FALSE(kernel_name.ok());
    EXPECT_NE(kernel_name.error().message.find("use syscall:uname"), std::string::npos)
        << kernel_name.error().message;
    // The hint is the whole error: no errno text after it ("(No such file or directory)").
    EXPECT_EQ(kernel_name.error().describe(),
              "syscall:newuname: 'newuname' is the kernel's name of the x86-64 syscall 'uname': "
              "use syscall:uname");
}

namespace {

// Adds every spec, with ids from 1.
class CountingTracer : public probectl::Tracer {
  public:
    std::string_view backend() const override { return "kernel"; }
    probectl::Result<std::uint32_t> add(const probectl::ProbeSpec&) override { return ++added; }
    probectl::Result<void> start() override { return {}; }
    probectl::Result<std::size_t> poll(int, const probectl::EventCallback&) override {
        return std::size_t{0};
    }
    bool done() const override { return true; }
    probectl::Result<probectl::SessionStats> stop(const probectl::EventCallback&) override {
        return probectl::SessionStats{};
    }
    pid_t commandPid() const override { return -1; }
    std::optional<int> commandStatus() const override { return std::nullopt; }
    std::optional<int> terminateCommand(int) override { return std::nullopt; }
    std::uint32_t added = 0;
};

}  // namespace

// Two specs on one location report each hit twice: a glob after a name skips it ("attached
// twice"); a name after a glob is added (its arguments may differ) with a note saying so.
// Overlapping specs once printed every event twice without a word.
TEST(Expand, OverlappingSpecsAreSaid) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    {
        CountingTracer t;
        SpecExpander x(0, &*ks);
        auto glob = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
        ASSERT_TRUE(glob.ok()) << glob.error().describe();
        EXPECT_TRUE(glob->notes.empty());
        auto one = x.attach(t, *parseProbeSpec("kprobe:do_sys_open n=$arg1"));
        ASSERT_TRUE(one.ok()) << one.error().describe();
        EXPECT_EQ(t.added, 3u);
        ASSERT_EQ(one->notes.size(), 1u);
        EXPECT_EQ(one->notes[0],
                  "kprobe:do_sys_open n=$arg1: an earlier spec probes kprobe:do_sys_open as well: "
                  "each hit there is reported once per spec");
        auto same = x.attach(t, *parseProbeSpec("kprobe:do_sys_poll"));
        ASSERT_TRUE(same.ok());
        ASSERT_EQ(same->notes.size(), 1u);
        EXPECT_EQ(same->notes[0],
                  "kprobe:do_sys_poll: an earlier spec probes it as well: each hit there is "
                  "reported once per spec");
        auto other = x.attach(t, *parseProbeSpec("kprobe:vfs_read"));
        ASSERT_TRUE(other.ok());
        EXPECT_TRUE(other->notes.empty());
    }
    {
        CountingTracer t;
        SpecExpander x(0, &*ks);
        ASSERT_TRUE(x.attach(t, *parseProbeSpec("kprobe:do_sys_open")).ok());
        auto glob = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
        ASSERT_TRUE(glob.ok());
        EXPECT_EQ(t.added, 2u);
        EXPECT_NE(glob->summary().find("1 attached twice"), std::string::npos) << glob->summary();
    }
}

namespace {

// Refuses every spec, as a kernel refuses data symbols.
class RefusingTracer : public CountingTracer {
  public:
    probectl::Result<std::uint32_t> add(const probectl::ProbeSpec& s) override {
        return probectl::makeError(EINVAL, "add " + s.symbol + ": refused");
    }
};

}  // namespace

// -v listed nothing when a glob attached none of its names: the expander keeps their
// details for the failure too.
TEST(Expand, AGlobThatAttachedNoneKeepsItsDetails) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    RefusingTracer t;
    SpecExpander x(0, &*ks);
    auto r = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(x.failedDetails().find("  do_sys_open: refused by the kernel: add do_sys_open: "
                                     "refused\n"),
              std::string::npos)
        << x.failedDetails();
    EXPECT_NE(x.failedDetails().find("  do_syscall_64: blacklisted\n"), std::string::npos);
    CountingTracer ok;
    ASSERT_TRUE(x.attach(ok, *parseProbeSpec("kprobe:do_sys*")).ok());
    EXPECT_EQ(x.failedDetails(), "");
}

namespace {

// Refuses as a latency aggregation does: exit and exit_group (probectl's own check, a usage
// error naming the call), getpid as probectl refuses a spec the backend cannot run, and
// read as the kernel refuses a probe.
class LatencyTracer : public CountingTracer {
  public:
    probectl::Result<std::uint32_t> add(const probectl::ProbeSpec& s) override {
        auto usage = [](std::string msg) {
            probectl::Error e = probectl::makeError(EINVAL, std::move(msg));
            e.usage = true;
            return e;
        };
        if (s.symbol == "exit" || s.symbol == "exit_group")
            return usage("syscall:" + s.symbol + ": " + s.symbol +
                         " never returns (the task ends in it), so it has no latency: count or "
                         "trace it instead, or leave it out");
        if (s.symbol == "getpid")
            return usage(s.text + ": no key or value named 'x'");
        if (s.symbol == "read")
            return probectl::makeError(EINVAL, "add __x64_sys_read: Invalid argument");
        return ++added;
    }
};

}  // namespace

// The summary said "refused by the kernel" of the names probectl itself refused (latency of
// exit and exit_group, which never return): it names who refused and why.
TEST(Expand, RefusalsNameWhoRefused) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T __x64_sys_exit\n"
        "ffffffff81000200 T __x64_sys_exit_group\n"
        "ffffffff81000300 T __x64_sys_getpid\n"
        "ffffffff81000400 T __x64_sys_getppid\n"
        "ffffffff81000500 T __x64_sys_read\n"
        "ffffffff81000a00 T _etext\n",
        "");
    ASSERT_TRUE(ks.ok());
    LatencyTracer t;
    SpecExpander x(0, &*ks);
    auto r = x.attach(t, *parseProbeSpec("syscall:*"));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->summary(),
              "syscall:*: attached 1 of 5; 4 refused: 2 never return (exit, exit_group), 1 "
              "refused by probectl, 1 refused by the kernel");
    // The reason once: the refusal says "never returns" (-v once said it twice, "exit_group:
    // never returns: ... exit_group never returns", seen failing).
    EXPECT_NE(r->details().find("  exit_group: syscall:exit_group: exit_group never returns (the "
                                "task ends in it), so it has no latency: count or trace it "
                                "instead, or leave it out\n"),
              std::string::npos)
        << r->details();
    EXPECT_EQ(r->details().find("never returns: "), std::string::npos) << r->details();
    EXPECT_NE(r->details().find("  getpid: refused by probectl: syscall:getpid: no key"),
              std::string::npos)
        << r->details();
    // exit alone: the glob attaches none, and says why.
    auto exits = x.attach(t, *parseProbeSpec("syscall:exit*"));
    ASSERT_FALSE(exits.ok());
    EXPECT_EQ(exits.error().message,
              "syscall:exit*: none attached (attached 0 of 2; 2 refused: 2 never return (exit, "
              "exit_group)); first refusal: syscall:exit: exit never returns (the task ends in "
              "it), so it has no latency: count or trace it instead, or leave it out");
}

// A stop signal while a glob of thousands of names attaches ends it there: the names not
// tried are said, and stopping before the first one is no "none attached" failure.
TEST(Expand, StopWhenEndsAGlobBetweenItsNames) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    {
        CountingTracer t;
        SpecExpander x(0, &*ks);
        x.stopWhen([&] { return t.added >= 1; });
        auto r = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
        ASSERT_TRUE(r.ok()) << r.error().describe();
        EXPECT_TRUE(r->stopped);
        EXPECT_EQ(t.added, 1u);
        EXPECT_EQ(r->ids.size(), 1u);
        EXPECT_NE(r->summary().find("kprobe:do_sys*: attached 1 of 5; stopped: 1 not tried"),
                  std::string::npos)
            << r->summary();
    }
    {
        CountingTracer t;
        SpecExpander x(0, &*ks);
        x.stopWhen([] { return true; });
        auto r = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
        ASSERT_TRUE(r.ok()) << r.error().describe();
        EXPECT_TRUE(r->stopped);
        EXPECT_EQ(t.added, 0u);
        EXPECT_EQ(x.failedDetails(), "");
    }
    {
        CountingTracer t;
        SpecExpander x(0, &*ks);
        auto r = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
        ASSERT_TRUE(r.ok());
        EXPECT_FALSE(r->stopped);
        EXPECT_EQ(r->summary().find("stopped"), std::string::npos);
    }
}

// uprobe:PATH:GLOB matches C++ functions by their demangled names, a function template's
// without its return type ("int sum<int>(int, int)"): "sum*" matched none of them, only
// their mangled names ("_Z3sum*") did. Each is named as a user writes it, quoted in the
// spec's text (tables and JSON label probes with it), not by its mangled symbol.
TEST(Expand, UserGlobMatchesCxxTemplateFunctions) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto names = [&](const std::string& glob) {
        std::set<std::string> out;
        auto e = x.expand(*parseProbeSpec("uprobe:" + path + ":" + glob));
        EXPECT_TRUE(e.ok()) << glob << ": " << (e.ok() ? "" : e.error().describe());
        if (e.ok())
            for (const auto& s : e->specs) {
                EXPECT_EQ(s.text, "uprobe:" + path + ":'" + s.symbol + "'");
                out.insert(s.symbol);
            }
        return out;
    };
    EXPECT_EQ(names("sum*"), (std::set<std::string>{"sum<int>(int, int)", "sum<long>(long, long)",
                                                    "sum(int, int)"}));
    EXPECT_EQ(names("'sum<*>'"),
              (std::set<std::string>{"sum<int>(int, int)", "sum<long>(long, long)"}));
    EXPECT_EQ(names("'fx::tw*'"), (std::set<std::string>{"fx::twice(int)", "fx::twice(double)"}));
    EXPECT_EQ(names("'fx::Counter::*'"), (std::set<std::string>{"fx::Counter::add(long) const"}));
}

// A glob-like signature of no function whose name has overloads: the error lists them.
TEST(Expand, UserSignatureOfNoOverloadListsTheOverloads) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    const std::string text = "uprobe:" + path + ":'fx::g(int*)'";
    auto e = x.expand(*parseProbeSpec(text));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().err, ENOENT);
    EXPECT_EQ(e.error().message,
              text + ": no function 'fx::g(int*)' in " + path +
                  "; the functions named 'fx::g' take other parameters: fx::g(char*), "
                  "fx::g(char const*)");
}

// A C++ function whose readable name has a '*' (a pointer parameter) is named by it too, not
// by its mangled symbol (a table's row read "_ZN2fx5firstEPKc"): that name is the function,
// no glob.
TEST(Expand, UserGlobNamesPointerParametersReadably) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto e = x.expand(*parseProbeSpec("uprobe:" + path + ":'fx::fi*'"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    ASSERT_EQ(e->specs.size(), 1u);
    EXPECT_EQ(e->specs[0].symbol, "fx::first(char const*)");
    EXPECT_EQ(e->specs[0].text, "uprobe:" + path + ":'fx::first(char const*)'");
    auto again = x.expand(e->specs[0]);
    ASSERT_TRUE(again.ok()) << again.error().describe();
    EXPECT_TRUE(again->exact);
    ASSERT_EQ(again->specs.size(), 1u);
    EXPECT_EQ(again->specs[0].text, e->specs[0].text);

    auto g = x.expand(*parseProbeSpec("uprobe:" + path + ":'fx::g*'"));
    ASSERT_TRUE(g.ok()) << g.error().describe();
    std::set<std::string> names;
    for (const auto& s : g->specs)
        names.insert(s.symbol);
    EXPECT_EQ(names, (std::set<std::string>{"fx::g(char*)", "fx::g(char const*)"}));
}

// A name that names a function exactly is that function, though it has a '*': read as a
// glob, "fx::g(char*)" probed g(char const*) too, and "fx::g(const char*)", as people write
// it, matched nothing. Without an exact match it is still a glob.
TEST(Expand, UserCxxSignatureWithAPointerIsOneFunction) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto elf = ElfResolver::open(path);
    ASSERT_TRUE(elf.ok());
    const std::pair<const char*, const char*> cases[] = {
        {"fx::g(char*)", "_ZN2fx1gEPc"},
        {"fx::g(char *)", "_ZN2fx1gEPc"},
        {"fx::g(const char*)", "_ZN2fx1gEPKc"},
        {"fx::g(char const*)", "_ZN2fx1gEPKc"},
    };
    for (const auto& [name, symbol] : cases) {
        const std::string text = "uprobe:" + path + ":'" + name + "'";
        auto e = x.expand(*parseProbeSpec(text));
        ASSERT_TRUE(e.ok()) << name << ": " << e.error().describe();
        EXPECT_TRUE(e->exact) << name;
        ASSERT_EQ(e->specs.size(), 1u) << name;
        EXPECT_EQ(e->specs[0].text, text) << "the spec as written";
        auto t = resolveUserSpec(e->specs[0]);
        ASSERT_TRUE(t.ok()) << name << ": " << t.error().message;
        const auto want = elf->functionsNamed(symbol);
        ASSERT_EQ(want.size(), 1u);
        EXPECT_EQ(t->vaddr, want[0]->value) << name;
    }
    auto glob = x.expand(*parseProbeSpec("uprobe:" + path + ":'fx::g(*)'"));
    ASSERT_TRUE(glob.ok()) << glob.error().describe();
    EXPECT_FALSE(glob->exact);
    EXPECT_EQ(glob->specs.size(), 2u);
    // +OFFSET: on the function it names; a glob still takes none.
    auto off_spec = parseProbeSpec("uprobe:" + path + ":'fx::g(char*)'+1");
    ASSERT_TRUE(off_spec.ok()) << off_spec.error().message;
    auto off = x.expand(*off_spec);
    ASSERT_TRUE(off.ok()) << off.error().describe();
    EXPECT_TRUE(off->exact);
    auto bad_spec = parseProbeSpec("uprobe:" + path + ":'fx::g(*)'+1");
    ASSERT_TRUE(bad_spec.ok()) << bad_spec.error().message;
    auto bad = x.expand(*bad_spec);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("a glob takes no +OFFSET"), std::string::npos)
        << bad.error().message;
}

// An operator's name is that operator, brackets and '*' or not: 'fx::Vec::operator[](unsigned
// long)' was refused as a glob ("unterminated '['"), and '->*' read as one. A name spelled
// with other words for its integer types is the same function.
TEST(Expand, UserCxxOperatorNamesAreOneFunction) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto elf = ElfResolver::open(path);
    ASSERT_TRUE(elf.ok());
    const std::pair<const char*, const char*> cases[] = {
        {"fx::Vec::operator[](unsigned long)", "_ZN2fx3VecixEm"},
        {"fx::Vec::operator[](long unsigned int) const", "_ZNK2fx3VecixEm"},
        {"fx::Vec::operator->*", "_ZNK2fx3VecpmEl"},
        {"fx::Vec::operator->*(long int) const", "_ZNK2fx3VecpmEl"},
        {"fx::Vec::operator new[]", "_ZN2fx3VecnaEm"},
        {"fx::Vec::operator delete[](void *)", "_ZN2fx3VecdaEPv"},
    };
    for (const auto& [name, symbol] : cases) {
        const std::string text = "uprobe:" + path + ":'" + name + "'";
        auto spec = parseProbeSpec(text);
        ASSERT_TRUE(spec.ok()) << name << ": " << spec.error().message;
        auto e = x.expand(*spec);
        ASSERT_TRUE(e.ok()) << name << ": " << e.error().describe();
        EXPECT_TRUE(e->exact) << name;
        ASSERT_EQ(e->specs.size(), 1u) << name;
        auto t = resolveUserSpec(e->specs[0]);
        ASSERT_TRUE(t.ok()) << name << ": " << t.error().message;
        const auto want = elf->functionsNamed(symbol);
        ASSERT_EQ(want.size(), 1u);
        EXPECT_EQ(t->vaddr, want[0]->value) << name;
    }
    // A glob over them is still one, and a name with an unterminated '[' that names no
    // function is still refused as a glob.
    auto glob = x.expand(*parseProbeSpec("uprobe:" + path + ":'fx::Vec::operator*'"));
    ASSERT_TRUE(glob.ok()) << glob.error().describe();
    EXPECT_FALSE(glob->exact);
    EXPECT_EQ(glob->specs.size(), 8u);
    auto bad = x.expand(*parseProbeSpec("uprobe:" + path + ":'fx::Vec::nothing[](int)'"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("unterminated '['"), std::string::npos)
        << bad.error().message;
}

// The readable name of an expanded C++ function resolves to the function the glob matched:
// the same file offset as its mangled symbol.
TEST(Expand, UserGlobNamesResolveToTheSymbolTheyName) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto e = x.expand(*parseProbeSpec("uprobe:" + path + ":'*'"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    auto elf = ElfResolver::open(path);
    ASSERT_TRUE(elf.ok());
    std::size_t cxx = 0;
    for (const auto& s : e->specs) {
        auto readable = resolveUserSpec(s);
        ASSERT_TRUE(readable.ok()) << s.text;
        const auto fns = elf->functionsNamed(s.symbol);
        ASSERT_EQ(fns.size(), 1u) << s.text;
        if (fns[0]->demangled == fns[0]->name)
            continue;
        cxx++;
        auto mangled = resolveUserSpec(*parseProbeSpec("uprobe:" + path + ":" + fns[0]->name));
        ASSERT_TRUE(mangled.ok()) << fns[0]->name;
        EXPECT_EQ(readable->file_offset, mangled->file_offset) << s.text;
    }
    // 29 C++ functions (8 of them fx::Vec's operators), one of them under two names (D1, D2)
    EXPECT_EQ(cxx, 28u);
}

// Names of one address are one function: a glob probed each (memcpy and __memcpy, a local
// and a global name) and reported every call once per name. One is probed, the others are
// said as aliases, not refused.
TEST(Expand, KernelGlobProbesOneNameOfAnAddress) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T __memcpy\n"
        "ffffffff81000100 T memcpy\n"
        "ffffffff81000100 t memcpy_orig\n"
        "ffffffff81000200 T memcpy_mcsafe\n"
        "ffffffff81000a00 T _etext\n",
        "");
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    auto e = x.expand(*parseProbeSpec("kprobe:*memcpy*"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    std::vector<std::string> names;
    for (const auto& s : e->specs)
        names.push_back(s.symbol);
    EXPECT_EQ(names, (std::vector<std::string>{"memcpy", "memcpy_mcsafe"}));
    std::map<std::string, std::string> skipped;
    for (const auto& s : e->skipped) {
        EXPECT_EQ(s.reason, "alias") << s.name;
        skipped[s.name] = s.detail;
    }
    EXPECT_EQ(skipped,
              (std::map<std::string, std::string>{{"__memcpy", "same address as memcpy"},
                                                  {"memcpy_orig", "same address as memcpy"}}));

    probectl::AttachReport r;
    r.spec = "kprobe:*memcpy*";
    r.glob = true;
    r.ids = {1, 2};
    r.matched = e->matched();
    r.skipped = e->skipped;
    EXPECT_EQ(r.summary(),
              "kprobe:*memcpy*: attached 2 of 4; 2 aliases (same address as another name, "
              "probed once)");
    r.skipped.push_back({"memcpy_mcsafe", "blacklisted", ""});
    r.ids = {1};
    EXPECT_EQ(r.summary(),
              "kprobe:*memcpy*: attached 1 of 4; 2 aliases (same address as another name, "
              "probed once); 1 refused: 1 blacklisted");
}

// A C alias and a destructor's D1/D2 symbols in a real binary: one probe per address, with
// the name of fewest leading underscores (fx_scale, not __fx_scale) and, between equals, the
// global one. Every address a glob matched is probed exactly once.
TEST(Expand, UserGlobProbesOneNameOfAnAddress) {
    SpecExpander x(0, nullptr);
    const std::string path = FX_CXX_PATH;
    auto e = x.expand(*parseProbeSpec("uprobe:" + path + ":*scale*"));
    ASSERT_TRUE(e.ok()) << e.error().describe();
    ASSERT_EQ(e->specs.size(), 1u);
    EXPECT_EQ(e->specs[0].symbol, "fx_scale");
    ASSERT_EQ(e->skipped.size(), 1u);
    EXPECT_EQ(e->skipped[0].name, "__fx_scale");
    EXPECT_EQ(e->skipped[0].reason, "alias");
    EXPECT_EQ(e->skipped[0].detail, "same address as fx_scale");

    auto elf = ElfResolver::open(path);
    ASSERT_TRUE(elf.ok());
    auto d = x.expand(*parseProbeSpec("uprobe:" + path + ":'al::Shape::~*'"));
    ASSERT_TRUE(d.ok()) << d.error().describe();
    std::set<std::uint64_t> probed;
    for (const auto& s : d->specs) {
        const auto fns = elf->functionsNamed(s.symbol);
        ASSERT_EQ(fns.size(), 1u) << s.symbol;
        EXPECT_TRUE(probed.insert(fns[0]->value).second) << s.symbol << " probed twice";
    }
    EXPECT_EQ(probed.size(), 2u) << "the deleting destructor and the D1/D2 one";
    // readelf's view, independent of the resolver: the D1 and D2 symbols share an address,
    // and the one kept is the global one (or D1 when both are).
    std::map<std::string, std::pair<std::uint64_t, std::string>> dtor;
    for (const auto& s : probectl::test::readelfSymbols(path))
        if (s.name == "_ZN2al5ShapeD1Ev" || s.name == "_ZN2al5ShapeD2Ev")
            dtor[s.name] = {s.value, s.bind};
    ASSERT_EQ(dtor.size(), 2u);
    ASSERT_EQ(dtor["_ZN2al5ShapeD1Ev"].first, dtor["_ZN2al5ShapeD2Ev"].first);
    const bool d2_kept =
        dtor["_ZN2al5ShapeD2Ev"].second == "GLOBAL" && dtor["_ZN2al5ShapeD1Ev"].second != "GLOBAL";
    ASSERT_EQ(d->skipped.size(), 1u);
    EXPECT_EQ(d->skipped[0].reason, "alias");
    EXPECT_EQ(d->skipped[0].name, d2_kept ? "_ZN2al5ShapeD1Ev" : "_ZN2al5ShapeD2Ev");
}

// vmlinux's init text (__init functions: vfs_caches_init) is freed once the kernel has
// booted, and register_kprobe refuses it from then on (core_kernel_text). kallsyms still
// lists those names as text: `kprobe:vfs_*` tried them and reported each as "refused by the
// kernel: ... blacklisted or unprobeable", and `symbols`/`resolve` called them probe-able.
// A glob skips them up front, as what they are.
TEST(Expand, InitTextIsSkippedAsInitCode) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T vfs_read\n"
        "ffffffff81000a00 T _etext\n"
        "ffffffff82000000 T _sinittext\n"
        "ffffffff82000100 T vfs_caches_init\n"
        "ffffffff82000200 T _einittext\n",
        "");
    ASSERT_TRUE(ks.ok());
    SpecExpander x(0, &*ks);
    CountingTracer t;
    auto r = x.attach(t, *parseProbeSpec("kprobe:vfs_*"));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(t.added, 1u);
    EXPECT_EQ(r->summary(), "kprobe:vfs_*: attached 1 of 2; 1 refused: 1 init code");
    EXPECT_NE(r->details().find("  vfs_caches_init: init code: freed after boot\n"),
              std::string::npos)
        << r->details();
}

namespace {

// Notes two functions (do_sys_open, do_sys_poll) as static ones of a file without DWARF would.
class NoDwarfTracer : public CountingTracer {
  public:
    probectl::Result<std::uint32_t> add(const probectl::ProbeSpec& s) override {
        if (s.symbol == "do_sys_open" || s.symbol == "do_sys_poll")
            addNote(s.text + ": " + noDwarfNote(s.symbol, "/x/app"));
        return CountingTracer::add(s);
    }
};

}  // namespace

// A glob over a C program without DWARF printed one long note per static function (its
// start-up functions alone are five): one note now names them, in the place of the first.
TEST(Expand, NoDwarfNotesOfAGlobAreOne) {
    auto ks = KernelSymbols::fromText(kKallsyms, kBlacklist);
    ASSERT_TRUE(ks.ok());
    NoDwarfTracer t;
    SpecExpander x(0, &*ks);
    auto r = x.attach(t, *parseProbeSpec("kprobe:do_sys*"));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    ASSERT_EQ(r->notes.size(), 1u) << r->notes.size();
    EXPECT_EQ(r->notes[0],
              "kprobe:do_sys*: 'do_sys_open', 'do_sys_poll' are static functions and "
              "/x/app has no DWARF (.debug_info, nor a debug file with it): calls "
              "the compiler inlined into callers are not seen. Build with -g or "
              "install the debug file, and each inlined copy is probed too");
}

TEST(Expand, MergedNoDwarfNotesKeepTheOthersInOrder) {
    std::vector<std::string> notes{"a: first",
                                   "s:f: " + noDwarfNote("f", "/p"),
                                   "b: middle",
                                   "s:g: " + noDwarfNote("g", "/p"),
                                   "s:h: " + noDwarfNote("h", "/q"),
                                   "s:i: " + noDwarfNote("i", "/p"),
                                   "s:j: " + noDwarfNote("j", "/p")};
    mergeNoDwarfNotes(notes, "s:*");
    ASSERT_EQ(notes.size(), 4u);
    EXPECT_EQ(notes[0], "a: first");
    EXPECT_THAT(notes[1], ::testing::StartsWith("s:*: 'f', 'g', 'i' and 1 more are static "
                                                "functions and /p has no DWARF"));
    EXPECT_EQ(notes[2], "b: middle");
    EXPECT_EQ(notes[3], "s:h: " + noDwarfNote("h", "/q")) << "alone of its file: as it was";
}
