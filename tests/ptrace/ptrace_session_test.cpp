// PtraceSession on this host: fixture workloads whose calls, arguments, returns and
// syscalls are known, traced through the ptrace backend, with every value checked.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "probectl/proc_maps.hpp"
#include "probectl/process_tree.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/syscall_meta.hpp"
#include "probectl/user_target.hpp"
#include "pt_fixtures.hpp"

namespace probectl {
namespace {

using ptfx::kWorkload;

std::string spec(const char* kind, const std::string& path, const char* sym) {
    return std::string(kind) + ":" + path + ":" + sym;
}

PtraceSessionOptions attachTo(pid_t pid) {
    PtraceSessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(pid)};
    return o;
}

// PR_GET_CHILD_SUBREAPER of this process.
int prctlSubreaper() {
    int on = -1;
    (void)::prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0);
    return on;
}

PtraceSessionOptions runCommand(std::vector<std::string> argv) {
    PtraceSessionOptions o;
    o.command = std::move(argv);
    return o;
}

struct Traced {
    std::vector<Event> events;
    std::vector<std::string> specs;  // events[i].spec, copied
    SessionStats stats;
    int status = -1;
};

// Runs `argv` under a session with `specs` to its end; every step must succeed.
Traced traceCommand(const std::vector<std::string>& argv, const std::vector<std::string>& specs,
                    bool follow = false, bool seccomp = false) {
    Traced out;
    PtraceSessionOptions o;
    o.command = argv;
    o.follow = follow;
    o.seccomp = seccomp;
    auto s = PtraceSession::open(o);
    EXPECT_TRUE(s) << (s ? "" : s.error().describe());
    if (!s)
        return out;
    for (const auto& sp : specs) {
        auto id = s->add(sp);
        EXPECT_TRUE(id) << (id ? "" : id.error().describe());
    }
    auto cb = [&](const Event& ev) {
        out.events.push_back(ev);
        // The spec view points into the session, which ends before the checks.
        out.specs.emplace_back(ev.spec);
    };
    auto r = s->release();
    EXPECT_TRUE(r) << (r ? "" : r.error().describe());
    auto run = s->run(
        cb, [&] { return s->commandStatus().has_value(); }, 100);
    EXPECT_TRUE(run) << (run ? "" : run.error().describe());
    auto st = s->stop(cb);
    EXPECT_TRUE(st);
    if (st)
        out.stats = *st;
    if (auto cs = s->commandStatus())
        out.status = *cs;
    return out;
}

std::vector<Event> ofProbe(const std::vector<Event>& evs, std::uint32_t id, bool is_return) {
    std::vector<Event> out;
    for (const auto& e : evs)
        if (e.probe_id == id && e.is_return == is_return)
            out.push_back(e);
    return out;
}

TEST(PtraceSession, RefusesKernelKindsNamingTheSpec) {
    auto s = PtraceSession::open(runCommand({kWorkload, "calls", "1"}));
    ASSERT_TRUE(s) << s.error().describe();
    auto k = s->add("kprobe:do_sys_openat2");
    ASSERT_FALSE(k);
    EXPECT_EQ(k.error().err, EOPNOTSUPP);
    EXPECT_NE(k.error().message.find("kprobe:do_sys_openat2"), std::string::npos);
    auto kr = s->add("kretprobe:do_sys_openat2");
    ASSERT_FALSE(kr);
    EXPECT_EQ(kr.error().err, EOPNOTSUPP);
    auto bad = s->add("syscall:no_such_syscall");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().err, ENOENT);
}

TEST(PtraceSession, OpenNeedsSomethingToTrace) {
    auto s = PtraceSession::open({});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().err, EINVAL);
    auto o = attachTo(getpid());
    o.seccomp = true;
    auto sc = PtraceSession::open(o);
    ASSERT_FALSE(sc);
    EXPECT_EQ(sc.error().err, EINVAL);
}

// A child of the embedding program's own: `sleep SECONDS`, forked before any command.
pid_t forkSleep(const char* seconds) {
    const pid_t pid = fork();
    if (pid == 0) {
        execlp("sleep", "sleep", seconds, static_cast<char*>(nullptr));
        _exit(127);
    }
    return pid;
}

// Runs the session until the command has a descendant (bounded: it forks one at once). The
// session is polled meanwhile, so a command stopped for its tracer goes on; 30 s, since a
// loaded machine took more than the 5 s this waited before.
std::vector<pid_t> waitDescendants(PtraceSession& s) {
    for (int i = 0; i < 30000; ++i) {
        if (auto d = descendantsOf(s.commandPid()); !d.empty())
            return d;
        if (!s.poll(1, [](const Event&) {}))
            return {};
    }
    return {};
}

// A program that embeds libctl and has children of its own: killCommand() takes the
// command and what is under it, never the caller's other children, and the caller is not
// made a subreaper behind its back.
TEST(HeldCommandOrphans, KillCommandSparesTheCallersOwnChildrenByDefault) {
    const pid_t own = forkSleep("3031");
    ASSERT_GT(own, 0);
    {
        auto s = PtraceSession::open(runCommand({"sh", "-c", "sleep 3032 & wait"}));
        ASSERT_TRUE(s) << s.error().describe();
        ASSERT_TRUE(s->start());
        const auto under = waitDescendants(*s);
        ASSERT_EQ(under.size(), 1u);
        EXPECT_EQ(prctlSubreaper(), 0);
        EXPECT_TRUE(s->commandLeftRunning());
        s->killCommand();
        while (!s->done())
            ASSERT_TRUE(s->poll(100, [](const Event&) {}));
        EXPECT_TRUE(processEnded(under[0])) << "the command's child outlived killCommand";
        EXPECT_FALSE(processEnded(own)) << "killCommand killed a child of the caller's own";
        EXPECT_FALSE(s->commandLeftRunning());
    }
    ::kill(own, SIGKILL);
    int st = 0;
    EXPECT_EQ(::waitpid(own, &st, 0), own);
}

// With adopt_orphans (the probectl CLI's choice) this process becomes the subreaper of the
// command's orphans, and killCommand() finds and kills one the command daemonised.
TEST(HeldCommandOrphans, AdoptingOrphansKillsWhatTheCommandDaemonised) {
    auto o = runCommand({"sh", "-c", "(sleep 3035 &); exec sleep 3036"});
    o.adopt_orphans = true;
    auto s = PtraceSession::open(o);
    ASSERT_TRUE(s) << s.error().describe();
    EXPECT_TRUE(s->adoptsOrphans());
    EXPECT_EQ(prctlSubreaper(), 1);
    ASSERT_TRUE(s->start());
    // The subshell has exited (sh waits for it) and its child is now this process's.
    pid_t daemon = 0;
    for (int i = 0; i < 5000 && daemon == 0; ++i) {
        ASSERT_TRUE(s->poll(1, [](const Event&) {}));
        if (!descendantsOf(s->commandPid()).empty())
            continue;
        for (pid_t d : descendantsOf(getpid()))
            if (d != s->commandPid())
                daemon = d;
    }
    ASSERT_GT(daemon, 0);
    EXPECT_TRUE(s->commandLeftRunning());
    s->killCommand();
    while (!s->done())
        ASSERT_TRUE(s->poll(100, [](const Event&) {}));
    EXPECT_TRUE(processEnded(daemon)) << "the daemonised grandchild outlived killCommand";
    EXPECT_FALSE(s->commandLeftRunning());
}

// The unit tests' PIE fixture: fx_work(i) for i = 0..N-1 returns 2*i + 1.
TEST(PtraceSession, UprobeOnFixtureCountsEveryCallWithItsArgument) {
    auto t = traceCommand({FX_PIE_PATH, "25"}, {spec("uprobe", FX_PIE_PATH, "fx_work"),
                                                spec("uretprobe", FX_PIE_PATH, "fx_work")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    auto entries = ofProbe(t.events, 1, false);
    auto returns = ofProbe(t.events, 2, true);
    ASSERT_EQ(entries.size(), 25u);
    ASSERT_EQ(returns.size(), 25u);
    for (std::size_t i = 0; i < 25; ++i) {
        EXPECT_EQ(static_cast<int>(entries[i].args[0]), static_cast<int>(i));
        EXPECT_EQ(static_cast<int>(returns[i].retval), static_cast<int>(2 * i + 1));
        EXPECT_EQ(returns[i].ip, entries[i].ip);
        EXPECT_EQ(entries[i].tgid, entries[i].pid);
    }
    ASSERT_EQ(t.stats.probes.size(), 2u);
    for (const auto& p : t.stats.probes) {
        EXPECT_EQ(p.hits, 25u);
        EXPECT_EQ(p.delivered, 25u);
        EXPECT_EQ(p.nmissed, 0u);
    }
}

TEST(PtraceSession, UprobeAndUretprobeValuesAreExact) {
    auto t = traceCommand({kWorkload, "calls", "200"}, {spec("uprobe", kWorkload, "pt_add"),
                                                        spec("uretprobe", kWorkload, "pt_add")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    auto entries = ofProbe(t.events, 1, false);
    auto returns = ofProbe(t.events, 2, true);
    ASSERT_EQ(entries.size(), 200u);
    ASSERT_EQ(returns.size(), 200u);
    ASSERT_EQ(t.specs[0], spec("uprobe", kWorkload, "pt_add"));
    for (std::uint64_t i = 1; i <= 200; ++i) {
        const auto& e = entries[i - 1];
        EXPECT_EQ(e.args[0], i);
        EXPECT_EQ(e.args[1], 2 * i + 1);
        EXPECT_EQ(e.comm, "pt_workload");
        const auto& r = returns[i - 1];
        EXPECT_EQ(r.retval, 3 * i + 1);
        EXPECT_GE(r.timestamp_ns, e.timestamp_ns);
        EXPECT_EQ(r.latency_ns > 0, true);
    }
}

// A USDT probe's arguments are the site's own, read where its note says (two registers and
// a stack slot here), not the argument registers; a predicate over them selects hits as the
// kernel's does.
TEST(PtraceSession, UsdtArgumentsAreTheSitesOwn) {
    const std::string tick = "usdt:" + kWorkload + ":pt:tick";
    auto t = traceCommand({kWorkload, "usdt", "6"}, {tick, tick + " if arg2 > 9 && arg3 != 15"});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    auto all = ofProbe(t.events, 1, false);
    ASSERT_EQ(all.size(), 6u);
    for (std::uint64_t i = 1; i <= 6; ++i) {
        const auto& v = all[i - 1].values;
        ASSERT_EQ(v.size(), 3u);
        EXPECT_EQ(v[0].name, "arg1");
        EXPECT_EQ(v[0].raw, i);
        EXPECT_EQ(v[1].raw, i * i);
        EXPECT_EQ(v[2].raw, 3 * i) << "the memory operand";
        EXPECT_FALSE(v[2].faulted);
    }
    std::vector<std::uint64_t> picked;
    for (const auto& e : ofProbe(t.events, 2, false))
        picked.push_back(e.values.at(0).raw);
    EXPECT_EQ(picked, (std::vector<std::uint64_t>{4, 6}));
    ASSERT_EQ(t.stats.probes.size(), 2u);
    EXPECT_EQ(t.stats.probes[1].hits, 6u);
    EXPECT_EQ(t.stats.probes[1].rejected, 4u);
}

// The held command reads its release pipe before it execs: probectl's read, not the
// command's (strace -c and the kernel backend do not count it).
TEST(PtraceSession, NothingBeforeTheCommandsExecIsTraced) {
    auto t = traceCommand({kWorkload, "calls", "1"}, {"syscall:read"});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    for (const auto& e : t.events)
        EXPECT_EQ(e.comm, "pt_workload") << "fd " << e.args[0] << ", " << e.args[2] << " bytes";
}

TEST(PtraceSession, RecursionPairsEveryReturn) {
    auto t = traceCommand({kWorkload, "fact", "12"}, {spec("uprobe", kWorkload, "pt_fact"),
                                                      spec("uretprobe", kWorkload, "pt_fact")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    auto entries = ofProbe(t.events, 1, false);
    auto returns = ofProbe(t.events, 2, true);
    ASSERT_EQ(entries.size(), 12u);
    ASSERT_EQ(returns.size(), 12u);
    std::uint64_t fact = 1;
    for (std::uint64_t k = 1; k <= 12; ++k) {
        EXPECT_EQ(entries[k - 1].args[0], 13 - k);  // calls go 12, 11, ..., 1
        fact *= k;
        EXPECT_EQ(returns[k - 1].retval, fact);  // returns come back 1!, 2!, ..., 12!
        EXPECT_EQ(returns[k - 1].args[0], k);    // paired with the entry of the same frame
    }
    EXPECT_EQ(t.stats.probes[1].nmissed, 0u);
}

void checkSyscalls(bool seccomp) {
    auto t = traceCommand({kWorkload, "syscalls", "50"}, {"syscall:getppid", "syscall:openat"},
                          false, seccomp);
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    // Returns, as the kernel backend's syscall events: the exit's retval and latency.
    auto getppid = ofProbe(t.events, 1, true);
    ASSERT_EQ(getppid.size(), 50u);
    for (const auto& e : getppid)
        EXPECT_EQ(static_cast<pid_t>(e.retval), getpid());  // the session forked it
    // The dynamic loader opens libraries with openat too: ours is the last, on PT_MISSING.
    auto openat = ofProbe(t.events, 2, true);
    ASSERT_FALSE(openat.empty());
    const auto& o = openat.back();
    EXPECT_EQ(static_cast<int>(o.args[0]), AT_FDCWD);
    EXPECT_EQ(o.args[2], static_cast<std::uint64_t>(O_RDONLY));
    EXPECT_EQ(static_cast<std::int64_t>(o.retval), -ENOENT);
    EXPECT_EQ(t.stats.probes[0].hits, 50u);
}

TEST(PtraceSession, SyscallsMatchWhatTheWorkloadDid) {
    checkSyscalls(false);
}

TEST(PtraceSession, SyscallsMatchWithSeccompFilter) {
    checkSyscalls(true);
}

// The syscalls `pt_workload execs` makes, then every other syscall in number order, `n`
// names in all: the filter's size (and its 8-bit jumps) is what the counts below exercise.
std::vector<std::string> syscallSet(std::size_t n) {
    static const char* const kUsed[] = {"execve", "getppid", "read",  "write", "close",
                                        "mmap",   "brk",     "clone", "wait4", "openat"};
    std::vector<std::string> out;
    for (const char* name : kUsed)
        if (out.size() < n)
            out.emplace_back(name);
    for (const SyscallName& s : builtinSyscallNames())
        if (out.size() < n && std::find(out.begin(), out.end(), s.name) == out.end())
            out.emplace_back(s.name);
    return out;
}

// Events per syscall name of `pt_workload execs 3` traced with -f and a probe per name.
std::map<std::string, std::size_t> execsCounts(const std::vector<std::string>& names,
                                               bool seccomp) {
    std::vector<std::string> specs;
    for (const auto& n : names)
        specs.push_back("syscall:" + n);
    auto t = traceCommand({kWorkload, "execs", "3"}, specs, true, seccomp);
    EXPECT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    std::map<std::string, std::size_t> counts;
    for (const auto& sp : t.specs)
        counts[sp.substr(sp.find(':') + 1)]++;
    return counts;
}

// With --seccomp-bpf the tracee stops only at the traced syscalls, and every one of them
// must still be seen: the same count of each as PTRACE_SYSCALL stops give, and what the
// workload did. Before the fix a successful execve was never counted (its exit stop comes
// after the exec event, which was resumed without PTRACE_SYSCALL; so did clone's, after the
// fork event), and past 255 syscalls the lowest numbers were lost (the filter's 8-bit jump
// offsets wrapped).
void checkSeccompCounts(std::size_t n) {
    const auto names = syscallSet(n);
    const auto plain = execsCounts(names, false);
    const auto filtered = execsCounts(names, true);
    EXPECT_EQ(filtered, plain) << n << " syscalls";
    // 3 children: each a failed and a successful execve, 2 getppid; and the first exec.
    EXPECT_EQ(plain.count("execve") ? plain.at("execve") : 0, 7u);
    EXPECT_EQ(filtered.count("execve") ? filtered.at("execve") : 0, 7u);
    if (n > 1) {
        EXPECT_EQ(filtered.count("getppid") ? filtered.at("getppid") : 0, 7u);
        EXPECT_EQ(filtered.count("clone") ? filtered.at("clone") : 0, 3u);  // glibc's fork
        EXPECT_GT(filtered.count("read") ? filtered.at("read") : 0, 0u);
    }
}

TEST(PtraceSession, SeccompFilterCountsExecveWithFollow) {
    checkSeccompCounts(1);
}

TEST(PtraceSession, SeccompFilterCounts255Syscalls) {
    checkSeccompCounts(255);
}

TEST(PtraceSession, SeccompFilterCounts256Syscalls) {
    checkSeccompCounts(256);
}

TEST(PtraceSession, SeccompFilterCounts300Syscalls) {
    checkSeccompCounts(300);
}

TEST(PtraceSession, SeccompFilterCountsAllSyscalls) {
    checkSeccompCounts(builtinSyscallNames().size());
}

TEST(PtraceSession, ThreadsHittingOneBreakpointAreAllCounted) {
    auto t =
        traceCommand({kWorkload, "threads", "4", "500"}, {spec("uprobe", kWorkload, "pt_add")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    std::map<std::uint32_t, std::vector<std::uint64_t>> by_thread;
    for (const auto& e : t.events)
        by_thread[e.pid].push_back(e.args[1]);
    ASSERT_EQ(t.events.size(), 2000u);
    ASSERT_EQ(by_thread.size(), 4u);
    for (const auto& [tid, js] : by_thread) {
        ASSERT_EQ(js.size(), 500u) << "thread " << tid;
        for (std::uint64_t j = 0; j < 500; ++j)
            EXPECT_EQ(js[j], j);
    }
}

TEST(PtraceSession, FollowTracesForkedChild) {
    auto t = traceCommand({kWorkload, "forks", "7"}, {spec("uprobe", kWorkload, "pt_add")}, true);
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    std::map<std::uint32_t, std::vector<std::uint64_t>> by_tgid;
    for (const auto& e : t.events)
        by_tgid[e.tgid].push_back(e.args[1]);
    ASSERT_EQ(by_tgid.size(), 2u);
    for (const auto& [tgid, bs] : by_tgid) {
        ASSERT_EQ(bs.size(), 7u);
        const std::uint64_t b = bs[0];
        for (auto v : bs)
            EXPECT_EQ(v, b);
    }
}

TEST(PtraceSession, WithoutFollowTheChildRunsCleanUntraced) {
    // The child inherits the int3 bytes; they must be restored in it before it runs, or it
    // dies of SIGTRAP and the workload exits 4.
    auto t = traceCommand({kWorkload, "forks", "7"}, {spec("uprobe", kWorkload, "pt_add")}, false);
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    ASSERT_EQ(t.events.size(), 7u);
    for (const auto& e : t.events)
        EXPECT_EQ(e.args[1], 0u);
}

// Each event carries the comm the thread has at that hit, as the kernel's task->comm: a
// process renaming itself, threads naming themselves, and comms of any byte but NUL.
TEST(PtraceSession, CommIsTheThreadsAtEachHit) {
    auto t = traceCommand({kWorkload, "rename", "3"}, {"syscall:getppid"});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    std::map<std::string, int> by_comm;
    for (const auto& e : t.events)
        by_comm[e.comm]++;
    const std::map<std::string, int> want{{"pt_workload", 1}, {"renamed", 2}, {"worker0", 1},
                                          {"worker1", 2},     {"worker2", 3}, {"g\377", 1},
                                          {"nl\nx", 1},       {"", 1}};
    EXPECT_EQ(by_comm, want);
}

// `fn` run in a child process that must finish within `seconds`: a regression that hangs
// the tracer fails the test ("timed out") instead of hanging it.
std::string withinSeconds(int seconds, const std::function<std::string()>& fn) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
        ::close(p[0]);
        const std::string out = fn();
        const bool ok = ::write(p[1], out.data(), out.size()) == static_cast<ssize_t>(out.size());
        _exit(ok ? 0 : 1);
    }
    ::close(p[1]);
    std::string out;
    pollfd pfd{p[0], POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    bool eof = false;
    while (!eof && std::chrono::steady_clock::now() < deadline) {
        if (::poll(&pfd, 1, 100) <= 0)
            continue;
        char buf[256];
        const ssize_t n = ::read(p[0], buf, sizeof(buf));
        if (n <= 0)
            eof = true;
        else
            out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(p[0]);
    ::kill(pid, SIGKILL);  // its command dies with it (PTRACE_O_EXITKILL)
    int st = 0;
    waitpid(pid, &st, 0);
    return eof ? out : "timed out after " + std::to_string(seconds) + " s: " + out;
}

// pt_workload vfork 5 under the session: its exit status, then the entries and returns of
// pt_add in the parent (b = 0) and in the vfork child (b = 1), and how many processes hit.
std::string vforkHits(bool follow) {
    auto t = traceCommand(
        {kWorkload, "vfork", "5"},
        {spec("uprobe", kWorkload, "pt_add"), spec("uretprobe", kWorkload, "pt_add")}, follow);
    int n[2][2] = {};
    std::set<std::uint32_t> tgids;
    for (const auto& e : t.events) {
        if (e.args[1] > 1)
            return "unexpected pt_add b " + std::to_string(e.args[1]);
        n[e.args[1]][e.is_return ? 1 : 0]++;
        tgids.insert(e.tgid);
    }
    const int code = WIFEXITED(t.status) ? WEXITSTATUS(t.status) : -1;
    return "exit " + std::to_string(code) + " parent " + std::to_string(n[0][0]) + "/" +
           std::to_string(n[0][1]) + " child " + std::to_string(n[1][0]) + "/" +
           std::to_string(n[1][1]) + " processes " + std::to_string(tgids.size());
}

// A vfork() child runs in its parent's memory, our int3s included, while the parent waits
// in the kernel (it cannot stop until the child is done). Followed, the child's hits are
// counted; not followed, they are not; either way nothing hangs and the child does not die
// of our traps.
TEST(PtraceSession, VforkChildHitsDoNotHang) {
    EXPECT_EQ(withinSeconds(30, [] { return vforkHits(true); }),
              "exit 0 parent 5/5 child 5/5 processes 2");
    EXPECT_EQ(withinSeconds(30, [] { return vforkHits(false); }),
              "exit 0 parent 5/5 child 0/0 processes 1");
}

TEST(PtraceSession, SharedLibraryLoadedAfterExecIsProbed) {
    auto t = traceCommand({FX_LIBUSER_PATH, "9"}, {spec("uprobe", FXLIB_PATH, "fx_lib_add")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    ASSERT_EQ(t.events.size(), 9u);
    for (std::uint64_t i = 0; i < 9; ++i) {
        EXPECT_EQ(t.events[i].args[0], i);
        EXPECT_EQ(t.events[i].args[1], 10u);
    }
}

// The library's lib_calls_back() probed while the workload unloads and loads it again
// (tests/ptrace/redlopen.c): the probe's events and their addresses.
std::vector<std::uint64_t> redlopenHits(const char* mode) {
    auto t = traceCommand({FX_REDLOPEN_PATH, FX_DLOPEN_LIB_PATH, "7", mode},
                          {spec("uprobe", FX_DLOPEN_LIB_PATH, "lib_calls_back")});
    EXPECT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << mode << " " << t.status;
    std::vector<std::uint64_t> ips;
    for (const Event& ev : t.events)
        ips.push_back(ev.ip);
    return ips;
}

// Loaded again at the same address, the library is a new mapping: the int3 written into
// the first one is gone with it, and the probe is placed again (was: 7 hits of 14, the
// second copy taken for "already placed").
TEST(PtraceSession, LibraryLoadedAgainAtTheSameAddressIsProbedAgain) {
    const auto ips = redlopenHits("again");
    ASSERT_EQ(ips.size(), 14u);
    EXPECT_EQ(ips.front(), ips.back()) << "the workload did not load the library at the same "
                                          "address twice: this test does not test that case";
}

TEST(PtraceSession, LibraryLoadedAgainElsewhereIsProbedThere) {
    const auto ips = redlopenHits("moved");
    ASSERT_EQ(ips.size(), 14u);
    EXPECT_NE(ips.front(), ips.back());
    EXPECT_EQ(std::count(ips.begin(), ips.end(), ips.front()), 7);
}

// A mapping with our int3 replaced by the program's own memory, with no dynamic linker
// event in between: on detach, the saved byte must not be written into the new page (was:
// the workload found its page changed, exit 3).
TEST(PtraceSession, DetachLeavesAReplacedMappingAlone) {
    PtraceSessionOptions o;
    o.command = {FX_REDLOPEN_PATH, FX_DLOPEN_LIB_PATH, "3", "munmap"};
    auto s = PtraceSession::open(o);
    ASSERT_TRUE(s) << s.error().describe();
    ASSERT_TRUE(s->add(spec("uprobe", FX_DLOPEN_LIB_PATH, "lib_calls_back")));
    auto ready = s->add(spec("uprobe", FX_REDLOPEN_PATH, "page_replaced"));
    ASSERT_TRUE(ready) << ready.error().describe();
    ASSERT_TRUE(s->release());
    std::uint64_t calls = 0;
    bool replaced = false;
    auto cb = [&](const Event& ev) {
        if (ev.probe_id == *ready)
            replaced = true;
        else
            ++calls;
    };
    while (!replaced && !s->commandStatus())
        ASSERT_TRUE(s->poll(1000, cb));
    ASSERT_TRUE(replaced);
    EXPECT_EQ(calls, 6u);
    ASSERT_TRUE(s->stop(cb));
    ASSERT_EQ(::kill(s->commandPid(), SIGUSR1), 0);
    siginfo_t si{};
    ASSERT_EQ(waitid(P_PID, static_cast<id_t>(s->commandPid()), &si, WEXITED | WNOWAIT), 0);
    auto ws = s->terminateCommand(1000);
    ASSERT_TRUE(ws);
    EXPECT_TRUE(WIFEXITED(*ws) && WEXITSTATUS(*ws) == 0) << *ws;
}

TEST(PtraceSession, StopWhileCommandRunsDetachesAndCommandFinishes) {
    PtraceSessionOptions o;
    o.command = {kWorkload, "threads", "3", "200000"};
    auto s = PtraceSession::open(o);
    ASSERT_TRUE(s) << s.error().describe();
    ASSERT_TRUE(s->add(spec("uprobe", kWorkload, "pt_add")));
    ASSERT_TRUE(s->release());
    std::uint64_t n = 0;
    auto cb = [&](const Event&) { ++n; };
    while (n < 1000)
        ASSERT_TRUE(s->poll(1000, cb));
    auto st = s->stop(cb);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->probes[0].hits, n);
    // Untraced now, with its bytes back: it must finish its 600000 calls and exit 0.
    // WNOWAIT leaves the zombie to the session, which reaps it.
    siginfo_t si{};
    ASSERT_EQ(waitid(P_PID, static_cast<id_t>(s->commandPid()), &si, WEXITED | WNOWAIT), 0);
    auto ws = s->terminateCommand(1000);
    ASSERT_TRUE(ws);
    EXPECT_TRUE(WIFEXITED(*ws) && WEXITSTATUS(*ws) == 0) << *ws;
}

// `pid` sleeps inside read(2) (the ptrace stop at its entry was handled and the thread
// resumed: /proc says S, not t): blocked on the fifo.
bool blockedInRead(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    std::ifstream sc("/proc/" + std::to_string(pid) + "/syscall");
    std::string nr;
    sc >> nr;
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S' &&
           nr == std::to_string(SYS_read);
}

// cat reading a fifo that this test holds open (for writing, so that cat's open does not
// wait), traced with syscall:read until cat sleeps in its read of the fifo.
struct CatInRead {
    std::string dir, fifo;
    int writer = -1;
    std::optional<PtraceSession> s;
    CatInRead() {
        char d[] = "/tmp/probectl-inflight-XXXXXX";
        if (!::mkdtemp(d))
            return;
        dir = d;
        fifo = dir + "/fifo";
        if (::mkfifo(fifo.c_str(), 0600) < 0)
            return;
        writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
        PtraceSessionOptions o;
        o.command = {"/bin/cat", fifo};
        auto opened = PtraceSession::open(o);
        if (!opened || !opened->add("syscall:read") || !opened->release())
            return;
        s.emplace(std::move(*opened));
        const pid_t pid = s->commandPid();
        auto r = s->run([](const Event&) {}, [&] { return blockedInRead(pid) || s->done(); }, 50);
        if (!r || !blockedInRead(pid))
            s.reset();
    }
    ~CatInRead() {
        if (writer >= 0)
            ::close(writer);  // cat reads its end of file and exits
        if (s) {
            (void)s->stop([](const Event&) {});
            (void)s->terminateCommand(1000);
        }
        if (!fifo.empty())
            ::unlink(fifo.c_str());
        if (!dir.empty())
            ::rmdir(dir.c_str());
    }
};

// A syscall's hit is its entry, as the kernel backend counts it: a call in progress is a
// hit not returned yet, so that count --interval's read-out says "hits 1, ..., not returned
// yet 1" as the kernel's does. The hit was counted at the exit: the read-out during the
// call said "hits 0, not returned yet 0" (seen failing: hits was delivered + 0).
TEST(PtraceSession, ASyscallInProgressIsAHitNotReturnedYet) {
    CatInRead cat;
    ASSERT_TRUE(cat.s) << "cat did not come to sleep in read(2) under the session";
    const PtraceProbe inside = cat.s->probes().at(0);
    EXPECT_EQ(inside.hits, inside.delivered + 1) << "the read in progress is a hit";
    ASSERT_EQ(::write(cat.writer, "x\n", 2), 2);
    ::close(cat.writer);
    cat.writer = -1;
    auto cb = [](const Event&) {};
    ASSERT_TRUE(cat.s->run(
        cb, [&] { return cat.s->commandStatus().has_value(); }, 50));
    auto st = cat.s->stop(cb);
    ASSERT_TRUE(st);
    cat.s.reset();
    const ProbeStats& p = st->probes.at(0);
    EXPECT_EQ(p.hits, p.delivered) << "every read returned, the one on the fifo too";
    EXPECT_EQ(p.unreturned, 0u);
    EXPECT_EQ(p.dropped, 0u);
}

// Stopped while the call is in progress, the call is unreturned (the kernel's "never
// returned"), not a return: the stop's interrupt broke the read off with -ERESTARTSYS, which
// the program never sees (the kernel restarts it once detached). Seen failing: that exit was
// an event, unreturned 0.
TEST(PtraceSession, ASyscallInProgressAtTheStopIsUnreturned) {
    CatInRead cat;
    ASSERT_TRUE(cat.s) << "cat did not come to sleep in read(2) under the session";
    auto st = cat.s->stop([](const Event&) {});
    ASSERT_TRUE(st);
    const ProbeStats& p = st->probes.at(0);
    EXPECT_EQ(p.hits, p.delivered + 1);
    EXPECT_EQ(p.unreturned, 1u);
    EXPECT_EQ(p.dropped, 0u);
}

}  // namespace
}  // namespace probectl
