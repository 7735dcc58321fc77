// How libctl makes EventViews (probectl/event_view.hpp): over a checked record, with the
// probe's context a Session adds, and copied into an Event whose buffers are kept.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "probectl/event_view.hpp"

namespace probectl::detail {

struct EventViewAccess {
    // `record`: one record decodeRecordViews has checked (size, fetched value headers),
    // which counted its `fetched` values on the way.
    static EventView ofRecord(const std::byte* record, std::uint32_t fetched) {
        EventView v;
        v.record_ = record;
        v.fetched_count_ = fetched;
        return v;
    }
    // `v` with its probe's spec, syscall plan and fetch arguments (`shown`, when not null,
    // is where each of the spec's arguments is in the record).
    static EventView withProbe(const EventView& v, std::string_view spec, const SyscallPlan* plan,
                               const std::vector<FetchArg>* args,
                               const std::vector<std::size_t>* shown) {
        EventView t = v;
        t.spec_ = spec;
        t.syscall_ = plan;
        t.fetch_args_ = args;
        t.shown_ = shown;
        return t;
    }
};

// Every field but the decoded values into `out`; fetched values cut off go to `spare`.
void copyEventFields(const EventView& v, Event& out, std::vector<Event::RawValue>& spare);

// Calls `cb` with `v` as an Event: one per thread, reused (no allocation once its buffers
// have grown); a callback that delivers again gets its own. Nothing when `cb` is empty.
void deliverAsEvent(const EventView& v, const EventCallback& cb);

// An Event callback as a view callback (through deliverAsEvent); `cb` must outlive it.
inline EventViewCallback asViewCallback(const EventCallback& cb) {
    return [&cb](const EventView& v) { deliverAsEvent(v, cb); };
}

}  // namespace probectl::detail
