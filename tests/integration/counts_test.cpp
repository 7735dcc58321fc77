// Exact counts and values: what the kernel records must equal what the workload did.
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::Session;

namespace {

struct Collected {
    std::vector<Event> events;
    probectl::EventCallback cb() {
        return [this](const Event& e) { events.push_back(e); };
    }
};

// Runs `argv` under a session filtered on its pid with `specs` added; returns the stop()
// stats and fills `out` with the workload's stdout.
probectl::SessionStats traceWorkload(const std::vector<std::string>& specs,
                                     std::vector<std::string> argv, Collected& got,
                                     std::string* out, probectl::SessionOptions opts = {}) {
    Workload w(std::move(argv));
    opts.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(opts);
    if (!s)
        throw std::runtime_error("session: " + s.error().describe());
    for (const auto& spec : specs) {
        auto id = s->add(spec);
        if (!id)
            throw std::runtime_error("add " + spec + ": " + why(id));
    }
    w.release();
    int rc = w.wait(out);
    EXPECT_EQ(rc, 0) << "workload exit status";
    auto st = s->stop(got.cb());
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    return *st;
}

}  // namespace

TEST(Counts, SyscallGetppidExactlyNRecordsNoneLost) {
    constexpr int kCalls = 2000;
    Collected got;
    std::string out;
    auto st = traceWorkload({"syscall:getppid"},
                            {itest::workload("getppid_loop"), std::to_string(kCalls)}, got, &out);
    ASSERT_EQ(st.probes.size(), 1u);
    EXPECT_EQ(got.events.size(), static_cast<size_t>(kCalls));
    EXPECT_EQ(st.probes[0].hits, static_cast<uint64_t>(kCalls));
    EXPECT_EQ(st.probes[0].delivered, static_cast<uint64_t>(kCalls));
    EXPECT_EQ(st.probes[0].dropped, 0u);
    EXPECT_EQ(st.probes[0].nmissed, 0u);
    EXPECT_EQ(st.lost, 0u);
    EXPECT_FALSE(st.anyLoss());
    ASSERT_FALSE(got.events.empty());
    const uint32_t pid = got.events.front().tgid;
    for (const auto& e : got.events) {
        EXPECT_EQ(e.tgid, pid);
        EXPECT_EQ(e.pid, pid) << "single-threaded workload";
        EXPECT_EQ(e.comm, "getppid_loop");
        // One record per call, at its return: entry arguments and the return value.
        EXPECT_TRUE(e.is_return);
    }
    // Timestamps are CLOCK_MONOTONIC and records of one thread come in order.
    for (size_t i = 1; i < got.events.size(); i++)
        EXPECT_LE(got.events[i - 1].timestamp_ns, got.events[i].timestamp_ns);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint64_t now_ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
    EXPECT_LE(got.events.back().timestamp_ns, now_ns);
    EXPECT_GT(got.events.front().timestamp_ns + 60'000'000'000ull, now_ns) << "older than 60 s";
}

TEST(Counts, KretprobeGetppidReturnsTheRealParent) {
    constexpr int kCalls = 500;
    Collected got;
    std::string out;
    auto st = traceWorkload({"kretprobe:__x64_sys_getppid"},
                            {itest::workload("getppid_loop"), std::to_string(kCalls)}, got, &out);
    // The workload's parent is this test process; it also prints what getppid() returned.
    const long printed = std::stol(out);
    EXPECT_EQ(printed, static_cast<long>(getpid()));
    ASSERT_EQ(got.events.size(), static_cast<size_t>(kCalls));
    for (const auto& e : got.events) {
        ASSERT_TRUE(e.is_return);
        EXPECT_EQ(e.retval, static_cast<uint64_t>(getpid()));
        EXPECT_GT(e.latency_ns, 0u);
        EXPECT_LT(e.latency_ns, 1'000'000'000u);
    }
    EXPECT_EQ(st.probes[0].hits, static_cast<uint64_t>(kCalls));
    EXPECT_EQ(st.probes[0].nmissed, 0u);
    EXPECT_EQ(st.probes[0].dropped, 0u);
}

// The workload prints the user address of its path argument: the kernel's openat path
// must see that very pointer as the filename argument.
static uint64_t printedPointer(const std::string& out) {
    unsigned long long p = 0;
    long fd = -1;
    EXPECT_EQ(sscanf(out.c_str(), "%llx %ld", &p, &fd), 2) << out;
    EXPECT_GE(fd, 0) << "open failed in the workload";
    return p;
}

TEST(Counts, KprobeOnOpenatPathSeesTheFilename) {
    Collected got;
    std::string out;
    auto st = traceWorkload({"kprobe:do_sys_openat2"},
                            {itest::workload("open_file"), "/etc/passwd"}, got, &out);
    const uint64_t ptr = printedPointer(out);
    int matching = 0;
    for (const auto& e : got.events)
        if (e.args[1] == ptr && static_cast<int32_t>(e.args[0]) == AT_FDCWD)
            matching++;
    EXPECT_EQ(matching, 1) << "do_sys_openat2(dfd, filename=" << std::hex << ptr
                           << ", ...) not seen among " << std::dec << got.events.size() << " calls";
    EXPECT_EQ(st.probes[0].hits, got.events.size());
}

TEST(Counts, SyscallOpenatRecordsTheUsersArguments) {
    Collected got;
    std::string out;
    traceWorkload({"syscall:openat"}, {itest::workload("open_file"), "/etc/passwd"}, got, &out);
    const uint64_t ptr = printedPointer(out);
    int matching = 0;
    for (const auto& e : got.events)
        if (e.args[1] == ptr) {
            matching++;
            EXPECT_EQ(static_cast<int32_t>(e.args[0]), AT_FDCWD);
            EXPECT_EQ(e.args[2], static_cast<uint64_t>(O_RDONLY));
        }
    EXPECT_EQ(matching, 1);
}

// Nothing is lost silently: with a receive buffer far too small for the burst, every record
// is either delivered or counted as dropped.
TEST(Counts, EveryHitIsDeliveredOrCountedDropped) {
    constexpr int kCalls = 50000;
    Collected got;
    std::string out;
    probectl::SessionOptions opts;
    opts.client.rcvbuf_bytes = 64 << 10;
    opts.client.force_rcvbuf = false;
    auto st =
        traceWorkload({"syscall:getppid"},
                      {itest::workload("getppid_loop"), std::to_string(kCalls)}, got, &out, opts);
    const auto& p = st.probes.at(0);
    std::printf("hits=%" PRIu64 " delivered=%" PRIu64 " dropped=%" PRIu64 " lost=%" PRIu64
                " overruns=%" PRIu64 "\n",
                p.hits, p.delivered, p.dropped, st.lost, st.overruns);
    EXPECT_EQ(p.hits, static_cast<uint64_t>(kCalls));
    EXPECT_EQ(p.delivered, got.events.size());
    EXPECT_EQ(p.delivered + p.dropped, static_cast<uint64_t>(kCalls));
}

// Two threads pinned to two CPUs fill both rings at once: the module's drain sends the
// records oldest first across CPUs, and every one of them arrives (1500 records of 64
// bytes fit the default 256 KiB ring per CPU even if the drain ran only at the end).
// Each sleeps 2 ms after every 50 calls, so that the drain finds the CPUs' records
// interleaved in time (under TCG a thread would otherwise finish within its CPU's turn).
TEST(Counts, RecordsOfEveryCpuArriveOldestFirst) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs 2 online CPUs";
    constexpr int kCalls = 1500;
    Collected got;
    std::string out;
    auto st = traceWorkload(
        {"kprobe:__x64_sys_getppid"},
        {itest::workload("cpus_getppid"), std::to_string(kCalls), "2", "50", "2000"}, got, &out);
    EXPECT_EQ(out, "2\n");
    ASSERT_EQ(st.probes.size(), 1u);
    EXPECT_EQ(st.probes[0].hits, 2u * kCalls);
    EXPECT_EQ(got.events.size(), 2u * kCalls);
    EXPECT_FALSE(st.anyLoss());
    std::size_t on_cpu[2] = {0, 0};
    std::size_t out_of_order = 0, switches = 0;
    for (size_t i = 0; i < got.events.size(); i++) {
        if (got.events[i].cpu < 2)
            on_cpu[got.events[i].cpu]++;
        if (i == 0)
            continue;
        out_of_order += got.events[i - 1].timestamp_ns > got.events[i].timestamp_ns;
        switches += got.events[i - 1].cpu != got.events[i].cpu;
    }
    EXPECT_EQ(on_cpu[0], std::size_t{kCalls});
    EXPECT_EQ(on_cpu[1], std::size_t{kCalls});
    EXPECT_EQ(out_of_order, 0u);
    // Both rings held records at once: the stream goes back and forth between the CPUs.
    EXPECT_GT(switches, 10u);
}
