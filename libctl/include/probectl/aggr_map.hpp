// The wire form of an in-kernel aggregation map: what PROBE_ADD asks for (AggrMapSpec, the
// kernel's struct probectl_aggr_spec) and what one AGGR_GET reply message carries
// (AggrReply). Values and layout are the kernel's (kmod/uapi/probectl.h), held to it in
// src/core/uapi_checks.cpp. aggr.hpp builds the spec from names and decodes the replies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// The kernel's limits.
inline constexpr std::size_t kAggrMaxKeys = 4;              // fetch arguments in one key
inline constexpr std::size_t kAggrStrLen = 32;              // bytes of a string key, NUL included
inline constexpr std::uint32_t kAggrDefaultEntries = 1024;  // distinct keys when 0 is asked
inline constexpr std::uint32_t kAggrMaxEntries = 65536;
inline constexpr std::size_t kAggrLog2Buckets = 66;
inline constexpr std::size_t kAggrMaxLinear = 256;  // linear steps, plus one below, one above

// What a probe adds up per key (enum probectl_aggr_value_src).
enum class AggrValue : std::uint8_t { None, Arg, Latency };
// Its histogram (enum probectl_aggr_hist): log2 as bpftrace's hist(), linear as lhist().
enum class AggrHist : std::uint8_t { None, Log2, Linear };

// AggrMapSpec::flags: the value is signed (sum, min, max and buckets compare signed).
inline constexpr std::uint8_t kAggrFlagSigned = 1u << 0;

// struct probectl_aggr_spec. A key is a u64 fault mask (bit i: keys[i] faulted, its bytes
// are zero), then per argument 8 bytes (an integer, zero-extended) or kAggrStrLen bytes (a
// string, NUL-padded).
struct AggrMapSpec {
    std::uint32_t max_entries = 0;  // distinct keys; 0: kAggrDefaultEntries
    std::uint8_t nkeys = 0;
    std::uint8_t keys[kAggrMaxKeys] = {};  // fetch argument indexes
    AggrValue value = AggrValue::None;
    std::uint8_t value_arg = 0;  // AggrValue::Arg: the integer fetch argument
    AggrHist hist = AggrHist::None;
    std::uint8_t flags = 0;  // kAggrFlag*
    std::uint8_t reserved[3] = {};
    std::int64_t lin_min = 0, lin_max = 0, lin_step = 0;  // AggrHist::Linear
};

// One key's totals in AggrReply::aggr_entries (struct probectl_aggr_value), merged over
// CPUs; `bucket` u64 histogram buckets follow it. sum wraps; min and max are signed with
// kAggrFlagSigned.
struct AggrTotals {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    std::uint64_t min = 0;
    std::uint64_t max = 0;
};

// One AGGR_GET reply message. Members are named after the spec's attributes
// (Documentation/netlink/probectl.yaml), which the generated decoder fills.
struct AggrReply {
    std::uint32_t id = 0;             // the probe
    std::uint32_t aggr_key_size = 0;  // bytes of one key
    std::uint32_t aggr_buckets = 0;   // u64 buckets after each AggrTotals
    std::uint32_t aggr_keys = 0;      // distinct keys in the map
    std::uint64_t aggr_overflow = 0;  // hits with a new key while the map was full
    std::uint64_t aggr_nested = 0;    // hits skipped: the map was busy on their CPU
    std::uint64_t aggr_faulted = 0;   // hits whose value argument could not be read
    // The first message only: the probe's counters, read with the map's (see aggr-get).
    std::uint64_t hits = 0;
    std::uint64_t filtered = 0;
    std::uint64_t rejected = 0;
    std::uint64_t depth_skipped = 0;
    // Whole entries: aggr_key_size bytes of key, AggrTotals, aggr_buckets u64 buckets.
    std::vector<std::uint8_t> aggr_entries;
};

}  // namespace probectl
#pragma GCC visibility pop
