// JSON Lines output: one JSON object per event, and a summary object at the end of a trace
// (nlohmann-json). Written by the JSON back end of printer.hpp from the same calls as the
// text (event_print.hpp), so the fields and numbers are the text's.
//
// Event object (keys absent when the value does not apply):
//   "type":       "event"
//   "ts_ns":      CLOCK_MONOTONIC timestamp, ns (number)
//   "cpu":        number
//   "pid", "tid": numbers (pid = process id / tgid, tid = thread id: the text's TID column)
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
//                 Without fetch arguments (and not a return): the six argument registers,
//                 "arg1".."arg6" -> "0x..." (numbered as $arg1..$arg6 fetch them).
//   "faults":     names of the faulted values (present only when there is one)
//   "truncated":  names of strings cut at the fetch bound (present only when there is one)
//   "retval":     return value, signed number (return probes and syscalls)
//   "retval_s32": its signed 32-bit reading, when the upper half is zero and bit 31 set
//                 (a C int's -5 is retval 4294967291, retval_s32 -5; returns without
//                 fetch arguments)
//   "latency_ns": entry-to-return time, ns (return probes)
//   "syscall":    the strace-style line, when the probe is a syscall probe
//   "syscall_args": its arguments, [{"name": "filename" (the syscall's metadata; else
//                 "arg1".."arg6"), "value": the register, "decoded": "\"/etc/hostname\""}]
//                 in the line's order (syscall probes without fetch arguments)
//
// Summary object:
//   {"type": "summary", "probes": [{"id", "probe", "hits", "delivered", "dropped",
//    "nmissed", "filtered", "rejected"}...], "lost": records lost by the session's transport,
//    "overruns": socket receive-buffer overruns}
//
// List object (probectl list --format json):
//   {"type": "list", "probes": [{"id", "kind", "location", "address" ("0x..", null when
//    none), "owner" (null when persistent), "persistent", "enabled" (booleans), "hits",
//    "nmissed", "dropped", "filtered", "rejected"}...]}
//
// Objects are nlohmann::ordered_json so keys print in the order above and args in fetch
// order. Strings are bytes from the traced program; bytes that are not valid UTF-8 are written as
// U+FFFD (JSON text must be UTF-8), and so that distinct byte strings stay distinct the
// member NAME whose string has such bytes gets a sibling NAME_bytes right after it: the exact
// bytes as lowercase hex ("comm":"g\ufffd","comm_bytes":"67ff"). For an array of strings
// NAME_bytes is an array of the same length, hex for such strings and null for the others.
// Present only when needed; the same in every JSON probectl writes (aggregations too).
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

// The JSON value of one fetched value (null when faulted), per the table above.
nlohmann::ordered_json fetchedValueToJson(const FetchedValue& v);

// One line of JSON Lines: compact, no trailing newline, invalid UTF-8 replaced, with the
// NAME_bytes siblings above added to objects.
std::string toJsonLine(const nlohmann::ordered_json& j);

}  // namespace probectl
#pragma GCC visibility pop
