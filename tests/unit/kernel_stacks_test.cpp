// Kernel stacks on the host: $kstack parsing and its program, the stack map's wire form,
// frames symbolized from kallsyms text, folded lines, and stacks under printed events.
#include <cstring>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "aggr_cli.hpp"
#include "aggr_rows.hpp"
#include "probectl/aggr.hpp"
#include "probectl/event_print.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/predicate.hpp"
#include "probectl/printer.hpp"
#include "probectl/syscall_probe.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using probectl::test::entry;
using probectl::test::u32;

namespace {

// One stack as STACK_GET packs it: struct probectl_stack, then its frames.
void packStack(std::vector<std::uint8_t>& out, std::uint32_t id, std::uint16_t flags,
               const std::vector<std::uint64_t>& frames) {
    probectl_stack hdr{};
    hdr.id = id;
    hdr.nr = static_cast<std::uint16_t>(frames.size());
    hdr.flags = flags;
    const auto* h = reinterpret_cast<const std::uint8_t*>(&hdr);
    out.insert(out.end(), h, h + sizeof(hdr));
    const auto* f = reinterpret_cast<const std::uint8_t*>(frames.data());
    out.insert(out.end(), f, f + frames.size() * sizeof(std::uint64_t));
}

KernelSymbols symbols() {
    auto s = KernelSymbols::fromText(
        "ffffffff81000000 T do_sys_openat2\n"
        "ffffffff81000200 T __x64_sys_openat\n"
        "ffffffff81000300 T do_syscall_64\n"
        "ffffffff81000400 D some_data\n"
        "ffffffffc0001000 t ext4_file_open\t[ext4]\n"
        "ffffffffc0001100 t ext4_other\t[ext4]\n");
    EXPECT_TRUE(s) << s.error().message;
    return std::move(*s);
}

}  // namespace

TEST(KernelStackSpec, KstackIsAU32StackIdWithADepth) {
    auto a = parseFetchArg("s=$kstack");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->source->kind, FetchSource::Kind::KStack);
    EXPECT_EQ(a->type, FetchType::U32);
    EXPECT_EQ(a->str(), "s=$kstack:u32");
    auto p = compileFetchArg(*a);
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(p->insns.size(), 2u);
    EXPECT_EQ(p->insns[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadKstack));
    EXPECT_EQ(p->insns[0].operand, PROBECTL_STACK_DEFAULT_DEPTH);
    EXPECT_EQ(p->insns[1].op, static_cast<std::uint8_t>(FetchOpcode::StoreInt));
    EXPECT_EQ(p->insns[1].size, 4);

    auto d = parseFetchArg("$kstack8");
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->source->str(), "$kstack8");
    auto dp = compileFetchArg(*d);
    ASSERT_TRUE(dp);
    EXPECT_EQ(dp->insns[0].operand, 8u);
    EXPECT_EQ(toString(dp->insns[0]), "load.kstack 8");
}

TEST(KernelStackSpec, RefusesBadDepthsAndTypes) {
    EXPECT_FALSE(parseFetchArg("$kstack0"));
    EXPECT_FALSE(parseFetchArg("$kstack128"));
    EXPECT_FALSE(parseFetchArg("$kstack:string"));
    EXPECT_FALSE(parseFetchArg("$kstack:u64"));
    EXPECT_TRUE(parseFetchArg("$kstack127:u32"));
    // The host validator refuses what the kernel would.
    std::vector<FetchInsn> bad{{static_cast<std::uint8_t>(FetchOpcode::LoadKstack), 4, 0, 0, 0},
                               {static_cast<std::uint8_t>(FetchOpcode::StoreInt), 4, 0, 0, 0}};
    EXPECT_FALSE(validateFetchProgram(bad));
    bad[0].operand = 200;
    EXPECT_FALSE(validateFetchProgram(bad));
    bad[0].operand = 1;
    EXPECT_TRUE(validateFetchProgram(bad));
}

TEST(KernelStackArg, AppendedToKernelProbesOnly) {
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    std::vector<FetchArg> args;
    ASSERT_TRUE(appendKernelStackArg(req, args, 5));
    ASSERT_EQ(args.size(), 1u);
    EXPECT_EQ(args[0].name, kKernelStackArg);
    ASSERT_EQ(req.fetch.size(), 2u);
    EXPECT_EQ(req.fetch[0].operand, 5u);
    // Twice: the name is taken.
    auto again = appendKernelStackArg(req, args, 0);
    ASSERT_FALSE(again);
    EXPECT_TRUE(again.error().usage);

    ProbeRequest up;
    up.kind = ProbeKind::Uprobe;
    std::vector<FetchArg> none;
    auto r = appendKernelStackArg(up, none, 0);
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().usage);
    // A kprobe on a syscall wrapper has the flag too (its arguments are the user's) and
    // is an ordinary kprobe: its stack starts at the wrapper.
    ProbeRequest wrapper;
    wrapper.kind = ProbeKind::Kprobe;
    wrapper.flags = kProbeFlagSyscall;
    std::vector<FetchArg> wrapper_args;
    EXPECT_TRUE(appendKernelStackArg(wrapper, wrapper_args, 0));
    ProbeRequest tp;
    tp.kind = ProbeKind::Tracepoint;
    EXPECT_TRUE(appendKernelStackArg(tp, none, 0));
}

namespace {

FetchInsn insn(FetchOpcode op, std::uint8_t size = 8, std::uint32_t operand = 0) {
    return FetchInsn{static_cast<std::uint8_t>(op), size, 0, 0, operand};
}

FetchArg parsed(const std::string& text, bool is_return = true) {
    FetchOptions fo;
    fo.is_return = is_return;
    auto a = parseFetchArg(text, 1, fo);
    EXPECT_TRUE(a) << text;
    return *a;
}

}  // namespace

// A syscall: spec's stack is taken at the entry (the wrapper, not yet returned, is on it):
// its program goes after the strace plan's entry reads, before the ones at the return. It
// was refused once, for the plan's values would have shifted under the decoder.
TEST(KernelStackArg, SyscallStackGoesAmongTheEntryReads) {
    // openat's plan: its path, read at the return (plan.entry_args 0).
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    req.flags = kProbeFlagSyscall;
    auto path = compileFetchArg(syscallPlan("openat", nullptr).args[0]);
    ASSERT_TRUE(path);
    req.fetch = path->insns;
    req.fetch_entry = 0;
    std::vector<FetchArg> args;  // the plan's arguments are not the probe's own
    ASSERT_TRUE(appendKernelStackArg(req, args, 7));
    EXPECT_EQ(req.fetch_entry, 1u);
    ASSERT_EQ(req.fetch.size(), 2u + path->insns.size());
    EXPECT_EQ(req.fetch[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadKstack));
    EXPECT_EQ(req.fetch[0].operand, 7u);
    EXPECT_EQ(req.fetch[1].op, static_cast<std::uint8_t>(FetchOpcode::StoreInt));
    EXPECT_EQ(std::vector<FetchInsn>(req.fetch.begin() + 2, req.fetch.end()), path->insns);
    ASSERT_EQ(args.size(), 1u);
    EXPECT_EQ(args[0].name, kKernelStackArg);

    // The spec's own arguments: `f` at entry, `r` ($retval) at the return, which a
    // predicate reads by its place in the record: the stack goes between, `r` moves up.
    ProbeRequest own;
    own.kind = ProbeKind::Kretprobe;
    own.flags = kProbeFlagSyscall;
    std::vector<FetchArg> own_args = {parsed("f=+0($arg2):ustring"), parsed("r=$retval")};
    auto progs = compileFetchArgs(own_args);
    ASSERT_TRUE(progs);
    for (const auto& p : *progs)
        own.fetch.insert(own.fetch.end(), p.insns.begin(), p.insns.end());
    own.fetch_entry = 1;
    FilterInsn test;
    test.op = static_cast<std::uint8_t>(PredicateOpcode::Test);
    test.field_kind = static_cast<std::uint8_t>(PredicateFieldKind::Arg);
    test.arg_index = 1;
    own.filter.insns = {test};
    ASSERT_TRUE(appendKernelStackArg(own, own_args, 0));
    EXPECT_EQ(own.fetch_entry, 2u);
    ASSERT_EQ(own_args.size(), 3u);
    EXPECT_EQ(own_args[0].name, "f");
    EXPECT_EQ(own_args[1].name, kKernelStackArg);
    EXPECT_EQ(own_args[2].name, "r");
    EXPECT_EQ(own.filter.insns[0].arg_index, 2u);
    const std::size_t f_len = (*progs)[0].insns.size();
    EXPECT_EQ(own.fetch[f_len].op, static_cast<std::uint8_t>(FetchOpcode::LoadKstack));
    EXPECT_EQ(own.fetch.back().op, static_cast<std::uint8_t>(FetchOpcode::StoreInt));
    EXPECT_EQ(own.fetch[own.fetch.size() - 2].op,
              static_cast<std::uint8_t>(FetchOpcode::LoadRetval));

    // Any other kretprobe keeps its stack at the return, after its values.
    ProbeRequest ret;
    ret.kind = ProbeKind::Kretprobe;
    std::vector<FetchArg> ret_args = {parsed("r=$retval")};
    ret.fetch = {insn(FetchOpcode::LoadRetval), insn(FetchOpcode::StoreInt)};
    ASSERT_TRUE(appendKernelStackArg(ret, ret_args, 0));
    EXPECT_EQ(ret.fetch_entry, 0u);
    EXPECT_EQ(ret.fetch[2].op, static_cast<std::uint8_t>(FetchOpcode::LoadKstack));
    EXPECT_EQ(ret_args[1].name, kKernelStackArg);
}

// count syscall:NAME --by kstack: the plan is dropped (nothing decodes it) and the stack is
// read at the entry; keys after it keep their indexes.
TEST(KernelStackArg, SyscallStackKeyAtEntry) {
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    req.flags = kProbeFlagSyscall;
    std::vector<FetchArg> args = {parsed("r=$retval")};
    req.fetch = {insn(FetchOpcode::LoadRetval), insn(FetchOpcode::StoreInt)};
    AggrSpec a;
    a.keys = {"r", "comm", "kstack"};
    ASSERT_TRUE(prepareAggregation(a, req, args));
    ASSERT_EQ(args.size(), 3u);
    EXPECT_EQ(args[0].name, "kstack");
    EXPECT_EQ(args[1].name, "r");
    EXPECT_EQ(args[2].name, "comm");
    EXPECT_EQ(req.fetch_entry, 1u);
    EXPECT_EQ(req.fetch[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadKstack));
    ASSERT_EQ(req.aggr->nkeys, 3u);
    EXPECT_EQ(req.aggr->keys[0], 1u);
    EXPECT_EQ(req.aggr->keys[1], 2u);
    EXPECT_EQ(req.aggr->keys[2], 0u);
}

// The decoder: the plan's values around the stack, which is the probe's own value.
TEST(KernelStackArg, SyscallPlanValuesAroundTheStack) {
    SyscallPlan open = syscallPlan("openat", nullptr);
    open.entry_extra = 1;
    EXPECT_EQ(syscallValueIndex(open, 0), 1u);  // the path, read at the return
    EXPECT_EQ(syscallArgIndex(open, 0), 0u);    // the stack, at the entry
    EXPECT_EQ(syscallArgIndex(open, 1), 2u);    // a value appended after everything
    SyscallPlan exec = syscallPlan("execve", nullptr);
    exec.entry_extra = 1;
    EXPECT_EQ(syscallValueIndex(exec, 2), 2u);
    EXPECT_EQ(syscallArgIndex(exec, 0), exec.entry_args);
    SyscallPlan named;  // the spec's own arguments: no plan values around them
    named.name = "openat";
    named.entry_extra = 1;
    EXPECT_EQ(syscallArgIndex(named, 1), 1u);

    Event ev;
    ev.syscall = &open;
    ev.syscall_returned = true;
    ev.is_return = true;
    ev.args = {static_cast<std::uint64_t>(-100), 0x1000, 0, 0, 0, 0};
    ev.retval = 3;
    Event::RawValue id;
    id.bytes = {9, 0, 0, 0};
    Event::RawValue p;
    const std::string file = "/etc/hostname";
    p.bytes.assign(file.begin(), file.end());
    p.bytes.push_back(0);
    ev.fetched = {id, p};
    const SyscallRecord rec = syscallRecord(ev, open, true);
    ASSERT_TRUE(rec.mem[1]);
    EXPECT_EQ(rec.mem[1]->bytes, file);
}

// syscall: specs take --kstack and --by kstack; the ptrace backend refuses both, saying why.
TEST(KernelStackOptions, SyscallsYesPtraceNo) {
    using cli::parseTraceOptions;
    EXPECT_TRUE(parseTraceOptions({"syscall:openat", "--kstack"}));
    EXPECT_TRUE(parseTraceOptions({"--syscalls=openat,read", "--kstack", "--", "cat", "x"}));
    EXPECT_FALSE(parseTraceOptions({"uprobe:/bin/true:main", "--kstack"}));
    auto pt = parseTraceOptions({"syscall:openat", "--kstack", "--backend", "ptrace"});
    ASSERT_FALSE(pt);
    EXPECT_NE(pt.error().message.find("ptrace backend cannot take kernel stacks"),
              std::string::npos)
        << pt.error().message;

    using cli::AggrMode;
    using cli::parseAggrOptions;
    EXPECT_TRUE(parseAggrOptions(AggrMode::Count, {"syscall:openat", "--by", "kstack"}));
    auto cp = parseAggrOptions(AggrMode::Count,
                               {"syscall:openat", "--by", "kstack", "--backend", "ptrace"});
    ASSERT_FALSE(cp);
    EXPECT_NE(cp.error().message.find("--by kstack: the ptrace backend cannot take kernel stacks"),
              std::string::npos)
        << cp.error().message;
}

TEST(KernelStackMap, DecodesPackedStacks) {
    std::vector<std::uint8_t> wire;
    packStack(wire, 7, 0, {0xffffffff81000005, 0xffffffff81000210});
    packStack(wire, 9, PROBECTL_STACK_F_TRUNCATED, {0xffffffff81000005});
    packStack(wire, 12, 0, {});
    std::vector<KernelStack> out;
    ASSERT_TRUE(decodeKernelStacks(wire, out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].id, 7u);
    EXPECT_FALSE(out[0].truncated);
    EXPECT_EQ(out[0].frames, (std::vector<std::uint64_t>{0xffffffff81000005, 0xffffffff81000210}));
    EXPECT_TRUE(out[1].truncated);
    EXPECT_TRUE(out[2].frames.empty());
}

TEST(KernelStackMap, RefusesAStackCutShort) {
    std::vector<std::uint8_t> wire;
    packStack(wire, 1, 0, {0x1});
    packStack(wire, 2, 0, {0x1, 0x2});
    wire.resize(wire.size() - 4);
    std::vector<KernelStack> out;
    auto r = decodeKernelStacks(wire, out);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EBADMSG);
    EXPECT_EQ(out.size(), 1u);  // the whole one before it is kept
    std::vector<std::uint8_t> stray{1, 2, 3};
    EXPECT_FALSE(decodeKernelStacks(stray, out));
}

TEST(KernelStackText, SymbolPlusOffsetAndModule) {
    const KernelSymbols s = symbols();
    EXPECT_EQ(kernelFrameText(&s, 0xffffffff81000005), "do_sys_openat2+0x5");
    EXPECT_EQ(kernelFrameText(&s, 0xffffffff81000200), "__x64_sys_openat");
    EXPECT_EQ(kernelFrameText(&s, 0xffffffffc000101c), "ext4_file_open+0x1c [ext4]");
    // In data, or with no symbol table: the address.
    EXPECT_EQ(kernelFrameText(&s, 0xffffffff81000404), "0xffffffff81000404");
    EXPECT_EQ(kernelFrameText(nullptr, 0xffffffff81000005), "0xffffffff81000005");
}

TEST(KernelStackText, LinesEndWithAnEllipsisWhenTruncated) {
    const KernelSymbols s = symbols();
    KernelStack st;
    st.frames = {0xffffffff81000005, 0xffffffff81000300};
    EXPECT_EQ(kernelStackLines(&s, st),
              (std::vector<std::string>{"do_sys_openat2+0x5", "do_syscall_64"}));
    st.truncated = true;
    EXPECT_EQ(kernelStackLines(&s, st).back(), "...");
}

TEST(KernelStackText, FoldedIsRootFirstWithTheCount) {
    const std::vector<std::string> frames{"do_sys_openat2+0x5", "__x64_sys_openat+0x6e",
                                          "do_syscall_64+0x87"};
    EXPECT_EQ(foldedStack(frames, 42),
              "do_syscall_64+0x87;__x64_sys_openat+0x6e;do_sys_openat2+0x5 42");
    EXPECT_EQ(foldedStack(std::vector<std::string>{"a;b"}, 1), "a:b 1");
    EXPECT_EQ(foldedStack(std::vector<std::string>{}, 3), " 3");
}

namespace {

Event stackEvent(std::uint32_t id) {
    Event ev;
    ev.probe_id = 4;
    ev.spec = "kprobe:do_sys_openat2";
    ev.timestamp_ns = 2'000'000'000;
    ev.comm = "cat";
    ev.pid = ev.tgid = 77;
    FetchedValue v;
    v.name = "kstack";
    v.type = FetchType::U32;
    v.raw = id;
    ev.values.push_back(v);
    return ev;
}

std::string print(bool json, const Event& ev, const EventFormat& f) {
    std::ostringstream os;
    auto p = makePrinter(json, os);
    printEvent(*p, ev, f);
    p->flush();
    return os.str();
}

}  // namespace

TEST(KernelStackPrint, FramesUnderTheEventAndAsAJsonArray) {
    const std::vector<std::string> lines{"do_sys_openat2+0x5", "do_syscall_64+0x87"};
    EventFormat f;
    f.t0_ns = 1'000'000'000;
    f.kernel_stack = [&](std::uint32_t probe, std::uint32_t id) {
        EXPECT_EQ(probe, 4u);
        return id == 3 ? &lines : nullptr;
    };
    const std::string text = print(false, stackEvent(3), f);
    // The registers, as without the stack; then one indented frame per line.
    EXPECT_NE(text.find("kprobe:do_sys_openat2  arg1=0x0"), std::string::npos) << text;
    EXPECT_EQ(text.find("kstack="), std::string::npos) << text;
    EXPECT_NE(text.find("\n             do_sys_openat2+0x5\n             do_syscall_64+0x87"),
              std::string::npos)
        << text;

    auto j = nlohmann::json::parse(print(true, stackEvent(3), f));
    EXPECT_EQ(j["kstack_id"], 3);
    EXPECT_EQ(j["kstack"], nlohmann::json(lines));
    // The raw registers stay, as without the stack; the id is no argument.
    EXPECT_TRUE(j["args"].contains("arg1")) << j.dump();
    EXPECT_FALSE(j["args"].contains("kstack")) << j.dump();

    // Not kept (map full): said so, null in JSON.
    EXPECT_NE(print(false, stackEvent(0), f).find("<stack not kept: stack map full>"),
              std::string::npos);
    EXPECT_TRUE(nlohmann::json::parse(print(true, stackEvent(0), f))["kstack"].is_null());

    // Without the hook the value is a value like any other.
    EXPECT_NE(print(false, stackEvent(3), EventFormat{}).find("kstack=3"), std::string::npos);
}

namespace {

FetchedValue str(const char* name, const char* s) {
    FetchedValue f;
    f.name = name;
    f.type = FetchType::String;
    f.str = s;
    return f;
}

}  // namespace

// count --by comm,kstack: two ids with the same frames merge; rows most hits first; folded
// lines put the other keys outermost, then the stack root first.
TEST(KernelStackRows, MergedSortedAndFolded) {
    const std::vector<std::string> a{"do_sys_openat2+0x5", "do_syscall_64+0x87"};
    const std::vector<std::string> b{"vfs_read+0x1", "do_syscall_64+0x87"};
    AggrTable t;
    t.probe_id = 9;
    t.key_names = {"comm", "kstack"};
    t.entries.push_back(entry({str("comm", "cat"), u32("kstack", 1)}, 2));
    t.entries.push_back(entry({str("comm", "cat"), u32("kstack", 2)}, 5));
    t.entries.push_back(entry({str("comm", "cat"), u32("kstack", 3)}, 4));  // same frames as 1
    t.entries.push_back(entry({str("comm", "ls"), u32("kstack", 0)}, 1));   // not kept
    auto lines = [&](std::uint32_t probe, std::uint32_t id) -> const std::vector<std::string>* {
        EXPECT_EQ(probe, 9u);
        return id == 1 || id == 3 ? &a : id == 2 ? &b : nullptr;
    };
    const auto rows = stackRows(t, lines);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].count, 6u);
    EXPECT_EQ(rows[0].lines, a);
    EXPECT_EQ(rows[1].count, 5u);
    EXPECT_EQ(rows[2].count, 1u);
    EXPECT_TRUE(rows[2].lines.empty());
    EXPECT_EQ(formatFoldedRows(rows),
              "cat;do_syscall_64+0x87;do_sys_openat2+0x5 6\n"
              "cat;do_syscall_64+0x87;vfs_read+0x1 5\n"
              "ls;[stack not kept] 1\n");
    const std::string text = formatStackRows(rows, 2);
    EXPECT_EQ(text,
              "    do_sys_openat2+0x5\n    do_syscall_64+0x87\n  6  cat\n\n"
              "    vfs_read+0x1\n    do_syscall_64+0x87\n  5  cat\n\n");
}
