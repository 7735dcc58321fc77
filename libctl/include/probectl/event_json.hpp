// JSON Lines output: one JSON object per event, and a summary object at the end of a trace
// (nlohmann-json). Same fields as the text format.
//
// Event object (keys absent when the value does not apply):
//   "type":       "event"
//   "ts_ns":      CLOCK_MONOTONIC timestamp, ns (number)
//   "cpu", "pid", "tid": numbers (pid = process id / tgid, tid = thread id)
//   "comm":       task name (string)
//   "probe":      probe spec text, e.g. "syscall:openat" (string); "probe_id": number
//   "ip":         probed address, "0x..." (string: 64-bit addresses exceed JSON's exact range
//                 in many readers)
//   "args":       object, one member per fetched value in fetch order:
//                   u8..u64 -> number, s8..s64 -> number (sign-extended from its width),
//                   x8..x64 -> "0x..." string (as the text format shows them),
//                   string/ustring -> string, TYPE[N] -> array of the above;
//                   a value whose read faulted -> null, and its name is listed in "faults".
//                   A faulted value is never an empty string or 0.
//   "faults":     names of the faulted values (present only when there is one)
//   "truncated":  names of strings cut at the fetch bound (present only when there is one)
//   "retval":     return value, signed number (return probes and syscalls)
//   "latency_ns": entry-to-return time, ns (return probes)
//   "syscall":    the strace-style line, when the probe is a syscall probe
//
// Summary object:
//   {"type": "summary", "probes": [{"id", "probe", "hits", "delivered", "dropped",
//    "nmissed", "filtered", "rejected"}...], "lost": records lost by the session's transport}
//
// Objects are nlohmann::ordered_json so keys print in the order above and args in fetch
// order. Strings are bytes from the traced program; bytes that are not valid UTF-8 are written as
// U+FFFD by toJsonLine (JSON text must be UTF-8).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probectl/fetched_value.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct DecodedEvent {
    std::uint64_t timestamp_ns = 0;
    std::uint32_t cpu = 0;
    std::uint32_t pid = 0;  // process (tgid)
    std::uint32_t tid = 0;  // thread
    std::string comm;
    std::string probe;  // spec text
    std::uint32_t probe_id = 0;
    std::uint64_t ip = 0;
    std::vector<FetchedValue> values;
    std::optional<std::int64_t> retval;
    std::optional<std::uint64_t> latency_ns;
    std::optional<std::string> syscall;  // strace-style line
};

struct ProbeSummary {
    std::uint32_t id = 0;
    std::string probe;
    std::uint64_t hits = 0;
    std::uint64_t delivered = 0;
    std::uint64_t dropped = 0;
    std::uint64_t nmissed = 0;
    std::uint64_t filtered = 0;
    std::uint64_t rejected = 0;
};

// The JSON value of one fetched value (null when faulted), per the table above.
nlohmann::ordered_json fetchedValueToJson(const FetchedValue& v);

// The event object described above.
nlohmann::ordered_json eventToJson(const DecodedEvent& e);

// The summary object described above.
nlohmann::ordered_json summaryToJson(const std::vector<ProbeSummary>& probes, std::uint64_t lost);

// One line of JSON Lines: compact, no trailing newline, invalid UTF-8 replaced.
std::string toJsonLine(const nlohmann::ordered_json& j);

}  // namespace probectl
#pragma GCC visibility pop
