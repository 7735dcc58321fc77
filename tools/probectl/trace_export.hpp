// trace --format chrome|perfetto|ctf (and record's binary): events go to a trace file
// writer (probectl/trace_export.hpp) instead of the printer; the summary table goes to
// stderr. Shared by both backends' trace drivers.
#pragma once

#include <memory>
#include <optional>

#include "format.hpp"
#include "probectl/trace_export.hpp"
#include "subcommands.hpp"

namespace probectl::cli {

// What a recording stores of how trace prints (strace lines, pid prefix), so that report
// prints the same.
std::uint32_t recordingFlags(const TraceLayout& layout);
TraceLayout recordingLayout(std::uint32_t flags);

class TraceExport {
  public:
    // A writer for o.format into o.output; an empty TraceExport for text and json.
    static Result<TraceExport> open(const TraceOptions& o);
    static bool isExportFormat(std::string_view format);

    explicit operator bool() const { return writer_ != nullptr; }
    void begin(std::uint64_t t0_ns);
    // Errors (a full disk) are kept, the first one reported by finish().
    void event(const Event& ev);
    void flush();
    // Ends the file and prints the summary to io.err; a runtime error's exit code, or 0.
    int finish(Io& io, const char* cmd, const SessionStats& stats);

  private:
    void keep(Result<void> r);
    std::unique_ptr<TraceWriter> writer_;
    std::optional<Error> error_;
};

}  // namespace probectl::cli
