#include "trace_export.hpp"

#include <ostream>

#include "probectl/recording.hpp"

namespace probectl::cli {

namespace {
constexpr std::uint32_t kFlagStrace = 1, kFlagPidPrefix = 2;
}  // namespace

std::uint32_t recordingFlags(const TraceLayout& layout) {
    return (layout.strace ? kFlagStrace : 0) | (layout.pid_prefix ? kFlagPidPrefix : 0);
}

TraceLayout recordingLayout(std::uint32_t flags) {
    TraceLayout l;
    l.strace = flags & kFlagStrace;
    l.pid_prefix = flags & kFlagPidPrefix;
    return l;
}

bool TraceExport::isExportFormat(std::string_view format) {
    return isTraceExportFormat(format) || format == "record";
}

Result<TraceExport> TraceExport::open(const TraceOptions& o) {
    TraceExport e;
    if (!isExportFormat(o.format))
        return e;
    auto w = o.format == "record" ? recordingWriter(o.output, recordingFlags(o.layout()))
                                  : openTraceWriter(o.format, o.output);
    if (!w)
        return std::move(w).error();
    e.writer_ = std::move(*w);
    return e;
}

void TraceExport::keep(Result<void> r) {
    if (!r && !error_)
        error_ = r.error();
}

void TraceExport::begin(std::uint64_t t0_ns) {
    keep(writer_->begin(t0_ns, TraceClocks::now()));
}

void TraceExport::event(const Event& ev) {
    if (!error_)
        keep(writer_->event(ev));
}

void TraceExport::flush() {
    if (!error_)
        keep(writer_->flush());
}

int TraceExport::finish(Io& io, const char* cmd, const SessionStats& stats) {
    if (!error_)
        keep(writer_->finish(stats));
    printSummary(io.err, stats);
    if (error_)
        return runtimeError(io, cmd, *error_);
    return kExitOk;
}

}  // namespace probectl::cli
