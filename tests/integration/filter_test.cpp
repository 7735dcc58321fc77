// In-kernel filters against the real module: per-probe predicates (`SPEC ... if EXPR`) keep
// exactly the matching calls of known workloads on every probe kind, with the rejected ones
// counted (delivered + dropped + rejected == hits); the session's task match (--pid, --tid,
// --uid, --comm) counts what it skips as filtered, and a filtered pid handed to a new process
// leaves the filter; the tgid filter counts its living processes, SESSION_ADD adds to it, and a
// process forked while a following session opens stays in it; crafted bad predicates are
// refused with messages (the suite checks the kernel log stays clean).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/client.hpp"
#include "probectl/session.hpp"
#include "session/open_test_hook.hpp"
#include "uapi/probectl.h"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::FilterInsn;
using probectl::ProbeStats;
using probectl::Session;
using probectl::SessionOptions;

namespace {

struct FilterTraced {
    std::vector<Event> events;
    ProbeStats stats;  // of the first probe
};

// Runs argv held at its gate under a session filtered on its pid (plus `o`), with `spec`;
// argv must exit with `status`.
FilterTraced traceFiltered(const std::string& spec, std::vector<std::string> argv,
                           SessionOptions o = {}, bool filter_on_pid = true, int status = 0) {
    Workload w(std::move(argv));
    const auto pid = static_cast<std::uint32_t>(w.pid());  // wait() forgets it
    if (filter_on_pid)
        o.tgids = {pid};
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    w.release();
    EXPECT_EQ(w.wait(), status);
    FilterTraced t;
    auto st = s->stop([&](const Event& e) {
        if (e.tgid == pid || !filter_on_pid)
            t.events.push_back(e);
    });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    t.stats = st->probes.at(0);
    std::sort(t.events.begin(), t.events.end(),
              [](const Event& a, const Event& b) { return a.timestamp_ns < b.timestamp_ns; });
    return t;
}

// Every hit is accounted for: delivered, dropped (none expected) or rejected.
void expectFilterBalanced(const ProbeStats& s) {
    EXPECT_EQ(s.dropped, 0u);
    EXPECT_EQ(s.delivered + s.dropped + s.rejected, s.hits)
        << "hits " << s.hits << " delivered " << s.delivered << " rejected " << s.rejected;
}

}  // namespace

// uprobe, integer predicate: pc_add(i, 2i+1) for i = 1..10 keeps i in 4..6 only.
TEST(Filter, UprobeKeepsExactlyTheMatchingCalls) {
    auto t =
        traceFiltered("uprobe:" + itest::uprobeTarget() + ":pc_add a=$arg1:s64 if a >= 4 && a <= 6",
                      {itest::uprobeTarget(), "calls", "10"});
    ASSERT_EQ(t.events.size(), 3u);
    for (std::size_t i = 0; i < 3; i++)
        EXPECT_EQ(t.events[i].values.at(0).raw, 4 + i);
    EXPECT_EQ(t.stats.hits, 10u);
    EXPECT_EQ(t.stats.rejected, 7u);
    expectFilterBalanced(t.stats);
}

// A string read from user memory, glob-matched in the kernel.
TEST(Filter, UprobeGlobOnAUserString) {
    auto t = traceFiltered(
        "uprobe:" + itest::uprobeTarget() + R"(:pc_path p=+0($arg1):string if p ~ "/etc/*")",
        {itest::uprobeTarget(), "paths", "/etc/passwd", "/tmp/etc/x", "/etc/hostname", "/usr/etc",
         "/etc"});
    ASSERT_EQ(t.events.size(), 2u);
    EXPECT_EQ(t.events[0].values.at(0).str, "/etc/passwd");
    EXPECT_EQ(t.events[1].values.at(0).str, "/etc/hostname");
    EXPECT_EQ(t.stats.hits, 5u);
    EXPECT_EQ(t.stats.rejected, 3u);
    expectFilterBalanced(t.stats);
}

// uretprobe on $retval: pc_path returns strlen, so keeps the paths longer than 6 bytes; `!=`
// on the string in the same predicate (exact compare, no glob characters).
TEST(Filter, UretprobeRetvalAndStringInequality) {
    auto t = traceFiltered(
        "uretprobe:" + itest::uprobeTarget() +
            R"(:pc_path n=$retval:s64 p=+0($arg1):string if n > 6 && p != "/a/b/c/d")",
        {itest::uprobeTarget(), "paths", "/a", "/a/b/c/d", "/abcdefgh", "/x/y/z/w/v"});
    ASSERT_EQ(t.events.size(), 2u);
    EXPECT_EQ(t.events[0].values.at(1).str, "/abcdefgh");
    EXPECT_EQ(t.events[1].values.at(1).str, "/x/y/z/w/v");
    EXPECT_EQ(t.stats.rejected, 2u);
    expectFilterBalanced(t.stats);
}

// USDT: the predicate names the probe's own arguments (arg1 = i, arg2 = i*i for i = 1..5).
TEST(Filter, UsdtOnItsOwnArguments) {
    auto t = traceFiltered("usdt:" + itest::uprobeTarget() + ":pc:tick if arg2 > 4 && arg2 != 16",
                           {itest::uprobeTarget(), "usdt", "5"});
    ASSERT_EQ(t.events.size(), 2u);
    EXPECT_EQ(t.events[0].values.at(0).raw, 3u);
    EXPECT_EQ(t.events[1].values.at(0).raw, 5u);
    EXPECT_EQ(t.stats.hits, 5u);
    EXPECT_EQ(t.stats.rejected, 3u);
    expectFilterBalanced(t.stats);
}

// kprobe (syscall wrapper) on a user string: open_file opens exactly its argument once.
TEST(Filter, SyscallGlobKeepsTheOneOpen) {
    auto t = traceFiltered(R"(syscall:openat path=+0($arg2):ustring if path ~ "/proc/self/st*")",
                           {itest::workload("open_file"), "/proc/self/status"});
    ASSERT_EQ(t.events.size(), 1u);
    EXPECT_EQ(t.events[0].values.at(0).str, "/proc/self/status");
    EXPECT_EQ(t.stats.rejected, t.stats.hits - 1) << "the loader's own opens, if any";
    expectFilterBalanced(t.stats);
}

// kretprobe on $retval with a signed compare: opening a missing file returns -ENOENT.
TEST(Filter, KretprobeNegativeRetval) {
    Workload w({itest::workload("open_file"), "/nonexistent/filter-test"});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    // The loader may miss files too (library search): the path singles out the workload's.
    // On the syscall wrapper $arg2 is openat's own path argument (read from the user's
    // pt_regs): the same on every kernel, unlike do_sys_openat2's signature.
    auto id = s->add(
        R"(kretprobe:__x64_sys_openat r=$retval:s64 p=+0($arg2):ustring if r == -2 && p ~ "/nonex*")");
    ASSERT_TRUE(id) << why(id);
    w.release();
    EXPECT_EQ(w.wait(), 1) << "open_file exits 1 when the open fails";
    std::vector<Event> ev;
    auto st = s->stop([&](const Event& e) { ev.push_back(e); });
    ASSERT_TRUE(st) << why(st);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(static_cast<std::int64_t>(ev[0].values.at(0).raw), -2);
    expectFilterBalanced(st->probes.at(0));
}

// $retval directly in the predicate of every return probe, without fetching it.
TEST(Filter, RetvalInReturnProbesWithoutFetchingIt) {
    // pc_add(i, 2i+1) returns 3i+1: 4 7 10 13 for i = 1..4.
    auto u = traceFiltered("uretprobe:" + itest::uprobeTarget() + ":pc_add if $retval > 7",
                           {itest::uprobeTarget(), "calls", "4"});
    ASSERT_EQ(u.events.size(), 2u);
    EXPECT_EQ(u.events[0].retval, 10u);
    EXPECT_EQ(u.events[1].retval, 13u);
    EXPECT_TRUE(u.events[0].values.empty()) << "nothing fetched";
    EXPECT_EQ(u.stats.rejected, 2u);
    expectFilterBalanced(u.stats);
    // Signed: opening a missing file returns -ENOENT. The loader's own misses may add more.
    for (const char* spec :
         {"kretprobe:__x64_sys_openat if $retval == -2", "syscall:openat if $retval < 0"}) {
        // open_file exits 1 when its open fails.
        auto k = traceFiltered(spec, {itest::workload("open_file"), "/nonexistent/filter-test"}, {},
                               true, 1);
        ASSERT_GE(k.events.size(), 1u) << spec;
        for (const Event& e : k.events)
            EXPECT_EQ(static_cast<std::int64_t>(e.retval), -2) << spec;
        EXPECT_EQ(k.stats.rejected, k.stats.hits - k.events.size()) << spec;
        expectFilterBalanced(k.stats);
    }
}

// An int function's -3 is 4294967293 in the 64-bit return register: `$retval < -2` keeps
// none of pc_neg's returns, `$retval:s32 < -2` compares its low 32 bits as signed.
TEST(Filter, RetvalTakesTheFunctionsIntType) {
    const std::string spec = "uretprobe:" + itest::uprobeTarget() + ":pc_neg if $retval";
    auto typed = traceFiltered(spec + ":s32 < -2", {itest::uprobeTarget(), "neg", "4"});
    ASSERT_EQ(typed.events.size(), 2u);
    EXPECT_EQ(static_cast<std::int32_t>(typed.events[0].retval), -3);
    EXPECT_EQ(static_cast<std::int32_t>(typed.events[1].retval), -4);
    EXPECT_EQ(typed.stats.rejected, 2u);
    expectFilterBalanced(typed.stats);
    auto wide = traceFiltered(spec + " < -2", {itest::uprobeTarget(), "neg", "4"});
    EXPECT_EQ(wide.events.size(), 0u);
    EXPECT_EQ(wide.stats.rejected, 4u);
}

// $comm and $tid in a predicate need no fetch arguments.
TEST(Filter, SpecialsWithoutFetchArguments) {
    auto keep = traceFiltered(R"(syscall:getppid if $comm == "getppid_loop" && $tid != 0)",
                              {itest::workload("getppid_loop"), "20"});
    EXPECT_EQ(keep.events.size(), 20u);
    EXPECT_EQ(keep.stats.rejected, 0u);
    auto none = traceFiltered(R"(syscall:getppid if $comm ~ "zz*")",
                              {itest::workload("getppid_loop"), "20"});
    EXPECT_EQ(none.events.size(), 0u);
    EXPECT_EQ(none.stats.rejected, 20u);
    expectFilterBalanced(none.stats);
}

// Session task match: --comm, --uid, --tid keep or skip every hit, counted as filtered.
TEST(SessionMatch, CommUidTid) {
    const std::vector<std::string> argv = {itest::workload("getppid_loop"), "15"};
    SessionOptions o;
    o.match_comm = "getppid_l*";
    auto t = traceFiltered("syscall:getppid", argv, o);
    EXPECT_EQ(t.events.size(), 15u);
    EXPECT_EQ(t.stats.filtered, 0u);

    o = {};
    o.match_comm = "[!g]*";
    t = traceFiltered("syscall:getppid", argv, o);
    EXPECT_EQ(t.events.size(), 0u);
    EXPECT_EQ(t.stats.filtered, 15u);
    EXPECT_EQ(t.stats.hits, 0u) << "filtered hits are not in HITS";

    o = {};
    o.match_uids = {static_cast<std::uint32_t>(::getuid())};
    t = traceFiltered("syscall:getppid", argv, o);
    EXPECT_EQ(t.events.size(), 15u);
    o.match_uids = {54321};
    t = traceFiltered("syscall:getppid", argv, o);
    EXPECT_EQ(t.events.size(), 0u);
    EXPECT_EQ(t.stats.filtered, 15u);

    o = {};
    o.match_tids = {1};  // init's thread: never the workload
    t = traceFiltered("syscall:getppid", argv, o);
    EXPECT_EQ(t.events.size(), 0u);
    EXPECT_EQ(t.stats.filtered, 15u);
}

// A comm holds at most 15 bytes: a longer --comm (a program's full name) matched nothing and
// a run counted every hit as filtered; the session is refused, naming the glob. At the bound
// (15 bytes and a '*') it opens.
TEST(SessionMatch, CommGlobLongerThanACommIsRefused) {
    SessionOptions o;
    o.match_comm = "averyveryverylongname";
    auto s = Session::open(o);
    ASSERT_FALSE(s) << "a comm glob of 21 bytes was accepted";
    EXPECT_NE(why(s).find("comm glob 'averyveryverylongname' can never match: a task's comm is "
                          "at most 15 bytes"),
              std::string::npos)
        << why(s);
    o.match_comm = "averyveryverylo*";
    auto ok = Session::open(o);
    EXPECT_TRUE(ok) << why(ok);
}

// --pid without -p: a system-wide session keeps the one process's hits; a uprobe with the
// match on another pid records nothing although the breakpoint is armed everywhere.
TEST(SessionMatch, PidListIsAPureFilter) {
    Workload w({itest::workload("getppid_loop"), "12"});
    const auto pid = static_cast<std::uint32_t>(w.pid());
    SessionOptions o;
    o.match_pids = {pid};
    o.match_tids = {pid};  // single-threaded: tid == pid
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    ASSERT_TRUE(s->add("syscall:getppid"));
    w.release();
    EXPECT_EQ(w.wait(), 0);
    std::vector<Event> ev;
    auto st = s->stop([&](const Event& e) { ev.push_back(e); });
    ASSERT_TRUE(st) << why(st);
    EXPECT_EQ(ev.size(), 12u);
    for (const auto& e : ev)
        EXPECT_EQ(e.tgid, pid);
    EXPECT_EQ(st->probes.at(0).hits, 12u);

    SessionOptions other;
    other.match_pids = {1};
    auto t = traceFiltered("uprobe:" + itest::uprobeTarget() + ":pc_add",
                           {itest::uprobeTarget(), "calls", "5"}, other, false);
    EXPECT_EQ(t.events.size(), 0u);
    EXPECT_EQ(t.stats.filtered, 5u);
}

// Predicates crafted past libctl's checks: the kernel refuses each, naming the rule.
TEST(FilterErrors, KernelRefusesCraftedPredicates) {
    auto c = itest::connectOrDie();
    auto test = [](std::uint8_t cmp, std::uint8_t field, std::uint8_t flags, std::uint16_t arg,
                   std::uint16_t width, std::uint64_t value) {
        return FilterInsn{PROBECTL_FILTER_TEST, cmp, field, flags, arg, width, value};
    };
    auto op = [](std::uint8_t o) { return FilterInsn{o}; };
    const FilterInsn int8 = test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_ARG, 0, 0, 8, 1);
    struct Case {
        std::vector<FilterInsn> insns;
        std::vector<std::string> strings;
        const char* message;
    };
    const std::vector<Case> cases = {
        {{op(9)}, {}, "instruction 1: unknown opcode"},
        {{op(PROBECTL_FILTER_AND)}, {}, "instruction 1: stack underflow"},
        {{int8, int8}, {}, "leaves 2 values"},
        {{int8, op(PROBECTL_FILTER_NOT), op(PROBECTL_FILTER_OR)},
         {},
         "instruction 3: stack underflow"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_ARG, 0, 2, 8, 1)},
         {},
         "arg beyond the fetch list"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_ARG, 0, 0, 4, 1)}, {}, "width differs"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_ARG, PROBECTL_FILTER_F_STRING, 0, 0, 0)},
         {"x"},
         "string compare on an integer"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_COMM, 0, 0, 4, 0)},
         {},
         "integer compare on a string"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_COMM, PROBECTL_FILTER_F_STRING, 0, 0, 1)},
         {"a"},
         "string index out of range"},
        {{test(PROBECTL_FILTER_LT, PROBECTL_FILTER_FIELD_COMM, PROBECTL_FILTER_F_STRING, 0, 0, 0)},
         {"a"},
         "strings take == != ~ !~ only"},
        {{test(PROBECTL_FILTER_GLOB, PROBECTL_FILTER_FIELD_PID, 0, 0, 4, 0)},
         {},
         "glob on an integer"},
        {{test(42, PROBECTL_FILTER_FIELD_PID, 0, 0, 4, 0)}, {}, "unknown comparison"},
        {{test(PROBECTL_FILTER_EQ, 17, 0, 0, 4, 0)}, {}, "unknown field"},
        {{test(PROBECTL_FILTER_LT, PROBECTL_FILTER_FIELD_RETVAL, PROBECTL_FILTER_F_SIGNED, 0, 8,
               0)},
         {},
         "retval in a probe that does not return"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_PID, 0x80, 0, 4, 0)}, {}, "unknown flags"},
        {{test(PROBECTL_FILTER_EQ, PROBECTL_FILTER_FIELD_COMM, PROBECTL_FILTER_F_STRING, 0, 0, 0)},
         {std::string(256, 'a')},
         "PROBE_FILTER_STRINGS"},
    };
    // One u64 fetch argument ($arg1): index 0 exists, width 8.
    const std::vector<probectl::FetchInsn> fetch = {
        {static_cast<std::uint8_t>(probectl::FetchOpcode::LoadArg), 8, 0, 0, 1},
        {static_cast<std::uint8_t>(probectl::FetchOpcode::StoreInt), 8, 0, 0, 0}};
    for (const auto& tc : cases) {
        probectl::ProbeRequest req;
        req.kind = probectl::ProbeKind::Kprobe;
        req.symbol = "do_nanosleep";
        req.fetch = fetch;
        req.filter.insns = tc.insns;
        req.filter.strings = tc.strings;
        auto r = c.addProbe(req);
        ASSERT_FALSE(r) << tc.message;
        EXPECT_EQ(r.error().err, EINVAL) << tc.message;
        EXPECT_NE(r.error().extack.find(tc.message), std::string::npos)
            << "want '" << tc.message << "', got: " << r.error().extack;
    }
    // Longer than PROBECTL_FILTER_MAX_INSNS: refused by the attribute policy.
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Kprobe;
    req.symbol = "do_nanosleep";
    req.fetch = fetch;
    req.filter.insns.assign(PROBECTL_FILTER_MAX_INSNS + 1, op(PROBECTL_FILTER_NOT));
    req.filter.insns[0] = int8;
    auto r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().err == EINVAL || r.error().err == ERANGE) << r.error().describe();
    // A predicate on a persistent probe, which never produces records.
    req.filter.insns = {int8};
    req.flags = PROBECTL_PROBE_F_PERSISTENT;
    req.fetch.clear();
    r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().extack.find("persistent"), std::string::npos) << r.error().extack;
    // Nothing was left behind.
    for (const auto& p : itest::listOrDie(c))
        EXPECT_NE(p.symbol, "do_nanosleep") << "probe " << p.id << " left behind";
}

// SESSION_MATCH bounds (checked by libctl before sending), and a match set then removed.
TEST(FilterErrors, KernelRefusesBadTaskMatch) {
    auto c = itest::connectOrDie();
    auto r = c.setSessionMatch({}, {}, {}, std::string(64, 'x'));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    r = c.setSessionMatch(std::vector<std::uint32_t>(65, 1), {}, {}, "");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    // Accepted, then removed (no attribute).
    ASSERT_TRUE(c.setSessionMatch({1, 2}, {}, {0}, "a*")) << "valid match";
    ASSERT_TRUE(c.setSessionMatch({}, {}, {}, "")) << "removing the match";
}

namespace {

// A child that exits at once, reaped: its pid is free for the kernel to hand out again.
// vfork: no copy of this (large) process's page tables, which cost a quarter of a second
// per fork under the debug kernel's detectors.
pid_t deadPid() {
    const pid_t p = ::vfork();
    if (p == 0)
        ::_exit(0);
    int st = 0;
    ::waitpid(p, &st, 0);
    return p;
}

}  // namespace

// A filtered pid whose process died and that the kernel gives to a process forked outside
// the filter leaves the filter (sched_process_fork): the newcomer's hits are filtered, not
// recorded. Both paths of the handlers' check: one pid (the single-pid shortcut) and two
// (the set).
TEST(SessionFilter, ReusedPidLeavesTheFilter) {
    for (bool two : {false, true}) {
        SCOPED_TRACE(two ? "two pids" : "one pid");
        const pid_t reused = deadPid();
        SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(reused)};
        if (two)
            o.tgids.push_back(static_cast<std::uint32_t>(deadPid()));
        auto s = Session::open(o);
        ASSERT_TRUE(s) << why(s);
        ASSERT_TRUE(s->add("syscall:getppid"));
        Workload w({itest::workload("getppid_loop"), "10"}, reused);
        w.release();
        EXPECT_EQ(w.wait(), 0);
        std::size_t recorded = 0;
        auto st = s->stop([&](const Event&) { recorded++; });
        ASSERT_TRUE(st) << why(st);
        EXPECT_EQ(recorded, 0u) << "pid " << reused << " kept its place in the filter";
        EXPECT_EQ(st->probes.at(0).hits, 0u);
        EXPECT_GE(st->probes.at(0).filtered, 10u);
    }
}

// The module counts the processes of a session's tgid filter as they fork and exit
// (SESSION_GET): one given that never lived is counted exited at once; with follow, a child
// that double-forks and exits leaves its orphaned child counted living, until that one exits
// too. Without a filter there is nothing to count.
TEST(SessionFilter, TheModuleCountsLivingProcesses) {
    auto plain = Session::open();
    ASSERT_TRUE(plain) << why(plain);
    auto none = plain->tracedProcesses();
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().err, ENOENT) << none.error().describe();

    int go[2], gate[2], ready[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(pipe(gate), 0);
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    if (child == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        if (fork() == 0) {
            const pid_t self = getpid();
            if (write(ready[1], &self, sizeof self) != sizeof self || read(gate[0], &c, 1) != 1)
                _exit(1);
            _exit(0);
        }
        _exit(0);
    }
    ASSERT_GT(child, 0);
    close(go[0]);
    close(gate[0]);
    close(ready[1]);
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(deadPid()), static_cast<std::uint32_t>(child)};
    o.follow = true;
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto n = s->tracedProcesses();
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(n->live, 1u);
    EXPECT_EQ(n->total, 2u);
    ASSERT_EQ(write(go[1], "x", 1), 1);
    pid_t grandchild = 0;
    ASSERT_EQ(read(ready[0], &grandchild, sizeof grandchild),
              static_cast<ssize_t>(sizeof grandchild));
    ASSERT_EQ(waitpid(child, nullptr, 0), child);
    n = s->tracedProcesses();
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(n->live, 1u) << "the orphaned grandchild " << grandchild << " still lives";
    EXPECT_EQ(n->total, 3u);
    ASSERT_EQ(write(gate[1], "x", 1), 1);
    // Its exit is counted before its parent can reap it: wait for the count itself.
    for (int i = 0; i < 3000 && n && n->live != 0; i++) {
        waitpid(grandchild, nullptr, WNOHANG);  // if this process is its subreaper
        usleep(10000);
        n = s->tracedProcesses();
    }
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(n->live, 0u);
    EXPECT_EQ(n->total, 3u);
    close(go[1]);
    close(gate[1]);
    close(ready[0]);
}

namespace {

// A child of the caller that waits at `gate` (until its write end is closed everywhere),
// calls getppid once and exits.
pid_t gatedCaller(int gate) {
    const pid_t p = ::fork();
    if (p == 0) {
        char c;
        while (::read(gate, &c, 1) > 0) {
        }
        ::getppid();
        ::_exit(0);
    }
    return p;
}

}  // namespace

// A followed process's fork while the session opens stays followed. Session::open with follow
// sets the tgid filter, reads the children the process has from /proc and adds them; a child
// it forks after that read (the test hook of Session::open has it fork one there) is in the
// filter only because the module followed the fork, and must stay: counted living, its call
// recorded like the others'. Seen failing before SESSION_ADD: the children read were put in
// with a second SESSION_SET, which replaced the filter and dropped that child (2 living of
// 2, its call filtered).
TEST(SessionFilter, FollowKeepsAProcessForkedWhileTheSessionOpens) {
    int cmd[2], ready[2], gate[2];
    ASSERT_EQ(pipe(cmd), 0);
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(gate), 0);
    const pid_t parent = fork();
    if (parent == 0) {
        // The followed process: one child now, one more per byte on `cmd` (each pid sent
        // back on `ready`); at `cmd`'s end, its own call once the gate opens.
        close(cmd[1]);
        close(ready[0]);
        close(gate[1]);
        std::vector<pid_t> kids;
        char c = 0;
        do {
            const pid_t kid = gatedCaller(gate[0]);
            if (kid < 0 || write(ready[1], &kid, sizeof kid) != sizeof kid)
                _exit(1);
            kids.push_back(kid);
        } while (read(cmd[0], &c, 1) == 1);
        while (read(gate[0], &c, 1) > 0) {
        }
        getppid();
        int bad = 0;
        for (pid_t kid : kids) {
            int st = 0;
            bad |= waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        }
        _exit(bad);
    }
    ASSERT_GT(parent, 0);
    close(cmd[0]);
    close(ready[1]);
    close(gate[0]);
    pid_t first = 0, late = 0;
    ASSERT_EQ(read(ready[0], &first, sizeof first), static_cast<ssize_t>(sizeof first));

    probectl::test_hooks::afterReadingChildrenOnOpen = [&] {
        if (write(cmd[1], "f", 1) != 1 ||
            read(ready[0], &late, sizeof late) != static_cast<ssize_t>(sizeof late))
            late = -1;
    };
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(parent)};
    o.follow = true;
    auto s = Session::open(o);
    probectl::test_hooks::afterReadingChildrenOnOpen = nullptr;
    ASSERT_TRUE(s) << why(s);
    ASSERT_GT(late, 0) << "the hook of Session::open did not run, or the fork failed";
    auto n = s->tracedProcesses();
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(n->live, 3u) << "pid " << parent << ", its child " << first << " and the child "
                           << late << " it forked while the session opened";
    EXPECT_EQ(n->total, 3u);

    ASSERT_TRUE(s->add("syscall:getppid"));
    close(cmd[1]);
    close(gate[1]);
    int st = 0;
    ASSERT_EQ(waitpid(parent, &st, 0), parent);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
    close(ready[0]);
    std::vector<pid_t> callers;
    auto stats = s->stop([&](const Event& e) { callers.push_back(e.tgid); });
    ASSERT_TRUE(stats) << why(stats);
    std::sort(callers.begin(), callers.end());
    std::vector<pid_t> want = {parent, first, late};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(callers, want) << "the one call of each of pid " << parent << ", " << first << " and "
                             << late << " (forked while the session opened)";
    EXPECT_EQ(stats->probes.at(0).hits, 3u);
}

// SESSION_ADD adds to the tgid filter and keeps what it holds, past PROBECTL_MAX_TGIDS (libctl
// sends that many per message); without a filter there is nothing to add to.
TEST(SessionFilter, AddKeepsWhatTheFilterHolds) {
    auto c = itest::connectOrDie();
    auto r = c.addSessionTgids({static_cast<std::uint32_t>(deadPid())});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT) << r.error().describe();
    r = c.addSessionTgids({});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL) << r.error().describe();

    ASSERT_TRUE(c.setSessionTgids({static_cast<std::uint32_t>(getpid())}));
    std::vector<std::uint32_t> dead;
    for (std::size_t i = 0; i < PROBECTL_MAX_TGIDS + 6; i++)
        dead.push_back(static_cast<std::uint32_t>(deadPid()));
    r = c.addSessionTgids(dead);
    ASSERT_TRUE(r) << r.error().describe();
    auto n = c.getSessionFilter();
    ASSERT_TRUE(n) << n.error().describe();
    EXPECT_EQ(n->session_live, 1u) << "this process";
    EXPECT_EQ(n->session_procs, 1u + dead.size());
    // Added again: nothing changes.
    ASSERT_TRUE(c.addSessionTgids({static_cast<std::uint32_t>(getpid()), dead[0]}));
    n = c.getSessionFilter();
    ASSERT_TRUE(n) << n.error().describe();
    EXPECT_EQ(n->session_live, 1u);
    EXPECT_EQ(n->session_procs, 1u + dead.size());
    // A SESSION_SET replaces it all.
    ASSERT_TRUE(c.setSessionTgids({static_cast<std::uint32_t>(getpid())}));
    n = c.getSessionFilter();
    ASSERT_TRUE(n) << n.error().describe();
    EXPECT_EQ(n->session_procs, 1u);
}
