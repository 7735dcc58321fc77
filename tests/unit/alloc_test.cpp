// The per-event path allocates nothing once its buffers have grown: record decoding, the
// session's step (the view with its probe, made an Event) and both printers; a view
// callback allocates nothing at all, counted by replacing operator new in this test
// binary (its own executable, so no other test runs with the counter).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>
#include <streambuf>
#include <vector>

#include "core/event_view_access.hpp"
#include "probectl/event.hpp"
#include "probectl/event_print.hpp"
#include "probectl/event_view.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/printer.hpp"
#include "uapi/probectl.h"

namespace {
std::size_t g_news = 0;
}  // namespace

void* operator new(std::size_t n) {
    ++g_news;
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}

using namespace probectl;

namespace {

// Discards what is written, without a growing buffer of its own.
class NullBuf : public std::streambuf {
  protected:
    int_type overflow(int_type c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

constexpr std::size_t kRecords = 1000;

// kRecords records of probe 7, each with a 64-bit value and a string, as the kernel packs
// them: the fixed part (with comm, the one part `probectl trace` asks for here), then per value a
// header and its bytes padded to 8.
std::vector<std::byte> blob() {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i < kRecords; ++i) {
        const char path[] = "/etc/hostname-with-a-long-name";
        const std::size_t size = sizeof(probectl_record) + PROBECTL_COMM_LEN +
                                 2 * sizeof(probectl_fetch_value) + 8 +
                                 ((sizeof(path) + 7) & ~std::size_t{7});
        probectl_record r{};
        r.size = static_cast<std::uint32_t>(size);
        r.probe_id = 7;
        r.timestamp_ns = 1000 + i;
        r.pid = r.tgid = 100;
        r.flags = PROBECTL_RECORD_F_COMM;
        const std::size_t at = out.size();
        out.resize(at + size);
        std::byte* p = out.data() + at;
        std::memcpy(p, &r, sizeof(r));
        p += sizeof(r);
        std::memcpy(p, "bench_workload", 15);
        p += PROBECTL_COMM_LEN;
        probectl_fetch_value h{};
        h.len = 8;
        std::memcpy(p, &h, sizeof(h));
        const std::uint64_t v = 0xffff888000000000ull + i;
        std::memcpy(p + sizeof(h), &v, 8);
        p += sizeof(h) + 8;
        h.len = sizeof(path);
        std::memcpy(p, &h, sizeof(h));
        std::memcpy(p + sizeof(h), path, sizeof(path));
    }
    return out;
}

std::vector<FetchArg> fetchArgs() {
    std::vector<FetchArg> a(2);
    a[0].name = "r15_with_a_long_name";
    a[0].type = FetchType::X64;
    a[1].name = "path";
    a[1].type = FetchType::String;
    return a;
}

// Allocations while decoding the blob twice, the first pass growing the buffers; what
// the callback sees is checked so a decoder that skipped the work would fail.
std::size_t secondPassNews(const std::function<void(const Event&)>& use) {
    const auto b = blob();
    std::size_t seen = 0;
    auto cb = [&](const Event& ev) {
        ++seen;
        use(ev);
    };
    const std::size_t start = g_news;
    EXPECT_TRUE(decodeRecords(b, cb));
    const std::size_t before = g_news;
    EXPECT_GT(before, start) << "the first pass grows fresh buffers: is the counter counting?";
    EXPECT_TRUE(decodeRecords(b, cb));
    const std::size_t news = g_news - before;
    EXPECT_EQ(seen, 2 * kRecords);
    return news;
}

}  // namespace

TEST(PerEventAllocation, DecodingReusesOneEvent) {
    std::uint64_t sum = 0;
    EXPECT_EQ(secondPassNews([&](const Event& ev) {
                  ASSERT_EQ(ev.fetched.size(), 2u);
                  ASSERT_EQ(ev.fetched[1].bytes.size(), 31u);
                  EXPECT_EQ(ev.comm, "bench_workload");
                  sum += ev.fetched[0].bytes[0];
              }),
              0u);
    EXPECT_GT(sum, 0u);
}

// A session's step: the record's view with its probe (spec, fetch arguments in the spec's
// order), made an Event for an Event callback.
void tagged(const EventView& v, const std::vector<FetchArg>& args,
            const std::vector<std::size_t>* shown, const EventCallback& use) {
    detail::deliverAsEvent(
        detail::EventViewAccess::withProbe(v, "kprobe:f r15=+0(%di):x64 path=+0(%si):string",
                                           nullptr, &args, shown),
        use);
}

TEST(PerEventAllocation, TaggingDecodesValuesIntoReusedBuffers) {
    const auto args = fetchArgs();
    const std::vector<std::size_t> shown = {1, 0};
    const auto b = blob();
    std::size_t seen = 0;
    const EventCallback check = [&](const Event& t) {
        ++seen;
        ASSERT_EQ(t.values.size(), 2u);
        EXPECT_EQ(t.values[0].str, "/etc/hostname-with-a-long-name");
        EXPECT_EQ(t.values[1].raw, 0xffff888000000000ull + (t.timestamp_ns - 1000));
        EXPECT_EQ(t.spec, "kprobe:f r15=+0(%di):x64 path=+0(%si):string");
    };
    const EventViewCallback cb = [&](const EventView& v) { tagged(v, args, &shown, check); };
    const std::size_t start = g_news;
    EXPECT_TRUE(decodeRecordViews(b, cb));
    const std::size_t before = g_news;
    EXPECT_GT(before, start) << "the first pass grows fresh buffers: is the counter counting?";
    EXPECT_TRUE(decodeRecordViews(b, cb));
    EXPECT_EQ(g_news - before, 0u);
    EXPECT_EQ(seen, 2 * kRecords);
}

// A view callback allocates nothing, not even on the first record: no buffer to grow.
TEST(PerEventAllocation, ViewsAllocateNothing) {
    const auto b = blob();
    const auto args = fetchArgs();
    std::uint64_t sum = 0;
    std::size_t seen = 0;
    FetchedValue value;
    value.str.reserve(64);  // the caller's own buffers, grown once
    value.name.reserve(64);
    const EventViewCallback cb = [&](const EventView& raw) {
        const EventView v =
            detail::EventViewAccess::withProbe(raw, "kprobe:f", nullptr, &args, nullptr);
        ++seen;
        ASSERT_EQ(v.fetchedCount(), 2u);
        ASSERT_EQ(v.fetched(1).bytes.size(), 31u);
        EXPECT_EQ(v.comm(), "bench_workload");
        EXPECT_EQ(v.pid(), 100u);
        sum += v.fetched(0).bytes[0] + v.timestampNs() + v.arg(5);
        ASSERT_EQ(v.valueCount(), 2u);
        v.value(1, value);
        EXPECT_EQ(value.str, "/etc/hostname-with-a-long-name");
    };
    const std::size_t start = g_news;
    EXPECT_TRUE(decodeRecordViews(b, cb));
    EXPECT_TRUE(decodeRecordViews(b, cb));
    EXPECT_EQ(g_news - start, 0u);
    EXPECT_EQ(seen, 2 * kRecords);
    EXPECT_GT(sum, 0u);
}

TEST(PerEventAllocation, PrintersFormatIntoReusedBuffers) {
    for (bool json : {false, true}) {
        NullBuf sink;
        std::ostream os(&sink);
        auto printer = makePrinter(json, os);
        const auto args = fetchArgs();
        const auto b = blob();
        const EventCallback print = [&](const Event& t) { printEvent(*printer, t, {}); };
        const EventViewCallback cb = [&](const EventView& v) {
            detail::deliverAsEvent(
                detail::EventViewAccess::withProbe(v, "kprobe:f", nullptr, &args, nullptr), print);
        };
        EXPECT_TRUE(decodeRecordViews(b, cb));
        const std::size_t before = g_news;
        EXPECT_TRUE(decodeRecordViews(b, cb));
        EXPECT_EQ(g_news - before, 0u) << (json ? "json" : "text");
    }
}
