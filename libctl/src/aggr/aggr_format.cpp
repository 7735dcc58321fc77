// Text and JSON of aggregation tables: sorted tables, bpftrace-style histograms.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

#include "aggr_rules.hpp"
#include "output/append_text.hpp"
#include "probectl/aggr.hpp"
#include "probectl/errno_names.hpp"
#include "probectl/event_print.hpp"
#include "probectl/strace_format.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl {

namespace {

constexpr int kBarWidth = 52;  // bpftrace's

// A string as the key column shows it: unquoted, "..." when the key kept only its start;
// quoted with strace's escapes when it holds a byte that is not printable ASCII, and when it
// is empty (a blank cell read as a missing key).
std::string keyString(const FetchedValue& v) {
    const bool plain = !v.str.empty() && std::all_of(v.str.begin(), v.str.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
    });
    if (plain)
        return v.truncated ? v.str + "..." : v.str;
    std::string out;
    appendStraceQuote(out, v.str, v.str.size(), v.truncated);
    return out;
}

std::string sortText(const FetchedValue& v) {
    return isStringType(v.type) ? keyString(v) : formatFetchedValue(v);
}

AggrKeyReading readingOf(const AggrTable& t, std::size_t i) {
    return i < t.key_readings.size() ? t.key_readings[i] : AggrKeyReading::Plain;
}

// The errno a key part names: the errno key's value, and a syscall's retval (syscall:NAME, a
// kretprobe on its wrapper), when it is -4095..-1 and the errno has a name; "" otherwise
// (another function's -2 is no errno).
std::string_view keyErrnoName(const AggrTable& t, std::size_t i, const FetchedValue& v) {
    if (v.faulted || v.unknown || v.array_len || isStringType(v.type) || !detail::isErrno(v.raw))
        return {};
    const auto reading = readingOf(t, i);
    if (reading == AggrKeyReading::Plain ||
        (reading == AggrKeyReading::Retval && specReturnSyscall(t.spec).empty()))
        return {};
    return errnoName(-static_cast<int>(static_cast<std::int64_t>(v.raw)));
}

std::string keyPart(const AggrTable& t, std::size_t i, const FetchedValue& v) {
    if (!v.faulted && !v.unknown && isStringType(v.type))
        return keyString(v);
    std::string s = formatFetchedValue(v);
    const auto reading = readingOf(t, i);
    if (v.faulted || v.unknown || v.array_len || reading == AggrKeyReading::Plain)
        return s;
    // A failed call, named as the errno key names it: "-2 (ENOENT)"
    if (const auto name = keyErrnoName(t, i, v); !name.empty())
        return s + fmt::format(" ({})", name);
    if (reading == AggrKeyReading::Retval) {
        // mmap's, brk's: an address, in hex as strace prints it (an error stays a number)
        if (syscallReturnsAddress(specReturnSyscall(t.spec)) && !detail::isErrno(v.raw))
            return straceAddress(v.raw);
        if (const auto s32 = int32Reading(v.raw))
            s += fmt::format(" (int {})", *s32);
    }
    return s;
}

std::string humanTime(double ns) {
    if (ns < 1000)
        return fmt::format("{:.0f}ns", ns);
    if (ns < 1e6)
        return fmt::format("{:.3g}us", ns / 1e3);
    if (ns < 1e9)
        return fmt::format("{:.3g}ms", ns / 1e6);
    return fmt::format("{:.3g}s", ns / 1e9);
}

constexpr int kMaxSuffix = 6;

// The largest power of 1024 (as a suffix index) that divides v; 0 divides by all.
int suffixOf(std::int64_t v) {
    int s = 0;
    while (v != 0 && v % 1024 == 0 && s < kMaxSuffix) {
        v /= 1024;
        s++;
    }
    return v == 0 ? kMaxSuffix : s;
}

// bpftrace's bucket bounds: 1K, 2M, ... when a multiple of a power of 1024, using at most
// the suffix `max_suffix` (so that two bounds of one label can share a unit).
std::string boundText(const AggrTable& t, std::int64_t v, int max_suffix = kMaxSuffix) {
    if (t.value == AggrValue::Latency)
        return humanTime(static_cast<double>(v));
    static const char* const kSuffix[] = {"", "K", "M", "G", "T", "P", "E"};
    int s = 0;
    std::int64_t x = v;
    while (x != 0 && x % 1024 == 0 && s < max_suffix) {
        x /= 1024;
        s++;
    }
    return fmt::format("{}{}", x, kSuffix[s]);
}

std::string bucketLabel(const AggrTable& t, std::size_t b) {
    BucketRange r = bucketRange(t, b);
    if (r.below)
        return fmt::format("(..., {})", boundText(t, static_cast<std::int64_t>(r.hi) + 1));
    if (r.above)
        return fmt::format("[{}, ...)", boundText(t, r.lo));
    if (t.hist == AggrHist::Log2 && static_cast<std::uint64_t>(r.lo) == r.hi)
        return fmt::format("[{}]", boundText(t, r.lo));
    // Log2's last bucket, [2^63, 2^64) (an unsigned value's): both bounds are past
    // INT64_MAX. A linear bucket ending at -1 ends before 0.
    if (t.hist == AggrHist::Log2 && r.hi == ~0ULL)
        return t.value == AggrValue::Latency ? fmt::format("[{}, inf)", humanTime(0x1p63))
                                             : "[8E, 16E)";
    // [2^62, 2^63): its end is past INT64_MAX
    if (t.hist == AggrHist::Log2 && r.hi >= static_cast<std::uint64_t>(INT64_MAX))
        return fmt::format("[{}, {})", boundText(t, r.lo),
                           t.value == AggrValue::Latency ? humanTime(0x1p63) : "8E");
    const auto end = static_cast<std::int64_t>(r.hi + 1);
    // A linear step's bounds in one unit: [1024, 1536), not [1K, 1536).
    const int unit =
        t.hist == AggrHist::Linear ? std::min(suffixOf(r.lo), suffixOf(end)) : kMaxSuffix;
    return fmt::format("[{}, {})", boundText(t, r.lo, unit), boundText(t, end, unit));
}

// What SUM and AVG print for a sum that is not known (aggrSum).
constexpr const char* kUnknownSum = "?";

std::string avgText(const AggrTable& t, const AggrEntry& e) {
    const auto a = aggrAvgValue(t, e);
    if (!a)
        return kUnknownSum;
    return formatAggrValue(t, *a);
}

std::string int128Text(__int128 v) {
    const bool neg = v < 0;
    unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : v;
    std::string s;
    do {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
        u /= 10;
    } while (u);
    return neg ? "-" + s : s;
}

std::string sumText(const AggrTable& t, const AggrEntry& e) {
    const auto sum = aggrSum(t, e);
    if (!sum)
        return kUnknownSum;
    if (t.value == AggrValue::Latency)
        return humanTime(static_cast<double>(*sum));
    return int128Text(*sum);
}

std::size_t unknownSums(const AggrTable& t) {
    if (t.value == AggrValue::None)
        return 0;
    return static_cast<std::size_t>(
        std::count_if(t.entries.begin(), t.entries.end(),
                      [&](const AggrEntry& e) { return e.count && !aggrSum(t, e); }));
}

// The line under a table: its keys and the map's capacity, then what it did not count; ""
// when there is nothing to say. A map without keys holds its one key by construction: its
// keys and capacity are said only when it could not hold it (map full).
std::string countersLine(const AggrTable& t) {
    std::vector<std::string> parts;
    if (!t.key_names.empty() || t.overflow) {
        // A clearing read (--interval) leaves out the keys with no hit since the last, which
        // the map still holds: the keys of the table, then the map's.
        const std::size_t shown = t.entries.size();
        parts.push_back(
            t.capacity == 0 ? fmt::format("{} key{}", shown, shown == 1 ? "" : "s")
            : shown == t.keys
                ? fmt::format("{} key{} (capacity {})", shown, shown == 1 ? "" : "s", t.capacity)
                : fmt::format("{} key{} ({} held in the map, capacity {})", shown,
                              shown == 1 ? "" : "s", t.keys, t.capacity));
    }
    if (t.overflow)
        parts.push_back(fmt::format("map full: {} hits with new keys not counted", t.overflow));
    if (t.nested)
        parts.push_back(fmt::format("{} nested hits skipped", t.nested));
    if (t.faulted)
        parts.push_back(fmt::format("{} hits whose {} could not be read", t.faulted, t.value_name));
    if (t.unknown)
        parts.push_back(fmt::format("{} {} whose {} is not known (a thread killed inside the call)",
                                    t.unknown, t.unknown == 1 ? "return" : "returns",
                                    t.value_name));
    if (const auto n = unknownSums(t))
        parts.push_back(
            fmt::format("{} {} of {} not known ({}): values too far apart for a 64-bit sum", n,
                        n == 1 ? "sum" : "sums", t.value_name, kUnknownSum));
    std::string s;
    for (const auto& p : parts)
        s += (s.empty() ? "" : "; ") + p;
    return s.empty() ? s : s + '\n';
}

nlohmann::ordered_json jsonNumber(const AggrTable& t, std::uint64_t raw) {
    if (t.is_signed)
        return static_cast<std::int64_t>(raw);
    return raw;
}

nlohmann::ordered_json jsonKeyPart(const FetchedValue& v) {
    if (v.faulted || v.unknown)
        return nullptr;
    if (isStringType(v.type))
        return v.str;
    if (isSignedType(v.type))
        return fetchedSigned(v.type, v.raw);
    return v.raw;
}

}  // namespace

namespace {

// Numbers as numbers (-5 before 2 before 10; signed types as signed), strings as text, a
// key that could not be read last.
bool keyPartLess(const FetchedValue& a, const FetchedValue& b) {
    if (a.faulted != b.faulted)
        return b.faulted;
    if (a.unknown != b.unknown)
        return b.unknown;
    if (a.faulted || a.unknown)
        return false;
    if (isStringType(a.type) || isStringType(b.type) || a.array_len || b.array_len)
        return sortText(a) < sortText(b);
    if (isSignedType(a.type))
        return fetchedSigned(a.type, a.raw) < fetchedSigned(b.type, b.raw);
    return a.raw < b.raw;
}

bool keyLess(const AggrEntry& a, const AggrEntry& b) {
    return std::lexicographical_compare(a.key.begin(), a.key.end(), b.key.begin(), b.key.end(),
                                        keyPartLess);
}

}  // namespace

std::vector<const AggrEntry*> sortedEntries(const AggrTable& t, std::size_t top) {
    std::vector<const AggrEntry*> v;
    for (const auto& e : t.entries)
        v.push_back(&e);
    std::stable_sort(v.begin(), v.end(), [](const AggrEntry* a, const AggrEntry* b) {
        if (a->count != b->count)
            return a->count > b->count;
        return keyLess(*a, *b);
    });
    if (top != 0 && v.size() > top)
        v.resize(top);
    return v;
}

std::string formatAggrKeyPart(const AggrTable& t, std::size_t i, const FetchedValue& v) {
    return keyPart(t, i, v);
}

std::string formatAggrKey(const AggrTable& t, const AggrEntry& e) {
    std::string s;
    for (std::size_t i = 0; i < e.key.size(); i++)
        s += (i ? ", " : "") + keyPart(t, i, e.key[i]);
    return s;
}

std::optional<__int128> aggrSum(const AggrTable& t, const AggrEntry& e) {
    using I = __int128;
    if (!e.count)
        return 0;
    if (e.count > (std::uint64_t{1} << 62))
        return std::nullopt;  // count * min would not fit 128 bits
    auto value = [&](std::uint64_t raw) {
        return t.is_signed ? static_cast<I>(static_cast<std::int64_t>(raw)) : static_cast<I>(raw);
    };
    const I n = static_cast<I>(e.count);
    const I lo = value(e.min) * n;
    const I span = (value(e.max) - value(e.min)) * n;
    if (span < 0 || span >= (static_cast<I>(1) << 64))
        return std::nullopt;
    // the one value in [lo, lo + span] that is e.sum modulo 2^64
    const std::uint64_t above = e.sum - static_cast<std::uint64_t>(lo);
    if (static_cast<I>(above) > span)
        return std::nullopt;  // not a sum of these values (count, min and max disagree)
    return lo + static_cast<I>(above);
}

std::optional<double> aggrAvg(const AggrTable& t, const AggrEntry& e) {
    const auto sum = aggrSum(t, e);
    if (!sum || !e.count)
        return std::nullopt;
    return static_cast<double>(static_cast<long double>(*sum) / e.count);
}

std::optional<std::uint64_t> aggrAvgValue(const AggrTable& t, const AggrEntry& e) {
    const auto sum = aggrSum(t, e);
    if (!sum || !e.count)
        return std::nullopt;
    // In integers: a double holds 53 bits, and -(2^63 - 1) became -2^63, below the minimum.
    const auto n = static_cast<__int128>(e.count);
    __int128 q = *sum / n;  // toward zero
    const __int128 r = *sum % n;
    const __int128 twice = 2 * (r < 0 ? -r : r);
    if (twice > n || (twice == n && q % 2 != 0))
        q += *sum < 0 ? -1 : 1;
    return static_cast<std::uint64_t>(q);
}

std::string formatAggrValue(const AggrTable& t, std::uint64_t raw) {
    if (t.value == AggrValue::Latency)
        return humanTime(static_cast<double>(raw));
    if (t.is_signed)
        return fmt::format("{}", static_cast<std::int64_t>(raw));
    return fmt::format("{}", raw);
}

std::string formatAggrTable(const AggrTable& t, std::size_t top) {
    const auto rows = sortedEntries(t, top);
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> head = t.key_names;
    for (auto& h : head)
        std::transform(h.begin(), h.end(), h.begin(), ::toupper);
    head.push_back("COUNT");
    const bool value = t.value != AggrValue::None;
    if (value)
        for (const char* h : {"SUM", "AVG", "MIN", "MAX"})
            head.push_back(h);
    cells.push_back(head);
    for (const AggrEntry* e : rows) {
        std::vector<std::string> row;
        for (std::size_t i = 0; i < e->key.size(); i++)
            row.push_back(keyPart(t, i, e->key[i]));
        row.push_back(fmt::format("{}", e->count));
        if (value) {
            row.push_back(sumText(t, *e));
            row.push_back(avgText(t, *e));
            row.push_back(formatAggrValue(t, e->min));
            row.push_back(formatAggrValue(t, e->max));
        }
        cells.push_back(std::move(row));
    }
    std::vector<std::size_t> w(head.size(), 0);
    for (const auto& r : cells)
        for (std::size_t i = 0; i < r.size(); i++)
            w[i] = std::max(w[i], r[i].size());
    std::string out;
    const std::size_t nkeys = t.key_names.size();
    for (const auto& r : cells) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); i++) {
            if (i)
                line += "  ";
            // keys left-aligned, numbers right-aligned
            line +=
                i < nkeys ? fmt::format("{:<{}}", r[i], w[i]) : fmt::format("{:>{}}", r[i], w[i]);
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + '\n';
    }
    out += countersLine(t);
    return out;
}

std::string formatAggrHist(const AggrTable& t, std::size_t top) {
    std::string out;
    // What the values in each "@[...]" are.
    if (!t.key_names.empty()) {
        out += t.key_names.size() == 1 ? "key: " : "keys: ";
        for (std::size_t i = 0; i < t.key_names.size(); i++)
            out += (i ? ", " : "") + t.key_names[i];
        out += '\n';
    }
    bool first_entry = true;
    for (const AggrEntry* e : sortedEntries(t, top)) {
        // a blank line between histograms, and before the counters line
        if (!first_entry)
            out += '\n';
        first_entry = false;
        const std::string key = formatAggrKey(t, *e);
        out += key.empty() ? "@" + t.value_name + ":\n" : fmt::format("@[{}]:\n", key);
        std::size_t first = e->buckets.size(), last = 0;
        std::uint64_t most = 0;
        for (std::size_t b = 0; b < e->buckets.size(); b++) {
            if (!e->buckets[b])
                continue;
            first = std::min(first, b);
            last = b;
            most = std::max(most, e->buckets[b]);
        }
        for (std::size_t b = first; b <= last && b < e->buckets.size(); b++) {
            const auto n = e->buckets[b];
            const int bar = most ? static_cast<int>(n * kBarWidth / most) : 0;
            out += fmt::format("{:<20}{:>8} |{:<{}}|\n", bucketLabel(t, b), n,
                               std::string(static_cast<std::size_t>(bar), '@'), kBarWidth);
        }
        out += fmt::format("count {}, avg {}, min {}, max {}\n", e->count, avgText(t, *e),
                           formatAggrValue(t, e->min), formatAggrValue(t, e->max));
    }
    if (const std::string counters = countersLine(t); !counters.empty())
        out += (first_entry ? "" : "\n") + counters;
    return out;
}

nlohmann::ordered_json aggrJson(const AggrTable& t, std::size_t top) {
    nlohmann::ordered_json j;
    j["type"] = "aggregation";
    j["probe"] = t.spec;
    j["keys"] = t.key_names;
    j["value"] = t.value_name.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(t.value_name);
    auto entries = nlohmann::ordered_json::array();
    const auto shown = sortedEntries(t, top);
    for (const AggrEntry* e : shown) {
        nlohmann::ordered_json o;
        auto key = nlohmann::ordered_json::object();
        for (std::size_t i = 0; i < e->key.size() && i < t.key_names.size(); i++)
            key[t.key_names[i]] = jsonKeyPart(e->key[i]);
        o["key"] = key;
        // Which string parts are only their first 31 bytes: such a key may merge several.
        auto cut = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < e->key.size() && i < t.key_names.size(); i++)
            if (!e->key[i].faulted && e->key[i].truncated)
                cut.push_back(t.key_names[i]);
        if (!cut.empty())
            o["key_cut"] = cut;
        // The errno each failed call's key part names ("retval": "ENOENT"), beside the number.
        auto errnos = nlohmann::ordered_json::object();
        for (std::size_t i = 0; i < e->key.size() && i < t.key_names.size(); i++)
            if (const auto name = keyErrnoName(t, i, e->key[i]); !name.empty())
                errnos[t.key_names[i]] = std::string(name);
        if (!errnos.empty())
            o["key_errno"] = errnos;
        o["count"] = e->count;
        if (t.value != AggrValue::None) {
            // the sum as a number when it is known and fits 64 bits of the value's kind;
            // else null, with the decimal text when it is known
            const auto sum = aggrSum(t, *e);
            const bool fits =
                sum && (t.is_signed ? *sum >= INT64_MIN && *sum <= INT64_MAX
                                    : *sum >= 0 && *sum <= static_cast<__int128>(UINT64_MAX));
            o["sum"] = fits ? jsonNumber(t, static_cast<std::uint64_t>(*sum))
                            : nlohmann::ordered_json(nullptr);
            if (sum && !fits)
                o["sum_text"] = int128Text(*sum);
            o["min"] = jsonNumber(t, e->min);
            o["max"] = jsonNumber(t, e->max);
            const auto avg = aggrAvg(t, *e);
            o["avg"] = avg ? nlohmann::ordered_json(*avg) : nlohmann::ordered_json(nullptr);
        }
        if (t.hist != AggrHist::None) {
            auto h = nlohmann::ordered_json::array();
            for (std::size_t b = 0; b < e->buckets.size(); b++) {
                if (!e->buckets[b])
                    continue;
                BucketRange r = bucketRange(t, b);
                nlohmann::ordered_json bo;
                // log2's buckets past the negative one hold 0..2^64 - 1: unsigned bounds
                const bool log2_up = t.hist == AggrHist::Log2 && !r.below;
                if (log2_up)
                    bo["min"] = static_cast<std::uint64_t>(r.lo);
                else if (!r.below)
                    bo["min"] = r.lo;
                if (!r.above) {
                    if (!log2_up && (r.below || t.is_signed || r.lo < 0))
                        bo["max"] = static_cast<std::int64_t>(r.hi);
                    else
                        bo["max"] = r.hi;
                }
                bo["count"] = e->buckets[b];
                h.push_back(bo);
            }
            o["hist"] = h;
        }
        entries.push_back(o);
    }
    j["entries"] = entries;
    // --top's cut, which the text tables say in a line: entries is not every key.
    j["omitted"] = t.entries.size() - shown.size();
    j["keys_held"] = t.keys;
    if (t.capacity)
        j["capacity"] = t.capacity;
    else
        j["capacity"] = nullptr;
    j["overflow"] = t.overflow;
    j["nested"] = t.nested;
    j["faulted"] = t.faulted;
    j["unknown"] = t.unknown;
    return j;
}

}  // namespace probectl
