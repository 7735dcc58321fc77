#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>

#include <cerrno>
#include <ostream>
#include <streambuf>
#include <vector>

#include <unistd.h>

#include "probectl/trace_export.hpp"

namespace probectl {

namespace {

std::uint64_t clockNs(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

// The file of a stream writer: write(2) through a buffer, keeping the errno of the first
// write that failed (a std::filebuf's failbit keeps none: a full disk said "Input/output
// error").
class FdFileBuf final : public std::streambuf {
  public:
    FdFileBuf(int fd, std::size_t size) : fd_(fd), buf_(size) {
        setp(buf_.data(), buf_.data() + buf_.size());
    }
    ~FdFileBuf() override {
        sync();
        ::close(fd_);
    }
    FdFileBuf(const FdFileBuf&) = delete;
    FdFileBuf& operator=(const FdFileBuf&) = delete;
    int error() const { return err_; }

  protected:
    int_type overflow(int_type c) override {
        if (sync() != 0)
            return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override {
        const char* p = pbase();
        while (!err_ && p < pptr()) {
            const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                err_ = n < 0 ? errno : EIO;
            else
                p += n;
        }
        setp(buf_.data(), buf_.data() + buf_.size());
        return err_ ? -1 : 0;
    }

  private:
    int fd_;
    int err_ = 0;
    std::vector<char> buf_;
};

// A stream writer that owns its file. O_CLOEXEC: a traced command must not inherit it. Its
// errors name the file and the failed write's errno.
class FileTraceWriter final : public TraceWriter {
  public:
    FileTraceWriter(int fd, std::string_view format, std::string path)
        : buf_(fd, 1 << 16),
          out_(&buf_),
          inner_(format == "chrome" ? chromeTraceWriter(out_) : perfettoTraceWriter(out_)),
          path_(std::move(path)) {}
    Result<void> begin(std::uint64_t t0, const TraceClocks& c) override {
        return named(inner_->begin(t0, c));
    }
    Result<void> event(const Event& ev) override { return named(inner_->event(ev)); }
    Result<void> counter(std::string_view track, std::uint64_t ts, std::int64_t v) override {
        return named(inner_->counter(track, ts, v));
    }
    Result<void> flush() override { return named(inner_->flush()); }
    Result<void> finish(const SessionStats& s) override { return named(inner_->finish(s)); }

  private:
    Result<void> named(Result<void> r) const {
        if (r || !buf_.error())
            return r;
        return makeError(buf_.error(), fmt::format("cannot write {}", path_));
    }
    FdFileBuf buf_;
    std::ostream out_;
    std::unique_ptr<TraceWriter> inner_;
    std::string path_;
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
    return std::unique_ptr<TraceWriter>(std::make_unique<FileTraceWriter>(fd, format, path));
}

}  // namespace probectl
