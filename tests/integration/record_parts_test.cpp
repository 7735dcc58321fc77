// Record parts (PROBE_PARTS) against the real module: a probe asked for some parts
// gets records with exactly those, at the right offsets with the right values; return-only
// parts stay out of entry probes' records; no request means every part; unknown bits are
// refused.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Event;
using probectl::Session;
using namespace probectl;

namespace {

// Traces `spec` in `argv` with every site asking for `parts` (nullopt: the default).
std::vector<Event> traceParts(const std::string& spec, std::vector<std::string> argv,
                              std::optional<std::uint32_t> parts) {
    Workload w(std::move(argv));
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    if (parts)
        o.prepare = [p = *parts](ProbeRequest& req, std::vector<FetchArg>&) -> Result<void> {
            req.record_parts = p;
            return {};
        };
    auto s = Session::open(o);
    if (!s)
        throw std::runtime_error("session: " + why(s));
    if (auto id = s->add(spec); !id)
        throw std::runtime_error("add " + spec + ": " + why(id));
    w.release();
    EXPECT_EQ(w.wait(nullptr), 0);
    std::vector<Event> events;
    auto st = s->stop([&](const Event& e) { events.push_back(e); });
    if (!st)
        throw std::runtime_error("stop: " + why(st));
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return a.timestamp_ns < b.timestamp_ns; });
    return events;
}

}  // namespace

// uretprobe with comm and retval only: no ip, no args, no latency; the values fetched after
// the parts still decode (pc_add(i, 2i+1) returns 3i+1).
TEST(RecordParts, UretprobeCommAndRetvalOnly) {
    auto ev =
        traceParts("uretprobe:" + itest::uprobeTarget() + ":pc_add a=$arg1:s64",
                   {itest::uprobeTarget(), "calls", "20"}, kRecordPartComm | kRecordPartRetval);
    ASSERT_EQ(ev.size(), 20u);
    for (std::size_t i = 1; i <= ev.size(); i++) {
        const Event& e = ev[i - 1];
        EXPECT_EQ(e.parts, kRecordPartComm | kRecordPartRetval);
        EXPECT_TRUE(e.is_return);
        EXPECT_EQ(e.comm, "uprobe_target");
        EXPECT_EQ(e.ip, 0u);
        EXPECT_EQ(e.args[0], 0u);
        EXPECT_EQ(e.retval, 3 * i + 1);
        EXPECT_EQ(e.latency_ns, 0u);
        ASSERT_EQ(e.values.size(), 1u);
        EXPECT_EQ(e.values[0].raw, i);
    }
}

// An entry probe asked for every part carries comm, ip and args, never retval or latency.
TEST(RecordParts, UprobeEntryLeavesOutReturnParts) {
    auto ev = traceParts("uprobe:" + itest::uprobeTarget() + ":pc_add",
                         {itest::uprobeTarget(), "calls", "10"}, kRecordPartsAll);
    ASSERT_EQ(ev.size(), 10u);
    for (std::size_t i = 1; i <= ev.size(); i++) {
        const Event& e = ev[i - 1];
        EXPECT_EQ(e.parts, kRecordPartComm | kRecordPartIp | kRecordPartArgs);
        EXPECT_FALSE(e.is_return);
        EXPECT_EQ(e.comm, "uprobe_target");
        EXPECT_NE(e.ip, 0u);
        EXPECT_EQ(e.args[0], i);
        EXPECT_EQ(e.args[1], 2 * i + 1);
    }
}

// kretprobe asked for ip only: no comm, no retval; then the default: every part, with the
// values getppid returned.
TEST(RecordParts, KretprobeIpOnlyThenTheDefault) {
    const std::string ppid = std::to_string(getpid());
    auto only = traceParts("kretprobe:__x64_sys_getppid", {itest::workload("getppid_loop"), "5"},
                           kRecordPartIp);
    ASSERT_EQ(only.size(), 5u);
    for (const Event& e : only) {
        EXPECT_EQ(e.parts, kRecordPartIp);
        EXPECT_TRUE(e.is_return);
        EXPECT_NE(e.ip, 0u);
        EXPECT_EQ(e.comm, "");
        EXPECT_EQ(e.retval, 0u);
    }
    auto all = traceParts("kretprobe:__x64_sys_getppid", {itest::workload("getppid_loop"), "5"},
                          std::nullopt);
    ASSERT_EQ(all.size(), 5u);
    for (const Event& e : all) {
        EXPECT_EQ(e.parts, kRecordPartsAll);
        EXPECT_EQ(e.comm, "getppid_loop");
        EXPECT_EQ(e.ip, only[0].ip);
        EXPECT_EQ(std::to_string(e.retval), ppid);
        EXPECT_GT(e.latency_ns, 0u);
    }
}

// Bits that are not parts (the return flag, unknown ones) are refused by the policy.
TEST(RecordParts, UnknownBitsAreRefused) {
    auto c = itest::connectOrDie();
    for (std::uint32_t bad : {1u, 1u << 6, 1u << 31}) {
        ProbeRequest req;
        req.kind = ProbeKind::Kprobe;
        req.symbol = "__x64_sys_getppid";
        req.record_parts = kRecordPartComm | bad;
        auto r = c.addProbe(req);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().err, EINVAL) << bad;
    }
}
