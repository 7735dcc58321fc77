#include "session/event_tagger.hpp"

#include <algorithm>

#include "core/reuse.hpp"
#include "probectl/fetch_decode.hpp"

namespace probectl {

const Event& EventTagger::tag(const Event& ev, const Probe& p) {
    // Field by field, so the buffers stay: Event's copy would allocate its vectors anew.
    static_assert(sizeof(Event) == 224, "a new Event field must be copied here");
    Event& t = tagged_;
    t.probe_id = ev.probe_id;
    t.spec = p.spec;
    t.timestamp_ns = ev.timestamp_ns;
    t.cpu = ev.cpu;
    t.pid = ev.pid;
    t.tgid = ev.tgid;
    t.comm = ev.comm;
    t.ip = ev.ip;
    t.args = ev.args;
    t.retval = ev.retval;
    t.latency_ns = ev.latency_ns;
    t.is_return = ev.is_return;
    t.syscall = p.syscall;
    t.syscall_returned = p.syscall && ev.is_return;
    detail::resizeKeeping(t.fetched, ev.fetched.size(), spare_fetched_);
    for (std::size_t i = 0; i < ev.fetched.size(); i++) {
        t.fetched[i].bytes.assign(ev.fetched[i].bytes.begin(), ev.fetched[i].bytes.end());
        t.fetched[i].flags = ev.fetched[i].flags;
    }
    const std::size_t n = p.fetch_args ? std::min(t.fetched.size(), p.fetch_args->size()) : 0;
    // In the spec's order when every value is shown: value i is the record's (*shown)[i].
    const bool reorder = p.shown && p.shown->size() == n;
    detail::resizeKeeping(t.values, n, spare_values_);
    for (std::size_t i = 0; i < n; i++) {
        const std::size_t at = reorder ? (*p.shown)[i] : i;
        decodeFetchedValue(t.values[i], (*p.fetch_args)[at], t.fetched[at].bytes,
                           t.fetched[at].flags);
    }
    return t;
}

}  // namespace probectl
