// A fetched argument value as decoded from a record, and its text form for the one-line
// event output (the JSON form is in event_json.hpp).
//
// Text form, following kprobe_events' trace output (Documentation/trace/kprobetrace.rst:
// "Traced arguments are shown in decimal (s/u) or hex (x)"), with probectl's fault marker:
//   u8..u64 -> decimal, s8..s64 -> signed decimal (sign-extended from the type's width),
//   x8..x64 -> 0x hex, string/ustring -> "quoted" with strace's escapes and a trailing ...
//   when cut at the fetch bound, TYPE[N] -> {a,b,c}, a faulted read -> <fault> (never an
//   empty string or a stale value).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probectl/fetch_spec.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One fetched value, decoded from a record.
struct FetchedValue {
    std::string name;
    FetchType type = FetchType::X64;
    std::uint32_t array_len = 0;       // 0: scalar
    std::uint64_t raw = 0;             // integer scalars: the stored bytes, zero-extended
    std::vector<std::uint64_t> array;  // arrays: each element zero-extended
    std::string str;                   // string types
    bool truncated = false;            // string stopped at the fetch bound
    bool faulted = false;              // the read faulted: no value
    // No value to read: an aggregation key or value of $retval (retval, errno) for a return
    // whose value is not known (Event::parts without kRecordPartRetval: with the ptrace
    // backend, a call whose thread was killed inside it). Text "?", JSON null.
    bool unknown = false;
    // A user stack snapshot (FetchSource::Kind::UStackSnapshot): registers then stack bytes
    // as the kernel stored them; `truncated`: the stack may go on above them.
    std::vector<std::uint8_t> snapshot;
    bool isSnapshot() const { return !snapshot.empty(); }
    // A snapshot's: the address space the kernel kept for it (UserImage), 0 when none was.
    std::uint32_t maps_seq = 0;
};

// An integer of type `t` stored in the low bytes of `raw`, sign-extended when t is s*.
std::int64_t fetchedSigned(FetchType t, std::uint64_t raw);

// The value alone: "3", "-100", "0x80000", "\"/etc/passwd\"", "{1,2}", "<fault>", "?" (unknown).
std::string formatFetchedValue(const FetchedValue& v);

// "name=value name=value ...", in order; "" for no values.
std::string formatFetchedValues(const std::vector<FetchedValue>& values);

}  // namespace probectl
#pragma GCC visibility pop
