// DWARF user stacks on the host: this process's own registers and stack, copied the way the
// kernel copies them for --ustack=dwarf (struct probectl_ustack_regs, then the stack from sp
// up), unwound by UserSymbolizer::snapshotLines through its own maps; the program and
// decoding of the snapshot argument, and the trace options that go with it.
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probectl/client.hpp"
#include "probectl/event_print.hpp"
#include "probectl/fetch_decode.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/printer.hpp"
#include "probectl/user_stacks.hpp"
#include "uapi/probectl.h"

using namespace probectl;

// Not static and not inlined, so that each is a frame with a symbol of its own.
extern "C" {
__attribute__((noinline)) void probectl_snap_inner(std::vector<std::uint8_t>* out,
                                                   std::size_t bytes);
__attribute__((noinline)) void probectl_snap_middle(std::vector<std::uint8_t>* out,
                                                    std::size_t bytes);
__attribute__((noinline)) void probectl_snap_outer(std::vector<std::uint8_t>* out,
                                                   std::size_t bytes);
}

// The registers at the asm (DWARF order, as struct probectl_ustack_regs), then `bytes` of
// stack from the captured sp up: what a probe at that instruction would have copied.
void probectl_snap_inner(std::vector<std::uint8_t>* out, std::size_t bytes) {
    std::uint64_t r[kUstackRegCount];
    asm volatile(
        "movq %%rax, 0(%0)\n\t"
        "movq %%rdx, 8(%0)\n\t"
        "movq %%rcx, 16(%0)\n\t"
        "movq %%rbx, 24(%0)\n\t"
        "movq %%rsi, 32(%0)\n\t"
        "movq %%rdi, 40(%0)\n\t"
        "movq %%rbp, 48(%0)\n\t"
        "movq %%rsp, 56(%0)\n\t"
        "movq %%r8, 64(%0)\n\t"
        "movq %%r9, 72(%0)\n\t"
        "movq %%r10, 80(%0)\n\t"
        "movq %%r11, 88(%0)\n\t"
        "movq %%r12, 96(%0)\n\t"
        "movq %%r13, 104(%0)\n\t"
        "movq %%r14, 112(%0)\n\t"
        "movq %%r15, 120(%0)\n\t"
        "leaq 0(%%rip), %%rax\n\t"
        "movq %%rax, 128(%0)\n\t"
        :
        : "r"(r)
        : "rax", "memory");
    out->resize(kUstackRegsBytes + bytes);
    std::memcpy(out->data(), r, kUstackRegsBytes);
    std::memcpy(out->data() + kUstackRegsBytes, reinterpret_cast<const void*>(r[7]), bytes);
}

void probectl_snap_middle(std::vector<std::uint8_t>* out, std::size_t bytes) {
    probectl_snap_inner(out, bytes);
    asm volatile("" ::: "memory");  // no tail call: this frame stays
}

void probectl_snap_outer(std::vector<std::uint8_t>* out, std::size_t bytes) {
    probectl_snap_middle(out, bytes);
    asm volatile("" ::: "memory");
}

namespace {

std::size_t indexOf(const std::vector<std::string>& lines, const std::string& needle) {
    for (std::size_t i = 0; i < lines.size(); i++)
        if (lines[i].find(needle) != std::string::npos)
            return i;
    return lines.size();
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines)
        s += l + "\n";
    return s;
}

}  // namespace

TEST(UserStackSnapshot, UnwindsItsOwnStackByCfi) {
    std::vector<std::uint8_t> snap;
    probectl_snap_outer(&snap, kUstackSnapshotDefault);
    UserSymbolizer syms;
    ASSERT_TRUE(syms.capture(getpid()));
    const auto lines = syms.snapshotLines(getpid(), snap, true);
    const std::size_t inner = indexOf(lines, "probectl_snap_inner+0x");
    const std::size_t middle = indexOf(lines, "probectl_snap_middle+0x");
    const std::size_t outer = indexOf(lines, "probectl_snap_outer+0x");
    EXPECT_EQ(inner, 0u) << joined(lines);
    EXPECT_EQ(middle, 1u) << joined(lines);
    EXPECT_EQ(outer, 2u) << joined(lines);
    EXPECT_NE(lines[0].find("probectl_unit_tests"), std::string::npos) << joined(lines);
    // The test body's caller and more follow; gtest's frames outgrow the copy, and the last
    // line says so rather than guessing.
    EXPECT_GT(lines.size(), 4u) << joined(lines);
    EXPECT_NE(indexOf(lines, "UnwindsItsOwnStackByCfi"), lines.size()) << joined(lines);
}

TEST(UserStackSnapshot, AShortCopyStopsWithItsReason) {
    std::vector<std::uint8_t> snap;
    probectl_snap_outer(&snap, 16);
    UserSymbolizer syms;
    ASSERT_TRUE(syms.capture(getpid()));
    const auto lines = syms.snapshotLines(getpid(), snap, true);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines[0].find("probectl_snap_inner+0x"), std::string::npos) << joined(lines);
    EXPECT_EQ(lines.back().rfind("[unwind stopped: the stack snapshot ends after 16 bytes", 0), 0u)
        << joined(lines);
    EXPECT_LT(lines.size(), 5u) << joined(lines);
}

TEST(UserStackSnapshot, MaxFramesCutsWithDots) {
    std::vector<std::uint8_t> snap;
    probectl_snap_outer(&snap, kUstackSnapshotDefault);
    UserSymbolizer syms;
    ASSERT_TRUE(syms.capture(getpid()));
    const auto lines = syms.snapshotLines(getpid(), snap, true, 2);
    ASSERT_EQ(lines.size(), 3u) << joined(lines);
    EXPECT_NE(lines[1].find("probectl_snap_middle+0x"), std::string::npos);
    EXPECT_EQ(lines[2], "...");
}

TEST(UserStackSnapshot, WithoutMapsOnlyTheProbedInstruction) {
    std::vector<std::uint8_t> snap;
    probectl_snap_outer(&snap, 64);
    UserSymbolizer syms("/nonexistent");
    const auto lines = syms.snapshotLines(getpid(), snap, false);
    ASSERT_EQ(lines.size(), 2u) << joined(lines);
    EXPECT_NE(lines[0].find("[unknown]"), std::string::npos);
    EXPECT_EQ(lines[1], "[unwind stopped: no maps of the process]");
    EXPECT_EQ(syms.snapshotLines(getpid(), {}, false), std::vector<std::string>{"[no user stack]"});
}

TEST(UserStackSnapshot, ArgumentProgramAndDecoding) {
    ProbeRequest req;
    req.kind = ProbeKind::Uprobe;
    std::vector<FetchArg> args;
    ASSERT_TRUE(appendUserStackSnapshotArg(req, args, 0).ok());
    ASSERT_EQ(req.fetch.size(), 1u);
    EXPECT_EQ(req.fetch[0].op, PROBECTL_FETCH_STORE_USTACK_SNAPSHOT);
    EXPECT_EQ(req.fetch[0].operand, static_cast<std::uint32_t>(PROBECTL_USTACK_SNAPSHOT_DEFAULT));
    EXPECT_EQ(toString(req.fetch[0]), "store.usnapshot 3072");
    ASSERT_EQ(args.size(), 1u);
    EXPECT_EQ(args[0].name, "ustack");
    auto prog = compileFetchArg(args[0]);
    ASSERT_TRUE(prog.ok());
    EXPECT_EQ(prog->max_bytes, sizeof(probectl_ustack_regs) + PROBECTL_USTACK_SNAPSHOT_DEFAULT);
    // A second one, an oversized one: refused as usage errors.
    auto again = appendUserStackSnapshotArg(req, args, 64);
    ASSERT_FALSE(again.ok());
    EXPECT_TRUE(again.error().usage);
    std::vector<FetchArg> none;
    auto big = appendUserStackSnapshotArg(req, none, PROBECTL_USTACK_SNAPSHOT_MAX + 1);
    ASSERT_FALSE(big.ok());
    EXPECT_TRUE(big.error().usage);
    // The validator the kernel mirrors: alone, bounded.
    FetchInsn in = req.fetch[0];
    EXPECT_TRUE(validateFetchProgram(std::span(&in, 1)).ok());
    in.operand = 0;
    EXPECT_FALSE(validateFetchProgram(std::span(&in, 1)).ok());
    in.operand = PROBECTL_USTACK_SNAPSHOT_MAX + 1;
    EXPECT_FALSE(validateFetchProgram(std::span(&in, 1)).ok());

    std::vector<std::uint8_t> bytes(sizeof(probectl_ustack_regs) + 40, 0xab);
    FetchedValue v = decodeFetchedValue(args[0], bytes, PROBECTL_FETCH_V_TRUNCATED);
    EXPECT_TRUE(v.isSnapshot());
    EXPECT_TRUE(v.truncated);
    EXPECT_EQ(v.snapshot.size(), bytes.size());
    EXPECT_EQ(formatFetchedValue(v), "<user stack snapshot of 176 bytes>");
    FetchedValue f = decodeFetchedValue(args[0], {}, PROBECTL_FETCH_V_FAULT);
    EXPECT_TRUE(f.faulted);
    EXPECT_FALSE(f.isSnapshot());
}

TEST(UserStackSnapshot, PrintedUnderTheEventInTextAndJson) {
    Event ev;
    ev.probe_id = 3;
    ev.tgid = 42;
    ev.pid = 42;
    ev.comm = "app";
    ev.spec = "uprobe:/bin/app:leaf";
    FetchedValue v;
    v.name = "ustack";
    v.snapshot.assign(sizeof(probectl_ustack_regs), 0);
    ev.values.push_back(v);
    EventFormat f;
    f.user_snapshot = [](const Event& e, const FetchedValue& s) {
        EXPECT_EQ(e.tgid, 42u);
        EXPECT_TRUE(s.isSnapshot());
        return std::vector<std::string>{"leaf+0x4 (/bin/app)", "main+0x1d (/bin/app)"};
    };
    std::ostringstream text;
    {
        auto p = makePrinter(false, text);
        printEvent(*p, ev, f);
        p->flush();
    }
    EXPECT_NE(text.str().find("\n             leaf+0x4 (/bin/app)\n             main+0x1d "
                              "(/bin/app)"),
              std::string::npos)
        << text.str();
    EXPECT_EQ(text.str().find("snapshot"), std::string::npos) << text.str();
    std::ostringstream json;
    {
        auto p = makePrinter(true, json);
        printEvent(*p, ev, f);
        p->flush();
    }
    EXPECT_NE(json.str().find(R"j("ustack":["leaf+0x4 (/bin/app)","main+0x1d (/bin/app)"])j"),
              std::string::npos)
        << json.str();
}
