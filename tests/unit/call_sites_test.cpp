// Frames that tail calls took off the stack, found by DWARF call-site entries (CallSites)
// and printed between a stack's frames (UserSymbolizer::tailCallLines), on the tail-call
// workload built with DWARF 5 call sites (fx_tail) and GNU's (fx_tail_gnu). Addresses come
// from objdump and lines from the source text, not from the DWARF under test.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "elf/call_sites.hpp"
#include "elf/source_lines.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/user_stacks.hpp"
#include "readelf_util.hpp"

using namespace probectl;

namespace {

constexpr std::uint64_t kCallSitesBase = 0x555555554000;
const std::string kSource = std::string(PROBECTL_WORKLOADS) + "/tail_call.c";

struct Workload {
    std::string path;
    ElfResolver elf;

    std::uint64_t entry(const std::string& fn) const {
        auto f = elf.functionsNamed(fn);
        EXPECT_EQ(f.size(), 1u) << fn;
        return f.empty() ? 0 : f[0]->value;
    }
    // The one call or jump from `fn` to `to`.
    test::ObjdumpBranch branch(const std::string& fn, const std::string& op,
                               const std::string& to) const {
        std::vector<test::ObjdumpBranch> found;
        for (const auto& b : test::objdumpBranches(path, fn))
            if (b.mnemonic == op && b.target == to)
                found.push_back(b);
        EXPECT_EQ(found.size(), 1u) << fn << " " << op << " " << to;
        return found.empty() ? test::ObjdumpBranch{} : found[0];
    }
    // Where it ends: a call's return address.
    std::uint64_t branchEnd(const std::string& fn, const std::string& op,
                            const std::string& to) const {
        return branch(fn, op, to).next;
    }
    bool inJump(std::uint64_t addr, const std::string& fn, const std::string& to) const {
        const auto b = branch(fn, "jmp", to);
        return addr >= b.at && addr < b.next;
    }
};

Workload open(const char* path) {
    auto e = ElfResolver::open(path);
    EXPECT_TRUE(e) << e.error().message;
    return {path, std::move(*e)};
}

// Maps for the file loaded at kCallSitesBase, one line per PT_LOAD.
ProcMaps mapsOf(const Workload& w) {
    std::string text;
    for (const auto& s : w.elf.loadSegments())
        text += fmt::format(
            "{:x}-{:x} r{}{}p {:08x} fd:01 4242 {}\n", kCallSitesBase + (s.vaddr & ~0xfffULL),
            kCallSitesBase + ((s.vaddr + s.memsz + 0xfff) & ~0xfffULL), s.writable() ? 'w' : '-',
            s.executable() ? 'x' : '-', s.offset & ~0xfffULL, w.path);
    auto m = ProcMaps::parse(text);
    EXPECT_TRUE(m);
    return std::move(*m);
}

std::string at(const std::string& text) {
    return fmt::format("tail_call.c:{}", test::sourceLineOf(kSource, text));
}

class TailCalls : public ::testing::TestWithParam<const char*> {};

}  // namespace

// CallSites alone: which callee, whose frame is gone, by which jumps.
TEST_P(TailCalls, CallSitesNameTheChainOfJumps) {
    const Workload w = open(GetParam());
    auto src = SourceLines::open(w.path);
    ASSERT_TRUE(src);
    CallSites calls(src->dwarf(), [&](std::string_view n) -> std::optional<std::uint64_t> {
        auto f = w.elf.functionsNamed(n);
        return f.size() == 1 ? std::optional(f[0]->value) : std::nullopt;
    });
    auto inner = [&](const char* fn) { return InnerFrame{true, w.entry(fn), fn}; };

    // start called hop; hop jumped to leaf.
    const TailGap& one = calls.between(w.branchEnd("start", "call", "hop"), inner("leaf"));
    EXPECT_TRUE(one.gone);
    EXPECT_EQ(one.callee, "hop");
    ASSERT_EQ(one.chain.size(), 1u);
    EXPECT_EQ(one.chain[0].function, "hop");
    EXPECT_TRUE(w.inJump(one.chain[0].jump, "hop", "leaf")) << one.chain[0].jump;

    // start2 called hop2, which jumped to hop, which jumped to leaf: callee first.
    const TailGap& two = calls.between(w.branchEnd("start2", "call", "hop2"), inner("leaf"));
    EXPECT_TRUE(two.gone);
    ASSERT_EQ(two.chain.size(), 2u);
    EXPECT_EQ(two.chain[0].function, "hop2");
    EXPECT_TRUE(w.inJump(two.chain[0].jump, "hop2", "hop")) << two.chain[0].jump;
    EXPECT_TRUE(w.inJump(two.chain[1].jump, "hop", "leaf")) << two.chain[1].jump;
    EXPECT_EQ(two.chain[1].function, "hop");
    // A probe in hop itself: only hop2's frame is gone.
    const TailGap& mid = calls.between(w.branchEnd("start2", "call", "hop2"), inner("hop"));
    EXPECT_TRUE(mid.gone);
    ASSERT_EQ(mid.chain.size(), 1u);
    EXPECT_EQ(mid.chain[0].function, "hop2");

    // either reaches leaf directly or through hop: gone, but no chain is made up.
    const TailGap& two_ways = calls.between(w.branchEnd("start3", "call", "either"), inner("leaf"));
    EXPECT_TRUE(two_ways.gone);
    EXPECT_EQ(two_ways.callee, "either");
    EXPECT_TRUE(two_ways.chain.empty());

    // The callee is the frame above (a probe in hop, in its code past the entry): nothing.
    EXPECT_FALSE(calls
                     .between(w.branchEnd("start", "call", "hop"),
                              InnerFrame{true, w.entry("hop") + 4, "hop"})
                     .gone);
    // Known only by name in another file: hop there is hop; another name there may be where
    // a PLT call went, but the callee's code is here, so its frame is gone.
    EXPECT_FALSE(calls.between(w.branchEnd("start", "call", "hop"), {false, 0, "hop"}).gone);
    EXPECT_TRUE(calls.between(w.branchEnd("start", "call", "hop"), {false, 0, "other"}).gone);
    // No call returns there (the call's own address): DWARF says nothing.
    EXPECT_FALSE(calls.between(w.branchEnd("start", "call", "hop") - 1, inner("leaf")).gone);
    // A call to a function whose code is not in this file (printf): nothing either.
    std::size_t plt_calls = 0;
    for (const auto& b : test::objdumpBranches(w.path, "main")) {
        if (b.mnemonic != "call" || b.target.find("@plt") == std::string::npos)
            continue;
        plt_calls++;
        EXPECT_FALSE(calls.between(b.next, inner("leaf")).gone) << b.target;
    }
    EXPECT_GE(plt_calls, 2u) << "main calls strtol and printf";
}

// Printed between the frames of a stack: leaf, the functions whose frames are gone (each at
// the line of its jump), then the caller; a gap line where the way is not known.
TEST_P(TailCalls, StackLinesShowTheFramesTheJumpsRemoved) {
    const Workload w = open(GetParam());
    UserSymbolizer sym;
    sym.setMaps(100, mapsOf(w));
    KernelStack st;
    st.user = true;
    st.tgid = 100;
    const std::string in = fmt::format(" ({}) at ", w.path);
    auto stack = [&](const char* fn, const char* caller, const char* callee) {
        st.frames = {kCallSitesBase + w.entry(fn),
                     kCallSitesBase + w.branchEnd(caller, "call", callee)};
        return userStackLines(sym, st);
    };

    auto one = stack("leaf", "start", "hop");
    ASSERT_EQ(one.size(), 3u) << fmt::format("{}", fmt::join(one, "\n"));
    EXPECT_TRUE(one[0].starts_with("leaf" + in)) << one[0];
    EXPECT_TRUE(one[1].starts_with("hop (tail call: its frame is gone) at ")) << one[1];
    EXPECT_TRUE(one[1].ends_with(at("return leaf(x + 1);"))) << one[1];
    EXPECT_TRUE(one[2].starts_with("start+0x")) << one[2];
    EXPECT_TRUE(one[2].ends_with(at("long r = hop(x * 2);"))) << one[2];

    auto two = stack("leaf", "start2", "hop2");
    ASSERT_EQ(two.size(), 4u) << fmt::format("{}", fmt::join(two, "\n"));
    EXPECT_TRUE(two[1].starts_with("hop (tail call: its frame is gone) at ")) << two[1];
    EXPECT_TRUE(two[2].starts_with("hop2 (tail call: its frame is gone) at ")) << two[2];
    EXPECT_TRUE(two[2].ends_with(at("return hop(x * 3);"))) << two[2];
    EXPECT_TRUE(two[3].starts_with("start2+0x")) << two[3];

    auto gap = stack("leaf", "start3", "either");
    ASSERT_EQ(gap.size(), 3u) << fmt::format("{}", fmt::join(gap, "\n"));
    EXPECT_EQ(gap[1],
              "[start3 called either; the frames from it to leaf were not kept (tail calls)]");
    EXPECT_TRUE(gap[2].starts_with("start3+0x")) << gap[2];

    // An ordinary call: the two frames and nothing between.
    auto plain = stack("hop", "start", "hop");
    EXPECT_EQ(plain.size(), 2u) << fmt::format("{}", fmt::join(plain, "\n"));
}

INSTANTIATE_TEST_SUITE_P(CallSiteKinds, TailCalls,
                         ::testing::Values(FX_TAIL_PATH, FX_TAIL_GNU_PATH), [](const auto& info) {
                             return std::string(info.index == 0 ? "Dwarf5" : "Gnu");
                         });
