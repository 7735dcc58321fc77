// Text printers shared by trace/list: one event per line, the end-of-trace summary, the
// probe list. Pure functions of their inputs so tests can pin the format down.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "probectl/client.hpp"
#include "probectl/event.hpp"
#include "probectl/session.hpp"
#include "uapi/probectl.h"

namespace probectl::cli {

// "12.3us": ns below 1us, us below 1ms, ms below 1s, s above; three significant digits.
std::string formatLatency(std::uint64_t ns);

// One trace line:
//   TIME(s since t0_ns, 6 decimals) [CPU] COMM PID SPEC  arg0=0x.. ... arg5=0x..
//   TIME [CPU] COMM PID SPEC  ret=N (0x..) lat=12.3us            (returns)
// Records older than t0_ns print as time 0 (clocks are the same: CLOCK_MONOTONIC).
std::string formatEvent(const Event& ev, std::uint64_t t0_ns);
// A syscall:NAME event as strace prints the call: `openat(AT_FDCWD, "/etc/passwd",
// O_RDONLY|O_CLOEXEC) = 3` (strace_format.hpp; ev.syscall must be set). `align` pads the
// call to strace's column 40.
std::string formatSyscallEvent(const Event& ev, bool align);
// Column header matching formatEvent.
std::string eventHeader();

// --format json: one JSON Lines object per event (schema: probectl/event_json.hpp). Events
// without fetch arguments carry their six argument registers as args arg0..arg5 (x64).
std::string formatEventJson(const Event& ev);
// The final summary object: per-probe counters and the session's lost records.
std::string formatSummaryJson(const SessionStats& stats);

// Per-probe table (PROBE HITS DELIVERED DROPPED NMISSED FILTERED) and the lost line.
void printSummary(std::ostream& os, const SessionStats& stats);
// "warning: ..." describing every loss, or "" when nothing was lost.
std::string lossWarning(const SessionStats& stats);

// `probectl list` table: ID KIND LOCATION ADDRESS OWNER PERSISTENT ENABLED HITS NMISSED
// DROPPED FILTERED. KIND is "syscall" for PROBECTL_PROBE_F_SYSCALL kprobes.
void printProbeList(std::ostream& os, const std::vector<ProbeInfo>& probes);

// How `trace` prints events: the event line (default), JSON Lines, or, with --syscalls,
// strace's own lines (pid-prefixed like `strace -f -o FILE` when `pid_prefix`).
struct TraceLayout {
    bool json = false;
    bool strace = false;
    bool pid_prefix = false;
};
std::string formatTraceEvent(const Event& ev, std::uint64_t t0_ns, const TraceLayout& layout);

// CLOCK_MONOTONIC now, ns: the clock of Event::timestamp_ns.
std::uint64_t monotonicNs();

}  // namespace probectl::cli
