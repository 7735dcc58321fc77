// generated from Documentation/netlink/probectl.yaml by tools/nlgen.py -- do not edit
// The per-probe counters, each a std::uint64_t member of the same name in
// ProbeInfo (client.hpp) and ProbeStats (session.hpp), its column (upper case)
// and JSON key in probectl list and the trace summary:
//   hits: Handler runs that passed the tgid filter.
//   delivered: Records received and decoded (counted in user space).
//   dropped: Records lost, ring full or delivery failed.
//   nmissed: kprobe reentry plus kretprobe instance shortage.
//   filtered: Handler runs the session's process filter skipped: outside the tgid filter
//       (session-set) or the task match (session-match). Not counted in probe-hits.
//   rejected: Hits (counted in probe-hits) that the probe's predicate rejected: hits =
//       delivered + dropped + rejected.
//   unreturned: Return probes: entries (counted in probe-hits) whose return was never recorded:
//       left by longjmp or an exception, ended by the thread's exit, still running when read,
//       or (uretprobes) pushed out of the pairing table. hits = delivered + dropped + rejected
//       + unreturned (+ probe-depth-skipped for uretprobes).
//   depth_skipped: uretprobes: entries (counted in probe-hits) whose return the kernel did not
//       probe because the thread was nested deeper than its uretprobe limit (probe-depth-limit
//       pending returns, the core's MAX_URETPROBE_DEPTH): not in probe-unreturned, no record.
//       hits = delivered + dropped + rejected + unreturned + depth-skipped.
#pragma once

#include <cstdint>

// PROBE_GET's counters, in its order (ProbeInfo, probectl list).
#define PROBECTL_PROBE_COUNTERS(X) \
    X(hits)                        \
    X(nmissed)                     \
    X(dropped)                     \
    X(filtered)                    \
    X(rejected)                    \
    X(unreturned)                  \
    X(depth_skipped)

// A trace's counters, in summary order (ProbeStats, the summary).
#define PROBECTL_TRACE_COUNTERS(X) \
    X(hits)                        \
    X(delivered)                   \
    X(dropped)                     \
    X(nmissed)                     \
    X(filtered)                    \
    X(rejected)                    \
    X(unreturned)                  \
    X(depth_skipped)

// The members: PROBECTL_PROBE_COUNTERS(PROBECTL_COUNTER_MEMBER) in a struct.
#define PROBECTL_COUNTER_MEMBER(name) std::uint64_t name = 0;
