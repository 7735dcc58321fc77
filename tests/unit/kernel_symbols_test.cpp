#include "probectl/kernel_symbols.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fixture_text.hpp"
#include "kernel/resolve_by_name.hpp"
#include "uapi/probectl.h"

using probectl::test::fixtureText;
using namespace probectl;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

class KernelSymbolsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto r = KernelSymbols::fromText(fixtureText("kallsyms.txt"), fixtureText("blacklist.txt"));
        ASSERT_TRUE(r.ok()) << r.error().message;
        ks = std::move(*r);
    }
    ProbeSpec spec(std::string_view text) { return parseProbeSpec(text).value(); }
    KernelSymbols ks;
};

}  // namespace

TEST_F(KernelSymbolsTest, ParsesEveryLine) {
    EXPECT_EQ(ks.size(), 32u);
    EXPECT_EQ(ks.malformedLines(), 0u);
    EXPECT_FALSE(ks.addressesHidden());
    EXPECT_TRUE(ks.hasBlacklist());
    auto getppid = ks.lookup("__x64_sys_getppid");
    ASSERT_EQ(getppid.size(), 1u);
    EXPECT_EQ(getppid[0]->addr, 0xffffffff81001000ull);
    EXPECT_EQ(getppid[0]->type, 'T');
    EXPECT_TRUE(getppid[0]->isFunction());
    EXPECT_EQ(getppid[0]->kindName(), "function");
    EXPECT_TRUE(getppid[0]->module.empty());
}

TEST_F(KernelSymbolsTest, ModuleSymbols) {
    auto m = ks.lookup("mod_func");
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0]->module, "my_module");
    EXPECT_EQ(m[0]->addr, 0xffffffffc0a01000ull);
    auto d = ks.lookup("mod_data");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0]->kindName(), "data");
}

TEST_F(KernelSymbolsTest, KindFromTypeLetter) {
    EXPECT_EQ(ks.lookup("jiffies_64")[0]->kindName(), "data");
    EXPECT_EQ(ks.lookup("linux_banner")[0]->kindName(), "rodata");
    EXPECT_EQ(ks.lookup("some_bss")[0]->kindName(), "bss");
    EXPECT_EQ(ks.lookup("weak_func")[0]->kindName(), "weak");
    EXPECT_TRUE(ks.lookup("weak_func")[0]->isFunction());
}

TEST_F(KernelSymbolsTest, MalformedLinesAreCountedNotFatal) {
    auto r = KernelSymbols::fromText("ffffffff81000000 T good\nnot a line at all really\nzz T x\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->size(), 1u);
    EXPECT_EQ(r->malformedLines(), 2u);
    auto bad = KernelSymbols::fromText("this is not kallsyms\n");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().err, EINVAL);
    EXPECT_TRUE(KernelSymbols::fromText("").ok());
}

TEST_F(KernelSymbolsTest, UniqueFunctionResolves) {
    auto r = ks.resolveFunction("vfs_read");
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)->addr, 0xffffffff81001400ull);
}

TEST_F(KernelSymbolsTest, DuplicatesAreReportedWithCandidates) {
    // Two in vmlinux, one in other_module: listing all and suggesting kprobe:0xADDR.
    auto r = ks.resolveFunction("cleanup_module_list");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOTUNIQ);
    EXPECT_THAT(r.error().message, HasSubstr("names 3 functions"));
    EXPECT_THAT(r.error().message, HasSubstr("0xffffffff81001340"));
    EXPECT_THAT(r.error().message, HasSubstr("0xffffffff81001380"));
    EXPECT_THAT(r.error().message, HasSubstr("[other_module]"));
    EXPECT_THAT(r.error().message, HasSubstr("kprobe:0xADDR"));
    EXPECT_EQ(ks.probeability(*ks.lookup("cleanup_module_list")[0]), Probeability::Duplicate);
}

TEST_F(KernelSymbolsTest, AliasesAtOneAddressAreNotDuplicates) {
    EXPECT_TRUE(ks.resolveFunction("alias_a").ok());
}

TEST_F(KernelSymbolsTest, UnknownNameSuggestsCloseOnes) {
    auto r = ks.resolveFunction("do_sys_opn");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, HasSubstr("unknown kernel symbol 'do_sys_opn'"));
    EXPECT_THAT(r.error().message, HasSubstr("did you mean: do_sys_open"));
}

TEST_F(KernelSymbolsTest, SuggestOrdersTyposThenSubstrings) {
    EXPECT_THAT(ks.suggest("vfs_reed"), ElementsAre("vfs_read"));
    auto s = ks.suggest("getppid");
    EXPECT_THAT(s, ElementsAre("__x64_sys_getppid", "__ia32_sys_getppid"));
    EXPECT_TRUE(ks.suggest("zzzzzzzzzzzzzz").empty());
    // Data symbols are never suggested for a probe.
    EXPECT_TRUE(ks.suggest("jiffies").empty());
}

TEST_F(KernelSymbolsTest, DataSymbolIsNotAFunction) {
    auto r = ks.resolveFunction("jiffies_64");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("'jiffies_64' is a data symbol, not a function"));
    EXPECT_EQ(ks.probeability(*ks.lookup("jiffies_64")[0]), Probeability::NotText);
}

// A vmlinux function in [_sinittext, _einittext) is init code, which the kernel frees after
// boot and then refuses to probe (register_kprobe: EINVAL). resolve and symbols said
// "probe-able: yes" for it, and a trace failed with the kernel's "blacklisted or
// unprobeable".
TEST(KernelSymbolsInit, InitTextIsNotProbeable) {
    auto ks = KernelSymbols::fromText(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T vfs_read\n"
        "ffffffff81000a00 T _etext\n"
        "ffffffff82000000 T _sinittext\n"
        "ffffffff82000100 T vfs_caches_init\n"
        "ffffffff82000200 T _einittext\n"
        "ffffffffc0001000 t mod_init_fn\t[mymod]\n",
        "");
    ASSERT_TRUE(ks.ok());
    EXPECT_EQ(std::string(toString(ks->probeability(*ks->lookup("vfs_caches_init")[0]))),
              "no: init code (freed after boot)");
    EXPECT_EQ(std::string(toString(ks->probeability(*ks->lookup("vfs_read")[0]))), "yes");
    EXPECT_EQ(std::string(toString(ks->probeability(*ks->lookup("mod_init_fn")[0]))), "yes");
    for (const char* text :
         {"kprobe:vfs_caches_init", "kretprobe:vfs_caches_init", "kprobe:0xffffffff82000104"}) {
        auto r = ks->resolve(*parseProbeSpec(text));
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().err, EINVAL) << text;
        EXPECT_THAT(r.error().message,
                    HasSubstr("is init code (in the kernel's .init.text), freed after boot: "
                              "the kernel refuses probes there"))
            << text;
    }
    EXPECT_TRUE(ks->resolve(*parseProbeSpec("kprobe:vfs_read")));
}

TEST_F(KernelSymbolsTest, Blacklist) {
    ASSERT_TRUE(ks.blacklisted("do_int3"));
    EXPECT_EQ(ks.blacklisted("do_int3")->start, 0xffffffff81001500ull);
    EXPECT_FALSE(ks.blacklisted("vfs_read"));
    // The range of __entry_text_start covers entry_SYSCALL_64, which is not listed by name.
    auto e = ks.blacklistedAddr(0xffffffff81002010ull);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->symbol, "__entry_text_start");
    EXPECT_FALSE(ks.blacklistedAddr(0xffffffff81002100ull));  // end is exclusive
    // "SYMBOL [module]" lines keep the symbol alone; garbage lines are skipped.
    EXPECT_TRUE(ks.blacklisted("mod_func"));
    EXPECT_EQ(ks.probeability(*ks.lookup("exc_int3")[0]), Probeability::Blacklisted);
    EXPECT_EQ(ks.probeability(*ks.lookup("vfs_read")[0]), Probeability::Ok);
}

TEST_F(KernelSymbolsTest, SyscallNames) {
    EXPECT_EQ(ks.syscallSymbol("getppid").value(), "__x64_sys_getppid");
    EXPECT_EQ(ks.syscallSymbol("oldcall").value(), "__se_sys_oldcall");
    EXPECT_EQ(ks.syscallSymbol("ancient").value(), "sys_ancient");
    auto r = ks.syscallSymbol("opnat");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, HasSubstr("unknown syscall 'opnat'"));
    EXPECT_THAT(r.error().message, HasSubstr("did you mean: openat"));
}

TEST_F(KernelSymbolsTest, SymbolAtAddress) {
    const KernelSymbol* s = ks.symbolAt(0xffffffff81001410ull);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->name, "vfs_read");
    EXPECT_EQ(ks.symbolAt(0x1000), nullptr);
}

TEST_F(KernelSymbolsTest, SymbolAtIsNeverDataOrPastTheEnd) {
    // The nearest symbol below is data: the address is in data, not in a function.
    EXPECT_EQ(ks.symbolAt(0xffffffff82000000ull), nullptr);  // jiffies_64 itself
    EXPECT_EQ(ks.symbolAt(0xffffffff82000010ull), nullptr);
    // An end marker is not a function.
    EXPECT_EQ(ks.symbolAt(0xffffffff81002200ull), nullptr);  // after __entry_text_end
    // Below every symbol / past the last one.
    EXPECT_EQ(ks.symbolAt(0x1234), nullptr);
    EXPECT_EQ(ks.symbolAt(0xffffffffffffffffull), nullptr);
    // Past the last symbol even when it is text: no next symbol bounds its size.
    auto t = KernelSymbols::fromText("ffffffff81000000 T a\nffffffffc0a01000 t last\t[m]\n");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->symbolAt(0xffffffffffffffffull), nullptr);
    ASSERT_NE(t->symbolAt(0xffffffff81000010ull), nullptr);
    // Text still found, aliases included.
    ASSERT_NE(ks.symbolAt(0xffffffff810013c4ull), nullptr);
    EXPECT_EQ(ks.symbolAt(0xffffffff810013c4ull)->name, "alias_a");
}

TEST_F(KernelSymbolsTest, ResolveAddressOutsideFunctionsIsRefused) {
    for (const char* text : {"kprobe:0xffffffff82000000", "kretprobe:0x1234",
                             "kprobe:0xffffffffffffffff", "kprobe:0xffffffff81002200"}) {
        auto r = ks.resolve(spec(text));
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().err, EINVAL);
        EXPECT_THAT(r.error().message, HasSubstr("is not inside any function")) << text;
    }
    auto pfx = ks.resolve(spec("kprobe:0xffffffff81000ff4"));
    ASSERT_FALSE(pfx);
    EXPECT_THAT(pfx.error().message, HasSubstr("padding"));
}

TEST_F(KernelSymbolsTest, KretprobeByAddressMustBeAtEntry) {
    auto mid = ks.resolve(spec("kretprobe:0xffffffff81001410"));
    ASSERT_FALSE(mid);
    EXPECT_THAT(mid.error().message, HasSubstr("a kretprobe must be at a function's entry: "
                                               "0xffffffff81001410 is vfs_read+0x10"));
    auto entry = ks.resolve(spec("kretprobe:0xffffffff81001400"));
    ASSERT_TRUE(entry) << entry.error().message;
    EXPECT_EQ(entry->symbol_offset, 0u);
    // IBT kernels: the entry after ENDBR (sym+4) is accepted.
    auto ibt = ks.resolve(spec("kretprobe:0xffffffff81001404"));
    ASSERT_TRUE(ibt) << ibt.error().message;
    EXPECT_EQ(ibt->symbol_offset, 4u);
}

TEST_F(KernelSymbolsTest, GlobMatch) {
    std::vector<std::string> names;
    for (const auto* s : ks.match("__[xi]*sys_getppid"))
        names.push_back(s->name);
    EXPECT_THAT(names, ElementsAre("__x64_sys_getppid", "__ia32_sys_getppid"));
}

TEST_F(KernelSymbolsTest, ResolveKprobeByName) {
    auto r = ks.resolve(spec("kprobe:vfs_read+4"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->request.kind, ProbeKind::Kprobe);
    EXPECT_EQ(r->request.symbol, "vfs_read");
    EXPECT_EQ(r->request.offset, 4u);
    EXPECT_EQ(r->request.addr, 0u);
    EXPECT_EQ(r->request.flags, 0u);
    EXPECT_EQ(r->address, 0xffffffff81001404ull);
    EXPECT_EQ(r->module, "");
}

TEST_F(KernelSymbolsTest, ResolveOffsetBeyondFunction) {
    auto r = ks.resolve(spec("kprobe:vfs_read+0x80"));  // vfs_write starts at +0x80
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message,
                HasSubstr("kprobe:vfs_read+0x80: offset 0x80 is beyond 'vfs_read' "
                          "(128 bytes long)"));
}

TEST_F(KernelSymbolsTest, ResolveSyscallSetsTheSyscallFlag) {
    auto r = ks.resolve(spec("syscall:getppid"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->request.symbol, "__x64_sys_getppid");
    EXPECT_EQ(r->request.flags,
              static_cast<std::uint32_t>(PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC));
    // A fallback symbol is not a pt_regs wrapper: no SYSCALL, still written as a syscall.
    auto old = ks.resolve(spec("syscall:oldcall"));
    ASSERT_TRUE(old);
    EXPECT_EQ(old->request.symbol, "__se_sys_oldcall");
    EXPECT_EQ(old->request.flags, static_cast<std::uint32_t>(PROBECTL_PROBE_F_SYSCALL_SPEC));
}

// A kprobe on the wrapper reads the syscall's arguments (SYSCALL) but is a kprobe as the
// user wrote it: `probectl list` showed it as a syscall when one flag meant both.
TEST_F(KernelSymbolsTest, AKprobeOnASyscallWrapperIsNotWrittenAsASyscall) {
    for (const char* text : {"kprobe:__x64_sys_getppid", "kretprobe:__x64_sys_getppid"}) {
        auto r = ks.resolve(spec(text));
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ(r->request.flags, static_cast<std::uint32_t>(PROBECTL_PROBE_F_SYSCALL)) << text;
        auto fast = resolveByName(spec(text));
        ASSERT_TRUE(fast) << text;
        EXPECT_EQ(fast->request.flags, static_cast<std::uint32_t>(PROBECTL_PROBE_F_SYSCALL))
            << text;
    }
}

// A real x86-64 syscall missing from this kernel's symbols is not "unknown".
TEST_F(KernelSymbolsTest, ResolveSyscallTheKernelLacks) {
    auto r = ks.resolve(spec("syscall:uselib"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message,
                HasSubstr("syscall:uselib: this kernel has no syscall 'uselib' (x86-64 number "
                          "134): no __x64_sys_uselib"));
}

// One record per call (arguments and return value): a kretprobe; exit_group never returns,
// so its kretprobe would never fire: a kprobe, without maxactive.
TEST_F(KernelSymbolsTest, ResolveSyscallIsAKretprobeUnlessItNeverReturns) {
    ProbeSpec s = spec("syscall:getppid");
    s.maxactive = 32;
    auto r = ks.resolve(s);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->request.kind, ProbeKind::Kretprobe);
    EXPECT_EQ(r->request.maxactive, 32u);
    ProbeSpec e = spec("syscall:exit_group");
    e.maxactive = 32;
    auto x = ks.resolve(e);
    ASSERT_TRUE(x) << x.error().message;
    EXPECT_EQ(x->request.kind, ProbeKind::Kprobe);
    EXPECT_EQ(x->request.maxactive, 0u);
}

TEST_F(KernelSymbolsTest, ResolveKretprobeCarriesMaxactive) {
    ProbeSpec s = spec("kretprobe:do_sys_openat2");
    s.maxactive = 64;
    auto r = ks.resolve(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->request.kind, ProbeKind::Kretprobe);
    EXPECT_EQ(r->request.maxactive, 64u);
    s.maxactive = PROBECTL_MAXACTIVE_MAX + 1;
    EXPECT_FALSE(ks.resolve(s));
}

TEST_F(KernelSymbolsTest, ResolveErrorsNameTheSpecAndSymbol) {
    auto bl = ks.resolve(spec("kprobe:do_int3"));
    ASSERT_FALSE(bl);
    EXPECT_THAT(bl.error().message, HasSubstr("kprobe:do_int3: 'do_int3' is in the kprobes "
                                              "blacklist"));
    auto range = ks.resolve(spec("kprobe:entry_SYSCALL_64"));
    ASSERT_FALSE(range);
    EXPECT_THAT(range.error().message, HasSubstr("blacklist range of '__entry_text_start'"));
    auto dup = ks.resolve(spec("kretprobe:cleanup_module_list"));
    ASSERT_FALSE(dup);
    EXPECT_THAT(dup.error().message, HasSubstr("kretprobe:cleanup_module_list: "));
    EXPECT_THAT(dup.error().message, HasSubstr("pick one with kretprobe:0xADDR"));
    auto kdup = ks.resolve(spec("kprobe:cleanup_module_list"));
    ASSERT_FALSE(kdup);
    EXPECT_THAT(kdup.error().message, HasSubstr("pick one with kprobe:0xADDR"));
    auto unknown = ks.resolve(spec("syscall:nosuch"));
    ASSERT_FALSE(unknown);
    EXPECT_THAT(unknown.error().message, HasSubstr("syscall:nosuch: unknown syscall"));
}

TEST_F(KernelSymbolsTest, ResolveAddress) {
    auto r = ks.resolve(spec("kprobe:0xffffffff81001404"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->request.addr, 0xffffffff81001404ull);
    EXPECT_TRUE(r->request.symbol.empty());
    EXPECT_EQ(r->symbol, "vfs_read");
    auto bl = ks.resolve(spec("kprobe:0xffffffff81001510"));
    ASSERT_FALSE(bl);
    EXPECT_THAT(bl.error().message, HasSubstr("kprobes blacklist (do_int3)"));
}

TEST(KernelSymbolsHidden, ZeroAddressesAreDetected) {
    auto r = KernelSymbols::fromText(fixtureText("kallsyms_hidden.txt"),
                                     fixtureText("blacklist_hidden.txt"));
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->addressesHidden());
    // Names still resolve (the kernel resolves them), blacklist by name still works.
    auto ok = r->resolve(parseProbeSpec("kprobe:vfs_read").value());
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->address, 0u);
    EXPECT_FALSE(r->resolve(parseProbeSpec("kprobe:do_int3").value()));
    // An address cannot be checked against anything.
    auto addr = r->resolve(parseProbeSpec("kprobe:0xffffffff81001404").value());
    ASSERT_FALSE(addr);
    EXPECT_EQ(addr.error().err, EACCES);
    EXPECT_THAT(addr.error().message, HasSubstr("addresses hidden: run as root / kptr_restrict"));
    // Duplicates cannot be told apart by address: still reported.
    auto dup = r->resolveFunction("cleanup_module_list");
    ASSERT_FALSE(dup);
    EXPECT_THAT(dup.error().message, HasSubstr("addresses hidden"));
    EXPECT_EQ(r->symbolAt(0xffffffff81001404ull), nullptr);
}

TEST(KernelSymbolsLoad, ReadsFilesAndToleratesMissingBlacklist) {
    auto r = KernelSymbols::load(std::string(PROBECTL_FIXTURES) + "/kallsyms.txt",
                                 "/nonexistent/blacklist");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->size(), 32u);
    EXPECT_FALSE(r->hasBlacklist());
    auto missing = KernelSymbols::load("/nonexistent/kallsyms");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().err, ENOENT);
    EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/kallsyms"));
}

TEST_F(KernelSymbolsTest, PaddingSymbolsAreNotProbeTargets) {
    const auto pfx = ks.lookup("__pfx___x64_sys_getppid");
    ASSERT_EQ(pfx.size(), 1u);
    EXPECT_EQ(ks.probeability(*pfx[0]), Probeability::Padding);
    auto r = ks.resolveFunction("__pfx___x64_sys_getppid");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("probe '__x64_sys_getppid'"));
    for (const auto& s : ks.suggest("x64_sys_getppid"))
        EXPECT_FALSE(s.starts_with("__pfx_")) << s;
}
