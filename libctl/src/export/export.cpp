#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>

#include <cerrno>
#include <ext/stdio_filebuf.h>
#include <ostream>

#include "probectl/trace_export.hpp"

namespace probectl {

namespace {

std::uint64_t clockNs(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

// A stream writer that owns its file. O_CLOEXEC: a traced command must not inherit it.
class FileTraceWriter final : public TraceWriter {
  public:
    FileTraceWriter(int fd, std::string_view format)
        : buf_(fd, std::ios::out, 1 << 16),
          out_(&buf_),
          inner_(format == "chrome" ? chromeTraceWriter(out_) : perfettoTraceWriter(out_)) {}
    Result<void> begin(std::uint64_t t0, const TraceClocks& c) override {
        return inner_->begin(t0, c);
    }
    Result<void> event(const Event& ev) override { return inner_->event(ev); }
    Result<void> counter(std::string_view track, std::uint64_t ts, std::int64_t v) override {
        return inner_->counter(track, ts, v);
    }
    Result<void> flush() override { return inner_->flush(); }
    Result<void> finish(const SessionStats& s) override { return inner_->finish(s); }

  private:
    __gnu_cxx::stdio_filebuf<char> buf_;
    std::ostream out_;
    std::unique_ptr<TraceWriter> inner_;
};

}  // namespace

Result<void> TraceWriter::counter(std::string_view track, std::uint64_t, std::int64_t) {
    return makeError(ENOTSUP,
                     fmt::format("this trace format has no counter tracks (for '{}')", track));
}

TraceClocks TraceClocks::now() {
    TraceClocks c;
    c.monotonic_ns = clockNs(CLOCK_MONOTONIC);
    c.boottime_ns = clockNs(CLOCK_BOOTTIME);
    c.realtime_ns = clockNs(CLOCK_REALTIME);
    return c;
}

bool isTraceExportFormat(std::string_view format) {
    return format == "chrome" || format == "perfetto" || format == "ctf";
}

Result<std::unique_ptr<TraceWriter>> openTraceWriter(std::string_view format,
                                                     const std::string& path) {
    if (format == "ctf")
        return ctfTraceWriter(path);
    if (!isTraceExportFormat(format))
        return makeError(EINVAL, fmt::format("no trace writer for format '{}'", format));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot write {}", path));
    return std::unique_ptr<TraceWriter>(std::make_unique<FileTraceWriter>(fd, format));
}

}  // namespace probectl
