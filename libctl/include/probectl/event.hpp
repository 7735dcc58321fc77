// Decoded event records: the userspace view of struct probectl_record
// (kmod/uapi/probectl.h) and the decoder for PROBECTL_A_RECORDS blobs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/fetched_value.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct SyscallPlan;  // syscall_probe.hpp

// Number of argument registers a record carries (PROBECTL_NARGS in the uapi header).
inline constexpr std::size_t kEventArgs = 6;

// The optional parts of a kernel record (PROBECTL_RECORD_F_COMM ... _LATENCY in the uapi
// header): a probe's records carry the ones its ProbeRequest::record_parts asks for, and
// Event::parts / EventView::parts() say which one carried. A part a record lacks reads as
// empty or 0 (never as another part's bytes).
inline constexpr std::uint32_t kRecordPartComm = 1u << 1;
inline constexpr std::uint32_t kRecordPartIp = 1u << 2;
inline constexpr std::uint32_t kRecordPartArgs = 1u << 3;
inline constexpr std::uint32_t kRecordPartRetval = 1u << 4;   // return probes only
inline constexpr std::uint32_t kRecordPartLatency = 1u << 5;  // return probes only
inline constexpr std::uint32_t kRecordPartsAll =
    kRecordPartComm | kRecordPartIp | kRecordPartArgs | kRecordPartRetval | kRecordPartLatency;

// One probe hit, as decoded from a struct probectl_record.
struct Event {
    std::uint32_t probe_id = 0;
    // Text of the probe's spec ("syscall:getppid"); filled by Session (points into
    // Session-owned storage, valid as long as the Session), empty from Client::consume.
    std::string_view spec;
    std::uint64_t timestamp_ns = 0;  // CLOCK_MONOTONIC ns (kernel ktime_get_mono_fast_ns())
    std::uint32_t cpu = 0;
    std::uint32_t pid = 0;   // thread id (task->pid)
    std::uint32_t tgid = 0;  // process id (task->tgid)
    std::string comm;        // task->comm, at most 15 chars (NUL padding stripped)
    std::uint64_t ip = 0;    // kprobe: probed address; kretprobe: function entry
    // Raw argument registers at entry (x86-64 SysV order rdi, rsi, rdx, rcx, r8, r9); for
    // syscall probes (PROBECTL_PROBE_F_SYSCALL) the syscall's own six arguments.
    std::array<std::uint64_t, kEventArgs> args{};
    std::uint64_t retval = 0;      // valid when is_return: regs_return_value()
    std::uint64_t latency_ns = 0;  // valid when is_return: entry-to-return, ns
    bool is_return = false;        // PROBECTL_RECORD_F_RETURN
    // The kRecordPart* the record carried; absent ones are empty/0 above. Every part for
    // events that did not come from a kernel record (ptrace backend, recordings); an
    // entry probe's kernel record never has retval and latency.
    std::uint32_t parts = kRecordPartsAll;
    // Fetch-argument values as the kernel stored them (struct probectl_fetch_value), in the
    // probe's order; empty for probes without fetch arguments.
    struct RawValue {
        std::vector<std::uint8_t> bytes;  // strings include their NUL
        std::uint8_t flags = 0;           // PROBECTL_FETCH_V_FAULT | _TRUNCATED
        int error = 0;  // with FAULT: the errno of the failed read when known (ptrace backend)
        std::uint32_t maps_seq = 0;  // a user stack snapshot's (FetchedValue)
    };
    std::vector<RawValue> fetched;
    // The same values decoded with the probe's fetch arguments (names, types); filled by
    // Session, empty from Client::consume.
    std::vector<FetchedValue> values;
    // syscall:NAME probes printed like strace: the plan their `fetched` values follow
    // (syscall_probe.hpp; syscallRecord() rebuilds the call), or with the spec's own fetch
    // arguments (`values`) only the syscall's name. Owned by the session that filled it,
    // valid as long as that session; null for every other probe.
    const SyscallPlan* syscall = nullptr;
    // With `syscall`: the call returned (retval valid); false for exit_group's entry.
    bool syscall_returned = false;
};

// A return whose value is not known: a return event without kRecordPartRetval. With the
// ptrace backend, a syscall whose thread was killed inside it (SIGKILL, the process's exit
// or another thread's exec): ptrace sees no exit stop then, so no value, while the kernel
// backend sees the ERESTART code the call returned. Its latency is known (to the thread's
// end). Text "= ? (killed)" on an event line (kReturnUnknownNote), JSON "retval": null, and
// the recording format's "value unknown" flag.
inline bool returnValueUnknown(const Event& ev) {
    return ev.is_return && !(ev.parts & kRecordPartRetval);
}
inline constexpr const char* kReturnUnknownNote = " (killed)";

using EventCallback = std::function<void(const Event&)>;
// Called with the number of records the kernel lost for this socket (PROBECTL_A_LOST),
// once per EVENTS message that carries a non-zero count.
using LostCallback = std::function<void(std::uint64_t lost)>;

// Decodes a PROBECTL_A_RECORDS payload: struct probectl_record values packed back to back,
// each advanced by its own `size` field: the fixed struct, the optional parts its flags name
// (comm, ip, args, retval, latency, in that order), then the fetched values.
//
// Calls `cb` once per valid record, in order. Returns the number of records decoded.
// Errors (EBADMSG, message names the byte offset): a record whose size is smaller than
// sizeof(struct probectl_record) plus the parts its flags name, not a multiple of 8, or runs
// past the end of the blob,
// or trailing bytes too short to hold a record header. Records before the bad one have
// already been delivered; decoding stops at the bad one (sizes can no longer be trusted).
Result<std::size_t> decodeRecords(std::span<const std::byte> blob, const EventCallback& cb);

}  // namespace probectl
#pragma GCC visibility pop
