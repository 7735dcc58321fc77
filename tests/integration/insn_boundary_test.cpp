// Breakpoints only on instruction boundaries: a uprobe inside an instruction corrupts it
// (SIGILL, or silently wrong results and no hits), so such specs are refused with the
// nearest valid offsets, for +OFFSET, elf= and off= alike and on both backends; a kprobe the
// kernel refuses for that reason names the valid offsets too. Workload:
// workloads/insn_target.c (assembly with known instruction sizes).
#include <cerrno>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"
#include "probectl/user_target.hpp"

using itest::why;
using ::testing::HasSubstr;

namespace {

std::string insnTarget() {
    return itest::workload("insn_target");
}

std::string spec(const std::string& location) {
    return "uprobe:" + insnTarget() + ":" + location;
}

probectl::Session openSession() {
    auto s = probectl::Session::open({});
    if (!s)
        throw std::runtime_error("session: " + why(s));
    return std::move(*s);
}

probectl::UserTarget resolved(const std::string& location) {
    auto p = probectl::parseProbeSpec(spec(location));
    if (!p)
        throw std::runtime_error("parse " + location);
    auto t = probectl::resolveUserSpec(*p);
    if (!t)
        throw std::runtime_error("resolve " + location + ": " + why(t));
    return *t;
}

}  // namespace

TEST(InsnBoundary, OffsetsInsideAnInstructionAreRefusedWithTheNearestBoundaries) {
    auto s = openSession();
    for (int off = 1; off < 10; ++off) {
        auto id = s.add(spec("pc_insn+" + std::to_string(off)));
        ASSERT_FALSE(id) << "pc_insn+" << off << " was accepted";
        EXPECT_EQ(id.error().err, EILSEQ) << why(id);
        EXPECT_THAT(id.error().message, HasSubstr("inside the 10-byte instruction at pc_insn+0x0"));
        EXPECT_THAT(id.error().message, HasSubstr("movabs"));
        EXPECT_THAT(id.error().message, HasSubstr("pc_insn+0x0, pc_insn+0xa"));
    }
}

TEST(InsnBoundary, ElfAndFileOffsetAddressesInsideAnInstructionAreRefused) {
    const probectl::UserTarget fn = resolved("pc_insn");
    auto s = openSession();
    for (const std::string& loc :
         {fmt::format("elf={:#x}", fn.vaddr + 3), fmt::format("off={:#x}", fn.file_offset + 3)}) {
        auto id = s.add(spec(loc));
        ASSERT_FALSE(id) << loc << " was accepted";
        EXPECT_EQ(id.error().err, EILSEQ) << why(id);
        EXPECT_THAT(id.error().message, HasSubstr("pc_insn+0x3 is inside"));
    }
    // The boundary itself, by address, is fine.
    EXPECT_TRUE(s.add(spec(fmt::format("elf={:#x}", fn.vaddr + 10))));
}

TEST(InsnBoundary, SizeZeroSymbolsAreCheckedUpToTheNextSymbol) {
    auto s = openSession();
    auto inside = s.add(spec("pc_nosize+2"));
    ASSERT_FALSE(inside);
    EXPECT_THAT(inside.error().message, HasSubstr("pc_nosize+0x0, pc_nosize+0x5"));
    auto past = s.add(spec("pc_nosize+6"));
    ASSERT_FALSE(past);
    EXPECT_THAT(past.error().message, HasSubstr("past 'pc_nosize': it has size 0"));
}

TEST(InsnBoundary, ProbesOnBoundariesCountEveryCallAndTheProgramRunsOn) {
    itest::Workload w({insnTarget(), "7"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto a = s->add(spec("pc_insn+0xa"));
    auto b = s->add(spec("pc_nosize+5"));
    ASSERT_TRUE(a) << why(a);
    ASSERT_TRUE(b) << why(b);
    w.release();
    std::string out;
    ASSERT_EQ(w.wait(&out), 0) << out;
    // 7 * (0x1122334455667788 + 7): the movabs was not touched.
    EXPECT_THAT(out, HasSubstr(fmt::format("sum={:#x}", 7 * (0x1122334455667788ul + 7))));
    auto st = s->stop([](const probectl::Event&) {});
    ASSERT_TRUE(st) << why(st);
    ASSERT_EQ(st->probes.size(), 2u);
    EXPECT_EQ(st->probes[0].hits, 7u);
    EXPECT_EQ(st->probes[1].hits, 7u);
}

TEST(InsnBoundary, BothBackendsRefuseBeforeTheProgramRuns) {
    for (const char* backend : {"kernel", "ptrace"}) {
        itest::Ran r = itest::sh(std::string("probectl trace --backend=") + backend + " " +
                                 spec("pc_insn+1") + " -- " + insnTarget() + " 3");
        EXPECT_NE(r.status, 0) << backend << ": " << r.out;
        EXPECT_THAT(r.out, HasSubstr("inside the 10-byte instruction")) << backend;
        EXPECT_THAT(r.out, ::testing::Not(HasSubstr("sum="))) << backend;
    }
}

TEST(InsnBoundary, RefusedKprobeOffsetsNameTheValidOnesAndTheNextOneWorks) {
    auto s = openSession();
    auto r = s.add("kprobe:do_sys_openat2+1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EILSEQ) << why(r);
    const std::string& m = r.error().message;
    const std::string lead = "the nearest instruction boundaries are do_sys_openat2+0x0, ";
    const auto at = m.find(lead);
    ASSERT_NE(at, std::string::npos) << m;
    const std::string next =
        m.substr(at + lead.size(), m.find_first_of(" ;\n", at + lead.size()) - (at + lead.size()));
    auto ok = s.add("kprobe:" + next);
    EXPECT_TRUE(ok) << next << ": " << why(ok);
}
