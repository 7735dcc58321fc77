// count, hist and latency with --format perfetto|chrome -o FILE: every read-out of the
// tables (at each --interval and at the end) becomes samples of counter tracks, so a
// timeline viewer shows how the counts moved. One track per probe and key for the count
// and, where there is a value (hist's argument, latency), one for its average.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "probectl/aggr.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"
#include "probectl/trace_export.hpp"

namespace probectl::cli {

// The samples of one table at one read-out, in the table's print order: ("SPEC [KEY]:
// count", hits) and, with a value, ("SPEC [KEY]: avg NAME", sum / count; latency in ns).
// KEY names each part: "comm=ls, pid=12"; a table without keys has no brackets.
std::vector<std::pair<std::string, std::int64_t>> aggrCounterSamples(const AggrTable& t);

class AggrTimeline {
  public:
    // A writer of `format` (chrome, perfetto) into `path` (created or truncated now; count
    // opens it once every probe is armed, as trace does). Errors: openTraceWriter's.
    static Result<AggrTimeline> open(const std::string& format, const std::string& path);
    // The trace's time 0 (CLOCK_MONOTONIC): when the probes were armed.
    Result<void> start(std::uint64_t t0_ns);
    // The tables read at ts_ns (CLOCK_MONOTONIC, not before the previous read-out).
    // `cleared`: each read-out holds only the hits since the one before, so a track whose key
    // is absent now drops to 0. A track's first sample is preceded by a 0 at the previous
    // read-out (t0 for the first), so every track starts from zero.
    Result<void> readout(const std::vector<AggrTable>& tables, std::uint64_t ts_ns, bool cleared);
    // Drop counters and the end of the file.
    Result<void> finish(const SessionStats& stats);

  private:
    explicit AggrTimeline(std::unique_ptr<TraceWriter> w) : w_(std::move(w)) {}
    std::unique_ptr<TraceWriter> w_;
    std::map<std::string, std::int64_t> last_;  // track -> its last sample
    std::uint64_t t_prev_ = 0;
};

}  // namespace probectl::cli
