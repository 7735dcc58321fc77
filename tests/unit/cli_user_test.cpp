// `probectl resolve` and `probectl symbols` on user-space binaries (the ELF fixtures): no
// kernel involved. Offsets are checked against readelf, never hard-coded.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "command_run.hpp"
#include "readelf_util.hpp"
#include "subcommands.hpp"

using namespace probectl::cli;
using namespace probectl::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::uint64_t readelfOffset(const std::string& file, const std::string& name) {
    for (const auto& s : readelfSymbols(file))
        if (s.name == name)
            return expectedOffset(readelfLoads(file), s.value).value();
    ADD_FAILURE() << name;
    return 0;
}

}  // namespace

TEST(CliUser, ResolveUprobeShowsFileOffsetAndSteps) {
    const std::string p = FX_NOPIE_PATH;
    CmdRun r = runCommand("resolve", {"uprobe:" + p + ":fx_work"});
    ASSERT_EQ(r.rc, kExitOk) << r.err << r.out;
    EXPECT_THAT(r.out,
                HasSubstr(fmt::format("file offset:  {:#x}\n", readelfOffset(p, "fx_work"))));
    EXPECT_THAT(r.out, HasSubstr("symbol:       fx_work\n"));
    EXPECT_THAT(r.out, HasSubstr("how:"));
    EXPECT_THAT(r.out, HasSubstr("PT_LOAD["));
    EXPECT_THAT(r.out, HasSubstr(fmt::format("registers:    uprobe {}:", p)));
}

TEST(CliUser, ResolveUsdtShowsSemaphoreAndArgs) {
    const std::string p = FX_USDT_PATH;
    CmdRun r = runCommand("resolve", {"usdt:" + p + ":fx:sem"});
    ASSERT_EQ(r.rc, kExitOk) << r.err << r.out;
    std::uint64_t sem = 0;
    for (const auto& n : readelfStapsdt(p))
        if (n.name == "sem")
            sem = expectedOffset(readelfLoads(p), n.semaphore).value();
    ASSERT_NE(sem, 0u);
    EXPECT_THAT(r.out,
                HasSubstr(fmt::format("semaphore:    file offset {:#x} (ref_ctr_offset)", sem)));
    EXPECT_THAT(r.out, HasSubstr("args:         s32 %rdi (-4@%edi)"));
}

TEST(CliUser, ResolveRefusalsExitOne) {
    CmdRun dup = runCommand("resolve", {std::string("uprobe:") + FX_DUP_PATH + ":helper"});
    EXPECT_EQ(dup.rc, kExitRuntime);
    EXPECT_THAT(dup.out, HasSubstr("probe-able:   no"));
    EXPECT_THAT(dup.out, HasSubstr(":off=0x"));
    EXPECT_THAT(dup.out, Not(HasSubstr("C++ signature"))) << "C names have no signature";
    CmdRun ifunc = runCommand("resolve", {std::string("uprobe:") + FX_PIE_PATH + ":fx_ifunc"});
    EXPECT_EQ(ifunc.rc, kExitRuntime);
    EXPECT_THAT(ifunc.out, HasSubstr("IFUNC"));
}

TEST(CliUser, PidOptionUsage) {
    CmdRun k = runCommand("resolve", {"kprobe:vfs_read", "-p", "1"});
    EXPECT_EQ(k.rc, kExitUsage);
    EXPECT_THAT(k.err, HasSubstr("-p applies to uprobe:"));
    CmdRun amb = runCommand("resolve", {std::string("uprobe:") + FX_PIE_PATH + ":0x1000", "-p",
                                        std::to_string(::getpid())});
    EXPECT_EQ(amb.rc, kExitRuntime);
    EXPECT_THAT(amb.out, HasSubstr("ambiguous"));
    CmdRun s = runCommand("symbols", {"vfs_*", "-p", "1"});
    EXPECT_EQ(s.rc, kExitUsage);
}

TEST(CliUser, SymbolsListsFunctionsDemangledAndUsdt) {
    const std::string cxx = FX_CXX_PATH;
    CmdRun c = runCommand("symbols", {cxx + ":fx::*"});
    ASSERT_EQ(c.rc, kExitOk) << c.err;
    EXPECT_THAT(c.out, HasSubstr("fx::twice(int)"));
    EXPECT_THAT(c.out, HasSubstr("fx::twice(double)"));
    EXPECT_THAT(c.out, HasSubstr(fmt::format("{:#x}", readelfOffset(cxx, "_ZN2fx5twiceEi"))));
    // Match the NAME column, not the path in the header (a clone may live under .../main/).
    EXPECT_THAT(c.out, Not(HasSubstr("global  main")));
    // Quoted as specs quote C++ names: the same rows.
    CmdRun quoted = runCommand("symbols", {cxx + ":'fx::*'"});
    ASSERT_EQ(quoted.rc, kExitOk) << quoted.err;
    EXPECT_EQ(quoted.out, c.out);
    CmdRun all = runCommand("symbols", {cxx});
    ASSERT_EQ(all.rc, kExitOk) << all.err;
    EXPECT_THAT(all.out, HasSubstr("global  main\n"));

    CmdRun u = runCommand("symbols", {std::string(FX_USDT_PATH) + ":"});
    ASSERT_EQ(u.rc, kExitOk) << u.err;
    EXPECT_THAT(u.out, HasSubstr("fx:plain"));
    EXPECT_THAT(u.out, HasSubstr("fx:sem"));
    EXPECT_THAT(u.out, HasSubstr("s32 %rdi, s32 $5"));

    CmdRun d = runCommand("symbols", {std::string(FX_DUP_PATH) + ":helper"});
    ASSERT_EQ(d.rc, kExitOk);
    EXPECT_THAT(d.out, HasSubstr("dup_a.c"));
    EXPECT_THAT(d.out, HasSubstr("dup_b.c"));

    CmdRun none = runCommand("symbols", {std::string(FX_PIE_PATH) + ":zzz_nothing"});
    EXPECT_EQ(none.rc, kExitRuntime);
    CmdRun lib = runCommand("symbols", {"libc:malloc"});
    EXPECT_EQ(lib.rc, kExitOk) << lib.err;
    EXPECT_THAT(lib.out, HasSubstr("libc.so.6"));
}

// A name no glob can be (an unterminated '[') that names no function, whose name has
// overloads: the error lists them.
TEST(CliUser, SymbolsOfASignatureOfNoOverloadListTheOverloads) {
    const std::string cxx = FX_CXX_PATH;
    CmdRun c = runCommand("symbols", {cxx + ":fx::Vec::operator[](int)"});
    EXPECT_EQ(c.rc, kExitRuntime);
    EXPECT_EQ(c.out, "");
    EXPECT_EQ(c.err, "probectl symbols: no function 'fx::Vec::operator[](int)' in " + cxx +
                         "; the functions named 'fx::Vec::operator[]' take other parameters: "
                         "fx::Vec::operator[](unsigned long), "
                         "fx::Vec::operator[](unsigned long) const\n");
}

// A name that names a function exactly lists that function, '*' or brackets or not, as a
// probe spec takes it: 'fx::g(char*)' listed fx::g(char const*) too, and
// 'fx::Vec::operator[](unsigned long)' was refused as an unterminated '['.
TEST(CliUser, SymbolsOfAnExactNameListThatFunction) {
    const std::string cxx = FX_CXX_PATH;
    CmdRun g = runCommand("symbols", {cxx + ":fx::g(char*)"});
    ASSERT_EQ(g.rc, kExitOk) << g.err;
    EXPECT_THAT(g.out, HasSubstr("fx::g(char*)"));
    EXPECT_THAT(g.out, Not(HasSubstr("fx::g(char const*)")));
    EXPECT_THAT(g.out, HasSubstr(fmt::format("{:#x}", readelfOffset(cxx, "_ZN2fx1gEPc"))));
    CmdRun c = runCommand("symbols", {cxx + ":'fx::g(const char *)'"});
    ASSERT_EQ(c.rc, kExitOk) << c.err;
    EXPECT_THAT(c.out, HasSubstr("fx::g(char const*)"));
    EXPECT_THAT(c.out, Not(HasSubstr("fx::g(char*)")));
    CmdRun op = runCommand("symbols", {cxx + ":fx::Vec::operator[](unsigned long)"});
    ASSERT_EQ(op.rc, kExitOk) << op.err;
    EXPECT_THAT(op.out, HasSubstr("fx::Vec::operator[](unsigned long)"));
    EXPECT_THAT(op.out, Not(HasSubstr("fx::Vec::operator[](unsigned long) const")));
    CmdRun t = runCommand("symbols", {cxx + ":fx::t(long unsigned int)"});
    ASSERT_EQ(t.rc, kExitOk) << t.err;
    EXPECT_THAT(t.out, HasSubstr("fx::t(unsigned long)"));
    EXPECT_THAT(t.out, Not(HasSubstr("fx::t(long)")));
    // A glob is still one.
    CmdRun glob = runCommand("symbols", {cxx + ":fx::g(*)"});
    ASSERT_EQ(glob.rc, kExitOk) << glob.err;
    EXPECT_THAT(glob.out, HasSubstr("fx::g(char*)"));
    EXPECT_THAT(glob.out, HasSubstr("fx::g(char const*)"));
    CmdRun bad = runCommand("symbols", {cxx + ":fx::nothing[(int)"});
    EXPECT_EQ(bad.rc, kExitUsage) << bad.err;
    EXPECT_THAT(bad.err, HasSubstr("unterminated '['"));
}
