// trace/list output through one printer (probectl/printer.hpp, event_print.hpp): text and
// JSON come from the same calls. The string/ostream helpers are for tests and small callers.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "owners.hpp"
#include "probectl/client.hpp"
#include "probectl/event.hpp"
#include "probectl/event_print.hpp"
#include "probectl/printer.hpp"
#include "probectl/session.hpp"
#include "probectl/tracer.hpp"
#include "uapi/probectl.h"

namespace probectl::cli {

// How `trace` prints events: the event line (default), JSON Lines, or, with --syscalls,
// strace's own lines (tid-prefixed like `strace -f -o FILE` when `pid_prefix`).
struct TraceLayout {
    bool json = false;
    bool strace = false;
    bool pid_prefix = false;
    // The trace on stderr, not stdout: strace's rule when a traced command shares the
    // terminal (-- CMD without -o), so the command's stdout stays its own.
    bool on_stderr = false;
    // --zeros: the summary lists the probes with nothing to say too (printSummary).
    bool zeros = false;
};

// What a trace driver prints, whatever the backend: the header, each event, the summary.
// Events and header go to `out`; with strace lines the summary goes to `err` (strace's
// lines alone in the output).
class TracePrinter {
  public:
    TracePrinter(const TraceLayout& layout, std::uint64_t t0_ns, std::ostream& out,
                 std::ostream& err);
    void header();
    void event(const Event& ev);
    // strace's line for a traced thread's end ("+++ exited with 0 +++"), in strace's layout
    // only: with the tid prefix for every thread, without it for a process's end alone (the
    // threads of one process untraced by strace without -f).
    void taskEnd(const TaskEnd& end);
    // Events' `kstack` values print as their stacks (EventFormat::kernel_stack).
    void setKernelStacks(
        std::function<const std::vector<std::string>*(std::uint32_t, std::uint32_t)> f) {
        format_.kernel_stack = std::move(f);
    }
    // Events' `ustack` snapshots print as their unwound stacks (EventFormat::user_snapshot).
    void setUserSnapshots(decltype(EventFormat::user_snapshot) f) {
        format_.user_snapshot = std::move(f);
    }
    void summary(const SessionStats& stats);
    void flush();

  private:
    TraceLayout layout_;
    EventFormat format_;
    std::unique_ptr<Printer> out_;
    std::ostream& err_;
};

// The counters of a summary row / list row, in the order their columns show.
std::vector<Counter> summaryCounters(const ProbeStats& p);
std::vector<Counter> listCounters(const ProbeInfo& p);
// Whether any of p's counters (summaryCounters: hits, filtered, dropped, nmissed, ...) is set:
// the probe was hit, or a hit was skipped or lost there. A text summary or table of several
// probes leaves out only those of which none is (hiddenProbesNote).
bool anyCounterSet(const ProbeStats& p);

// Summary: text (table PROBE HITS DELIVERED DROPPED NMISSED FILTERED REJECTED, lost line)
// or the JSON summary object (event_json.hpp). Of several probes (a glob's), the text leaves
// out those whose every counter is 0 unless `zeros`, and counts them in a line
// (hiddenProbesNote); JSON has every probe.
void printSummary(Printer& p, const SessionStats& stats, bool zeros = false);
// "(N probes with no hits not shown; --zeros shows them)", "" for 0: the line of trace's
// summary and of count, hist and latency for the probes they left out.
std::string hiddenProbesNote(std::size_t hidden);
// "warning: ..." describing every loss, or "" when nothing was lost.
std::string lossWarning(const SessionStats& stats);

// `probectl list`: text table ID KIND LOCATION ADDRESS OWNER PERSISTENT ENABLED HITS
// NMISSED DROPPED FILTERED REJECTED SPEC (as written: `uprobe:libc:malloc size=$arg1`), or
// {"type":"list","probes":[...]}. KIND is "syscall" for PROBECTL_PROBE_F_SYSCALL kprobes. OWNER is
// PID/COMM (netstat -p's form) for the owners found in `owners` (by port id), else the socket's
// port id; "persistent" for a persistent probe.
using ProbeOwners = std::map<std::uint32_t, ProbeOwner>;
void printProbeList(Printer& p, const std::vector<ProbeInfo>& probes,
                    const ProbeOwners& owners = {});

// Text/JSON of one event, summary or list, as a string or on a stream (tests).
std::string formatEvent(const Event& ev, std::uint64_t t0_ns);
std::string formatEventJson(const Event& ev);
std::string formatSummaryJson(const SessionStats& stats);
std::string formatTraceEvent(const Event& ev, std::uint64_t t0_ns, const TraceLayout& layout);
std::string eventHeader();
void printSummary(std::ostream& os, const SessionStats& stats, bool zeros = false);
void printProbeList(std::ostream& os, const std::vector<ProbeInfo>& probes, bool json = false,
                    const ProbeOwners& owners = {});

// CLOCK_MONOTONIC now, ns: the clock of Event::timestamp_ns.
std::uint64_t monotonicNs();

}  // namespace probectl::cli
