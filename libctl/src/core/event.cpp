// PROBECTL_A_RECORDS decoding. Records are copied out with memcpy: the blob comes from a
// netlink attribute, which is only 4-byte aligned, while the record has u64 fields.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "probectl/event.hpp"
#include "uapi/probectl.h"

namespace probectl {

static_assert(kEventArgs == PROBECTL_NARGS, "Event::args must hold every record argument");
static_assert(sizeof(probectl_record) % 8 == 0, "records are advanced in 8-byte units");

Result<std::size_t> decodeRecords(std::span<const std::byte> blob, const EventCallback& cb) {
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

        Event ev;
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
        if (ev.is_return) {
            ev.retval = r.retval;
            ev.latency_ns = r.latency_ns;
        }
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
            Event::RawValue raw;
            const auto* data = reinterpret_cast<const std::uint8_t*>(blob.data() + off + v);
            raw.bytes.assign(data, data + h.len);
            raw.flags = h.flags;
            ev.fetched.push_back(std::move(raw));
            v += (h.len + 7u) & ~std::size_t{7};
        }
        if (cb)
            cb(ev);
        ++n;
        off += size;
    }
    return n;
}

}  // namespace probectl
