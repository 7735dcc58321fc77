// User-space probes against the real module: what uprobes, uretprobes and USDT probes
// record must equal what the workload (workloads/uprobe_target.c) did, only the filtered
// processes are recorded, and nothing is left behind in a process when a tracer goes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/session.hpp"
#include "probectl/user_target.hpp"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::Session;

namespace {

// uprobe_target linked by clang + lld: a USDT semaphore in a file page that the RELRO
// segment maps too.
std::string lldTarget() {
    return itest::workload("uprobe_target_lld");
}

struct Run {
    probectl::SessionStats stats;
    std::vector<Event> events;
    std::string out;
};

// Runs uprobe_target with `args`, filtered on its pid (plus follow), with `specs` added.
Run traceTarget(const std::vector<std::string>& specs, std::vector<std::string> args,
                bool follow = false) {
    args.insert(args.begin(), itest::uprobeTarget());
    Workload w(std::move(args));
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.follow = follow;
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    for (const auto& spec : specs)
        if (auto id = s->add(spec); !id)
            throw std::runtime_error("add " + spec + ": " + why(id));
    Run r;
    w.release();
    EXPECT_EQ(w.wait(&r.out), 0) << r.out;
    auto st = s->stop([&](const Event& e) { r.events.push_back(e); });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    r.stats = *st;
    std::sort(r.events.begin(), r.events.end(),
              [](const Event& a, const Event& b) { return a.timestamp_ns < b.timestamp_ns; });
    return r;
}

// Two bytes of process memory at a process address (root reads any process's memory).
int readU16(pid_t pid, std::uint64_t addr) {
    int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
    if (fd < 0)
        return -1;
    unsigned short v = 0;
    ssize_t n = pread(fd, &v, sizeof(v), static_cast<off_t>(addr));
    ::close(fd);
    return n == sizeof(v) ? v : -1;
}

// Waits up to 5 s for the u16 at addr to become `want`; returns the last value read.
int waitU16(pid_t pid, std::uint64_t addr, int want) {
    int v = -1;
    for (int i = 0; i < 500; i++) {
        v = readU16(pid, addr);
        if (v == want)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return v;
}

// Process address at which `pid` maps byte `file_offset` of the file `path`.
std::uint64_t processAddress(pid_t pid, const std::string& path, std::uint64_t file_offset) {
    auto maps = probectl::ProcMaps::read(pid);
    if (!maps)
        return 0;
    for (const auto& m : maps->mappings())
        if (m.path == path && m.holdsFileOffset(file_offset))
            return m.address(file_offset);
    return 0;
}

std::string waitForFile(const std::string& path) {
    for (int i = 0; i < 500; i++) {
        std::string s = itest::readFile(path);
        if (!s.empty() && s.back() == '\n')
            return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {};
}

}  // namespace

TEST(Uprobe, EveryCallRecordedWithItsArguments) {
    constexpr int kCalls = 500;
    auto r = traceTarget({"uprobe:" + itest::uprobeTarget() + ":pc_add"},
                         {"calls", std::to_string(kCalls)});
    ASSERT_EQ(r.stats.probes.size(), 1u);
    const auto& p = r.stats.probes[0];
    EXPECT_EQ(p.hits, kCalls);
    EXPECT_EQ(p.delivered, kCalls);
    EXPECT_EQ(p.dropped + p.nmissed + p.filtered, 0u);
    ASSERT_EQ(r.events.size(), static_cast<std::size_t>(kCalls));
    const std::uint64_t ip = r.events[0].ip;
    for (int i = 1; i <= kCalls; i++) {
        const Event& e = r.events[i - 1];
        ASSERT_EQ(e.args[0], static_cast<std::uint64_t>(i)) << "call " << i;
        ASSERT_EQ(e.args[1], static_cast<std::uint64_t>(2 * i + 1)) << "call " << i;
        ASSERT_EQ(e.ip, ip) << "every hit is at pc_add's first instruction";
        ASSERT_FALSE(e.is_return);
    }
    EXPECT_EQ(r.out, "sum=" + std::to_string(3L * kCalls * (kCalls + 1) / 2 + kCalls) + "\n");
}

TEST(Uretprobe, ReturnValueArgumentsAndLatencyOfEveryCall) {
    constexpr int kCalls = 300;
    auto r = traceTarget({"uretprobe:" + itest::uprobeTarget() + ":pc_add"},
                         {"calls", std::to_string(kCalls)});
    ASSERT_EQ(r.stats.probes.size(), 1u);
    EXPECT_EQ(r.stats.probes[0].hits, kCalls);
    EXPECT_EQ(r.stats.probes[0].nmissed, 0u) << "every return paired with its entry";
    ASSERT_EQ(r.events.size(), static_cast<std::size_t>(kCalls));
    for (int i = 1; i <= kCalls; i++) {
        const Event& e = r.events[i - 1];
        ASSERT_TRUE(e.is_return);
        ASSERT_EQ(e.args[0], static_cast<std::uint64_t>(i));
        ASSERT_EQ(e.retval, static_cast<std::uint64_t>(3 * i + 1)) << "call " << i;
        ASSERT_GT(e.latency_ns, 0u);
        ASSERT_LT(e.latency_ns, 10'000'000'000ull);
    }
}

// Returns come innermost first; each must pair with its own entry (argument n, result n!).
TEST(Uretprobe, RecursionPairsEveryReturn) {
    constexpr int kDepth = 20;  // 20! fits in a signed 64-bit long
    auto r = traceTarget({"uretprobe:" + itest::uprobeTarget() + ":pc_fact"},
                         {"fact", std::to_string(kDepth)});
    ASSERT_EQ(r.stats.probes.size(), 1u);
    EXPECT_EQ(r.stats.probes[0].hits, kDepth);
    EXPECT_EQ(r.stats.probes[0].nmissed, 0u);
    ASSERT_EQ(r.events.size(), static_cast<std::size_t>(kDepth));
    std::uint64_t fact = 1;
    for (int n = 1; n <= kDepth; n++) {
        fact *= n;
        const Event& e = r.events[n - 1];
        EXPECT_EQ(e.args[0], static_cast<std::uint64_t>(n)) << "return " << n;
        EXPECT_EQ(e.retval, fact) << "return " << n;
        if (n > 1) {
            EXPECT_GE(e.latency_ns, r.events[n - 2].latency_ns) << "outer calls last longer";
        }
    }
}

// The same library code runs in two processes; only the filtered one is recorded, and the
// filter keeps the breakpoint out of the other one altogether (no filtered hits).
TEST(Uprobe, LibraryFunctionOnlyInTheFilteredProcess) {
    constexpr int kCalls = 1000;
    Workload traced({itest::uprobeTarget(), "libc", std::to_string(kCalls)});
    Workload other({itest::uprobeTarget(), "libc", std::to_string(kCalls)});
    const auto traced_pid = static_cast<std::uint32_t>(traced.pid());
    probectl::SessionOptions o;
    o.tgids = {traced_pid};
    auto s = Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("uprobe:libc:getppid");
    ASSERT_TRUE(id) << why(id);
    traced.release();
    other.release();
    std::string out1, out2;
    EXPECT_EQ(traced.wait(&out1), 0);
    EXPECT_EQ(other.wait(&out2), 0);
    EXPECT_EQ(out2, "getppid=" + std::to_string(kCalls) + "\n") << "the other process ran";
    std::set<std::uint32_t> tgids;
    auto st = s->stop([&](const Event& e) { tgids.insert(e.tgid); });
    ASSERT_TRUE(st) << why(st);
    EXPECT_EQ(st->probes[0].hits, kCalls);
    EXPECT_EQ(st->probes[0].delivered, kCalls);
    EXPECT_EQ(st->probes[0].filtered, 0u) << "breakpoint armed in the unfiltered process";
    EXPECT_EQ(tgids, std::set<std::uint32_t>{traced_pid});
}

TEST(Uprobe, FollowRecordsChildrenForkedAfterTheStart) {
    constexpr int kCalls = 100;
    auto r = traceTarget({"uprobe:" + itest::uprobeTarget() + ":pc_add"},
                         {"fork", std::to_string(kCalls)},
                         /*follow=*/true);
    std::set<std::uint32_t> tgids;
    for (const auto& e : r.events)
        tgids.insert(e.tgid);
    EXPECT_EQ(r.stats.probes[0].hits, 2 * kCalls) << r.out;
    EXPECT_EQ(r.events.size(), static_cast<std::size_t>(2 * kCalls));
    EXPECT_EQ(tgids.size(), 2u) << "parent and the child it forked (which exec'd)";
}

TEST(Uprobe, WithoutFollowChildrenAreNotRecorded) {
    constexpr int kCalls = 100;
    auto r = traceTarget({"uprobe:" + itest::uprobeTarget() + ":pc_add"},
                         {"fork", std::to_string(kCalls)});
    EXPECT_EQ(r.stats.probes[0].hits, kCalls) << r.out;
    for (const auto& e : r.events)
        EXPECT_EQ(e.comm, std::string("uprobe_target"));
    std::set<std::uint32_t> tgids;
    for (const auto& e : r.events)
        tgids.insert(e.tgid);
    EXPECT_EQ(tgids.size(), 1u);
}

// The semaphore is raised while the probe exists, so the program's is-enabled check sees it.
TEST(Usdt, EveryProbeFiresAndTheSemaphoreIsRaised) {
    constexpr int kTicks = 50;
    auto r = traceTarget({"usdt:" + itest::uprobeTarget() + ":pc:tick"},
                         {"usdt", std::to_string(kTicks)});
    ASSERT_EQ(r.stats.probes.size(), 1u);
    EXPECT_EQ(r.stats.probes[0].hits, kTicks);
    EXPECT_EQ(r.events.size(), static_cast<std::size_t>(kTicks));
    EXPECT_EQ(r.out, "enabled=" + std::to_string(kTicks) + " semaphore=1\n");
}

// After the tracer's socket closes, or the tracer is killed, the semaphore is back to 0
// and the probed instruction is the original one again (no int3 left in the process).
TEST(Usdt, SemaphoreAndCodeRestoredAfterDetachAndAfterSigkill) {
    const std::string file = "/tmp/uprobe_target.hold";
    ::unlink(file.c_str());
    Workload w({itest::uprobeTarget(), "hold", "60", file});
    w.release();
    std::string addr_text = waitForFile(file);
    ASSERT_FALSE(addr_text.empty()) << "workload did not start";
    const std::uint64_t sem = std::stoull(addr_text, nullptr, 16);
    const std::string spec = "usdt:" + itest::uprobeTarget() + ":pc:hold";
    auto parsed = probectl::parseProbeSpec(spec);
    ASSERT_TRUE(parsed);
    auto t = probectl::resolveUserSpec(*parsed);
    ASSERT_TRUE(t) << why(t);
    const std::uint64_t site = processAddress(w.pid(), t->path, t->file_offset);
    ASSERT_NE(site, 0u);
    const int original = readU16(w.pid(), site);
    ASSERT_NE(original & 0xff, 0xcc);
    EXPECT_EQ(readU16(w.pid(), sem), 0);

    {
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(w.pid())};
        auto s = Session::open(o);
        ASSERT_TRUE(s) << why(s);
        auto id = s->add(spec);
        ASSERT_TRUE(id) << why(id);
        EXPECT_EQ(waitU16(w.pid(), sem, 1), 1) << "semaphore raised while attached";
        EXPECT_EQ(readU16(w.pid(), site) & 0xff, 0xcc) << "breakpoint inserted";
    }
    EXPECT_EQ(waitU16(w.pid(), sem, 0), 0) << "semaphore back to 0 after detach";
    EXPECT_EQ(readU16(w.pid(), site), original) << "code restored after detach";

    pid_t tracer = fork();
    ASSERT_GE(tracer, 0);
    if (tracer == 0) {
        int null = ::open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl("/usr/local/bin/probectl", "probectl", "trace", spec.c_str(), "-p",
              std::to_string(w.pid()).c_str(), (char*)nullptr);
        _exit(127);
    }
    EXPECT_EQ(waitU16(w.pid(), sem, 1), 1) << "probectl trace raised the semaphore";
    kill(tracer, SIGKILL);
    int status = 0;
    waitpid(tracer, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "tracer exited by itself: " << status;
    EXPECT_EQ(waitU16(w.pid(), sem, 0), 0) << "semaphore back to 0 after SIGKILL";
    EXPECT_EQ(readU16(w.pid(), site), original) << "code restored after SIGKILL";
    kill(w.pid(), SIGKILL);
    w.wait();
}

// With lld's layout the kernel would raise the semaphore in the RELRO mapping when the
// command execs (delayed ref_ctr update at mmap, before the dynamic loader makes RELRO
// read-only): probectl sees the layout, and for `-- CMD` raises it itself at the entry point.
TEST(UsdtLld, TheSharedSemaphorePageIsSeen) {
    for (const auto& [file, shared] :
         {std::pair{lldTarget(), true}, std::pair{itest::uprobeTarget(), false}}) {
        auto spec = probectl::parseProbeSpec("usdt:" + file + ":pc:tick");
        ASSERT_TRUE(spec);
        auto t = probectl::resolveUserSpec(*spec);
        ASSERT_TRUE(t) << why(t);
        EXPECT_NE(t->ref_ctr_offset, 0u) << file;
        EXPECT_EQ(t->semaphore_page_shared, shared) << file;
    }
}

TEST(UsdtLld, TheCommandSeesItsSemaphoreRaisedOnBothBackends) {
    constexpr int kTicks = 40;
    const std::string want = "enabled=" + std::to_string(kTicks) + " semaphore=1";
    for (const std::string backend : {"kernel", "ptrace"}) {
        for (const std::string& file : {lldTarget(), itest::uprobeTarget()}) {
            const std::string log = "/tmp/usdt_lld.trace";
            auto r =
                itest::sh("probectl trace --backend=" + backend + " usdt:" + file + ":pc:tick -o " +
                          log + " -- " + file + " usdt " + std::to_string(kTicks) + " 2>&1");
            EXPECT_EQ(r.status, 0) << r.out;
            EXPECT_NE(r.out.find(want), std::string::npos) << backend << " " << file << "\n"
                                                           << r.out;
            // The summary row: HITS and DELIVERED.
            const std::string trace = itest::readFile(log);
            EXPECT_TRUE(std::regex_search(trace, std::regex("pc:tick +" + std::to_string(kTicks) +
                                                            " +" + std::to_string(kTicks) + " ")))
                << backend << " " << file << "\n"
                << trace;
            EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
        }
    }
}

// -p PID: RELRO is read-only by then, so the kernel finds the data mapping itself.
TEST(UsdtLld, ARunningProcessSeesItsSemaphoreUntilTheTracerGoes) {
    const std::string file = "/tmp/uprobe_target_lld.hold";
    ::unlink(file.c_str());
    Workload w({lldTarget(), "hold", "60", file});
    w.release();
    std::string addr_text = waitForFile(file);
    ASSERT_FALSE(addr_text.empty()) << "workload did not start";
    const std::uint64_t sem = std::stoull(addr_text, nullptr, 16);
    EXPECT_EQ(readU16(w.pid(), sem), 0);
    {
        probectl::SessionOptions o;
        o.tgids = {static_cast<std::uint32_t>(w.pid())};
        auto s = Session::open(o);
        ASSERT_TRUE(s) << why(s);
        auto id = s->add("usdt:" + lldTarget() + ":pc:hold");
        ASSERT_TRUE(id) << why(id);
        EXPECT_TRUE(s->takeNotes().empty());
        // Not 0 is what the program checks. lld also puts the code's first bytes in a page
        // of the read-only segment, which the kernel counts as a second mapping of the probe
        // (and a second raise, undone at detach): 2 here on every kernel.
        int v = 0;
        for (int i = 0; i < 500 && v == 0; i++) {
            v = readU16(w.pid(), sem);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        EXPECT_GT(v, 0) << "semaphore raised while attached";
    }
    EXPECT_EQ(waitU16(w.pid(), sem, 0), 0) << "semaphore back to 0 after detach";
    kill(w.pid(), SIGKILL);
    w.wait();
}

// Where nothing can fix it (a process exec'd later, not the command), a note says so.
TEST(UsdtLld, LaterExecsAreNamedInANote) {
    for (const std::string& file : {lldTarget(), itest::uprobeTarget()}) {
        auto s = Session::open();
        ASSERT_TRUE(s) << why(s);
        auto id = s->add("usdt:" + file + ":pc:tick");
        ASSERT_TRUE(id) << why(id);
        const auto notes = s->takeNotes();
        if (file == itest::uprobeTarget()) {
            EXPECT_TRUE(notes.empty());
            continue;
        }
        ASSERT_EQ(notes.size(), 1u);
        EXPECT_NE(notes[0].find("lld's layout"), std::string::npos) << notes[0];
        EXPECT_NE(notes[0].find(file), std::string::npos) << notes[0];
    }
}

TEST(UprobeErrors, KernelNamesTheFileAndTheFault) {
    auto c = itest::connectOrDie();
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Uprobe;
    req.path = "/tmp";
    auto r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    EXPECT_NE(r.error().extack.find("'/tmp' is not a regular file"), std::string::npos)
        << r.error().extack;

    req.path = itest::uprobeTarget();
    req.file_offset = 1ull << 40;
    r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    EXPECT_NE(r.error().extack.find("past the end"), std::string::npos) << r.error().extack;

    req.path = "/no/such/file";
    req.file_offset = 0;
    r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_NE(r.error().extack.find("cannot open '/no/such/file'"), std::string::npos)
        << r.error().extack;

    req.path = itest::uprobeTarget();
    req.file_offset = 0x1000;
    req.ref_ctr_offset = 0x1001;
    r = c.addProbe(req);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().extack.find("semaphore offset"), std::string::npos) << r.error().extack;
}

TEST(UprobeErrors, ListShowsPathAndFileOffset) {
    auto c = itest::connectOrDie();
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Uprobe;
    req.path = itest::uprobeTarget();
    auto parsed = probectl::parseProbeSpec("uprobe:" + itest::uprobeTarget() + ":pc_add");
    ASSERT_TRUE(parsed);
    auto t = probectl::resolveUserSpec(*parsed);
    ASSERT_TRUE(t) << why(t);
    req.file_offset = t->file_offset;
    auto added = c.addProbe(req);
    ASSERT_TRUE(added) << why(added);
    auto list = itest::listOrDie(c);
    auto it =
        std::find_if(list.begin(), list.end(), [&](const auto& p) { return p.id == added->id; });
    ASSERT_NE(it, list.end());
    EXPECT_EQ(it->kind, probectl::ProbeKind::Uprobe);
    EXPECT_EQ(it->path, itest::uprobeTarget());
    EXPECT_EQ(it->file_offset, t->file_offset);
    EXPECT_EQ(it->addr, 0u);
}
