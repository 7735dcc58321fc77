// The session's per-event step: a decoded record with what the session knows of its probe
// (spec text, syscall plan, fetched values decoded with the probe's fetch arguments, in the
// spec's order). One Event is reused for every record, so once its buffers have grown an
// event costs no allocation.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/fetch_spec.hpp"

namespace probectl {

class EventTagger {
  public:
    // What tag() needs of the probe; `shown`, when not null, is where each of the spec's
    // fetch arguments is in the record (hidden aggregation keys come after them).
    struct Probe {
        std::string_view spec;
        const SyscallPlan* syscall = nullptr;
        const std::vector<FetchArg>* fetch_args = nullptr;
        const std::vector<std::size_t>* shown = nullptr;
    };
    // `ev` tagged; valid until the next call.
    const Event& tag(const Event& ev, const Probe& p);

  private:
    Event tagged_;
    std::vector<Event::RawValue> spare_fetched_;
    std::vector<FetchedValue> spare_values_;
};

}  // namespace probectl
