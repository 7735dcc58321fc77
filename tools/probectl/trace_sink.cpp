#include "trace_sink.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>

#include "output_file.hpp"
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
        // The driver flushes once per batch of events: one write each, not one per 8 KiB.
        if (auto r = file_.open(path, kFileBuffer); !r)
            return r;
        out_ = &file_.stream();
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
    void taskEnd(const TaskEnd& end) override { printer_->taskEnd(end); }
    void flush() override {
        errno = 0;
        if (printer_)
            printer_->flush();
        noteWriteError();
    }
    Result<void> finish(const SessionStats* stats) override {
        if (!printer_)
            begin(0, {});
        errno = 0;
        printer_->flush();
        noteWriteError();
        // The counters are not lost with the output that failed: they go to stderr.
        const bool failed = write_errno_ != 0;
        if (stats && !failed)
            printer_->summary(*stats);
        errno = 0;
        printer_->flush();
        out_->flush();
        noteWriteError();
        if (stats && write_errno_ && out_ != &io_.err && (failed || !layout_.strace))
            printSummary(io_.err, *stats, layout_.zeros);
        if (!write_errno_)
            return {};
        if (!file_.isOpen())
            return *writeError();
        printer_.reset();
        return file_.discard(*writeError());
    }
    Error abandon(const Error& e) override {
        if (printer_)
            printer_->flush();
        out_->flush();
        if (!file_.isOpen())
            return e;
        printer_.reset();
        return file_.discard(e);
    }
    std::optional<Error> writeError() const override {
        if (!write_errno_)
            return std::nullopt;
        return makeError(write_errno_, fmt::format("cannot write {}", name_));
    }

  private:
    // The errno of the write that first failed, taken at once: by the end it is long gone.
    // A write through FdOutBuf (a file, std::cout) keeps its own, however long ago it was.
    void noteWriteError() {
        if (!write_errno_)
            write_errno_ = streamErrno(*out_);
    }

    TraceLayout layout_;
    Io& io_;
    OutputFile file_;
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
    WriterSink(std::unique_ptr<TraceWriter> writer, std::ostream* summary, bool zeros,
               std::string path, bool ctf, bool dir_existed)
        : writer_(std::move(writer)),
          summary_(summary),
          zeros_(zeros),
          path_(std::move(path)),
          ctf_(ctf),
          dir_existed_(dir_existed) {}

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
            printSummary(*summary_, *stats, zeros_);
        if (!error_)
            return {};
        writer_.reset();  // its files closed before they are removed
        return removeIncomplete(*error_, path_, ctf_, dir_existed_);
    }
    Error abandon(const Error& e) override {
        writer_.reset();  // its files closed before they are removed
        return removeIncomplete(e, path_, ctf_, dir_existed_);
    }
    std::optional<Error> writeError() const override { return error_; }

  private:
    void keep(Result<void> r) {
        if (!r && !error_)
            error_ = r.error();
    }
    std::unique_ptr<TraceWriter> writer_;
    std::ostream* summary_;
    bool zeros_;
    std::string path_;
    bool ctf_, dir_existed_;
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
        struct stat st {};
        const bool dir_existed = ::stat(output.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        auto w = format == "record" ? recordingWriter(output, recordingFlags(layout))
                                    : openTraceWriter(format, output);
        if (!w)
            return std::move(w).error();
        return std::unique_ptr<TraceSink>(new WriterSink(
            std::move(*w), writer_summary, layout.zeros, output, format == "ctf", dir_existed));
    }
    TraceLayout l = layout;
    l.json = format == "json";
    l.strace = l.strace && !l.json;  // JSON Lines have no strace form
    auto sink = std::make_unique<PrinterSink>(l, io);
    // -o -: standard output, even with -- CMD.
    if (!output.empty() && !isStandardOutputName(output))
        if (auto r = sink->open(output); !r)
            return std::move(r).error();
    return std::unique_ptr<TraceSink>(std::move(sink));
}

}  // namespace probectl::cli
