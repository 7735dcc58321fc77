// count / hist / latency --from FILE: the aggregation computed from a recording's events
// (probectl/aggr_events.hpp) instead of in the kernel.
#pragma once

#include <string>
#include <vector>

#include "probectl/aggr.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"

namespace probectl::cli {

struct RecordedAggregation {
    std::vector<AggrTable> tables;  // one per recorded probe (or per one of `only`), by id
    SessionStats stats;             // aligned with tables; hits = events recorded without
                                    // the recording's summary
    bool has_summary = false;
    std::string note;  // why the recording ended early ("" when it did not)
    // With no `only`: the probes the aggregation does not apply to (latency of an entry
    // probe, say), each "SPEC: why"; they get no table.
    std::vector<std::string> skipped;
};

// Reads recording `file` and aggregates the events of every probe whose spec text matches
// one of the globs `only` (all probes when empty, skipping those `spec` does not apply to)
// with `spec`. Errors: the reader's (errno, EBADMSG for a file that is not a recording or
// is damaged: a recording cut short is aggregated up to its end, with `note` set);
// EventAggregator::create's (usage; with no `only`, the first probe's when none applies); ENOENT
// when `only` matches no probe of the recording (naming those it holds).
Result<RecordedAggregation> aggregateRecording(const std::string& file, const AggrSpec& spec,
                                               const std::vector<std::string>& only);

}  // namespace probectl::cli
