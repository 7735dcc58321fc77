// AGGR_GET read-out: the dump's packed entries decoded into AggrTable rows, and the bucket
// rules of the kernel's histograms (kmod/aggr.c) for printing.
#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <map>

#include "aggr_rules.hpp"
#include "probectl/aggr.hpp"
#include "probectl/fetch_decode.hpp"
#include "uapi/probectl.h"

namespace probectl {

namespace {

void mergeInto(const AggrTable& t, AggrEntry& into, const AggrEntry& e) {
    if (e.count == 0)
        return;
    if (into.count == 0 || detail::lessRaw(t.is_signed, e.min, into.min))
        into.min = e.min;
    if (into.count == 0 || detail::lessRaw(t.is_signed, into.max, e.max))
        into.max = e.max;
    into.count += e.count;
    into.sum += e.sum;
    for (std::size_t b = 0; b < into.buckets.size() && b < e.buckets.size(); b++)
        into.buckets[b] += e.buckets[b];
}

}  // namespace

AggrKeyReading keyReading(const FetchArg& arg) {
    const bool retval = arg.source && arg.source->kind == FetchSource::Kind::Retval;
    if (!retval || fetchTypeSize(arg.type) != 8)
        return AggrKeyReading::Plain;
    if (arg.name == "errno")
        return AggrKeyReading::Errno;
    return arg.name == "retval" ? AggrKeyReading::Retval : AggrKeyReading::Plain;
}

std::uint64_t AggrTable::totalCount() const {
    std::uint64_t n = 0;
    for (const auto& e : entries)
        n += e.count;
    return n;
}

AggrTable describeAggregation(const ProbeRequest& req, const std::vector<FetchArg>& args) {
    AggrTable t;
    if (!req.aggr)
        return t;
    const AggrMapSpec& a = *req.aggr;
    for (unsigned i = 0; i < a.nkeys; i++) {
        t.key_names.push_back(a.keys[i] < args.size() ? args[a.keys[i]].name : "?");
        t.key_readings.push_back(a.keys[i] < args.size() ? keyReading(args[a.keys[i]])
                                                         : AggrKeyReading::Plain);
    }
    t.value = a.value;
    if (t.value == AggrValue::Arg && a.value_arg < args.size())
        t.value_name = args[a.value_arg].name;
    else if (t.value == AggrValue::Latency)
        t.value_name = "latency";
    t.hist = a.hist;
    t.is_signed = a.flags & kAggrFlagSigned;
    t.lin_min = a.lin_min;
    t.lin_max = a.lin_max;
    t.lin_step = a.lin_step;
    t.capacity = a.max_entries ? a.max_entries : kAggrDefaultEntries;
    return t;
}

Result<void> decodeAggrEntries(AggrTable& t, const std::vector<FetchArg>& args,
                               const std::vector<std::uint8_t>& key_args,
                               std::span<const std::uint8_t> bytes, std::uint32_t key_size,
                               std::uint32_t nbuckets) {
    std::uint32_t want = 8;
    for (auto i : key_args) {
        if (i >= args.size())
            return makeError(EBADMSG, "aggregation key names an unknown fetch argument");
        want += isStringType(args[i].type) ? kAggrStrLen : 8;
    }
    const std::size_t esize = key_size + sizeof(AggrTotals) + nbuckets * 8ULL;
    if (key_size != want || bytes.size() % esize)
        return makeError(EBADMSG, fmt::format("aggregation entries: key of {} bytes (expected {}),"
                                              " {} bytes not a multiple of {}",
                                              key_size, want, bytes.size(), esize));
    // Equal keys (two CPUs inserting one key at once) are merged by their bytes.
    std::map<std::vector<std::uint8_t>, std::size_t> seen;
    for (std::size_t off = 0; off < bytes.size(); off += esize) {
        const std::uint8_t* p = bytes.data() + off;
        std::vector<std::uint8_t> raw_key(p, p + key_size);
        AggrEntry e;
        std::uint64_t faults;
        std::memcpy(&faults, p, 8);
        std::uint32_t at = 8;
        for (std::size_t k = 0; k < key_args.size(); k++) {
            const FetchArg& arg = args[key_args[k]];
            const bool str = isStringType(arg.type);
            const std::uint32_t len = str ? kAggrStrLen : 8;
            std::span<const std::uint8_t> field(p + at, len);
            if (str)  // the value with its NUL, as a record stores it
                field = field.first(strnlen(reinterpret_cast<const char*>(p + at), len - 1) + 1);
            else
                field = field.first(fetchTypeSize(arg.type));
            std::uint8_t flags = (faults >> k) & 1 ? PROBECTL_FETCH_V_FAULT : 0;
            if ((faults >> (32 + k)) & 1)
                flags |= PROBECTL_FETCH_V_TRUNCATED;
            e.key.push_back(decodeFetchedValue(arg, field, flags));
            at += len;
        }
        AggrTotals v;
        std::memcpy(&v, p + key_size, sizeof(v));
        e.count = v.count;
        e.sum = v.sum;
        e.min = v.min;
        e.max = v.max;
        e.buckets.resize(nbuckets);
        std::memcpy(e.buckets.data(), p + key_size + sizeof(v), nbuckets * 8ULL);
        if (auto it = seen.find(raw_key); it != seen.end()) {
            mergeInto(t, t.entries[it->second], e);
            continue;
        }
        seen.emplace(std::move(raw_key), t.entries.size());
        t.entries.push_back(std::move(e));
    }
    return {};
}

Result<AggrTable> readAggregation(Client& client, std::uint32_t id, const ProbeRequest& req,
                                  const std::vector<FetchArg>& args, bool clear) {
    AggrTable t = describeAggregation(req, args);
    t.probe_id = id;
    if (!req.aggr)
        return makeError(EINVAL, fmt::format("probe {} was not added to aggregate", id));
    const std::vector<std::uint8_t> key_args(req.aggr->keys, req.aggr->keys + req.aggr->nkeys);
    // Entries of one message are decoded together; a key split over messages cannot merge
    // across them, so collect first.
    std::vector<std::uint8_t> all;
    std::uint32_t key_size = 0, nbuckets = 0;
    auto r = client.dumpAggregation(
        id,
        [&](const AggrReply& m) -> Result<void> {
            key_size = m.aggr_key_size;
            nbuckets = m.aggr_buckets;
            t.keys = m.aggr_keys;
            all.insert(all.end(), m.aggr_entries.begin(), m.aggr_entries.end());
            if (t.read_counts)
                return {};
            // The first message's counters: read at one moment with the probe's.
            t.overflow = m.aggr_overflow;
            t.nested = m.aggr_nested;
            t.faulted = m.aggr_faulted;
            t.read_counts = AggrTable::ProbeCounts{m.hits, m.filtered, m.rejected, m.depth_skipped};
            return {};
        },
        clear);
    if (!r)
        return r.error();
    if (auto d = decodeAggrEntries(t, args, key_args, all, key_size, nbuckets); !d)
        return d.error();
    if (clear)
        std::erase_if(t.entries, [](const AggrEntry& e) { return e.count == 0; });
    return t;
}

BucketRange bucketRange(const AggrTable& t, std::size_t b) {
    BucketRange r;
    if (t.hist == AggrHist::Log2) {
        if (b == 0) {
            r.below = true;
            r.hi = static_cast<std::uint64_t>(-1);  // -1
            return r;
        }
        if (b == 1)
            return r;  // [0, 0]
        r.lo = static_cast<std::int64_t>(1ULL << (b - 2));
        r.hi = b - 1 >= 64 ? ~0ULL : (1ULL << (b - 1)) - 1;
        return r;
    }
    const std::size_t n =
        t.lin_step > 0
            ? static_cast<std::size_t>(detail::linearSteps(t.lin_min, t.lin_max, t.lin_step))
            : 0;
    if (b == 0) {
        r.below = true;
        r.hi = static_cast<std::uint64_t>(t.lin_min) - 1;
        return r;
    }
    if (b >= n + 1) {
        r.above = true;
        r.lo = t.lin_max;
        return r;
    }
    // In unsigned arithmetic: with MIN and MAX far apart, lo + STEP can pass INT64_MAX.
    const std::uint64_t lo =
        static_cast<std::uint64_t>(t.lin_min) +
        static_cast<std::uint64_t>(b - 1) * static_cast<std::uint64_t>(t.lin_step);
    const std::uint64_t left = static_cast<std::uint64_t>(t.lin_max) - lo;
    r.lo = static_cast<std::int64_t>(lo);
    r.hi = lo + std::min(left, static_cast<std::uint64_t>(t.lin_step)) - 1;
    return r;
}

std::size_t bucketOf(const AggrTable& t, std::uint64_t v) {
    if (t.hist == AggrHist::Log2) {
        if (t.is_signed && static_cast<std::int64_t>(v) < 0)
            return 0;
        return v ? 1 + static_cast<std::size_t>(std::bit_width(v)) : 1;
    }
    const std::size_t n =
        static_cast<std::size_t>(detail::linearSteps(t.lin_min, t.lin_max, t.lin_step));
    if (detail::lessRaw(t.is_signed, v, static_cast<std::uint64_t>(t.lin_min)))
        return 0;
    if (!detail::lessRaw(t.is_signed, v, static_cast<std::uint64_t>(t.lin_max)))
        return n + 1;
    return 1 + static_cast<std::size_t>((v - static_cast<std::uint64_t>(t.lin_min)) /
                                        static_cast<std::uint64_t>(t.lin_step));
}

}  // namespace probectl
