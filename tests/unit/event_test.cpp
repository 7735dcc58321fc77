// Record decoding on synthetic PROBECTL_A_RECORDS blobs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/event_view_access.hpp"
#include "probectl/event.hpp"
#include "probectl/event_view.hpp"
#include "probectl/fetch_decode.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

// A record with every optional part, in their order (what a probe that asks for nothing in
// particular gets): the fixed struct probectl_record, comm, ip, args, retval, latency.
struct FullRecord {
    std::uint32_t size;
    std::uint32_t probe_id;
    std::uint64_t timestamp_ns;
    std::uint32_t cpu;
    std::uint32_t pid;
    std::uint32_t tgid;
    std::uint32_t flags;
    char comm[PROBECTL_COMM_LEN];
    std::uint64_t ip;
    std::uint64_t args[PROBECTL_NARGS];
    std::uint64_t retval;
    std::uint64_t latency_ns;
};
static_assert(sizeof(FullRecord) == sizeof(probectl_record) + 88);

FullRecord makeRecord(std::uint32_t id, bool ret = false) {
    FullRecord r{};
    r.size = sizeof(r);
    r.probe_id = id;
    r.timestamp_ns = 1000 + id;
    r.cpu = 3;
    r.pid = 101;
    r.tgid = 100;
    r.flags = kRecordPartsAll | (ret ? PROBECTL_RECORD_F_RETURN : 0);
    std::memcpy(r.comm, "getppid_loop", 12);
    r.ip = 0xffffffff81001000ull;
    for (int i = 0; i < PROBECTL_NARGS; ++i)
        r.args[i] = 0x10 * (i + 1);
    r.retval = static_cast<std::uint64_t>(-2);
    r.latency_ns = 12345;
    return r;
}

// Appends `r` with its size field set to `size` and the blob grown to `size` bytes.
void append(std::vector<std::byte>& blob, FullRecord r, std::uint32_t size = 0) {
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
    FullRecord r = makeRecord(1);
    std::memcpy(r.comm, "0123456789abcdef", 16);
    std::vector<std::byte> blob;
    append(blob, r);
    auto evs = decodeAll(blob, nullptr);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].comm, "0123456789abcdef");
}

TEST(DecodeRecords, BackToBackWithAndWithoutValues) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2), sizeof(FullRecord) + 16);  // two empty fetched values
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
                HasSubstr("record at byte " + std::to_string(sizeof(FullRecord))));
    EXPECT_THAT(r.error().message, HasSubstr("8 trailing bytes, too short for a record header"));
}

TEST(DecodeRecords, ZeroSizeDoesNotLoopForever) {
    FullRecord r0 = makeRecord(1);
    r0.size = 0;
    std::vector<std::byte> zero(sizeof(r0));
    std::memcpy(zero.data(), &r0, sizeof(r0));
    Result<std::size_t> r = std::size_t{0};
    EXPECT_TRUE(decodeAll(zero, &r).empty());
    EXPECT_FALSE(r);
}

TEST(DecodeRecords, SizeNotAMultipleOfEight) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1), sizeof(FullRecord) + 4);
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
    std::vector<std::byte> storage(sizeof(FullRecord) + 4);
    FullRecord rec = makeRecord(9);
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
    FullRecord r = makeRecord(4);
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
    append(blob, makeRecord(4), sizeof(FullRecord) + 16);
    probectl_fetch_value h{};
    h.len = 200;
    std::memcpy(blob.data() + sizeof(FullRecord), &h, sizeof(h));
    Result<std::size_t> n = 0;
    decodeAll(blob, &n);
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().err, EBADMSG);
    EXPECT_NE(n.error().message.find("runs past the record"), std::string::npos);
}

namespace {

// Two records of probe 4 (an entry with a string and a faulted value, then a return with an
// x64) and one of probe 1 without values, unaligned as netlink hands them over.
std::vector<std::byte> viewBlob() {
    std::vector<std::byte> blob(4);
    for (int k = 0; k < 3; ++k) {
        FullRecord r = makeRecord(k == 2 ? 1 : 4, k == 1);
        r.timestamp_ns += static_cast<std::uint64_t>(k);
        if (k == 2) {
            append(blob, r);
            continue;
        }
        const std::size_t at = blob.size();
        append(blob, r, sizeof(r) + 8 + 16 + 8 + (k == 0 ? 0 : 8));
        std::byte* v = blob.data() + at + sizeof(r);
        probectl_fetch_value h{};
        const char path[] = "/etc/hostname";
        h.len = sizeof(path);
        std::memcpy(v, &h, sizeof(h));
        std::memcpy(v + 8, path, sizeof(path));
        h.len = k == 0 ? 0 : 8;
        h.flags = k == 0 ? PROBECTL_FETCH_V_FAULT : 0;
        std::memcpy(v + 24, &h, sizeof(h));
        const std::uint64_t x = 0xffff888012345678ull;
        if (k == 1)  // the entry's x faulted: no bytes
            std::memcpy(v + 32, &x, sizeof(x));
    }
    return blob;
}

std::vector<FetchArg> viewArgs() {
    std::vector<FetchArg> a(2);
    a[0].name = "path";
    a[0].type = FetchType::String;
    a[1].name = "x";
    a[1].type = FetchType::X64;
    return a;
}

void expectSameEvent(const Event& a, const Event& b) {
    EXPECT_EQ(a.probe_id, b.probe_id);
    EXPECT_EQ(a.spec, b.spec);
    EXPECT_EQ(a.timestamp_ns, b.timestamp_ns);
    EXPECT_EQ(a.cpu, b.cpu);
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.tgid, b.tgid);
    EXPECT_EQ(a.comm, b.comm);
    EXPECT_EQ(a.ip, b.ip);
    EXPECT_EQ(a.args, b.args);
    EXPECT_EQ(a.retval, b.retval);
    EXPECT_EQ(a.latency_ns, b.latency_ns);
    EXPECT_EQ(a.is_return, b.is_return);
    EXPECT_EQ(a.syscall, b.syscall);
    EXPECT_EQ(a.syscall_returned, b.syscall_returned);
    ASSERT_EQ(a.fetched.size(), b.fetched.size());
    for (std::size_t i = 0; i < a.fetched.size(); ++i) {
        EXPECT_EQ(a.fetched[i].bytes, b.fetched[i].bytes);
        EXPECT_EQ(a.fetched[i].flags, b.fetched[i].flags);
        EXPECT_EQ(a.fetched[i].error, b.fetched[i].error);
    }
    ASSERT_EQ(a.values.size(), b.values.size());
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        EXPECT_EQ(a.values[i].name, b.values[i].name);
        EXPECT_EQ(a.values[i].raw, b.values[i].raw);
        EXPECT_EQ(a.values[i].str, b.values[i].str);
        EXPECT_EQ(a.values[i].faulted, b.values[i].faulted);
    }
}

}  // namespace

// A view reads the same fields decodeRecords copies, and toEvent() is that Event.
TEST(EventView, FieldsEqualTheDecodedEvent) {
    const auto storage = viewBlob();
    const std::span<const std::byte> blob(storage.data() + 4, storage.size() - 4);
    const std::vector<Event> decoded =
        decodeAll(std::vector<std::byte>(blob.begin(), blob.end()), nullptr);
    ASSERT_EQ(decoded.size(), 3u);
    std::vector<Event> viewed;
    std::size_t i = 0;
    auto n = decodeRecordViews(blob, [&](const EventView& v) {
        const Event& d = decoded[i++];
        EXPECT_EQ(v.probeId(), d.probe_id);
        EXPECT_EQ(v.timestampNs(), d.timestamp_ns);
        EXPECT_EQ(v.comm(), "getppid_loop");
        EXPECT_EQ(v.arg(5), 0x60u);
        EXPECT_EQ(v.isReturn(), d.is_return);
        EXPECT_EQ(v.retval(), d.is_return ? static_cast<std::uint64_t>(-2) : 0u);
        EXPECT_EQ(v.latencyNs(), d.is_return ? 12345u : 0u);
        EXPECT_EQ(v.fetchedCount(), d.fetched.size());
        EXPECT_EQ(v.valueCount(), 0u) << "no probe known: no values (as Client::consume)";
        viewed.push_back(v.toEvent());
    });
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(*n, 3u);
    ASSERT_EQ(viewed.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k)
        expectSameEvent(viewed[k], decoded[k]);
    // And the other way round: a view of an Event gives it back.
    for (const Event& d : decoded)
        expectSameEvent(EventView::of(d).toEvent(), d);
}

// With its probe (as a Session adds it), a view decodes values in the spec's order, the
// same as decodeFetchedValue on the Event's bytes; copyTo fills a kept Event.
TEST(EventView, ValuesDecodeLazilyInTheSpecsOrder) {
    const auto storage = viewBlob();
    const std::span<const std::byte> blob(storage.data() + 4, storage.size() - 4);
    const auto args = viewArgs();
    const std::vector<std::size_t> shown = {1, 0};  // the spec names x first
    std::vector<Event> kept;
    Event reused;
    auto n = decodeRecordViews(blob, [&](const EventView& raw) {
        if (raw.probeId() != 4)
            return;
        const EventView v =
            detail::EventViewAccess::withProbe(raw, "uprobe:/bin/x:f", nullptr, &args, &shown);
        EXPECT_EQ(v.spec(), "uprobe:/bin/x:f");
        ASSERT_EQ(v.valueCount(), 2u);
        FetchedValue x, path;
        v.value(0, x);
        v.value(1, path);
        EXPECT_EQ(x.name, "x");
        EXPECT_EQ(path.str, "/etc/hostname");
        const auto want_x = decodeFetchedValue(args[1], v.fetched(1).bytes, v.fetched(1).flags);
        EXPECT_EQ(x.faulted, want_x.faulted);
        EXPECT_EQ(x.raw, want_x.raw);
        v.copyTo(reused);
        kept.push_back(v.toEvent());
        expectSameEvent(reused, kept.back());
    });
    ASSERT_TRUE(n);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_TRUE(kept[0].values[0].faulted);  // the entry's x faulted
    EXPECT_EQ(kept[1].values[0].raw, 0xffff888012345678ull);
    EXPECT_FALSE(kept[1].values[0].faulted);
    EXPECT_EQ(kept[1].values[1].str, "/etc/hostname");
}

// The same checks and errors as decodeRecords, before any view of the bad record.
TEST(EventView, MalformedRecordsAreRefused) {
    std::vector<std::byte> blob;
    append(blob, makeRecord(1));
    append(blob, makeRecord(2), sizeof(FullRecord) + 16);
    probectl_fetch_value h{};
    h.len = 200;
    std::memcpy(blob.data() + 2 * sizeof(FullRecord), &h, sizeof(h));
    std::vector<std::uint32_t> seen;
    auto n = decodeRecordViews(blob, [&](const EventView& v) { seen.push_back(v.probeId()); });
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().err, EBADMSG);
    EXPECT_THAT(n.error().message, HasSubstr("runs past the record"));
    EXPECT_EQ(seen, std::vector<std::uint32_t>{1});
}
