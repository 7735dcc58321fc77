// Tracepoint probes against the real module and real tracepoints: raw arguments, a kernel
// string behind one, BTF names and member dereferences, exact hit counts, refusals, and
// probes added and removed while their tracepoints fire (the VM verdict checks the log).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"
#include "uapi/probectl.h"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::Session;
using probectl::SessionStats;
using ::testing::HasSubstr;

namespace {

struct TpTraced {
    std::vector<Event> events;
    // events[i]'s spec: Event::spec views the session's own copy, gone with the session.
    std::vector<std::string> specs;
    SessionStats stats;
    std::string out;
};

// Runs `argv` held at its gate, with every spec added to a session filtered on it.
TpTraced traceTp(const std::vector<std::string>& specs, std::vector<std::string> argv) {
    Workload w(std::move(argv));
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    for (const auto& spec : specs)
        if (auto id = s->add(spec); !id)
            throw std::runtime_error("add " + spec + ": " + why(id));
    TpTraced t;
    w.release();
    EXPECT_EQ(w.wait(&t.out), 0);
    auto st = s->stop([&](const Event& e) { t.events.push_back(e); });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    t.stats = *st;
    std::sort(t.events.begin(), t.events.end(),
              [](const Event& a, const Event& b) { return a.timestamp_ns < b.timestamp_ns; });
    for (auto& e : t.events) {
        t.specs.emplace_back(e.spec);
        e.spec = {};
    }
    return t;
}

std::vector<Event> of(const TpTraced& t, std::string_view spec_prefix) {
    std::vector<Event> out;
    for (std::size_t i = 0; i < t.events.size(); i++)
        if (t.specs[i].starts_with(spec_prefix))
            out.push_back(t.events[i]);
    return out;
}

bool haveBtf() {
    return std::filesystem::exists("/sys/kernel/btf/vmlinux");
}

}  // namespace

// task_rename(struct task_struct *task, const char *comm): the string behind the raw
// second argument is the name the workload set; exec's own rename comes first. Needs no
// BTF, so it runs on every kernel.
TEST(Tracepoint, RawArgumentsAndTheStringBehindOne) {
    auto t = traceTp({"tracepoint:task:task_rename name=+0($arg2):string"},
                     {itest::workload("tp_workload"), "rename", "5"});
    ASSERT_EQ(t.events.size(), 6u);
    EXPECT_EQ(t.events[0].values.at(0).str, "tp_workload");  // exec names the task
    for (std::size_t i = 1; i <= 5; i++) {
        ASSERT_EQ(t.events[i].values.size(), 1u);
        EXPECT_EQ(t.events[i].values[0].str, "tpname" + std::to_string(i));
        EXPECT_FALSE(t.events[i].values[0].faulted);
        // The raw first argument is the task itself: one task, one pointer, a kernel one.
        EXPECT_EQ(t.events[i].args[0], t.events[0].args[0]);
    }
    EXPECT_GE(t.events[0].args[0], 0xffff800000000000ull);
    ASSERT_EQ(t.stats.probes.size(), 1u);
    EXPECT_EQ(t.stats.probes[0].hits, 6u);
    EXPECT_EQ(t.stats.probes[0].delivered, 6u);
    EXPECT_EQ(t.stats.probes[0].nmissed, 0u);
    EXPECT_EQ(t.stats.probes[0].dropped, 0u);
}

// Three tracepoints on one fork: sched_process_fork's parent and task_rename's task are the
// same pointer; task_newtask's clone flags are the workload's CLONE_PARENT_SETTID (the
// exit signal is not part of them); exactly N of each.
TEST(Tracepoint, ForkArgumentsAndExactCounts) {
    constexpr int kForks = 4;
    auto t = traceTp({"tracepoint:task:task_rename", "tracepoint:sched:sched_process_fork",
                      "tracepoint:task:task_newtask flags=$arg2:x64"},
                     {itest::workload("tp_workload"), "fork", std::to_string(kForks)});
    const auto renames = of(t, "tracepoint:task:task_rename");
    const auto forks = of(t, "tracepoint:sched:sched_process_fork");
    const auto news = of(t, "tracepoint:task:task_newtask");
    ASSERT_EQ(renames.size(), 1u);  // exec
    ASSERT_EQ(forks.size(), static_cast<std::size_t>(kForks));
    ASSERT_EQ(news.size(), static_cast<std::size_t>(kForks));
    for (const auto& f : forks)
        EXPECT_EQ(f.args[0], renames[0].args[0]) << "parent is the workload's task";
    for (const auto& n : news)
        EXPECT_EQ(n.values.at(0).raw, static_cast<std::uint64_t>(CLONE_PARENT_SETTID));
    for (const auto& p : t.stats.probes)
        EXPECT_EQ(p.hits, p.spec.find("rename") != std::string::npos ? 1u : 4u) << p.spec;
}

// With BTF: parameters by name and struct members by name. The child pids the kernel
// recorded are the ones fork() returned to the workload.
TEST(Tracepoint, BtfNamesAndMembersGiveTheChildPids) {
    if (!haveBtf())
        GTEST_SKIP() << "no /sys/kernel/btf/vmlinux (the debug kernel is built without BTF)";
    auto t = traceTp({"tracepoint:sched:sched_process_fork child_pid=args.child->pid "
                      "parent_pid=args.parent->tgid comm=args.child->comm"},
                     {itest::workload("tp_workload"), "fork", "3"});
    std::vector<std::string> pids;
    std::istringstream in(t.out);
    for (std::string line; std::getline(in, line);)
        pids.push_back(line);
    ASSERT_EQ(pids.size(), 3u) << t.out;
    ASSERT_EQ(t.events.size(), 3u);
    for (std::size_t i = 0; i < 3; i++) {
        const auto& v = t.events[i].values;
        ASSERT_EQ(v.size(), 3u);
        EXPECT_EQ(v[0].name, "child_pid");
        EXPECT_EQ(std::to_string(static_cast<std::int64_t>(v[0].raw)), pids[i]);
        EXPECT_EQ(v[1].raw, t.events[i].tgid);
        EXPECT_EQ(v[2].str, "tp_workload");  // the child starts with its parent's name
    }
}

// Without fetch arguments and with BTF, every readable parameter is recorded by name.
TEST(Tracepoint, DefaultArgumentsAreTheNamedParameters) {
    if (!haveBtf())
        GTEST_SKIP() << "no /sys/kernel/btf/vmlinux (the debug kernel is built without BTF)";
    auto t =
        traceTp({"tracepoint:task:task_rename"}, {itest::workload("tp_workload"), "rename", "1"});
    ASSERT_EQ(t.events.size(), 2u);
    ASSERT_EQ(t.events[1].values.size(), 2u);
    EXPECT_EQ(t.events[1].values[0].name, "task");
    EXPECT_EQ(t.events[1].values[0].raw, t.events[1].args[0]);
    EXPECT_EQ(t.events[1].values[1].name, "comm");
    EXPECT_EQ(t.events[1].values[1].str, "tpname1");  // const char *: read as a string
}

TEST(Tracepoint, UnknownAndRefusedAreNamed) {
    auto s = Session::open();
    ASSERT_TRUE(s.ok()) << why(s);
    auto r = s->add("tracepoint:sched:sched_no_such_event");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("unknown tracepoint 'sched_no_such_event'"));
    // The kernel's own check, past libctl.
    probectl::Client c = itest::connectOrDie();
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Tracepoint;
    req.symbol = "sched_no_such_event";
    auto k = c.addProbe(req);
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.error().err, ENOENT);
    EXPECT_THAT(k.error().extack, HasSubstr("unknown tracepoint 'sched_no_such_event'"));
    // A tracepoint has no pt_regs: the kernel refuses %REG even if libctl were bypassed.
    req.symbol = "task_rename";
    req.fetch = {probectl::FetchInsn{PROBECTL_FETCH_LOAD_REG, 8, 0, 0, 14},
                 probectl::FetchInsn{PROBECTL_FETCH_STORE_INT, 8, 0, 0, 0}};
    k = c.addProbe(req);
    ASSERT_FALSE(k.ok());
    EXPECT_THAT(k.error().extack,
                HasSubstr("PROBE_FETCH arg 1: no %REG, $stackN or load-addr at a tracepoint"));
    req.fetch.clear();
    req.offset = 4;
    k = c.addProbe(req);
    ASSERT_FALSE(k.ok());
    EXPECT_THAT(k.error().extack, HasSubstr("without PROBE_OFFSET"));
    // syscalls:sys_enter_* are events, not tracepoints: say what to use instead (where the
    // kernel has syscall events; the debug kernel is built without FTRACE_SYSCALLS, so it has
    // no subsystem syscalls, which is said).
    r = s->add("tracepoint:syscalls:sys_enter_openat");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("use syscall:openat"));
    if (!std::filesystem::exists("/sys/kernel/tracing/events/syscalls/sys_enter_openat")) {
        EXPECT_THAT(r.error().message, HasSubstr("no tracepoint subsystem 'syscalls'"));
    }
    // A subsystem that does not exist is named as what is wrong (a tracepoint was offered).
    r = s->add("tracepoint:nosuch:x");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("no tracepoint subsystem 'nosuch'"));
}

// Probes come and go on busy tracepoints, sched_switch among them (scheduler context, rq
// lock held), with fetches running; the VM verdict fails on any splat in the log.
TEST(Tracepoint, AddAndRemoveWhileFiring) {
    Workload w({itest::workload("tp_workload"), "spin", "4"});
    w.release();
    std::uint64_t hits = 0;
    for (int round = 0; round < 6; round++) {
        auto s = Session::open();
        ASSERT_TRUE(s.ok()) << why(s);
        for (const char* spec : {"tracepoint:sched:sched_switch prev=$arg2 pc=+0($arg2):x64",
                                 "tracepoint:task:task_rename name=+0($arg2):string",
                                 "tracepoint:sched:sched_process_fork"})
            ASSERT_TRUE(s->add(spec).ok()) << spec;
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        std::size_t seen = 0;
        auto st = s->stop([&](const Event&) { seen++; });
        ASSERT_TRUE(st.ok()) << why(st);
        for (const auto& p : st->probes)
            hits += p.hits;
        // Odd rounds: let the destructor remove the probes without stop's flush.
    }
    EXPECT_EQ(w.wait(), 0);
    EXPECT_GT(hits, 0u);
    auto c = itest::connectOrDie();
    for (const auto& p : itest::listOrDie(c))
        EXPECT_NE(p.kind, probectl::ProbeKind::Tracepoint) << "left behind: " << p.id;
}
