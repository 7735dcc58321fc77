// One route from spec to probe: Session::resolveRequest (probectl add) and the ptrace
// backend's resolution give what Session::add would resolve, with the same refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>
#include <string>

#include "fixture_text.hpp"
#include "kernel/resolve_by_name.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/session.hpp"
#include "readelf_util.hpp"
#include "session/resolve_spec.hpp"
#include "uapi/probectl.h"

namespace probectl {
namespace {

using probectl::test::fixtureText;
using ::testing::HasSubstr;
using ::testing::Not;

ProbeSpec spec(const std::string& text) {
    auto s = parseProbeSpec(text);
    EXPECT_TRUE(s) << text;
    return s ? *s : ProbeSpec{};
}

// This test binary is C++ that unwinds exceptions (eh_use_test.cpp).
std::string selfPath() {
    char buf[PATH_MAX] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

TEST(ResolveRequest, KprobeFromTheSymbolTableWithItsLabel) {
    auto ks = KernelSymbols::fromText(fixtureText("kallsyms.txt"), fixtureText("blacklist.txt"));
    ASSERT_TRUE(ks);
    SessionOptions o;
    o.symbols = &*ks;
    auto r = Session::resolveRequest(spec("kretprobe:do_sys_openat2"), o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->kind, ProbeKind::Kretprobe);
    EXPECT_EQ(r->label, "kretprobe:do_sys_openat2");
    auto unknown = Session::resolveRequest(spec("kprobe:no_such_function_here"), o);
    ASSERT_FALSE(unknown);
    EXPECT_THAT(unknown.error().message, HasSubstr("no_such_function_here"));
}

TEST(ResolveRequest, FetchArgumentsAndPredicatesHaveNowhereToGo) {
    auto r = Session::resolveRequest(spec("kprobe:do_sys_openat2 d=$arg1"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    EXPECT_THAT(r.error().message, HasSubstr("kprobe:do_sys_openat2"));
}

TEST(ResolveRequest, UretprobeInCxxThatThrowsIsRefusedUnlessForced) {
    const std::string self = selfPath();
    ASSERT_FALSE(self.empty());
    auto refused = Session::resolveRequest(spec("uretprobe:" + self + ":main"));
    ASSERT_FALSE(refused);
    EXPECT_THAT(refused.error().message, HasSubstr("--force"));
    SessionOptions o;
    o.uretprobe_despite_exceptions = true;
    auto forced = Session::resolveRequest(spec("uretprobe:" + self + ":main"), o);
    ASSERT_TRUE(forced) << forced.error().message;
    EXPECT_EQ(forced->kind, ProbeKind::Uretprobe);
    EXPECT_EQ(forced->path, self);
    EXPECT_NE(forced->file_offset, 0u);
}

ResolveContext ptraceContext() {
    ResolveContext ctx;
    ctx.backend = ResolveBackend::Ptrace;
    ctx.symbols = [] { return static_cast<const KernelSymbols*>(nullptr); };
    return ctx;
}

// The file offset readelf gives fx_cxx's function `symbol`.
std::uint64_t cxxFixtureOffset(const std::string& symbol) {
    for (const auto& s : test::readelfSymbols(FX_CXX_PATH))
        if (s.name == symbol)
            return test::expectedOffset(test::readelfLoads(FX_CXX_PATH), s.value).value();
    ADD_FAILURE() << symbol << " not in " << FX_CXX_PATH;
    return 0;
}

// A C++ signature with a pointer names the function it spells, on both backends: it was
// refused as a glob ("expand it first").
TEST(ResolveRequest, CxxSignatureWithAPointerIsTheFunctionItNames) {
    const std::string p = FX_CXX_PATH;
    const std::uint64_t m = cxxFixtureOffset("_ZN2fx1gEPc");
    const std::uint64_t c = cxxFixtureOffset("_ZN2fx1gEPKc");
    const std::pair<std::string, std::uint64_t> cases[] = {
        {"fx::g(char*)", m}, {"fx::g(char *)", m}, {"fx::g(const char*)", c}};
    for (const auto& [name, off] : cases) {
        const ProbeSpec s = spec("uprobe:" + p + ":'" + name + "'");
        auto k = Session::resolveRequest(s);
        ASSERT_TRUE(k) << name << ": " << k.error().message;
        EXPECT_EQ(k->file_offset, off) << name;
        auto t = resolveSpec(s, ptraceContext());
        ASSERT_TRUE(t) << name << ": " << t.error().message;
        ASSERT_EQ(t->size(), 1u) << name;
        EXPECT_EQ(t->front().res.request.file_offset, off) << name;
    }
    // No function of that name: a glob, which a single probe's resolution refuses.
    auto g = Session::resolveRequest(spec("uprobe:" + p + ":'fx::g(c*)'"));
    ASSERT_FALSE(g);
    EXPECT_THAT(g.error().message, HasSubstr("a glob names many probes"));
}

// Operators with glob characters in their names, and integer types spelled otherwise than
// the demangler does, name their function on both backends.
TEST(ResolveRequest, CxxOperatorsAndTypeSpellingsAreTheFunctionsTheyName) {
    const std::string p = FX_CXX_PATH;
    const std::pair<std::string, std::string> cases[] = {
        {"fx::Vec::operator[](unsigned long)", "_ZN2fx3VecixEm"},
        {"fx::Vec::operator[](unsigned long) const", "_ZNK2fx3VecixEm"},
        {"fx::Vec::operator()", "_ZNK2fx3VecclEi"},
        {"fx::Vec::operator<", "_ZNK2fx3VecltERKS0_"},
        {"fx::Vec::operator<<(long int)", "_ZN2fx3VeclsEl"},
        {"fx::Vec::operator->*", "_ZNK2fx3VecpmEl"},
        {"fx::Vec::operator new[](unsigned long)", "_ZN2fx3VecnaEm"},
        {"fx::t(unsigned)", "_ZN2fx1tEj"},
        {"fx::t(long unsigned int)", "_ZN2fx1tEm"},
        {"fx::t(signed char)", "_ZN2fx1tEa"},
    };
    for (const auto& [name, symbol] : cases) {
        const std::uint64_t off = cxxFixtureOffset(symbol);
        const ProbeSpec s = spec("uprobe:" + p + ":'" + name + "'");
        auto k = Session::resolveRequest(s);
        ASSERT_TRUE(k) << name << ": " << k.error().message;
        EXPECT_EQ(k->file_offset, off) << name;
        auto t = resolveSpec(s, ptraceContext());
        ASSERT_TRUE(t) << name << ": " << t.error().message;
        ASSERT_EQ(t->size(), 1u) << name;
        EXPECT_EQ(t->front().res.request.file_offset, off) << name;
    }
}

// A signature that names no function, though its function exists: the refusal names the
// function and lists the overloads there are, as the demangler spells them.
TEST(ResolveRequest, CxxSignatureOfNoOverloadListsTheOverloads) {
    const std::string p = FX_CXX_PATH;
    auto r = Session::resolveRequest(spec("uprobe:" + p + ":'fx::t(double)'"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, HasSubstr("fx::t(double)"));
    for (const char* o :
         {"fx::t(unsigned int)", "fx::t(long)", "fx::t(short)", "fx::t(unsigned long)",
          "fx::t(long long)", "fx::t(signed char)", "fx::t(char)"})
        EXPECT_THAT(r.error().message, HasSubstr(o)) << r.error().message;
    auto op = Session::resolveRequest(spec("uprobe:" + p + ":'fx::Vec::operator[](int)'"));
    ASSERT_FALSE(op);
    EXPECT_THAT(op.error().message, HasSubstr("fx::Vec::operator[](unsigned long) const"));
    EXPECT_THAT(op.error().message, Not(HasSubstr("unterminated")));
}

TEST(ResolvePtrace, ReachesOnlyUserSpaceAndSyscalls) {
    for (const char* text : {"kprobe:do_sys_openat2", "tracepoint:sched:sched_switch"}) {
        auto r = resolveSpec(spec(text), ptraceContext());
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().err, EOPNOTSUPP);
        EXPECT_TRUE(r.error().usage);
        EXPECT_THAT(r.error().message, HasSubstr("--backend=kernel"));
    }
    auto fetch = resolveSpec(spec("syscall:openat f=$arg2:string"), ptraceContext());
    ASSERT_FALSE(fetch);
    EXPECT_THAT(fetch.error().message, HasSubstr("fetch arguments need --backend=kernel"));
}

TEST(ResolvePtrace, SyscallsFromTheBuiltinTableWithoutKallsyms) {
    auto r = resolveSpec(spec("syscall:getppid"), ptraceContext());
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ(r->front().syscall_nr, 110) << "x86_64's getppid";
    ASSERT_TRUE(r->front().plan);
    EXPECT_EQ(r->front().plan->name, "getppid");
    auto unknown = resolveSpec(spec("syscall:no_such_call"), ptraceContext());
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().err, ENOENT);
    EXPECT_THAT(unknown.error().message, HasSubstr("unknown syscall 'no_such_call'"));
}

TEST(ResolvePtrace, LeavesReturnAddressesAloneSoCxxIsNotRefused) {
    auto r = resolveSpec(spec("uretprobe:" + selfPath() + ":main"), ptraceContext());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->front().res.request.kind, ProbeKind::Uretprobe);
    EXPECT_EQ(r->front().syscall_nr, -1);
}

TEST(ResolvePtrace, PredicateCompiledWithoutFetchPrograms) {
    const ProbeSpec s = spec("syscall:getppid if $pid == 1");
    auto r = resolveSpec(s, ptraceContext());
    ASSERT_TRUE(r);
    ASSERT_TRUE(compileProbePredicate(s, r->front()));
    EXPECT_FALSE(r->front().res.request.filter.insns.empty());
    EXPECT_TRUE(r->front().res.request.fetch.empty());
}

}  // namespace
}  // namespace probectl

namespace probectl {
namespace {

// Start-up: the specs the kernel resolves by name alone get the request kallsyms would give
// them, without reading it; every other spec still needs the table.
TEST(ResolveByName, SyscallWrappersAsKallsymsWouldResolveThem) {
    auto ks = KernelSymbols::fromText(fixtureText("kallsyms.txt"), fixtureText("blacklist.txt"));
    ASSERT_TRUE(ks);
    for (const char* text : {"syscall:getppid", "syscall:exit_group", "kprobe:__x64_sys_openat",
                             "kretprobe:__x64_sys_execve", "kretprobe:__x64_sys_openat2"}) {
        ProbeSpec s = spec(text);
        if (kindInfo(s.kind).maxactive)
            s.maxactive = 16;
        const auto fast = resolveByName(s);
        ASSERT_TRUE(fast) << text;
        const auto slow = ks->resolve(s);
        ASSERT_TRUE(slow) << text << ": " << slow.error().message;
        EXPECT_EQ(fast->request.kind, slow->request.kind) << text;
        EXPECT_EQ(fast->request.symbol, slow->request.symbol) << text;
        EXPECT_EQ(fast->request.flags, slow->request.flags) << text;
        EXPECT_EQ(fast->request.maxactive, slow->request.maxactive) << text;
        EXPECT_EQ(fast->request.offset, 0u) << text;
        EXPECT_EQ(fast->request.addr, 0u) << text;
        EXPECT_EQ(fast->symbol, slow->symbol) << text;
    }
}

TEST(ResolveByName, OtherSpecsNeedTheSymbolTable) {
    for (const char* text :
         {"kprobe:do_sys_openat2", "kprobe:__x64_sys_getppid+4", "kprobe:0xffffffff81001000",
          "kretprobe:vfs_read", "tracepoint:sched:sched_switch", "uprobe:/bin/true:main"})
        EXPECT_FALSE(resolveByName(spec(text))) << text;
    ProbeSpec many = spec("kretprobe:__x64_sys_getppid");
    many.maxactive = PROBECTL_MAXACTIVE_MAX + 1;  // refused with kallsyms's words
    EXPECT_FALSE(resolveByName(many));
}

TEST(ResolveByName, ContextWithByNameDoesNotLoadKallsyms) {
    int loads = 0;
    ResolveContext ctx;
    ctx.by_name = true;
    ctx.symbols = [&]() -> const KernelSymbols* {
        loads++;
        return nullptr;
    };
    for (const char* text : {"syscall:getppid", "kprobe:__x64_sys_getppid"}) {
        auto r = resolveSpec(spec(text), ctx);
        ASSERT_TRUE(r) << text << ": " << r.error().message;
        EXPECT_TRUE(r->front().by_name) << text;
    }
    EXPECT_EQ(loads, 0);
    ctx.by_name = false;
    EXPECT_FALSE(resolveSpec(spec("syscall:getppid"), ctx)) << "no table, not by name";
    EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace probectl
