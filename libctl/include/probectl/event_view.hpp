// EventView: one event as the callback of Session::pollViews (or any Tracer's pollViews,
// runViews, stopViews) sees it, without a copy. Over a kernel record it reads each field
// from the record's bytes when asked (the record as the kernel wrote it: struct
// probectl_record, then its fetched values, kmod/uapi/probectl.h), and decodes a fetched
// value with the probe's fetch argument only when value() is called; nothing is copied or
// allocated per event. A backend that builds its events itself (the ptrace backend, a
// recording) hands out views over its Event.
//
// Lifetime: a view and everything it returns (comm(), spec(), fetched() bytes, syscall())
// point into the message or Event being delivered: valid during the callback only. Keep
// an event with toEvent() (an owning copy) or copyTo() (into an Event you keep, reusing
// its buffers).
//
// Errors: none at access time; decodeRecordViews checks every record's size and fetched
// value headers before its view is handed out. Out-of-range indexes are the caller's bug
// (as with operator[]): fetched(i) for i >= fetchedCount() and value(i) for
// i >= valueCount() are undefined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/fetched_value.hpp"
#include "probectl/result.hpp"

// libctl's own (src/core/event_view_access.hpp): makes views. Declared before the
// visibility push so that it stays out of the ABI.
namespace probectl::detail {
struct EventViewAccess;
}

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class EventView {
  public:
    // A view of `ev` (no copy): valid as long as `ev` is, and unchanged.
    static EventView of(const Event& ev);

    // The fields of Event (event.hpp), same meaning and units.
    std::uint32_t probeId() const;
    // The probe's spec text; empty from Client::consumeViews (as Event::spec).
    std::string_view spec() const;
    std::uint64_t timestampNs() const;  // CLOCK_MONOTONIC ns
    std::uint32_t cpu() const;
    std::uint32_t pid() const;   // thread id
    std::uint32_t tgid() const;  // process id
    // The kRecordPart* this event carries (Event::parts); the accessor of a part it does not
    // carry returns "" or 0.
    std::uint32_t parts() const;
    bool has(std::uint32_t part) const { return (parts() & part) == part; }
    std::string_view comm() const;
    std::uint64_t ip() const;
    std::uint64_t arg(std::size_t i) const;  // i < kEventArgs
    bool isReturn() const;
    std::uint64_t retval() const;     // 0 unless isReturn() and carried
    std::uint64_t latencyNs() const;  // 0 unless isReturn() and carried
    // The syscall plan of a syscall:NAME probe (Event::syscall), else null.
    const SyscallPlan* syscall() const;
    bool syscallReturned() const;

    // Fetched values as stored (Event::fetched), in the record's order.
    struct RawValue {
        std::span<const std::uint8_t> bytes;  // strings include their NUL
        std::uint8_t flags = 0;               // PROBECTL_FETCH_V_FAULT | _TRUNCATED
        int error = 0;                        // with FAULT: errno when known (ptrace backend)
        std::uint32_t maps_seq = 0;           // a user stack snapshot's (FetchedValue)
    };
    std::size_t fetchedCount() const;
    // Walks the value headers up to i: O(i).
    RawValue fetched(std::size_t i) const;

    // Decoded values (Event::values): as many as the probe's spec has fetch arguments, in
    // the spec's order; 0 from Client::consumeViews (no probe known there).
    std::size_t valueCount() const;
    // Value i decoded into `out`, reusing its buffers (no allocation once they have grown).
    void value(std::size_t i, FetchedValue& out) const;

    // An owning Event with every field (allocates its strings and vectors).
    Event toEvent() const;
    // The same into `out`, reusing its buffers.
    void copyTo(Event& out) const;

  private:
    friend struct detail::EventViewAccess;
    const std::byte* record_ = nullptr;  // a record checked by decodeRecordViews
    const Event* event_ = nullptr;       // or an Event
    // What a Session knows of the record's probe (as Event's spec, syscall and values).
    std::string_view spec_;
    const SyscallPlan* syscall_ = nullptr;
    const std::vector<FetchArg>* fetch_args_ = nullptr;
    const std::vector<std::size_t>* shown_ = nullptr;  // spec order -> record order
    std::uint32_t fetched_count_ = 0;  // a record's, counted by decodeRecordViews's checks
};

using EventViewCallback = std::function<void(const EventView&)>;

// decodeRecords (event.hpp) without the Event: the same checks and errors, each record
// handed to `cb` as a view over `blob`. Allocates nothing.
Result<std::size_t> decodeRecordViews(std::span<const std::byte> blob, const EventViewCallback& cb);

}  // namespace probectl
#pragma GCC visibility pop
