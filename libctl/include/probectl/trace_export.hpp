// Trace files for timeline viewers and trace analysers, written while a trace runs:
//   chrome:   the Chrome trace-event JSON ({"traceEvents": [...]}; chrome://tracing, Perfetto)
//   perfetto: Perfetto's protobuf trace (TracePacket stream; ui.perfetto.dev, trace_processor),
//             the fields used are listed in Documentation/perfetto_trace.proto
//   ctf:      a CTF 1.8 trace directory (TSDL metadata, one stream file per CPU; babeltrace2)
// Every writer streams: memory is bounded by the number of distinct probes, threads and
// (capped) interned strings, never by the number of events.
//
// How an event maps: a return event (kretprobe, uretprobe, a syscall's return) is a slice
// from timestamp - latency to timestamp on its thread's track, named by the probe's location
// (the spec without its fetch arguments), with the fetched values (or the six argument
// registers), the return value and the latency as arguments; any other event is an instant.
// Drops are counters at the end (per probe, and the session's lost records). Counter tracks
// of the caller's own (count, hist and latency read-outs) go through counter().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "probectl/event.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Clock readings taken together when a trace starts: what the writers need to place
// CLOCK_MONOTONIC timestamps on the viewers' clocks (Perfetto's BOOTTIME, CTF's offset).
struct TraceClocks {
    std::uint64_t monotonic_ns = 0;
    std::uint64_t boottime_ns = 0;
    std::uint64_t realtime_ns = 0;
    static TraceClocks now();
};

class TraceWriter {
  public:
    virtual ~TraceWriter() = default;
    // The first call, once: t0 is the trace's time 0 (CLOCK_MONOTONIC ns).
    virtual Result<void> begin(std::uint64_t t0_ns, const TraceClocks& clocks) = 0;
    virtual Result<void> event(const Event& ev) = 0;
    // One sample of the counter track named `track` (described at its first sample) at
    // ts_ns (CLOCK_MONOTONIC): the value holds until the track's next sample. Samples come
    // in time order. ENOTSUP from a format without counter tracks (ctf).
    virtual Result<void> counter(std::string_view track, std::uint64_t ts_ns, std::int64_t value);
    // Pushes what is buffered to the file (called between polls; a no-op where the format
    // is only readable once finished).
    virtual Result<void> flush() { return {}; }
    // The last call: counters, closing brackets, metadata.
    virtual Result<void> finish(const SessionStats& stats) = 0;
};

// Formats a writer exists for: "chrome", "perfetto", "ctf" ("record": recording.hpp).
bool isTraceExportFormat(std::string_view format);
// A writer of `format` into `path` (a file; a directory for ctf, created, must not exist
// or be empty). Errors: EINVAL for an unknown format, errno from creating the output.
Result<std::unique_ptr<TraceWriter>> openTraceWriter(std::string_view format,
                                                     const std::string& path);

// The writers on a stream (chrome, perfetto) or a directory (ctf), for tests and report.
std::unique_ptr<TraceWriter> chromeTraceWriter(std::ostream& out);
std::unique_ptr<TraceWriter> perfettoTraceWriter(std::ostream& out);
Result<std::unique_ptr<TraceWriter>> ctfTraceWriter(const std::string& dir);

}  // namespace probectl
#pragma GCC visibility pop
