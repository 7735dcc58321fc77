// Where a trace's events go, chosen by --format: the printer (text, json; TracePrinter) or a
// trace file writer (chrome, perfetto, ctf: probectl/trace_export.hpp; record:
// probectl/recording.hpp). The trace driver feeds one the same way for every backend, and
// `report` feeds one from a recording.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "format.hpp"
#include "probectl/event.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"
#include "probectl/trace_export.hpp"

namespace probectl::cli {

class TraceSink {
  public:
    virtual ~TraceSink() = default;
    // Once, before the first event: t0 is the trace's time 0 (CLOCK_MONOTONIC ns).
    virtual void begin(std::uint64_t t0_ns, const TraceClocks& clocks) = 0;
    virtual void event(const Event& ev) = 0;
    // A traced thread ended (Tracer::watchTaskEnds): strace's "+++ exited with N +++" line in
    // its layout; nothing elsewhere.
    virtual void taskEnd(const TaskEnd&) {}
    // Before begin(): print an event's `kstack` value as its stack (EventFormat::kernel_stack).
    // Only the printer (text, json) prints stacks.
    virtual void setKernelStacks(
        std::function<const std::vector<std::string>*(std::uint32_t, std::uint32_t)>) {}
    // Before begin(): unwind an event's `ustack` snapshot (EventFormat::user_snapshot).
    virtual void setUserSnapshots(decltype(EventFormat::user_snapshot)) {}
    // Between polls: what is buffered goes out.
    virtual void flush() = 0;
    // The end: the counters (null when there are none, as in a recording cut short). A
    // writer's first error (a full disk) is kept until here; events after it are dropped, and
    // the -o output, incomplete, is removed (the error says so).
    virtual Result<void> finish(const SessionStats* stats) = 0;
    // Instead of finish(), when the input failed (a damaged recording): what was printed on
    // a stream stays, an -o output (incomplete) is removed. Returns `e`, saying the removal.
    virtual Error abandon(const Error& e) = 0;
    // The first failed write so far, naming the output: the driver stops the trace on it.
    virtual std::optional<Error> writeError() const = 0;
};

// The formats that write a file (or, ctf, a directory) rather than lines: need -o.
bool isFileFormat(std::string_view format);

// A sink for `format` (text, json, chrome, perfetto, ctf, record) into `output`, a path
// ("" = io.out, or io.err with layout.on_stderr; "-" = io.out; text and json only; opened O_CLOEXEC
// so a traced command does not inherit it). Text and json print with `layout` (its json flag is the
// format's); a writer puts the summary table on `writer_summary` when given. A recording stores the
// layout for report.
Result<std::unique_ptr<TraceSink>> openTraceSink(std::string_view format, const std::string& output,
                                                 const TraceLayout& layout, Io& io,
                                                 std::ostream* writer_summary);

// The layout a recording stored (openTraceSink's record format).
TraceLayout recordingLayout(std::uint32_t flags);

}  // namespace probectl::cli
