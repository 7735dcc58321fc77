// count --by ustack --ustack=dwarf on the host: SnapshotStacks interns unwound stacks and
// puts their ids in the events, which an EventAggregator keyed by `ustack` then counts per
// stack, printed through stackRows like the kernel's stack ids; and the options that go
// with it.
#include <unistd.h>

#include <gtest/gtest.h>

#include "aggr_cli.hpp"
#include "probectl/aggr_events.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/snapshot_stacks.hpp"

using namespace probectl;

// user_stack_snapshot_test.cpp: this process's registers and `bytes` of its stack, taken
// three calls deep, as a probe copies them.
extern "C" void probectl_snap_outer(std::vector<std::uint8_t>* out, std::size_t bytes);

namespace {

// An event of this process carrying `snapshot` as the probe's `ustack` value.
Event snapshotEvent(std::vector<std::uint8_t> snapshot) {
    Event e;
    e.tgid = e.pid = static_cast<std::uint32_t>(getpid());
    e.comm = "unit";
    FetchedValue v;
    v.name = kUserStackArg;
    v.snapshot = std::move(snapshot);
    v.truncated = true;  // the stack goes on above the copy
    e.values.push_back(std::move(v));
    return e;
}

// An event of this process whose `ustack` value faulted (no snapshot): "[no user stack]".
Event faultedSnapshotEvent(std::string comm) {
    Event e;
    e.tgid = e.pid = 1;
    e.comm = std::move(comm);
    FetchedValue v;
    v.name = kUserStackArg;
    v.faulted = true;
    e.values.push_back(v);
    return e;
}

}  // namespace

TEST(SnapshotStacks, InternsEqualLinesToOneIdFromOne) {
    SnapshotStacks s(64);
    const std::vector<std::string> a = {"leaf+0x4 (/bin/app)", "main+0x10 (/bin/app)"};
    const std::vector<std::string> b = {"mid+0x8 (/bin/app)", "main+0x10 (/bin/app)"};
    EXPECT_EQ(s.intern(a), 1u);
    EXPECT_EQ(s.intern(b), 2u);
    EXPECT_EQ(s.intern(a), 1u);
    ASSERT_NE(s.lines(2), nullptr);
    EXPECT_EQ(*s.lines(2), b);
    EXPECT_EQ(s.lines(0), nullptr);
    EXPECT_EQ(s.lines(3), nullptr);
}

TEST(SnapshotStacks, ReplacesTheSnapshotByItsStacksId) {
    SnapshotStacks s(64);
    Event e = faultedSnapshotEvent("app");
    s.replace(e);
    ASSERT_EQ(e.values.size(), 1u);
    EXPECT_FALSE(e.values[0].faulted);
    EXPECT_FALSE(e.values[0].isSnapshot());
    EXPECT_EQ(e.values[0].type, FetchType::U32);
    ASSERT_NE(s.lines(static_cast<std::uint32_t>(e.values[0].raw)), nullptr);
    EXPECT_EQ(*s.lines(static_cast<std::uint32_t>(e.values[0].raw)),
              std::vector<std::string>{"[no user stack]"});
    EXPECT_EQ(s.walks().unwound, 1u);
    EXPECT_EQ(s.walks().filled, 0u);

    Event other;
    FetchedValue n;
    n.name = "n";
    n.raw = 7;
    other.values.push_back(n);
    s.replace(other);
    EXPECT_EQ(other.values[0].raw, 7u);
    EXPECT_EQ(s.walks().unwound, 1u);
}

// Snapshots taken at one call site unwind to one stack, one id; a copy too short to leave
// the innermost function is another stack, its walk counted as stopped early.
TEST(SnapshotStacks, EqualWalksShareAnIdAndTheSummaryCountsAddUp) {
    SnapshotStacks s(3);
    std::vector<std::uint32_t> ids;
    for (int i = 0; i < 3; i++) {
        std::vector<std::uint8_t> snap;
        probectl_snap_outer(&snap, kUstackSnapshotDefault);
        Event e = snapshotEvent(std::move(snap));
        s.replace(e);
        ASSERT_EQ(e.values.size(), 1u);
        EXPECT_FALSE(e.values[0].isSnapshot());
        ids.push_back(static_cast<std::uint32_t>(e.values[0].raw));
    }
    EXPECT_EQ(ids, (std::vector<std::uint32_t>{1, 1, 1}));
    const auto* deep = s.lines(1);
    ASSERT_NE(deep, nullptr);
    ASSERT_EQ(deep->size(), 4u);
    EXPECT_EQ((*deep)[0].rfind("probectl_snap_inner+0x", 0), 0u) << (*deep)[0];
    EXPECT_EQ((*deep)[1].rfind("probectl_snap_middle+0x", 0), 0u) << (*deep)[1];
    EXPECT_EQ((*deep)[2].rfind("probectl_snap_outer+0x", 0), 0u) << (*deep)[2];
    EXPECT_EQ((*deep)[3], "...");

    std::vector<std::uint8_t> snap;
    probectl_snap_outer(&snap, 16);
    Event shallow = snapshotEvent(std::move(snap));
    s.replace(shallow);
    EXPECT_EQ(shallow.values[0].raw, 2u);
    ASSERT_NE(s.lines(2), nullptr);
    EXPECT_EQ(
        s.lines(2)->back().rfind("[unwind stopped: the stack snapshot ends after 16 bytes", 0), 0u);
    EXPECT_EQ(s.walks().unwound, 4u);
    EXPECT_EQ(s.walks().stopped, 1u);
    EXPECT_EQ(s.walks().filled, 4u);
    // Only the copy too short to leave the innermost function was cut by its size: the deep
    // walks filled theirs too, but ended at --stack-depth.
    EXPECT_EQ(s.walks().cut, 1u);
}

TEST(SnapshotStacks, AggregatedByStackAndOtherKeysPrintAsFoldedRows) {
    SnapshotStacks s(64);
    AggrSpec spec;
    spec.keys = {"comm", kUserStackArg};
    auto a = EventAggregator::create(spec, "uprobe:app:leaf");
    ASSERT_TRUE(a) << a.error().message;
    for (const char* comm : {"app", "app", "app", "other"}) {
        Event e = faultedSnapshotEvent(comm);
        s.replace(e);
        a->add(e);
    }
    const auto rows =
        stackRows(a->table(), [&](std::uint32_t, std::uint32_t id) { return s.lines(id); });
    EXPECT_EQ(formatFoldedRows(rows), "app;[no user stack] 3\nother;[no user stack] 1\n");
}

TEST(AggrCliOptions, UstackDwarfGoesWithByUstackOnEitherBackend) {
    using cli::AggrMode;
    auto ok = cli::parseAggrOptions(
        AggrMode::Count, {"uprobe:app:leaf", "--by", "ustack", "--ustack=dwarf", "--stack-size",
                          "1024", "--backend", "ptrace", "--format", "folded", "--", "app"});
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->ustack, "dwarf");
    EXPECT_EQ(ok->stack_size, 1024u);
    auto refused = [](std::vector<std::string> args, const char* says) {
        auto r = cli::parseAggrOptions(AggrMode::Count, args);
        ASSERT_FALSE(r) << says;
        EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    };
    refused({"uprobe:app:leaf", "--ustack=dwarf"}, "--ustack goes with --by ustack");
    refused({"uprobe:app:leaf", "--by", "ustack", "--ustack=lbr"}, "the unwinders are");
    refused({"uprobe:app:leaf", "--by", "ustack", "--stack-size", "64"},
            "--stack-size goes with --ustack=dwarf");
    refused({"uprobe:app:leaf", "--by", "ustack", "--ustack=dwarf", "--stack-size", "99999"},
            "--stack-size must be");
    refused({"kprobe:vfs_read", "--by", "kstack,ustack", "--ustack=dwarf"}, "not with --by kstack");
    refused({"--from", "run.prb", "--by", "ustack", "--ustack=dwarf"}, "not with --from");
    refused({"syscall:read", "--by", "ustack", "--ustack=dwarf"},
            "user stacks of syscall: specs are not supported");
    refused({"uprobe:app:leaf", "--by", "ustack", "--backend", "ptrace"}, "either backend");
    refused({"uprobe:app:leaf", "--by", "ustack", "--ustack=dwarf", "--format", "perfetto", "-o",
             "x.pftrace"},
            "printed as text, json, folded or svg");
    EXPECT_FALSE(cli::parseAggrOptions(
        AggrMode::Hist, {"uprobe:app:leaf n=$arg1", "n", "--by", "ustack", "--ustack=dwarf"}));
    // fp is the default: saying it changes nothing, and it still wants the kernel's map.
    auto fp = cli::parseAggrOptions(AggrMode::Count,
                                    {"uprobe:app:leaf", "--by", "ustack", "--ustack", "fp"});
    ASSERT_TRUE(fp) << fp.error().message;
    EXPECT_EQ(fp->ustack, "fp");
    refused({"uprobe:app:leaf", "--by", "ustack", "--ustack=fp", "--backend", "ptrace"},
            "either backend");
}
