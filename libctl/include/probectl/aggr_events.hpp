// Aggregation in user space over decoded events, with the kernel map's rules (kmod/aggr.c):
// the same keys, values, buckets, capacity and map-full count, so that an AggrTable built
// here prints and compares like one read back with AGGR_GET. For what the kernel does not
// aggregate itself: a recording read back (`probectl report`), the ptrace backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "probectl/aggr.hpp"
#include "probectl/event.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class EventAggregator {
  public:
    // `spec` as for prepareAggregation; keys are task fields (comm pid tid cpu retval errno) or
    // the NAME of a fetch argument the events carry (Event::values), the value an integer
    // fetch argument's NAME or the latency. `probe_spec` names the table (AggrTable::spec).
    // Errors (EINVAL, usage): more than kAggrMaxKeys keys; uid, which events do not carry;
    // a histogram without a value; linear bounds prepareAggregation refuses.
    static Result<EventAggregator> create(const AggrSpec& spec, std::string probe_spec);

    EventAggregator(EventAggregator&&) noexcept;
    EventAggregator& operator=(EventAggregator&&) noexcept;
    ~EventAggregator();

    // Adds one hit. Skipped as the kernel skips them: with the latency (or a retval or errno key),
    // events that are not returns; a value argument that faulted or is missing (counted in
    // AggrTable::faulted). A new key while capacity keys are held counts in
    // AggrTable::overflow. A key argument the event lacks is a faulted key part.
    void add(const Event& e);

    // The table so far: entries in the order their keys first came.
    const AggrTable& table() const;

  private:
    struct Impl;
    explicit EventAggregator(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
