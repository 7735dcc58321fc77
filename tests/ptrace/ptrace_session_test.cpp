// PtraceSession on this host: fixture workloads whose calls, arguments, returns and
// syscalls are known, traced through the ptrace backend, with every value checked.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "probectl/proc_maps.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/user_target.hpp"

namespace probectl {
namespace {

const std::string kWorkload = PT_WORKLOAD_PATH;

std::string spec(const char* kind, const std::string& path, const char* sym) {
    return std::string(kind) + ":" + path + ":" + sym;
}

PtraceSessionOptions attachTo(pid_t pid) {
    PtraceSessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(pid)};
    return o;
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
    auto getppid = ofProbe(t.events, 1, false);
    ASSERT_EQ(getppid.size(), 50u);
    for (const auto& e : getppid)
        EXPECT_EQ(static_cast<pid_t>(e.retval), getpid());  // the session forked it
    // The dynamic loader opens libraries with openat too: ours is the last, on PT_MISSING.
    auto openat = ofProbe(t.events, 2, false);
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

TEST(PtraceSession, SharedLibraryLoadedAfterExecIsProbed) {
    auto t = traceCommand({FX_LIBUSER_PATH, "9"}, {spec("uprobe", FXLIB_PATH, "fx_lib_add")});
    ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.status;
    ASSERT_EQ(t.events.size(), 9u);
    for (std::uint64_t i = 0; i < 9; ++i) {
        EXPECT_EQ(t.events[i].args[0], i);
        EXPECT_EQ(t.events[i].args[1], 10u);
    }
}

// A running multithreaded workload for the attach tests: pt_workload spin 4, its stdout a
// pipe that receives a byte every 4096 calls of thread 0. Not our child's child: the test
// process is its parent, so its exit status is ours to collect.
struct Spinner {
    pid_t pid = -1;
    int progress = -1;  // read end

    Spinner() {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            return;
        pid = fork();
        if (pid == 0) {
            dup2(p[1], 1);
            execl(kWorkload.c_str(), "pt_workload", "spin", "4", nullptr);
            _exit(127);
        }
        ::close(p[1]);
        progress = p[0];
    }
    ~Spinner() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            int st;
            waitpid(pid, &st, 0);
        }
        if (progress >= 0)
            ::close(progress);
    }
    // Proof of life: drain what is buffered, then wait for a fresh byte.
    bool advances() const {
        char buf[4096];
        int fl = fcntl(progress, F_GETFL);
        fcntl(progress, F_SETFL, fl | O_NONBLOCK);
        while (::read(progress, buf, sizeof(buf)) > 0) {
        }
        fcntl(progress, F_SETFL, fl);
        return ::read(progress, buf, 1) == 1;
    }
    int threadCount() const {
        int n = 0;
        std::ifstream f("/proc/" + std::to_string(pid) + "/status");
        std::string line;
        while (std::getline(f, line))
            if (line.rfind("Threads:", 0) == 0)
                n = std::stoi(line.substr(8));
        return n;
    }
};

// The process address of pt_spin in `pid`, and its executable mapping.
struct Text {
    std::uint64_t spin_addr = 0;
    std::uint64_t start = 0, end = 0;
};

Text findText(pid_t pid) {
    Text t;
    ProbeSpec ps = parseProbeSpec(spec("uprobe", kWorkload, "pt_spin")).value();
    auto target = resolveUserSpec(ps).value();
    auto maps = ProcMaps::read(pid).value();
    for (const auto& m : maps.mappings())
        if (m.executable() && m.path == target.path && target.file_offset >= m.offset &&
            target.file_offset < m.offset + (m.end - m.start)) {
            t.spin_addr = m.start + target.file_offset - m.offset;
            t.start = m.start;
            t.end = m.end;
        }
    return t;
}

std::string readMem(pid_t pid, std::uint64_t start, std::uint64_t end) {
    std::string bytes(end - start, '\0');
    const int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
    if (fd < 0)
        return {};
    const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(start));
    ::close(fd);
    bytes.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return bytes;
}

TEST(PtraceSession, AttachToThreadsAndDetachLeavesCodeUnchanged) {
    Spinner w;
    ASSERT_GT(w.pid, 0);
    // Thread 0 may write before the others exist: wait until all four spinners run.
    while (w.threadCount() < 5)
        ASSERT_TRUE(w.advances());
    const Text text = findText(w.pid);
    ASSERT_NE(text.spin_addr, 0u);
    const std::string before = readMem(w.pid, text.start, text.end);
    ASSERT_FALSE(before.empty());

    std::set<std::uint32_t> tids;
    std::uint64_t n = 0;
    {
        auto s = PtraceSession::open(attachTo(w.pid));
        ASSERT_TRUE(s) << s.error().describe();
        EXPECT_EQ(s->threads().size(), 5u);
        auto id = s->add(spec("uprobe", kWorkload, "pt_spin"));
        ASSERT_TRUE(id) << id.error().describe();
        // Armed: the int3 is in the tracee's text (what the comparison below must undo).
        const std::string armed = readMem(w.pid, text.spin_addr, text.spin_addr + 1);
        ASSERT_EQ(armed, std::string(1, '\xcc'));
        auto cb = [&](const Event& e) {
            tids.insert(e.pid);
            EXPECT_EQ(e.ip, text.spin_addr);
            ++n;
        };
        while (tids.size() < 4 || n < 2000) {
            auto r = s->poll(1000, cb);
            ASSERT_TRUE(r) << r.error().describe();
        }
        auto st = s->stop(cb);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->probes[0].hits, n);
        EXPECT_EQ(st->probes[0].delivered, n);
    }
    EXPECT_EQ(tids.size(), 4u);
    EXPECT_EQ(readMem(w.pid, text.start, text.end), before);
    // Not traced any more, all threads alive, and it still runs.
    std::ifstream status("/proc/" + std::to_string(w.pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            EXPECT_EQ(std::stoi(line.substr(10)), 0);
        }
    }
    EXPECT_EQ(w.threadCount(), 5);
    EXPECT_TRUE(w.advances());
    int st;
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

// Runs a tracer in a child process attached to `target` with `probe`, reports on `ready`
// once it has seen an event, then waits to be killed.
pid_t forkTracer(pid_t target, const std::string& probe, int ready) {
    const pid_t pid = fork();
    if (pid != 0)
        return pid;
    auto s = PtraceSession::open(attachTo(target));
    if (!s || !s->add(probe))
        _exit(1);
    bool seen = false;
    while (!seen) {
        if (!s->poll(1000, [&](const Event&) { seen = true; }))
            _exit(2);
    }
    (void)!::write(ready, "r", 1);
    for (;;)
        (void)s->poll(1000, nullptr);
}

// What SIGKILL of the tracer does to a -p tracee (ptrace(2): the kernel detaches the
// tracees of a dead tracer and lets them run). With syscall probes nothing was patched:
// the tracee runs on unharmed.
TEST(PtraceSession, TracerKilledWithSyscallProbesLeavesTraceeRunning) {
    Spinner w;
    ASSERT_GT(w.pid, 0);
    ASSERT_TRUE(w.advances());
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t tracer = forkTracer(w.pid, "syscall:write", p[1]);
    char c;
    ASSERT_EQ(::read(p[0], &c, 1), 1);
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ::close(p[0]);
    ::close(p[1]);
    EXPECT_TRUE(w.advances());
    EXPECT_TRUE(w.advances());
    EXPECT_EQ(waitpid(w.pid, &st, WNOHANG), 0);
}

// The documented limit: ptrace has no way to put back the bytes of a tracer that died.
// The tracee is not killed by the tracer's death, but its next pass over the probe
// executes our int3 with nobody to handle it, and it dies of SIGTRAP.
TEST(PtraceSession, TracerKilledWithUprobeLeavesInt3AndTraceeDiesOfSigtrap) {
    Spinner w;
    ASSERT_GT(w.pid, 0);
    ASSERT_TRUE(w.advances());
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t tracer = forkTracer(w.pid, spec("uprobe", kWorkload, "pt_spin"), p[1]);
    char c;
    ASSERT_EQ(::read(p[0], &c, 1), 1);
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(waitpid(tracer, &st, 0), tracer);
    ::close(p[0]);
    ::close(p[1]);
    const pid_t pid = w.pid;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    w.pid = -1;
    ASSERT_TRUE(WIFSIGNALED(st)) << st;
    EXPECT_EQ(WTERMSIG(st), SIGTRAP);
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

}  // namespace
}  // namespace probectl
