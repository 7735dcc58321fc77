// In-kernel aggregation: counts, sums, min/max and histograms per key, kept by probectl.ko
// in a map preallocated when the probe is added (AggrMapSpec, aggr_map.hpp), read back
// with the AGGR_GET dump. A probe that aggregates sends no records.
//
// Keys are fetch arguments: a spec's own (`size=$arg1`, by NAME) or task fields added as
// hidden fetch arguments ($comm $pid $tid $uid $cpu $retval $kstack, by those names without
// `$`; errno: $retval when it is -4095..-1, strace's failed call, else 0; kstack: the kernel
// stack's id, whose frames KernelStacks reads, kernel_stacks.hpp).
// Histograms follow bpftrace: log2 (hist) with a negative and a zero bucket, linear (lhist)
// with a bucket below min and one at or above max.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probectl/aggr_map.hpp"
#include "probectl/client.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/fetched_value.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// What to aggregate, in the user's terms.
struct AggrSpec {
    // Up to kAggrMaxKeys: comm pid tid uid cpu retval errno, or a fetch argument's NAME.
    std::vector<std::string> keys;
    AggrValue value = AggrValue::None;
    std::string value_arg;  // AggrValue::Arg: an integer fetch argument's NAME
    AggrHist hist = AggrHist::None;
    std::int64_t lin_min = 0, lin_max = 0, lin_step = 0;  // AggrHist::Linear
    std::uint32_t max_entries = 0;                        // 0: kAggrDefaultEntries
    // Key kstack (the kernel stack's id in the session's stack map, kernel_stacks.hpp):
    // frames kept, 1..kStackMaxDepth; 0: kStackDefaultDepth.
    std::uint32_t stack_depth = 0;
};

// Whether `name` is a task field a key can name (comm pid tid uid cpu retval errno kstack
// ustack); a spec's own argument of that name is taken first.
bool isAggrTaskKey(std::string_view name);

// Whether every key and the value of `spec` names a fetch argument among `arg_names` (a
// spec's own, in order) or a task field, and uses $retval, $errno or latency only on a probe
// `at_return`, as prepareAggregation requires: for events aggregated in user space, where
// such a name would otherwise count every hit as a fault, or none. Errors (EINVAL, marked
// usage): prepareAggregation's text for the first name it refuses. `events`: the names
// are for events aggregated in user space (the ptrace backend, a recording), which do not
// carry the uid: uid is refused, and left out (with kstack) of the names an error lists.
Result<void> checkAggrNames(const AggrSpec& spec, const std::vector<std::string>& arg_names,
                            bool at_return, bool events = false);

// Turns `req` (whose fetch programs are `args`) into an aggregating request: hidden fetch
// arguments are appended for task keys, req.aggr is set. A syscall plan's fetch programs
// (args empty, req.fetch not) are dropped: nothing reads them. Errors (EINVAL): unknown key
// or value name (listing the names there are), a string or array value, more than
// kAggrMaxKeys keys, latency on a probe that is not a return probe.
Result<void> prepareAggregation(const AggrSpec& spec, ProbeRequest& req,
                                std::vector<FetchArg>& args);

// One key of a map, read back.
struct AggrEntry {
    std::vector<FetchedValue> key;  // in AggrTable::key_names order (faulted: no value)
    std::uint64_t count = 0;
    std::uint64_t sum = 0;  // raw; signed when AggrTable::is_signed
    std::uint64_t min = 0;
    std::uint64_t max = 0;
    std::vector<std::uint64_t> buckets;
};

// What a key part also reads as, beside its number: `retval` of a function, as a 32-bit int
// when its upper half is zero and bit 31 set ("4294967290 (int -6)", as the trace line);
// `errno`, by name ("-2 (ENOENT)", the names of errno_names.hpp).
enum class AggrKeyReading : std::uint8_t { Plain, Retval, Errno };

// The reading of a key made of fetch argument `arg`: the `retval` and `errno` keys (or a
// spec's own 64-bit $retval argument named so).
AggrKeyReading keyReading(const FetchArg& arg);

// A probe's map with what describes it.
struct AggrTable {
    std::uint32_t probe_id = 0;
    std::string spec;                          // the probe's spec text (filled by the caller)
    std::vector<std::string> key_names;        // fetch argument names of the key
    std::vector<AggrKeyReading> key_readings;  // per key_names; missing ones: Plain
    std::string value_name;                    // "" (count only), the argument name, "latency"
    AggrValue value = AggrValue::None;
    AggrHist hist = AggrHist::None;
    bool is_signed = false;
    std::int64_t lin_min = 0, lin_max = 0, lin_step = 0;
    std::uint32_t keys = 0;  // distinct keys the kernel holds
    // Distinct keys the map can hold; 0 for a table without a map (a recording aggregated
    // in probectl), which has no bound to say.
    std::uint32_t capacity = 0;
    std::uint64_t overflow = 0;  // hits with a new key while the map was full
    std::uint64_t nested = 0;    // hits skipped: the map was busy on their CPU
    std::uint64_t faulted = 0;   // hits whose value could not be read
    // Returns whose value ($retval, errno) is not known: with the ptrace backend, a call whose
    // thread was killed inside it (it sees no exit stop). Only aggregated events have these.
    std::uint64_t unknown = 0;
    std::vector<AggrEntry> entries;  // equal keys merged; kernel order
    // A kernel map's read: the probe's counters read with the map's, at the moment a
    // clearing read switched banks, so that they count the hits `entries` hold but for those
    // in flight (one per thread, and on other CPUs those between the read and the switch).
    // Unset for events aggregated in user space.
    struct ProbeCounts {
        std::uint64_t hits = 0, filtered = 0, rejected = 0, depth_skipped = 0;
    };
    std::optional<ProbeCounts> read_counts;

    std::uint64_t totalCount() const;
};

// An empty table describing the map of `req` (sent with `args`): names, value, histogram.
AggrTable describeAggregation(const ProbeRequest& req, const std::vector<FetchArg>& args);

// Appends the packed AggrReply::aggr_entries payload `bytes` to `table` (decoding keys with
// `args`), merging a key seen before. EBADMSG when the sizes do not match the layout.
Result<void> decodeAggrEntries(AggrTable& table, const std::vector<FetchArg>& args,
                               const std::vector<std::uint8_t>& key_args,
                               std::span<const std::uint8_t> bytes, std::uint32_t key_size,
                               std::uint32_t nbuckets);

// AGGR_GET for probe `id`, added with `req` and `args`. `clear`: zero the values as they
// are read (Client::dumpAggregation), so the next read holds only the hits after this one;
// keys without a hit since the last clearing read are left out.
Result<AggrTable> readAggregation(Client& client, std::uint32_t id, const ProbeRequest& req,
                                  const std::vector<FetchArg>& args, bool clear = false);

// The values a histogram bucket holds, for printing: [lo, hi], open below or above.
struct BucketRange {
    bool below = false;  // everything under `hi` + 1 (the negative / under-min bucket)
    bool above = false;  // everything from `lo` on (the last linear bucket)
    std::int64_t lo = 0;
    std::uint64_t hi = 0;  // inclusive; log2's last bucket ends at 2^64 - 1
};
BucketRange bucketRange(const AggrTable& t, std::size_t bucket);
// Which bucket `v` (raw; signed when t.is_signed) falls in: the kernel's rule.
std::size_t bucketOf(const AggrTable& t, std::uint64_t v);

// Rows ordered for printing: by count, highest first (ties by key text); at most `top`
// (0: all).
std::vector<const AggrEntry*> sortedEntries(const AggrTable& t, std::size_t top = 0);

// A key of `t` as text: "ls, 123" (strings unquoted, "..." after one cut to the key's 31
// bytes, <fault> for a faulted part, ? for one not known, AggrKeyReading's forms); "" without keys.
std::string formatAggrKey(const AggrTable& t, const AggrEntry& e);
// Part `i` (key_names[i]) of a key of `t`, as formatAggrKey shows it.
std::string formatAggrKeyPart(const AggrTable& t, std::size_t i, const FetchedValue& v);
// The true sum of an entry's values. The kernel adds them modulo 2^64 (a sum past 64 bits
// wraps, as bpftrace's does); the true sum lies in [count * min, count * max], which holds
// one value of each residue when it spans less than 2^64, and that is the sum. nullopt when
// it spans more (values far apart, enough of them): then the sum may have wrapped and is
// not known.
std::optional<__int128> aggrSum(const AggrTable& t, const AggrEntry& e);
// The average, from aggrSum; nullopt when the sum is not known or there is no value. A
// double: past 2^53 it is the nearest one (JSON's "avg"); aggrAvgValue is exact.
std::optional<double> aggrAvg(const AggrTable& t, const AggrEntry& e);
// The average as the tables print it: aggrSum / count rounded to the nearest whole value
// (a half to the even one), computed exactly, so it lies in [min, max]; kept as min and max
// are (a signed value's int64 bits). nullopt as for aggrAvg.
std::optional<std::uint64_t> aggrAvgValue(const AggrTable& t, const AggrEntry& e);

// A value of the table's kind: signed or not, latency in human units ("1.02us").
std::string formatAggrValue(const AggrTable& t, std::uint64_t raw);

// One table, a row per key: the key columns, COUNT, and with a value SUM AVG MIN MAX; then
// a line with the distinct keys and the capacity (a keyed map's, or one that was full) and,
// when non-zero, the map-full, nested, faulted and unknown counts; no line when a map
// without keys has none of these to say.
std::string formatAggrTable(const AggrTable& t, std::size_t top = 0);
// bpftrace-style histograms, one per key ("@[KEY]:" then "[lo, hi)  count |@@@@|" lines
// from the first to the last non-empty bucket), each followed by its count/avg/min/max;
// with keys, a first line names them ("keys: comm, pid"); then formatAggrTable's last line.
std::string formatAggrHist(const AggrTable& t, std::size_t top = 0);
// {"type":"aggregation","probe":..,"keys":[..],"value":..,"entries":[{"key":{..},"count":..,
// "sum","min","max","avg", "hist":[{"min":..,"max":..,"count":..}]}], "omitted" (the keys
// `top` left out of entries), "keys_held", "capacity" (null for a table without a map),
// "overflow", "nested", "faulted", "unknown"}.
// A key part whose value is not known (FetchedValue::unknown) is null, as a faulted one is. Buckets
// follow bpftrace's hist JSON: the open-ended ones lack "min" (below) or "max" (above); empty
// buckets are left out.
nlohmann::ordered_json aggrJson(const AggrTable& t, std::size_t top = 0);

// Map memory, as probectl.ko charges it to its max_map_kb limit (kmod/aggr.c,
// kmod/limits.c): a table of 4-byte slots (a power of two, at least twice the keys), the keys
// once, and each key's value (count, sum, min, max and the histogram's 8-byte buckets) per
// possible CPU, twice (a second bank for clearing reads). A log2 latency map of 1024 keys on
// 2 CPUs: 8 KiB + 8 KiB + 2 * 2 * 1024 * 560 bytes = 2.2 MiB.
struct AggrMapSize {
    std::uint32_t key_size = 8;   // the fault mask, then 8 bytes an integer, kAggrStrLen a string
    std::uint32_t val_size = 32;  // AggrTotals, then 8 bytes a histogram bucket
};
// The key and value sizes of the map `req` asks for (req.aggr set, sent with `args`).
AggrMapSize aggrMapSize(const ProbeRequest& req, const std::vector<FetchArg>& args);
// The bytes of such a map made for `entries` keys with `ncpus` possible CPUs.
std::uint64_t aggrMapBytes(const AggrMapSize& m, std::uint32_t entries, std::uint32_t ncpus);
// The most keys, at most `want`, whose map takes at most `bytes`; 0 when not even one fits.
std::uint32_t aggrEntriesWithin(const AggrMapSize& m, std::uint64_t bytes, std::uint32_t want,
                                std::uint32_t ncpus);

// What a session may hold in maps (the module's max_map_kb, its 0 meaning an eighth of RAM)
// and the possible CPUs each map's values are kept for, read under `sys` (/sys). ENOENT
// when the module is not loaded.
struct AggrBudget {
    std::uint64_t limit_bytes = 0;
    std::uint32_t ncpus = 0;
};
Result<AggrBudget> readAggrBudget(const std::string& sys = "/sys");

// The bytes of budget each of `probes` maps gets when they share `budget` (an even share;
// 0 probes: all of it).
inline std::uint64_t aggrShare(const AggrBudget& budget, std::size_t probes) {
    return probes ? budget.limit_bytes / probes : budget.limit_bytes;
}

}  // namespace probectl
#pragma GCC visibility pop
