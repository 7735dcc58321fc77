// count/hist/latency and trace -c on both backends against the same workloads: the kernel's
// maps and the ptrace backend's events aggregated in user space give the same counts;
// trace -c's strace table has the exact calls and errors the workload made (and strace's);
// latency says how many entries never returned; --force adds what trace --force adds.
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

constexpr int kN = 300;

struct SyscallCount {
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
};

// The rows of strace -c's table in `out` (probectl's or strace's), by syscall name.
std::map<std::string, SyscallCount> straceTable(const std::string& out) {
    std::map<std::string, SyscallCount> rows;
    std::istringstream in(out);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.starts_with("% time")) {
            inside = true;
            continue;
        }
        if (!inside || line.starts_with("------"))
            continue;
        std::istringstream f(line);
        std::vector<std::string> w;
        for (std::string s; f >> s;)
            w.push_back(s);
        if (w.size() != 5 && w.size() != 6)
            break;
        if (w.back() == "total")
            break;
        SyscallCount c;
        c.calls = std::stoull(w[3]);
        c.errors = w.size() == 6 ? std::stoull(w[4]) : 0;
        rows[w.back()] = c;
    }
    return rows;
}

std::string summaryOf(const std::string& backend, const std::string& syscalls) {
    itest::Ran r = itest::sh("probectl trace --backend " + backend + " --syscalls=" + syscalls +
                             " -c -- " + itest::aggrTarget() + " syscalls " + std::to_string(kN));
    EXPECT_EQ(r.status, 0) << r.out;
    return r.out;
}

void expectWorkloadRows(const std::map<std::string, SyscallCount>& t, const std::string& out) {
    ASSERT_TRUE(t.count("getppid")) << out;
    EXPECT_EQ(t.at("getppid").calls, static_cast<std::uint64_t>(kN)) << out;
    EXPECT_EQ(t.at("getppid").errors, 0u) << out;
    ASSERT_TRUE(t.count("chdir")) << out;
    EXPECT_EQ(t.at("chdir").calls, static_cast<std::uint64_t>(kN)) << out;
    EXPECT_EQ(t.at("chdir").errors, static_cast<std::uint64_t>(kN)) << out;
    ASSERT_TRUE(t.count("openat")) << out;
    // The dynamic loader's own openat calls come on top (some fail: library search paths).
    EXPECT_GT(t.at("openat").calls, t.at("openat").errors) << out;
    EXPECT_GE(t.at("openat").errors, static_cast<std::uint64_t>(kN)) << out;
}

}  // namespace

TEST(SyscallSummary, CallsAndErrorsExactOnBothBackends) {
    const std::string kernel = summaryOf("kernel", "getppid,chdir,openat");
    const std::string ptrace = summaryOf("ptrace", "getppid,chdir,openat");
    const auto k = straceTable(kernel), p = straceTable(ptrace);
    expectWorkloadRows(k, kernel);
    expectWorkloadRows(p, ptrace);
    EXPECT_EQ(k.at("openat").calls, p.at("openat").calls) << kernel << ptrace;
    EXPECT_EQ(k.at("openat").errors, p.at("openat").errors) << kernel << ptrace;
    const std::uint64_t calls = 2 * kN + k.at("openat").calls;
    const std::uint64_t errors = kN + k.at("openat").errors;
    EXPECT_THAT(kernel,
                ::testing::ContainsRegex("\n100\\.00 +[0-9.]+ +[0-9]+ +" + std::to_string(calls) +
                                         " +" + std::to_string(errors) + " total\n"))
        << kernel;
    EXPECT_THAT(kernel, Not(HasSubstr("not counted"))) << "nothing lost";
}

TEST(SyscallSummary, MatchesStrace) {
    if (access("/usr/bin/strace", X_OK) != 0)
        GTEST_SKIP() << "no strace in this root";
    itest::Ran s = itest::sh("strace -c -e trace=getppid,chdir,openat " + itest::aggrTarget() +
                             " syscalls " + std::to_string(kN));
    ASSERT_EQ(s.status, 0) << s.out;
    const std::string ours = summaryOf("kernel", "getppid,chdir,openat");
    const auto theirs = straceTable(s.out), mine = straceTable(ours);
    ASSERT_EQ(theirs.size(), 3u) << s.out;
    for (const auto& [name, c] : theirs) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(mine.count(name)) << ours;
        EXPECT_EQ(mine.at(name).calls, c.calls) << ours << s.out;
        EXPECT_EQ(mine.at(name).errors, c.errors) << ours << s.out;
    }
}

// exit_group never returns: strace -c has no row for it, and neither backend has one; the
// kernel backend once refused it ("latency needs a call that returns").
TEST(SyscallSummary, ExitGroupHasNoRowOnBothBackends) {
    const std::string kernel = summaryOf("kernel", "getppid,exit_group");
    const std::string ptrace = summaryOf("ptrace", "getppid,exit_group");
    for (const std::string* out : {&kernel, &ptrace}) {
        const auto t = straceTable(*out);
        ASSERT_EQ(t.size(), 1u) << *out;
        ASSERT_TRUE(t.count("getppid")) << *out;
        EXPECT_EQ(t.at("getppid").calls, static_cast<std::uint64_t>(kN)) << *out;
    }
    if (access("/usr/bin/strace", X_OK) == 0) {
        itest::Ran s = itest::sh("strace -c -e trace=getppid,exit_group " + itest::aggrTarget() +
                                 " syscalls " + std::to_string(kN));
        ASSERT_EQ(s.status, 0) << s.out;
        EXPECT_EQ(straceTable(s.out).size(), 1u) << s.out;
    }
    itest::Ran alone = itest::sh("probectl trace --syscalls=exit_group -c -- true");
    EXPECT_EQ(alone.status, 2) << alone.out;
    EXPECT_THAT(alone.out, HasSubstr("exit_group never returns")) << alone.out;
}

// exit and exit_group never return, so latency and $retval of them are refused: probectl
// refuses them, not the kernel (the glob summary once summed them as "refused by the
// kernel"), and on ptrace they were attached with no value ("never returned 0"). The
// summary names them, -v says why; named alone, a usage error says they never return; -c
// over every syscall still runs, as strace -c, with no row for them.
TEST(SyscallSummary, GlobSaysExitAndExitGroupNeverReturn) {
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        auto cmd = [&](const std::string& sub, const std::string& rest) {
            return "probectl " + sub + " --backend=" + backend + " " + rest;
        };
        // Syscalls from e and g: exit and exit_group among a few dozen that return.
        itest::Ran by = itest::sh(cmd("count", "-v 'syscall:[eg]*' --by '$retval' -- true"));
        ASSERT_EQ(by.status, 0) << by.out;
        EXPECT_THAT(by.out, HasSubstr("2 never return (exit, exit_group)")) << by.out;
        EXPECT_THAT(by.out, HasSubstr("  exit_group: syscall:exit_group: exit_group never "
                                      "returns (the task ends in it), so it has no $retval: key "
                                      "by another field, or leave it out\n"))
            << by.out;
        EXPECT_THAT(by.out, Not(HasSubstr("never returns: "))) << by.out;
        EXPECT_THAT(by.out, Not(HasSubstr("  exit_group: refused by"))) << by.out;
        EXPECT_THAT(by.out, Not(HasSubstr("syscall:exit_group  hits"))) << by.out;

        itest::Ran glob = itest::sh(cmd("latency", "'syscall:exit*' -- true"));
        EXPECT_EQ(glob.status, 2) << glob.out;
        EXPECT_THAT(glob.out, HasSubstr("syscall:exit*: none attached (attached 0 of 2; 2 "
                                        "refused: 2 never return (exit, exit_group))"))
            << glob.out;

        itest::Ran alone = itest::sh(cmd("latency", "syscall:exit_group -- true"));
        EXPECT_EQ(alone.status, 2) << alone.out;
        EXPECT_THAT(alone.out, HasSubstr("syscall:exit_group: exit_group never returns (the task "
                                         "ends in it), so it has no latency: count or trace it "
                                         "instead, or leave it out"))
            << alone.out;

        itest::Ran all =
            itest::sh(cmd("trace", "-c --syscalls=all -- " + itest::aggrTarget() + " syscalls 3"));
        ASSERT_EQ(all.status, 0) << all.out;
        EXPECT_THAT(all.out, HasSubstr("2 never return (exit, exit_group)")) << all.out;
        const auto t = straceTable(all.out);
        ASSERT_TRUE(t.count("getppid")) << all.out;
        EXPECT_EQ(t.at("getppid").calls, 3u) << all.out;
        EXPECT_FALSE(t.count("exit_group")) << all.out;
    }
}

TEST(SyscallSummary, RefusesWhatIsNoSyscall) {
    itest::Ran r = itest::sh("probectl trace -c kprobe:vfs_read -- true");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr("-c counts syscalls")) << r.out;
}

// A key no event carries is refused on both backends with the same words; the ptrace
// backend once counted every hit under <fault> instead.
TEST(AggrBackends, UnknownKeyIsRefusedOnBothBackends) {
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        itest::Ran r = itest::sh(std::string("probectl count uprobe:") + itest::aggrTarget() +
                                 ":ag_val --by comm,nosuch --backend " + backend + " -- " +
                                 itest::aggrTarget() + " values 3");
        EXPECT_EQ(r.status, 2) << r.out;
        EXPECT_THAT(r.out, HasSubstr("no key or value named 'nosuch' (there are: comm, pid"))
            << r.out;
        EXPECT_THAT(r.out, Not(HasSubstr("<fault>"))) << r.out;
    }
}

// An entry has no return value: --by retval there is refused on both backends alike; the
// ptrace backend once accepted it and counted nothing.
TEST(AggrBackends, RetvalAtAnEntryIsRefusedOnBothBackends) {
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        itest::Ran r = itest::sh(std::string("probectl count uprobe:") + itest::aggrTarget() +
                                 ":ag_val --by retval --backend " + backend + " -- " +
                                 itest::aggrTarget() + " values 3");
        EXPECT_EQ(r.status, 2) << r.out;
        EXPECT_THAT(r.out, HasSubstr("--by retval needs a return probe")) << r.out;
    }
}

// The same counts from the kernel's maps and from the ptrace backend's events.
TEST(AggrBackends, CountAndLatencyAgree) {
    const std::string n = std::to_string(kN);
    auto run = [&](const std::string& backend, const std::string& what, const std::string& args) {
        // sh() merges stderr (the banner) into its output: keep only the JSON.
        itest::Ran r =
            itest::sh("{ " +
                      itest::tablesOnly("probectl " + what + " --backend " + backend +
                                        " --format json -- " + itest::aggrTarget() + " " + args) +
                      " 2>/dev/null; }");
        EXPECT_EQ(r.status, 0) << r.out;
        return r.out;
    };
    const std::pair<std::string, std::string> cases[] = {
        {"count syscall:getppid syscall:chdir --by comm", "syscalls " + n},
        {"latency syscall:chdir --by errno", "syscalls " + n},
        {"hist syscall:openat retval --by errno", "syscalls " + n},
        {"count uprobe:" + itest::aggrTarget() + ":ag_val --by comm", "values " + n},
        {"latency uretprobe:" + itest::aggrTarget() + ":ag_val --by retval --top 5", "values 8"},
    };
    for (const auto& [what, args] : cases) {
        SCOPED_TRACE(what);
        const std::string k = run("kernel", what, args), p = run("ptrace", what, args);
        std::istringstream ks(k), ps(p);
        std::string kl, pl;
        std::size_t tables = 0;
        while (std::getline(ks, kl) && std::getline(ps, pl)) {
            auto kj = nlohmann::json::parse(kl), pj = nlohmann::json::parse(pl);
            ASSERT_EQ(kj["entries"].size(), pj["entries"].size()) << k << p;
            ASSERT_GT(kj["entries"].size(), 0u) << k;
            for (std::size_t i = 0; i < kj["entries"].size(); i++) {
                EXPECT_EQ(kj["entries"][i]["key"], pj["entries"][i]["key"]) << k << p;
                EXPECT_EQ(kj["entries"][i]["count"], pj["entries"][i]["count"]) << k << p;
                if (what.starts_with("hist")) {
                    EXPECT_EQ(kj["entries"][i]["hist"], pj["entries"][i]["hist"]) << k << p;
                }
            }
            EXPECT_EQ(kj["hits"], pj["hits"]) << k << p;
            tables++;
        }
        EXPECT_GT(tables, 0u) << k << p;
    }
    const auto lat =
        nlohmann::json::parse(run("ptrace", "latency syscall:chdir --by errno", "syscalls " + n));
    ASSERT_EQ(lat["entries"].size(), 1u);
    EXPECT_EQ(lat["entries"][0]["key"]["errno"], -2) << "ENOENT";
    EXPECT_EQ(lat["entries"][0]["count"], kN);
}

// Entries that never returned are in no bucket: the header says how many, on both backends.
TEST(AggrBackends, LatencyShowsTheNeverReturned) {
    const std::string w = itest::workload("unwind_target");
    // Fewer on the debug kernel, where each ptrace stop is many times slower.
    const int n = itest::debugKernel() ? 256 : 1024;
    const std::string calls = " longjmp " + std::to_string(n);
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        itest::Ran r = itest::sh(std::string("probectl latency uretprobe:") + w +
                                 ":un_jump --backend " + backend + " -- " + w + calls);
        ASSERT_EQ(r.status, 0) << r.out;
        EXPECT_THAT(r.out, HasSubstr(fmt::format("hits {}, filtered 0, rejected 0, nmissed 0, "
                                                 "never returned {}",
                                                 n, n - 1)))
            << r.out;
        EXPECT_THAT(r.out, HasSubstr("count 1,")) << r.out;
        itest::Ran j = itest::sh("{ " +
                                 itest::tablesOnly(std::string("probectl latency uretprobe:") + w +
                                                   ":un_jump --format json --backend " + backend +
                                                   " -- " + w + calls) +
                                 " 2>/dev/null; }");
        auto js = nlohmann::json::parse(j.out.substr(j.out.find('{')));
        EXPECT_EQ(js["unreturned"], n - 1);
        EXPECT_EQ(js["hits"], n);
    }
}

// A thread SIGKILLed inside a syscall: the call ends with it, through the syscall's return,
// where the kernel backend records it; the ptrace backend, which sees no exit stop then,
// reports a return at the thread's end with no value. Both count it, time it, and say no
// call was left unreturned; trace -c counts it an error (the kernel sees an ERESTART code).
TEST(AggrBackends, AKilledThreadsCallCountsAlikeOnBothBackends) {
    const std::string cmd = std::string(" -f -- ") + PT_WORKLOAD_PATH + " killed 300";
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        const std::string b = std::string(" --backend ") + backend;
        itest::Ran c = itest::sh("probectl count syscall:clock_nanosleep" + b + cmd);
        ASSERT_EQ(c.status, 0) << c.out;
        // FILTERED (kernel backend): other processes' sleeps, as the VM's own
        EXPECT_THAT(c.out, ::testing::ContainsRegex("\nsyscall:clock_nanosleep +1( +[0-9]+)?\n"));
        EXPECT_THAT(c.out, Not(HasSubstr("returned")));
        itest::Ran l = itest::sh("probectl latency syscall:clock_nanosleep" + b + cmd);
        ASSERT_EQ(l.status, 0) << l.out;
        EXPECT_THAT(l.out,
                    ::testing::ContainsRegex(
                        "hits 1, filtered [0-9]+, rejected 0, nmissed 0, never returned 0\n"));
        EXPECT_THAT(l.out, HasSubstr("count 1,"));
        itest::Ran s = itest::sh("probectl trace --syscalls=clock_nanosleep -c" + b + cmd);
        ASSERT_EQ(s.status, 0) << s.out;
        const auto t = straceTable(s.out);
        ASSERT_TRUE(t.count("clock_nanosleep")) << s.out;
        EXPECT_EQ(t.at("clock_nanosleep").calls, 1u) << s.out;
        EXPECT_EQ(t.at("clock_nanosleep").errors, 1u) << s.out;
    }
}

// -p on a process already inside a syscall (a read on a pipe, which the ptrace backend's
// attach interrupts and the kernel restarts from its entry; a sleep, which it resumes as
// restart_syscall): the kernel backend never sees that call (its probe did not exist at
// the entry), so it is no hit, and its return none; the next call is. The same on both.
TEST(AggrBackends, ACallInProgressAtAttachIsNoHitOnBothBackends) {
    // The workload blocked in `nr`, probectl attached (its banner), then `wake` ends the call
    // and the workload makes one more (pt_workload blocked-read 1, blocked-sleep 1).
    auto run = [](const std::string& probectl, const char* mode, int nr, const char* wake) {
        return itest::sh(fmt::format(
            "d=$(mktemp -d); mkfifo $d/in; {w} {mode} 1 < $d/in & w=$!; exec 3>$d/in; "
            "i=0; until [ \"$(cut -d' ' -f1 /proc/$w/syscall)\" = {nr} ] && "
            "grep -q '^State:.*S' /proc/$w/status; do i=$((i+1)); [ $i -lt 6000 ] || exit 90; "
            "sleep 0.01; done; "
            "{probectl} -p $w > $d/log 2>&1 & p=$!; "
            "i=0; until grep -q ' in pid ' $d/log; do i=$((i+1)); [ $i -lt 6000 ] || exit 91; "
            "sleep 0.01; done; "
            "{wake}; exec 3>&-; wait $w; ws=$?; wait $p; ps=$?; cat $d/log; rm -r $d; "
            "[ $ws = 0 ] && exit $ps; exit 92",
            fmt::arg("w", PT_WORKLOAD_PATH), fmt::arg("mode", mode), fmt::arg("nr", nr),
            fmt::arg("probectl", probectl), fmt::arg("wake", wake)));
    };
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        const std::string b = std::string(" --backend ") + backend;
        itest::Ran c =
            run("probectl count syscall:read --by retval" + b, "blocked-read", 0, "printf xy >&3");
        ASSERT_EQ(c.status, 0) << c.out;
        // the later read alone: 1 byte, once
        EXPECT_THAT(c.out, ::testing::ContainsRegex("\nRETVAL +COUNT\n1 +1\n")) << c.out;
        EXPECT_THAT(c.out, ::testing::ContainsRegex(
                               "syscall:read +hits 1, filtered [0-9]+, rejected 0, nmissed 0, "
                               "never returned 0\n"))
            << c.out;
        itest::Ran s = run("probectl trace -c --syscalls=clock_nanosleep,restart_syscall" + b,
                           "blocked-sleep", 230, "kill -USR1 $w");
        ASSERT_EQ(s.status, 0) << s.out;
        const auto t = straceTable(s.out);
        ASSERT_EQ(t.size(), 1u) << s.out;
        ASSERT_TRUE(t.count("clock_nanosleep")) << s.out;
        EXPECT_EQ(t.at("clock_nanosleep").calls, 1u) << s.out;
        EXPECT_EQ(t.at("clock_nanosleep").errors, 0u) << s.out;
    }
}

// A kernel uretprobe where C++ exceptions unwind is refused as trace refuses it, --force adds
// it; the ptrace backend needs no --force.
TEST(AggrBackends, ForceAddsUretprobesWhereExceptionsUnwind) {
    const std::string w = itest::workload("unwind_cxx");
    const std::string spec = "uretprobe:" + w + ":un_throw";
    itest::Ran refused = itest::sh("probectl latency " + spec + " -- " + w + " 10");
    EXPECT_EQ(refused.status, 2) << refused.out;
    EXPECT_THAT(refused.out, HasSubstr("--force")) << refused.out;
    itest::Ran forced = itest::sh("probectl latency " + spec + " --force -- " + w + " 0");
    EXPECT_EQ(forced.status, 0) << "no call, no throw: the probe was added\n" << forced.out;
    EXPECT_THAT(forced.out, HasSubstr("Aggregating 1 probe")) << forced.out;
    itest::Ran pt = itest::sh("probectl latency " + spec + " --backend ptrace -- " + w + " 10");
    EXPECT_EQ(pt.status, 0) << pt.out;
    EXPECT_THAT(pt.out, HasSubstr("hits 10, filtered 0, rejected 0, nmissed 0, never returned 5"))
        << pt.out;
}
