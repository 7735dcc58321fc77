// count, hist and latency's output: a read-out of the tables as text, json, folded or svg,
// with each probe's counters, written whole and checked (a full disk is an error).
#pragma once

#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include "aggr_cli.hpp"
#include "probectl/kernel_stacks.hpp"

namespace probectl::cli {

// `r` as o.format says, on `out`, then flushed; what folded and svg have no room for (hits
// not counted) goes to `err`. `stacks`: the lines of each stack id, for tables keyed by
// kstack or ustack. Error: `out` could not be written, named by `out_name` (the -o file,
// or "standard output").
// The time of day above an --interval's tables, "14:03:27" as bpftrace's time() prints
// it, with milliseconds ("14:03:27.250") when the interval is not whole seconds, so that
// sub-second read-outs are told apart.
std::string intervalClock(const std::tm& tm, unsigned millis, double interval);

Result<void> printAggrReadout(const AggrCliOptions& o, const AggrReadout& r, std::ostream& out,
                              std::ostream& err, const std::string& out_name,
                              const StackLines* stacks = nullptr);

// Whether a probe's table and counters hold nothing at all: no key, no hit counted, none the
// process filter skipped (filtered), lost (nmissed, dropped, map full, nested) or still in
// flight (unreturned, depth_skipped, entered before). Of several probes, the text leaves out
// only such (--zeros shows them); `ps` may be null (a table without the probe's counters).
bool quietProbe(const AggrTable& t, const ProbeStats* ps, std::uint64_t entered_before);

// The text `count` prints when no --by keys are given: one row per probe, PROBE COUNT,
// highest first, then a line for each probe that lost hits, and with `stats` (aligned with
// the tables) a FILTERED column, with `process_filter` (the run has one) or when the
// process filter skipped any shown probe's hits, and a line for each whose entries never
// returned ("not returned yet" when `more` read-outs follow), with `entered_before` (each
// interval on its own; per table) those of them entered before the interval. Of several
// probes, the quiet ones (quietProbe: no hit, none filtered or lost) are left out and counted
// in one line unless `zeros` (JSON always has every probe).
std::string formatProbeCounts(const std::vector<AggrTable>& tables, std::size_t top = 0,
                              const SessionStats* stats = nullptr, bool zeros = false,
                              bool process_filter = false, bool more = false,
                              const std::vector<std::uint64_t>* entered_before = nullptr);

}  // namespace probectl::cli
