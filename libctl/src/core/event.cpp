// PROBECTL_A_RECORDS decoding. Records are copied out with memcpy: the blob comes from a
// netlink attribute, which is only 4-byte aligned, while the record has u64 fields. Every
// record is decoded into one Event per thread, whose buffers are reused: a decoded record
// costs no allocation once they have grown.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/reuse.hpp"
#include "probectl/event.hpp"
#include "uapi/probectl.h"

namespace probectl {

static_assert(kEventArgs == PROBECTL_NARGS, "Event::args must hold every record argument");
static_assert(sizeof(probectl_record) % 8 == 0, "records are advanced in 8-byte units");

namespace {

struct Scratch {
    Event ev;
    std::vector<Event::RawValue> spare;
    bool busy = false;  // a callback that decodes again gets its own
};

Result<std::size_t> decode(std::span<const std::byte> blob, const EventCallback& cb,
                           Scratch& scratch) {
    Event& ev = scratch.ev;
    std::size_t off = 0;
    std::size_t n = 0;
    while (off < blob.size()) {
        const std::size_t left = blob.size() - off;
        std::uint32_t size = 0;
        if (left < sizeof(size))
            return makeError(EBADMSG, fmt::format("record at byte {}: {} trailing bytes, too "
                                                  "short for a record header",
                                                  off, left));
        std::memcpy(&size, blob.data() + off, sizeof(size));
        if (size < sizeof(probectl_record))
            return makeError(EBADMSG,
                             fmt::format("record at byte {}: size {} is below the minimum {}", off,
                                         size, sizeof(probectl_record)));
        if (size % 8 != 0)
            return makeError(EBADMSG, fmt::format("record at byte {}: size {} is not a multiple "
                                                  "of 8",
                                                  off, size));
        if (size > left)
            return makeError(EBADMSG, fmt::format("record at byte {}: size {} runs past the end "
                                                  "of the {}-byte blob",
                                                  off, size, blob.size()));
        probectl_record r;
        std::memcpy(&r, blob.data() + off, sizeof(r));

        ev.probe_id = r.probe_id;
        ev.timestamp_ns = r.timestamp_ns;
        ev.cpu = r.cpu;
        ev.pid = r.pid;
        ev.tgid = r.tgid;
        ev.comm.assign(r.comm, strnlen(r.comm, sizeof(r.comm)));
        ev.ip = r.ip;
        for (std::size_t i = 0; i < kEventArgs; ++i)
            ev.args[i] = r.args[i];
        ev.is_return = r.flags & PROBECTL_RECORD_F_RETURN;
        ev.retval = ev.is_return ? r.retval : 0;
        ev.latency_ns = ev.is_return ? r.latency_ns : 0;
        std::size_t nvalues = 0;
        // Fetched values follow the fixed part, each 8-byte aligned.
        for (std::size_t v = sizeof(r); v < size;) {
            probectl_fetch_value h;
            if (size - v < sizeof(h))
                return makeError(EBADMSG, fmt::format("record at byte {}: truncated fetch "
                                                      "value header at {}",
                                                      off, v));
            std::memcpy(&h, blob.data() + off + v, sizeof(h));
            v += sizeof(h);
            if (h.len > size - v)
                return makeError(EBADMSG, fmt::format("record at byte {}: fetch value of {} "
                                                      "bytes runs past the record",
                                                      off, h.len));
            if (nvalues == ev.fetched.size())
                detail::resizeKeeping(ev.fetched, nvalues + 1, scratch.spare);
            Event::RawValue& raw = ev.fetched[nvalues++];
            const auto* data = reinterpret_cast<const std::uint8_t*>(blob.data() + off + v);
            raw.bytes.assign(data, data + h.len);
            raw.flags = h.flags;
            v += (h.len + 7u) & ~std::size_t{7};
        }
        detail::resizeKeeping(ev.fetched, nvalues, scratch.spare);
        if (cb)
            cb(ev);
        ++n;
        off += size;
    }
    return n;
}

}  // namespace

Result<std::size_t> decodeRecords(std::span<const std::byte> blob, const EventCallback& cb) {
    thread_local Scratch scratch;
    if (scratch.busy) {
        Scratch nested;
        return decode(blob, cb, nested);
    }
    scratch.busy = true;
    auto r = decode(blob, cb, scratch);
    scratch.busy = false;
    return r;
}

}  // namespace probectl
