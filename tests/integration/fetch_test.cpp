// Fetch arguments (NAME=SOURCE[:TYPE]) against the real module: strings from user memory,
// nested dereferences of kernel structs, return values, USDT arguments, faults, and the
// kernel's refusal of crafted programs.
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::fetchAddrOperand;
using probectl::FetchInsn;
using probectl::FetchOpcode;
using probectl::kFetchAddrNoBase;
using probectl::Session;

namespace {

std::vector<Event> traceFetch(const std::string& spec, std::vector<std::string> argv,
                              std::string* out = nullptr) {
    Workload w(std::move(argv));
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    w.release();
    EXPECT_EQ(w.wait(out), 0);
    std::vector<Event> events;
    auto st = s->stop([&](const Event& e) { events.push_back(e); });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return a.timestamp_ns < b.timestamp_ns; });
    return events;
}

}  // namespace

// The path string is read from the process's memory: it equals what the workload opened.
TEST(Fetch, UserStringOfASyscallArgument) {
    const std::string path = "/proc/self/status";
    auto ev = traceFetch("syscall:openat path=+0($arg2):ustring flags=$arg3:x32",
                         {itest::workload("open_file"), path});
    auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
        return !e.values.empty() && e.values[0].str == path;
    });
    ASSERT_NE(it, ev.end()) << "no openat of " << path << " among " << ev.size();
    ASSERT_EQ(it->values.size(), 2u);
    EXPECT_EQ(it->values[0].name, "path");
    EXPECT_FALSE(it->values[0].faulted);
    EXPECT_FALSE(it->values[0].truncated);
    EXPECT_EQ(it->values[1].raw, 0u) << "O_RDONLY";
}

// Two levels: do_filp_open's (do_file_open's) struct filename (kernel memory) starts with the
// pointer to the kernel's copy of the path.
TEST(Fetch, NestedDereferenceThroughAKernelStruct) {
    const std::string path = "/proc/self/stat";
    // 7.2 renamed it do_file_open (same arguments).
    const std::string fn =
        itest::readFile("/proc/kallsyms").find(" do_filp_open\n") != std::string::npos
            ? "do_filp_open"
            : "do_file_open";
    auto ev = traceFetch("kprobe:" + fn + " dfd=$arg1:s32 path=+0(+0($arg2)):string",
                         {itest::workload("open_file"), path});
    auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
        return e.values.size() == 2 && e.values[1].str == path;
    });
    ASSERT_NE(it, ev.end()) << ev.size() << " events";
    EXPECT_EQ(static_cast<std::int32_t>(it->values[0].raw), AT_FDCWD);
}

// A syscall wrapper's $argN are the syscall's own arguments (the kernel reads them from the
// user's pt_regs the wrapper receives), for kprobes and kretprobes alike.
TEST(Fetch, SyscallWrapperArgumentsAreTheSyscalls) {
    const std::string path = "/proc/self/stat";
    for (const char* kind : {"kprobe", "kretprobe"}) {
        auto ev = traceFetch(std::string(kind) +
                                 ":__x64_sys_openat dfd=$arg1:s32 path=+0($arg2):ustring "
                                 "flags=$arg3:u32",
                             {itest::workload("open_file"), path});
        auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
            return e.values.size() == 3 && e.values[1].str == path;
        });
        ASSERT_NE(it, ev.end()) << kind << ": " << ev.size() << " events";
        EXPECT_EQ(static_cast<std::int32_t>(it->values[0].raw), AT_FDCWD) << kind;
        EXPECT_EQ(it->values[2].raw, 0u) << kind << ": O_RDONLY";
        EXPECT_EQ(static_cast<std::int32_t>(it->args[0]), AT_FDCWD) << kind << ": record args";
    }
}

// Integer-only values take the kernel's short path (probectl_fetch_ints): each is its width,
// zero-extended, or a fault with no value; and a record's args part is still filled when no
// value reads $argN.
TEST(Fetch, IntegerValuesWidthsFaultsAndTheArgsPart) {
    const std::string path = "/proc/self/stat";
    auto ev = traceFetch(
        "kprobe:__x64_sys_openat flags=$arg3:u32 bad=+0($arg2):u64 fd8=$arg1:u8 "
        "r15=+0(%di):x64",
        {itest::workload("open_file"), path});
    auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
        return e.values.size() == 4 && static_cast<std::int32_t>(e.args[0]) == AT_FDCWD;
    });
    ASSERT_NE(it, ev.end()) << ev.size() << " events";
    EXPECT_FALSE(it->values[0].faulted);
    EXPECT_EQ(it->values[0].raw & O_ACCMODE, 0u) << "O_RDONLY";
    EXPECT_LE(it->values[0].raw, 0xffffffffu);
    EXPECT_TRUE(it->values[1].faulted) << "a user address read as kernel memory";
    EXPECT_EQ(it->values[1].raw, 0u);
    EXPECT_FALSE(it->values[2].faulted);
    EXPECT_EQ(it->values[2].raw, static_cast<std::uint8_t>(AT_FDCWD)) << "u8: low byte only";
    EXPECT_FALSE(it->values[3].faulted);

    auto noarg =
        traceFetch("kprobe:__x64_sys_openat r15=+0(%di):x64", {itest::workload("open_file"), path});
    auto hit = std::find_if(noarg.begin(), noarg.end(), [&](const Event& e) {
        return static_cast<std::int32_t>(e.args[0]) == AT_FDCWD;
    });
    ASSERT_NE(hit, noarg.end()) << "no record with the args part filled among " << noarg.size();
    ASSERT_EQ(hit->values.size(), 1u);
    EXPECT_FALSE(hit->values[0].faulted);
}

// pc_add's first argument is a small integer: reading it as a pointer faults, and the
// value says so instead of showing an empty or stale string.
TEST(Fetch, BadPointerIsAFaultNotAnEmptyString) {
    auto ev =
        traceFetch("uprobe:" + itest::uprobeTarget() + ":pc_add bad=+0($arg1):ustring n=$arg1:s64",
                   {itest::uprobeTarget(), "calls", "5"});
    ASSERT_EQ(ev.size(), 5u);
    for (std::size_t i = 0; i < ev.size(); i++) {
        ASSERT_EQ(ev[i].values.size(), 2u);
        EXPECT_TRUE(ev[i].values[0].faulted) << "call " << i + 1;
        EXPECT_TRUE(ev[i].values[0].str.empty());
        EXPECT_FALSE(ev[i].values[1].faulted);
        EXPECT_EQ(ev[i].values[1].raw, i + 1);
    }
}

TEST(Fetch, ReturnValueAndSavedEntryArguments) {
    auto ev = traceFetch(
        "uretprobe:" + itest::uprobeTarget() + ":pc_add a=$arg1:s64 b=$arg2:s64 r=$retval:s64",
        {itest::uprobeTarget(), "calls", "50"});
    ASSERT_EQ(ev.size(), 50u);
    for (std::size_t i = 1; i <= ev.size(); i++) {
        const auto& v = ev[i - 1].values;
        ASSERT_EQ(v.size(), 3u);
        EXPECT_EQ(v[0].raw, i);
        EXPECT_EQ(v[1].raw, 2 * i + 1);
        EXPECT_EQ(v[2].raw, 3 * i + 1);
    }
}

// DTRACE_PROBE2(pc, tick, i, i * i): the note's argument specs become arg1, arg2.
TEST(Fetch, UsdtArgumentsFromTheNote) {
    auto ev = traceFetch("usdt:" + itest::uprobeTarget() + ":pc:tick",
                         {itest::uprobeTarget(), "usdt", "20"});
    ASSERT_EQ(ev.size(), 20u);
    for (std::size_t i = 1; i <= ev.size(); i++) {
        const auto& v = ev[i - 1].values;
        ASSERT_EQ(v.size(), 2u);
        EXPECT_EQ(v[0].name, "arg1");
        EXPECT_EQ(v[0].raw, i);
        EXPECT_EQ(v[1].raw, i * i);
    }
}

TEST(Fetch, CommPidAndStringBound) {
    auto ev = traceFetch("syscall:openat c=$comm p=$pid path=+0($arg2):ustring",
                         {itest::workload("open_file"), "/proc/self/cmdline"});
    auto it = std::find_if(ev.begin(), ev.end(), [](const Event& e) {
        return e.values.size() == 3 && e.values[2].str == "/proc/self/cmdline";
    });
    ASSERT_NE(it, ev.end());
    EXPECT_EQ(it->values[0].str, "open_file");
    EXPECT_EQ(it->values[1].raw, it->tgid);
}

// Programs crafted past libctl's checks: the kernel refuses each, saying why, and stays
// clean (the suite checks the kernel log).
TEST(FetchErrors, KernelRefusesCraftedPrograms) {
    auto c = itest::connectOrDie();
    auto op = [](FetchOpcode o) { return static_cast<std::uint8_t>(o); };
    struct Case {
        std::vector<FetchInsn> insns;
        const char* message;
    };
    const std::vector<Case> cases = {
        {{{op(FetchOpcode::Deref), 8, 0, 0, 0}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "dereference before a load"},
        {{{99, 8, 0, 0, 0}}, "unknown opcode"},
        {{{op(FetchOpcode::LoadArg), 8, 0, 0, 1}}, "does not end with a store"},
        {{{op(FetchOpcode::LoadArg), 8, 0, 0, 7}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "$argN out of 1..6"},
        {{{op(FetchOpcode::LoadArg), 8, 0, 0, 1}, {op(FetchOpcode::StoreString), 0, 0, 0, 9000}},
         "string bound"},
        {{{op(FetchOpcode::LoadRetval), 8, 0, 0, 0}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "$retval outside a return probe"},
        {{{op(FetchOpcode::LoadReg), 8, 0, 0, 21}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "bad register"},
        {{{op(FetchOpcode::LoadArg), 8, 0, 0, 1}, {op(FetchOpcode::StoreInt), 3, 0, 0, 0}},
         "store size"},
        {{{op(FetchOpcode::LoadArg), 8, 8, 0, 1}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "unknown flags"},
        {{{op(FetchOpcode::LoadArg), 8, 4, 0, 1}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "func-entry flag outside load-ustack"},
        {{{op(FetchOpcode::LoadUstack), 4, 0, 0, 128}, {op(FetchOpcode::StoreInt), 4, 0, 0, 0}},
         "ustack depth out of 1..127"},
        {{{op(FetchOpcode::StoreUstackSnapshot), 0, 0, 0, 0}},
         "ustack snapshot size out of 1..3584"},
        {{{op(FetchOpcode::StoreUstackSnapshot), 0, 0, 0, 3585}}, "ustack snapshot size"},
        {{{op(FetchOpcode::LoadPid), 4, 0, 0, 0},
          {op(FetchOpcode::StoreUstackSnapshot), 0, 0, 0, 64}},
         "ustack snapshot after a load"},
        // load-addr: registers of pt_regs (the base also none), a scale, nothing else.
        {{{op(FetchOpcode::LoadAddr), 8, 0, 0, fetchAddrOperand(21, 10)},
          {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "load-addr: bad base register"},
        {{{op(FetchOpcode::LoadAddr), 8, 0, 0, fetchAddrOperand(kFetchAddrNoBase, 21)},
          {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "load-addr: bad index register"},
        {{{op(FetchOpcode::LoadAddr), 3, 0, 0, fetchAddrOperand(16, 10)},
          {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "load-addr: scale not 1, 2, 4, 8"},
        {{{op(FetchOpcode::LoadAddr), 8, 0, 4, fetchAddrOperand(16, 10)},
          {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "load-addr: offset or upper bits set"},
        {{{op(FetchOpcode::LoadAddr), 8, 0, 0, 1u << 16}, {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "load-addr: offset or upper bits set"},
        {{{op(FetchOpcode::LoadPid), 4, 0, 0, 0},
          {op(FetchOpcode::LoadAddr), 8, 0, 0, fetchAddrOperand(16, 10)},
          {op(FetchOpcode::StoreInt), 8, 0, 0, 0}},
         "a load that is not first"},
        // Two snapshots and their registers overflow a record.
        {{{op(FetchOpcode::StoreUstackSnapshot), 0, 0, 0, 3584},
          {op(FetchOpcode::StoreUstackSnapshot), 0, 0, 0, 3584}},
         "records hold"},
    };
    for (const auto& tc : cases) {
        probectl::ProbeRequest req;
        req.kind = probectl::ProbeKind::Kprobe;
        req.symbol = "do_nanosleep";
        req.fetch = tc.insns;
        auto r = c.addProbe(req);
        ASSERT_FALSE(r) << tc.message;
        EXPECT_EQ(r.error().err, EINVAL) << tc.message;
        EXPECT_NE(r.error().extack.find(tc.message), std::string::npos)
            << "want '" << tc.message << "', got: " << r.error().extack;
    }
    // 16 dereferences: too deep, and too long.
    std::vector<FetchInsn> deep = {{op(FetchOpcode::LoadArg), 8, 0, 0, 1}};
    for (int i = 0; i < 9; i++)
        deep.push_back({op(FetchOpcode::Deref), 8, 0, 0, 0});
    deep.push_back({op(FetchOpcode::StoreInt), 8, 0, 0, 0});
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Kprobe;
    req.symbol = "do_nanosleep";
    req.fetch = deep;
    auto r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().extack.find("more than 8 dereferences"), std::string::npos)
        << r.error().extack;
    // Values that cannot fit one record.
    std::vector<FetchInsn> big;
    for (int i = 0; i < 2; i++) {
        big.push_back({op(FetchOpcode::LoadArg), 8, 0, 0, 1});
        big.push_back({op(FetchOpcode::StoreString), 0, 0, 0, 4096});
    }
    req.fetch = big;
    r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().extack.find("records hold"), std::string::npos) << r.error().extack;
}
