// EventView's decoded values and owning copies, and decodeRecords: views made Events. One
// Event per thread is reused for every delivery, so an Event callback costs no allocation
// per event once its buffers have grown.
#include <algorithm>

#include "core/event_view_access.hpp"
#include "core/reuse.hpp"
#include "probectl/event_view.hpp"
#include "probectl/fetch_decode.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl {

namespace {

// Which fetch argument value i is: in the spec's order when every value is shown (hidden
// aggregation keys come after them).
std::size_t argIndex(const std::vector<std::size_t>* shown, std::size_t n, std::size_t i) {
    return shown && shown->size() == n ? (*shown)[i] : i;
}

struct Scratch {
    Event ev;
    std::vector<Event::RawValue> spare_fetched;
    std::vector<FetchedValue> spare_values;
    bool busy = false;  // a callback that delivers again gets its own
};

void fill(const EventView& v, Event& out, Scratch& s) {
    detail::copyEventFields(v, out, s.spare_fetched);
    const std::size_t n = v.valueCount();
    detail::resizeKeeping(out.values, n, s.spare_values);
    for (std::size_t i = 0; i < n; ++i)
        v.value(i, out.values[i]);
}

}  // namespace

std::size_t EventView::valueCount() const {
    if (event_)
        return event_->values.size();
    if (!fetch_args_)
        return 0;
    std::size_t n = fetchedCount();
    if (syscall_)  // not counting the strace plan's values
        n -= std::min(n, syscall_->hints.size());
    return std::min(n, fetch_args_->size());
}

void EventView::value(std::size_t i, FetchedValue& out) const {
    if (event_) {
        out = event_->values[i];
        return;
    }
    const std::size_t arg = argIndex(shown_, valueCount(), i);
    // A syscall's record has its strace plan's values too, around the arguments' own.
    const RawValue raw = fetched(syscall_ ? syscallArgIndex(*syscall_, arg) : arg);
    decodeFetchedValue(out, (*fetch_args_)[arg], raw.bytes, raw.flags);
    out.maps_seq = raw.maps_seq;
}

void EventView::copyTo(Event& out) const {
    Scratch s;
    fill(*this, out, s);
}

Event EventView::toEvent() const {
    Event ev;
    copyTo(ev);
    return ev;
}

namespace detail {

void deliverAsEvent(const EventView& v, const EventCallback& cb) {
    if (!cb)
        return;
    thread_local Scratch scratch;
    if (scratch.busy) {
        Scratch nested;
        fill(v, nested.ev, nested);
        cb(nested.ev);
        return;
    }
    struct Busy {
        bool& b;
        explicit Busy(bool& flag) : b(flag) { b = true; }
        ~Busy() { b = false; }  // also when cb throws
    } busy(scratch.busy);
    fill(v, scratch.ev, scratch);
    cb(scratch.ev);
}

}  // namespace detail

Result<std::size_t> decodeRecords(std::span<const std::byte> blob, const EventCallback& cb) {
    return decodeRecordViews(blob, [&cb](const EventView& v) { detail::deliverAsEvent(v, cb); });
}

}  // namespace probectl
