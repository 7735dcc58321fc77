#include "trace_sink.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <cerrno>
#include <ext/stdio_filebuf.h>
#include <optional>

#include "probectl/recording.hpp"

namespace probectl::cli {

namespace {

constexpr std::uint32_t kFlagStrace = 1, kFlagPidPrefix = 2;
constexpr std::size_t kFileBuffer = 256 * 1024;

std::uint32_t recordingFlags(const TraceLayout& layout) {
    return (layout.strace ? kFlagStrace : 0) | (layout.pid_prefix ? kFlagPidPrefix : 0);
}

// text, json: the printer, on stdout or on a file this sink owns.
class PrinterSink : public TraceSink {
  public:
    PrinterSink(const TraceLayout& layout, Io& io)
        : layout_(layout),
          io_(io),
          out_(layout.on_stderr ? &io.err : &io.out),
          name_(layout.on_stderr ? kStandardError : kStandardOutput) {}

    Result<void> open(const std::string& path) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return makeError(errno, fmt::format("cannot write {}", path));
        // The driver flushes once per batch of events: one write each, not one per 8 KiB.
        filebuf_.emplace(fd, std::ios::out, kFileBuffer);
        file_.emplace(&*filebuf_);
        out_ = &*file_;
        name_ = path;
        return {};
    }
    void begin(std::uint64_t t0_ns, const TraceClocks&) override {
        printer_.emplace(layout_, t0_ns, *out_, io_.err);
        if (kernel_stack_)
            printer_->setKernelStacks(kernel_stack_);
        if (user_snapshot_)
            printer_->setUserSnapshots(user_snapshot_);
        printer_->header();
    }
    void setKernelStacks(
        std::function<const std::vector<std::string>*(std::uint32_t, std::uint32_t)> f) override {
        kernel_stack_ = std::move(f);
    }
    void setUserSnapshots(decltype(EventFormat::user_snapshot) f) override {
        user_snapshot_ = std::move(f);
    }
    void event(const Event& ev) override { printer_->event(ev); }
    void flush() override {
        errno = 0;
        if (printer_)
            printer_->flush();
        noteWriteError();
    }
    Result<void> finish(const SessionStats* stats) override {
        if (!printer_)
            begin(0, {});
        if (stats)
            printer_->summary(*stats);
        errno = 0;
        printer_->flush();
        out_->flush();
        noteWriteError();
        if (write_errno_)
            return makeError(write_errno_, fmt::format("cannot write {}", name_));
        return {};
    }

  private:
    // The errno of the write that first failed, taken at once: by the end it is long gone.
    void noteWriteError() {
        if (!*out_ && !write_errno_)
            write_errno_ = errno ? errno : EIO;
    }

    TraceLayout layout_;
    Io& io_;
    std::optional<__gnu_cxx::stdio_filebuf<char>> filebuf_;
    std::optional<std::ostream> file_;
    std::ostream* out_;
    std::optional<TracePrinter> printer_;
    std::string name_;
    int write_errno_ = 0;
    std::function<const std::vector<std::string>*(std::uint32_t, std::uint32_t)> kernel_stack_;
    decltype(EventFormat::user_snapshot) user_snapshot_;
};

// chrome, perfetto, ctf, record: a TraceWriter; the counters table on `summary`, if any.
class WriterSink : public TraceSink {
  public:
    WriterSink(std::unique_ptr<TraceWriter> writer, std::ostream* summary)
        : writer_(std::move(writer)), summary_(summary) {}

    void begin(std::uint64_t t0_ns, const TraceClocks& clocks) override {
        keep(writer_->begin(t0_ns, clocks));
    }
    void event(const Event& ev) override {
        if (!error_)
            keep(writer_->event(ev));
    }
    void flush() override {
        if (!error_)
            keep(writer_->flush());
    }
    Result<void> finish(const SessionStats* stats) override {
        const SessionStats none;
        if (!error_)
            keep(writer_->finish(stats ? *stats : none));
        if (summary_ && stats)
            printSummary(*summary_, *stats);
        if (error_)
            return *error_;
        return {};
    }

  private:
    void keep(Result<void> r) {
        if (!r && !error_)
            error_ = r.error();
    }
    std::unique_ptr<TraceWriter> writer_;
    std::ostream* summary_;
    std::optional<Error> error_;
};

}  // namespace

bool isFileFormat(std::string_view format) {
    return isTraceExportFormat(format) || format == "record";
}

TraceLayout recordingLayout(std::uint32_t flags) {
    TraceLayout l;
    l.strace = flags & kFlagStrace;
    l.pid_prefix = flags & kFlagPidPrefix;
    return l;
}

Result<std::unique_ptr<TraceSink>> openTraceSink(std::string_view format, const std::string& output,
                                                 const TraceLayout& layout, Io& io,
                                                 std::ostream* writer_summary) {
    if (isFileFormat(format)) {
        auto w = format == "record" ? recordingWriter(output, recordingFlags(layout))
                                    : openTraceWriter(format, output);
        if (!w)
            return std::move(w).error();
        return std::unique_ptr<TraceSink>(new WriterSink(std::move(*w), writer_summary));
    }
    TraceLayout l = layout;
    l.json = format == "json";
    l.strace = l.strace && !l.json;  // JSON Lines have no strace form
    auto sink = std::make_unique<PrinterSink>(l, io);
    if (!output.empty())
        if (auto r = sink->open(output); !r)
            return std::move(r).error();
    return std::unique_ptr<TraceSink>(std::move(sink));
}

}  // namespace probectl::cli
