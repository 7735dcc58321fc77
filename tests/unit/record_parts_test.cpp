// Records with some of the optional parts (comm, ip, args, retval, latency): each part at
// the offset the parts before it leave, fetched values after them, absent parts read as
// empty or 0, and sizes checked against the parts the flags name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/event_view.hpp"
#include "record_parts.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

constexpr std::uint64_t kIp = 0xffffffff81001000ull;
constexpr std::uint64_t kRetval = static_cast<std::uint64_t>(-2);
constexpr std::uint64_t kLatency = 12345;
constexpr std::uint64_t kValue = 0x1122334455667788ull;

template <typename T>
void put(std::vector<std::byte>& b, const T& v) {
    const std::size_t at = b.size();
    b.resize(at + sizeof(v));
    std::memcpy(b.data() + at, &v, sizeof(v));
}

// One record of probe 5 with `flags`, laid out by hand: the fixed struct, the parts its flags
// name in bit order, then one fetched u64.
std::vector<std::byte> build(std::uint32_t flags) {
    std::vector<std::byte> b;
    probectl_record r{};
    r.probe_id = 5;
    r.timestamp_ns = 777;
    r.cpu = 1;
    r.pid = 42;
    r.tgid = 41;
    r.flags = flags;
    put(b, r);
    if (flags & PROBECTL_RECORD_F_COMM) {
        char comm[PROBECTL_COMM_LEN] = "worker";
        put(b, comm);
    }
    if (flags & PROBECTL_RECORD_F_IP)
        put(b, kIp);
    if (flags & PROBECTL_RECORD_F_ARGS)
        for (std::uint64_t i = 0; i < PROBECTL_NARGS; ++i)
            put(b, 0x100 + i);
    if (flags & PROBECTL_RECORD_F_RETVAL)
        put(b, kRetval);
    if (flags & PROBECTL_RECORD_F_LATENCY)
        put(b, kLatency);
    probectl_fetch_value h{};
    h.len = 8;
    put(b, h);
    put(b, kValue);
    const auto size = static_cast<std::uint32_t>(b.size());
    std::memcpy(b.data(), &size, sizeof(size));
    return b;
}

void expectParts(const EventView& v, std::uint32_t flags) {
    const std::uint32_t parts = flags & kRecordPartsAll;
    const bool ret = flags & PROBECTL_RECORD_F_RETURN;
    EXPECT_EQ(v.parts(), parts);
    EXPECT_EQ(v.probeId(), 5u);
    EXPECT_EQ(v.timestampNs(), 777u);
    EXPECT_EQ(v.pid(), 42u);
    EXPECT_EQ(v.tgid(), 41u);
    EXPECT_EQ(v.isReturn(), ret);
    EXPECT_EQ(v.comm(), parts & kRecordPartComm ? "worker" : "");
    EXPECT_EQ(v.ip(), parts & kRecordPartIp ? kIp : 0u);
    for (std::size_t i = 0; i < kEventArgs; ++i)
        EXPECT_EQ(v.arg(i), parts & kRecordPartArgs ? 0x100 + i : 0u) << i;
    EXPECT_EQ(v.retval(), ret && (parts & kRecordPartRetval) ? kRetval : 0u);
    EXPECT_EQ(v.latencyNs(), ret && (parts & kRecordPartLatency) ? kLatency : 0u);
    ASSERT_EQ(v.fetchedCount(), 1u);
    const auto raw = v.fetched(0);
    ASSERT_EQ(raw.bytes.size(), 8u);
    std::uint64_t got = 0;
    std::memcpy(&got, raw.bytes.data(), 8);
    EXPECT_EQ(got, kValue);
}

}  // namespace

// Every combination of parts, entry and return: views and decoded Events agree.
TEST(RecordParts, EveryCombinationDecodes) {
    for (std::uint32_t ret : {0u, std::uint32_t{PROBECTL_RECORD_F_RETURN}}) {
        for (std::uint32_t combo = 0; combo < 32; ++combo) {
            const std::uint32_t flags = (combo << 1) | ret;
            SCOPED_TRACE(flags);
            // behind 4 bytes: netlink only aligns attributes to 4
            std::vector<std::byte> blob(4);
            const auto rec = build(flags);
            blob.insert(blob.end(), rec.begin(), rec.end());
            const std::span<const std::byte> s(blob.data() + 4, rec.size());
            std::size_t seen = 0;
            auto n = decodeRecordViews(s, [&](const EventView& v) {
                expectParts(v, flags);
                ++seen;
            });
            ASSERT_TRUE(n) << n.error().message;
            EXPECT_EQ(seen, 1u);
            std::vector<Event> evs;
            ASSERT_TRUE(decodeRecords(s, [&](const Event& e) { evs.push_back(e); }));
            ASSERT_EQ(evs.size(), 1u);
            expectParts(EventView::of(evs[0]), flags);
        }
    }
}

// An Event that did not come from a kernel record has every part.
TEST(RecordParts, EventDefaultsToEveryPart) {
    Event e;
    EXPECT_EQ(e.parts, kRecordPartsAll);
    EXPECT_TRUE(EventView::of(e).has(kRecordPartComm | kRecordPartArgs));
}

// A size that leaves no room for the parts the flags name is refused, not read past.
TEST(RecordParts, SizeBelowItsPartsIsRefused) {
    auto rec = build(PROBECTL_RECORD_F_COMM | PROBECTL_RECORD_F_ARGS);
    const std::uint32_t size = sizeof(probectl_record) + PROBECTL_COMM_LEN + 8;  // args cut
    std::memcpy(rec.data(), &size, sizeof(size));
    rec.resize(size);
    auto n = decodeRecordViews(rec, {});
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().err, EBADMSG);
    EXPECT_THAT(n.error().message, HasSubstr("size 56 is below the minimum 96"));
}

TEST(RecordParts, TruncatedHeaderIsRefused) {
    auto rec = build(PROBECTL_RECORD_F_IP);
    rec.resize(24);  // the size field is there, the flags are not
    auto n = decodeRecordViews(rec, {});
    ASSERT_FALSE(n);
    EXPECT_THAT(n.error().message, HasSubstr("24 trailing bytes, too short for a record header"));
}

TEST(RecordParts, BadSizeIsRefused) {
    auto rec = build(PROBECTL_RECORD_F_IP);
    const std::uint32_t size = static_cast<std::uint32_t>(rec.size()) + 4;
    std::memcpy(rec.data(), &size, sizeof(size));
    rec.resize(size);
    auto n = decodeRecordViews(rec, {});
    ASSERT_FALSE(n);
    EXPECT_THAT(n.error().message, HasSubstr("not a multiple of 8"));
}

// probectl trace's text output: comm always, raw args only without fetched values to print,
// retval and latency (written for returns only); other formats keep everything.
TEST(RecordParts, TraceAsksForWhatItPrints) {
    const std::uint32_t base = kRecordPartComm | kRecordPartRetval | kRecordPartLatency;
    EXPECT_EQ(cli::traceRecordParts("text", {}), base | kRecordPartArgs);
    std::vector<FetchArg> one(1);
    EXPECT_EQ(cli::traceRecordParts("text", one), base);
    EXPECT_EQ(cli::traceRecordParts("json", one), kRecordPartsAll);
    EXPECT_EQ(cli::traceRecordParts("record", {}), kRecordPartsAll);
}
