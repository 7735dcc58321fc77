// Record decoding on synthetic PROBECTL_A_RECORDS blobs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "probectl/event.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

probectl_record makeRecord(std::uint32_t id, bool ret = false) {
    probectl_record r{};
    r.size = sizeof(r);
    r.probe_id = id;
    r.timestamp_ns = 1000 + id;
    r.cpu = 3;
    r.pid = 101;
    r.tgid = 100;
    r.flags = ret ? PROBECTL_RECORD_F_RETURN : 0;
    std::memcpy(r.comm, "getppid_loop", 12);
    r.ip = 0xffffffff81001000ull;
    for (int i = 0; i < PROBECTL_NARGS; ++i)
        r.args[i] = 0x10 * (i + 1);
    r.retval = static_cast<std::uint64_t>(-2);
    r.latency_ns = 12345;
    return r;
}

// Appends `r` with its size field set to `size` and the blob grown to `size` bytes.
void append(std::vector<std::byte>& blob, probectl_record r, std::uint32_t size = 0) {
    if (size == 0)
        size = sizeof(r);
    r.size = size;
    const std::size_t at = blob.size();
    blob.resize(at + std::max<std::size_t>(size, sizeof(r)));
    std::memcpy(blob.data() + at, &r, sizeof(r));
    blob.resize(at + size);
}

std::vector<Event> decodeAll(const std::vector<std::byte>& blob, Result<std::size_t>* out) {
    std::vector<Event> evs;
    auto r = decodeRecords(blob, [&](const Event& e) { evs.push_back(e); });
    if (out)
        *out = r;
    return evs;
}

}  // namespace

TEST(DecodeRecords, EmptyBlobIsNoRecords) {
    std::vector<std::byte> blob;
    Result<std::size_t> r = std::size_t{99};
    EXPECT_TRUE(decodeAll(blob, &r).empty());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 0u);
}

TEST(DecodeRecords, DecodesEveryField) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(7));
    Result<std::size_t> r = std::size_t{0};
    auto evs = decodeAll(blob, &r);
    ASSERT_TRUE(r);
    ASSERT_EQ(evs.size(), 1u);
    const Event& e = evs[0];
    EXPECT_EQ(e.probe_id, 7u);
    EXPECT_EQ(e.timestamp_ns, 1007u);
    EXPECT_EQ(e.cpu, 3u);
    EXPECT_EQ(e.pid, 101u);
    EXPECT_EQ(e.tgid, 100u);
    EXPECT_EQ(e.comm, "getppid_loop");
    EXPECT_EQ(e.ip, 0xffffffff81001000ull);
    EXPECT_EQ(e.args[0], 0x10u);
    EXPECT_EQ(e.args[5], 0x60u);
    EXPECT_FALSE(e.is_return);
    // Entry records do not carry a return value even if the bytes say something.
    EXPECT_EQ(e.retval, 0u);
    EXPECT_EQ(e.latency_ns, 0u);
    EXPECT_TRUE(e.spec.empty());
}

TEST(DecodeRecords, ReturnRecords) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1, true));
    auto evs = decodeAll(blob, nullptr);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_TRUE(evs[0].is_return);
    EXPECT_EQ(static_cast<std::int64_t>(evs[0].retval), -2);
    EXPECT_EQ(evs[0].latency_ns, 12345u);
}

TEST(DecodeRecords, FullSixteenByteCommHasNoNul) {
    probectl_record r = makeRecord(1);
    std::memcpy(r.comm, "0123456789abcdef", 16);
    std::vector<std::byte> blob;
    append(blob, r);
    auto evs = decodeAll(blob, nullptr);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].comm, "0123456789abcdef");
}

TEST(DecodeRecords, BackToBackAndLargerRecordsFromNewerKernels) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2), sizeof(probectl_record) + 16);  // appended fields: skipped
    append(blob, makeRecord(3));
    Result<std::size_t> r = std::size_t{0};
    auto evs = decodeAll(blob, &r);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 3u);
    ASSERT_EQ(evs.size(), 3u);
    EXPECT_EQ(evs[1].probe_id, 2u);
    EXPECT_EQ(evs[2].probe_id, 3u);
}

TEST(DecodeRecords, SizeBelowTheStructIsRejected) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2), 8);
    Result<std::size_t> r = std::size_t{0};
    auto evs = decodeAll(blob, &r);
    EXPECT_EQ(evs.size(), 1u);  // the good one before it was delivered
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EBADMSG);
    EXPECT_THAT(r.error().message,
                HasSubstr("record at byte " + std::to_string(sizeof(probectl_record))));
    EXPECT_THAT(r.error().message, HasSubstr("size 8 is below the minimum"));
}

TEST(DecodeRecords, ZeroSizeDoesNotLoopForever) {
    probectl_record r0 = makeRecord(1);
    r0.size = 0;
    std::vector<std::byte> zero(sizeof(r0));
    std::memcpy(zero.data(), &r0, sizeof(r0));
    Result<std::size_t> r = std::size_t{0};
    EXPECT_TRUE(decodeAll(zero, &r).empty());
    EXPECT_FALSE(r);
}

TEST(DecodeRecords, SizeNotAMultipleOfEight) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1), sizeof(probectl_record) + 4);
    Result<std::size_t> r = std::size_t{0};
    EXPECT_TRUE(decodeAll(blob, &r).empty());
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("not a multiple of 8"));
}

TEST(DecodeRecords, TruncatedRecord) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2));
    blob.resize(blob.size() - 8);  // the second record's size now runs past the end
    Result<std::size_t> r = std::size_t{0};
    auto evs = decodeAll(blob, &r);
    EXPECT_EQ(evs.size(), 1u);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("runs past the end"));
}

TEST(DecodeRecords, TrailingBytesTooShortForAHeader) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    blob.resize(blob.size() + 2);
    Result<std::size_t> r = std::size_t{0};
    auto evs = decodeAll(blob, &r);
    EXPECT_EQ(evs.size(), 1u);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("2 trailing bytes"));
}

TEST(DecodeRecords, UnalignedBlob) {
    // Netlink attribute payloads are only 4-byte aligned: decoding must not assume 8.
    std::vector<std::byte> storage(sizeof(probectl_record) + 4);
    probectl_record rec = makeRecord(9);
    std::memcpy(storage.data() + 4, &rec, sizeof(rec));
    std::vector<Event> evs;
    auto r = decodeRecords(std::span<const std::byte>(storage.data() + 4, sizeof(rec)),
                           [&](const Event& e) { evs.push_back(e); });
    ASSERT_TRUE(r);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].probe_id, 9u);
}

TEST(DecodeRecords, NullCallbackStillCounts) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2));
    auto r = decodeRecords(blob, nullptr);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 2u);
}

// Fetched values follow the fixed record: an 8-byte header each, then the value padded to 8.
TEST(DecodeRecords, FetchedValuesAfterTheRecord) {
    std::vector<std::byte> blob;
    probectl_record r = makeRecord(4);
    const char path[] = "/etc/hostname";  // 14 bytes with the NUL: 16 with padding
    const std::uint32_t size = sizeof(r) + 8 + 16 + 8 + 0;
    append(blob, r, size);
    std::byte* v = blob.data() + sizeof(r);
    probectl_fetch_value h{};
    h.len = sizeof(path);
    h.flags = PROBECTL_FETCH_V_TRUNCATED;
    std::memcpy(v, &h, sizeof(h));
    std::memcpy(v + 8, path, sizeof(path));
    h.len = 0;
    h.flags = PROBECTL_FETCH_V_FAULT;
    std::memcpy(v + 24, &h, sizeof(h));
    Result<std::size_t> n = 0;
    auto evs = decodeAll(blob, &n);
    ASSERT_TRUE(n) << n.error().message;
    ASSERT_EQ(evs.size(), 1u);
    ASSERT_EQ(evs[0].fetched.size(), 2u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(evs[0].fetched[0].bytes.data())),
              "/etc/hostname");
    EXPECT_EQ(evs[0].fetched[0].flags, PROBECTL_FETCH_V_TRUNCATED);
    EXPECT_TRUE(evs[0].fetched[1].bytes.empty());
    EXPECT_EQ(evs[0].fetched[1].flags, PROBECTL_FETCH_V_FAULT);
}

TEST(DecodeRecords, FetchedValueRunningPastTheRecordIsMalformed) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(4), sizeof(probectl_record) + 16);
    probectl_fetch_value h{};
    h.len = 200;
    std::memcpy(blob.data() + sizeof(probectl_record), &h, sizeof(h));
    Result<std::size_t> n = 0;
    decodeAll(blob, &n);
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().err, EBADMSG);
    EXPECT_NE(n.error().message.find("runs past the record"), std::string::npos);
}
