// A function the compiler inlined into some callers (workloads/inline_target.c): with DWARF
// every inlined copy is probed, so every call is counted, on both backends; where a copy
// cannot be probed (a return probe) or nothing says where the copies are (no DWARF), the
// calls are counted that the out-of-line copy sees and a note says the rest are missed.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"

using itest::why;
using ::testing::HasSubstr;

namespace {

constexpr std::uint64_t kRounds = 9;
// helper(): thrice() and the call through a pointer each round, twice() once (two calls).
constexpr std::uint64_t kHelperCalls = 2 * kRounds + 2;

struct Counted {
    std::uint64_t hits = 0;
    std::uint64_t events = 0;
    std::size_t probes = 0;
    std::vector<std::string> notes;
    std::vector<std::string> labels;  // each probe's spec, as the summary shows it
};

Counted kernelCount(const std::string& workload, const std::string& location) {
    const std::string file = itest::workload(workload);
    itest::Workload w({file, std::to_string(kRounds)});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    EXPECT_TRUE(s) << why(s);
    if (!s)
        return {};
    auto id = s->add(location.substr(0, location.find(':') + 1) + file +
                     location.substr(location.find(':') + 1));
    EXPECT_TRUE(id) << why(id);
    Counted c;
    c.notes = s->takeNotes();
    w.release();
    std::string out;
    EXPECT_EQ(w.wait(&out), 0) << out;
    auto st = s->stop([&](const probectl::Event&) { ++c.events; });
    EXPECT_TRUE(st) << why(st);
    if (!st)
        return c;
    EXPECT_FALSE(st->anyLoss());
    c.probes = st->probes.size();
    for (const auto& p : st->probes) {
        c.hits += p.hits;
        c.labels.push_back(p.spec);
    }
    return c;
}

}  // namespace

TEST(Inlined, EveryCopyIsProbedSoEveryCallCounts) {
    Counted c = kernelCount("inline_dwarf", "uprobe::helper");
    EXPECT_EQ(c.hits, kHelperCalls);
    EXPECT_EQ(c.events, kHelperCalls);
    EXPECT_GE(c.probes, 3u) << "the out-of-line copy and at least twice's and thrice's";
    ASSERT_EQ(c.notes.size(), 1u);
    EXPECT_THAT(c.notes[0], HasSubstr("inlined copies of 'helper'"));
    EXPECT_THAT(c.notes[0], HasSubstr("probed too"));
    // Each copy's probe says where it is: a row per copy in the summary.
    ASSERT_EQ(c.labels.size(), c.probes);
    EXPECT_THAT(c.labels[0], ::testing::EndsWith(":helper"));
    EXPECT_THAT(c.labels, ::testing::Contains(HasSubstr(":helper (inlined in thrice+0x")));
    EXPECT_THAT(c.labels, ::testing::Contains(HasSubstr(":helper (inlined in twice+0x")));
}

TEST(Inlined, AFunctionOnlyInlinedIsFoundByItsCopies) {
    Counted c = kernelCount("inline_dwarf", "uprobe::bump");
    EXPECT_EQ(c.hits, kRounds);
    ASSERT_EQ(c.notes.size(), 1u);
    EXPECT_THAT(c.notes[0], HasSubstr("no out-of-line copy of 'bump'"));
}

TEST(Inlined, AReturnProbeCountsTheOutOfLineCallsAndSaysWhatItMisses) {
    Counted c = kernelCount("inline_dwarf", "uretprobe::helper");
    EXPECT_EQ(c.hits, kRounds) << "only the calls through the pointer return from helper";
    EXPECT_EQ(c.probes, 1u);
    ASSERT_EQ(c.notes.size(), 1u);
    EXPECT_THAT(c.notes[0], HasSubstr("not probed"));
}

TEST(Inlined, WithoutDwarfTheNoteSaysInlinedCallsAreNotSeen) {
    Counted c = kernelCount("inline_nodwarf", "uprobe::helper");
    EXPECT_EQ(c.hits, kRounds);
    ASSERT_EQ(c.notes.size(), 1u);
    EXPECT_THAT(c.notes[0], HasSubstr("static function"));
    EXPECT_THAT(c.notes[0], HasSubstr("no DWARF"));
}

TEST(Inlined, ThePtraceBackendProbesTheSameCopies) {
    const std::string file = itest::workload("inline_dwarf");
    probectl::PtraceSessionOptions o;
    o.command = {file, std::to_string(kRounds)};
    auto s = probectl::PtraceSession::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("uprobe:" + file + ":helper");
    ASSERT_TRUE(id) << why(id);
    auto notes = s->takeNotes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_THAT(notes[0], HasSubstr("probed too"));
    std::uint64_t events = 0;
    auto cb = [&](const probectl::Event&) { ++events; };
    ASSERT_TRUE(s->release());
    auto r = s->run(
        cb, [&] { return s->commandStatus().has_value(); }, 50);
    EXPECT_TRUE(r) << why(r);
    auto st = s->stop(cb);
    ASSERT_TRUE(st) << why(st);
    EXPECT_EQ(events, kHelperCalls);
}
