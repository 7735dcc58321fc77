// PROBECTL_A_RECORDS decoding and EventView's fields. Records are read with memcpy: the
// blob comes from a netlink attribute, which is only 4-byte aligned, while the record has
// u64 fields. decodeRecordViews checks each record and hands out a view over its bytes
// (decodeRecords, which makes Events of them, is in fetch/event_view.cpp: it decodes
// values too).
#include <fmt/format.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "core/event_view_access.hpp"
#include "core/reuse.hpp"
#include "probectl/event.hpp"
#include "probectl/event_view.hpp"
#include "uapi/probectl.h"

namespace probectl {

static_assert(kEventArgs == PROBECTL_NARGS, "Event::args must hold every record argument");
static_assert(sizeof(probectl_record) % 8 == 0, "records are advanced in 8-byte units");
static_assert(kRecordPartComm == PROBECTL_RECORD_F_COMM && kRecordPartIp == PROBECTL_RECORD_F_IP &&
                  kRecordPartArgs == PROBECTL_RECORD_F_ARGS &&
                  kRecordPartRetval == PROBECTL_RECORD_F_RETVAL &&
                  kRecordPartLatency == PROBECTL_RECORD_F_LATENCY,
              "kRecordPart* are the uapi's record flags");

namespace {

// A field of the record at `p`, by its offset in struct probectl_record.
template <typename T>
T field(const std::byte* p, std::size_t offset) {
    T v;
    std::memcpy(&v, p + offset, sizeof(v));
    return v;
}
#define RECORD_FIELD(p, name) \
    field<decltype(probectl_record::name)>(p, offsetof(probectl_record, name))

constexpr std::size_t align8(std::size_t n) {
    return (n + 7u) & ~std::size_t{7};
}

// Where the optional part `part` starts in a record with `flags`: after the fixed struct and
// the parts of lower bits (PROBECTL_RECORD_F_* order). With part 0: where the fetched values
// start.
constexpr std::size_t partOffset(std::uint32_t flags, std::uint32_t part) {
    struct Part {
        std::uint32_t bit;
        std::size_t bytes;
    };
    constexpr Part kParts[] = {{PROBECTL_RECORD_F_COMM, PROBECTL_COMM_LEN},
                               {PROBECTL_RECORD_F_IP, 8},
                               {PROBECTL_RECORD_F_ARGS, PROBECTL_NARGS * 8},
                               {PROBECTL_RECORD_F_RETVAL, 8},
                               {PROBECTL_RECORD_F_LATENCY, 8}};
    std::size_t off = sizeof(probectl_record);
    for (const Part& q : kParts) {
        if (q.bit == part)
            break;
        if (flags & q.bit)
            off += q.bytes;
    }
    return off;
}
static_assert(partOffset(kRecordPartsAll, 0) == 120, "every part: the version-1 record's size");
static_assert(partOffset(kRecordPartsAll, kRecordPartIp) == 48);

std::uint32_t recordFlags(const std::byte* p) {
    return RECORD_FIELD(p, flags);
}

struct CheckedRecord {
    std::uint32_t size;
    std::uint32_t fetched;  // values after the parts
};

// The checks of one record at `off`; its size and value count when it is whole.
Result<CheckedRecord> checkRecord(std::span<const std::byte> blob, std::size_t off) {
    const std::size_t left = blob.size() - off;
    std::uint32_t size = 0;
    if (left < sizeof(size))
        return makeError(EBADMSG, fmt::format("record at byte {}: {} trailing bytes, too "
                                              "short for a record header",
                                              off, left));
    std::memcpy(&size, blob.data() + off, sizeof(size));
    if (left < sizeof(probectl_record))
        return makeError(EBADMSG, fmt::format("record at byte {}: {} trailing bytes, too "
                                              "short for a record header",
                                              off, left));
    const std::size_t values = partOffset(recordFlags(blob.data() + off), 0);
    if (size < values)
        return makeError(EBADMSG, fmt::format("record at byte {}: size {} is below the minimum {} "
                                              "of its parts (flags {:#x})",
                                              off, size, values, recordFlags(blob.data() + off)));
    if (size % 8 != 0)
        return makeError(
            EBADMSG, fmt::format("record at byte {}: size {} is not a multiple of 8", off, size));
    if (size > left)
        return makeError(EBADMSG, fmt::format("record at byte {}: size {} runs past the end "
                                              "of the {}-byte blob",
                                              off, size, blob.size()));
    // Fetched values follow the parts, each 8-byte aligned.
    std::uint32_t fetched = 0;
    for (std::size_t v = values; v < size; ++fetched) {
        probectl_fetch_value h;
        if (size - v < sizeof(h))
            return makeError(
                EBADMSG,
                fmt::format("record at byte {}: truncated fetch value header at {}", off, v));
        std::memcpy(&h, blob.data() + off + v, sizeof(h));
        v += sizeof(h);
        if (h.len > size - v)
            return makeError(EBADMSG, fmt::format("record at byte {}: fetch value of {} bytes "
                                                  "runs past the record",
                                                  off, h.len));
        v += align8(h.len);
    }
    return CheckedRecord{size, fetched};
}

}  // namespace

Result<std::size_t> decodeRecordViews(std::span<const std::byte> blob,
                                      const EventViewCallback& cb) {
    std::size_t off = 0;
    std::size_t n = 0;
    while (off < blob.size()) {
        auto rec = checkRecord(blob, off);
        if (!rec)
            return std::move(rec).error();
        if (cb)
            cb(detail::EventViewAccess::ofRecord(blob.data() + off, rec->fetched));
        ++n;
        off += rec->size;
    }
    return n;
}

EventView EventView::of(const Event& ev) {
    EventView v;
    v.event_ = &ev;
    return v;
}

std::uint32_t EventView::probeId() const {
    return event_ ? event_->probe_id : RECORD_FIELD(record_, probe_id);
}
std::string_view EventView::spec() const {
    return event_ ? event_->spec : spec_;
}
std::uint64_t EventView::timestampNs() const {
    return event_ ? event_->timestamp_ns : RECORD_FIELD(record_, timestamp_ns);
}
std::uint32_t EventView::cpu() const {
    return event_ ? event_->cpu : RECORD_FIELD(record_, cpu);
}
std::uint32_t EventView::pid() const {
    return event_ ? event_->pid : RECORD_FIELD(record_, pid);
}
std::uint32_t EventView::tgid() const {
    return event_ ? event_->tgid : RECORD_FIELD(record_, tgid);
}
std::uint32_t EventView::parts() const {
    return event_ ? event_->parts : recordFlags(record_) & kRecordPartsAll;
}
std::string_view EventView::comm() const {
    if (event_)
        return event_->comm;
    const std::uint32_t flags = recordFlags(record_);
    if (!(flags & PROBECTL_RECORD_F_COMM))
        return {};
    const char* c =
        reinterpret_cast<const char*>(record_ + partOffset(flags, PROBECTL_RECORD_F_COMM));
    return {c, strnlen(c, PROBECTL_COMM_LEN)};
}
std::uint64_t EventView::ip() const {
    if (event_)
        return event_->ip;
    const std::uint32_t flags = recordFlags(record_);
    return flags & PROBECTL_RECORD_F_IP
               ? field<std::uint64_t>(record_, partOffset(flags, PROBECTL_RECORD_F_IP))
               : 0;
}
std::uint64_t EventView::arg(std::size_t i) const {
    if (event_)
        return event_->args[i];
    const std::uint32_t flags = recordFlags(record_);
    if (!(flags & PROBECTL_RECORD_F_ARGS))
        return 0;
    return field<std::uint64_t>(
        record_, partOffset(flags, PROBECTL_RECORD_F_ARGS) + i * sizeof(std::uint64_t));
}
bool EventView::isReturn() const {
    return event_ ? event_->is_return : (RECORD_FIELD(record_, flags) & PROBECTL_RECORD_F_RETURN);
}
std::uint64_t EventView::retval() const {
    if (event_)
        return event_->retval;
    const std::uint32_t flags = recordFlags(record_);
    return (flags & PROBECTL_RECORD_F_RETURN) && (flags & PROBECTL_RECORD_F_RETVAL)
               ? field<std::uint64_t>(record_, partOffset(flags, PROBECTL_RECORD_F_RETVAL))
               : 0;
}
std::uint64_t EventView::latencyNs() const {
    if (event_)
        return event_->latency_ns;
    const std::uint32_t flags = recordFlags(record_);
    return (flags & PROBECTL_RECORD_F_RETURN) && (flags & PROBECTL_RECORD_F_LATENCY)
               ? field<std::uint64_t>(record_, partOffset(flags, PROBECTL_RECORD_F_LATENCY))
               : 0;
}
const SyscallPlan* EventView::syscall() const {
    return event_ ? event_->syscall : syscall_;
}
bool EventView::syscallReturned() const {
    return event_ ? event_->syscall_returned : syscall_ && isReturn();
}

std::size_t EventView::fetchedCount() const {
    return event_ ? event_->fetched.size() : fetched_count_;
}

EventView::RawValue EventView::fetched(std::size_t i) const {
    if (event_) {
        const Event::RawValue& r = event_->fetched[i];
        return {r.bytes, r.flags, r.error, r.maps_seq};
    }
    std::size_t v = partOffset(recordFlags(record_), 0);
    auto h = field<probectl_fetch_value>(record_, v);
    for (; i > 0; --i) {
        v += sizeof(h) + align8(h.len);
        h = field<probectl_fetch_value>(record_, v);
    }
    const auto* data = reinterpret_cast<const std::uint8_t*>(record_ + v + sizeof(h));
    return {{data, h.len}, h.flags, 0, h.maps_seq};
}

namespace detail {

void copyEventFields(const EventView& v, Event& out, std::vector<Event::RawValue>& spare) {
    static_assert(sizeof(Event) == 224, "a new Event field must be copied here");
    out.parts = v.parts();
    out.probe_id = v.probeId();
    out.spec = v.spec();
    out.timestamp_ns = v.timestampNs();
    out.cpu = v.cpu();
    out.pid = v.pid();
    out.tgid = v.tgid();
    out.comm.assign(v.comm());
    out.ip = v.ip();
    for (std::size_t i = 0; i < kEventArgs; ++i)
        out.args[i] = v.arg(i);
    out.is_return = v.isReturn();
    out.retval = v.retval();
    out.latency_ns = v.latencyNs();
    out.syscall = v.syscall();
    out.syscall_returned = v.syscallReturned();
    const std::size_t n = v.fetchedCount();
    resizeKeeping(out.fetched, n, spare);
    for (std::size_t i = 0; i < n; ++i) {
        const EventView::RawValue r = v.fetched(i);
        out.fetched[i].bytes.assign(r.bytes.begin(), r.bytes.end());
        out.fetched[i].flags = r.flags;
        out.fetched[i].error = r.error;
        out.fetched[i].maps_seq = r.maps_seq;
    }
}

}  // namespace detail

}  // namespace probectl
