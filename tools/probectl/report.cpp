// probectl report FILE: a recording (probectl record, trace --format record) printed as
// trace would have printed it, or converted into a trace file (chrome, perfetto, ctf).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <ostream>

#include "output_file.hpp"
#include "probectl/recording.hpp"
#include "subcommands.hpp"
#include "trace_sink.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kReportCmd = "report";

// A conversion's progress on a terminal: one line rewritten in place whenever another
// percent of the file is read, erased at the end so that only the report's own output and
// notes stay. Written only when stderr is a terminal (never into a pipe or a log).
class Progress {
  public:
    Progress(std::ostream& err, bool shown, const std::string& file) : err_(err), shown_(shown) {
        struct stat st {};
        if (shown_ && ::stat(file.c_str(), &st) == 0 && st.st_size > 0)
            size_ = static_cast<std::uint64_t>(st.st_size);
        else
            shown_ = false;
    }
    // `last`: the final count, shown even when the percentage has not moved.
    void update(std::uint64_t offset, std::uint64_t events, bool last = false) {
        if (!shown_)
            return;
        const auto pct = static_cast<int>(std::min<std::uint64_t>(offset, size_) * 100 / size_);
        if (pct == last_pct_ && !last)
            return;
        last_pct_ = pct;
        err_ << fmt::format("\r\x1b[Kreport: {:3}%  {:.1f} of {:.1f} MiB, {} events", pct,
                            static_cast<double>(offset) / (1 << 20),
                            static_cast<double>(size_) / (1 << 20), events)
             << std::flush;
    }
    void done() {
        if (shown_ && last_pct_ >= 0)
            err_ << "\r\x1b[K" << std::flush;
        shown_ = false;
    }

  private:
    std::ostream& err_;
    bool shown_;
    std::uint64_t size_ = 0;
    int last_pct_ = -1;
};

}  // namespace

po::options_description reportOptionsDescription(ReportOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default), json, chrome, perfetto or ctf, as trace --format")
        ("output,o", po::value<std::string>(o ? &o->output : nullptr)->value_name("FILE"),
         "write to FILE (a directory for ctf; '-' is stdout for text and json) instead of "
         "stdout; a write to it that fails (a full disk) removes FILE, incomplete")
        ("zeros", po::bool_switch(o ? &o->zeros : nullptr),
         "also list the probes with no hits in the summary, as trace --zeros");
    // clang-format on
    return d;
}

int runReport(const std::vector<std::string>& args, Io& io) {
    ReportOptions o;
    auto desc = reportOptionsDescription(&o);
    po::variables_map vm;
    auto r = parseOnePositional(args, desc, "file", "recording",
                                "give one recording (probectl report FILE)", vm);
    if (!r)
        return usageError(io, kReportCmd, r.error());
    if (!*r) {
        printHelp(*findCommand(kReportCmd), io.out);
        return kExitOk;
    }
    o.file = **r;
    if (o.file.empty())
        return usageError(io, kReportCmd,
                          UsageError{"'' is not a file name: give the recording (probectl report "
                                     "FILE)"});
    const bool known = o.format == "text" || o.format == "json";
    if (!known && (!isFileFormat(o.format) || o.format == "record"))
        return usageError(io, kReportCmd,
                          UsageError{fmt::format("--format must be text, json, chrome, "
                                                 "perfetto or ctf, not '{}'",
                                                 o.format)});
    if (!known && o.output.empty())
        return usageError(io, kReportCmd,
                          UsageError{fmt::format("--format {} writes a file: give -o", o.format)});
    if (auto e = emptyOutputError(vm))
        return usageError(io, kReportCmd, *e);
    if (!known && isStandardOutputName(o.output))
        return usageError(io, kReportCmd,
                          UsageError{fmt::format("-o -: --format {} is written to a file, not to "
                                                 "standard output: give a file name (./- for "
                                                 "one named '-')",
                                                 o.format)});

    // Opening the output truncates it: never the recording being read.
    struct stat in {
    }, out{};
    const bool to_file = !o.output.empty() && !isStandardOutputName(o.output);
    if (to_file && ::stat(o.file.c_str(), &in) == 0 && ::stat(o.output.c_str(), &out) == 0 &&
        in.st_dev == out.st_dev && in.st_ino == out.st_ino)
        return usageError(io, kReportCmd,
                          UsageError{fmt::format("-o {} is the recording being read: write the "
                                                 "report to another file",
                                                 o.output)});
    auto rec = RecordingReader::open(o.file);
    if (!rec)
        return runtimeError(io, kReportCmd, rec.error());
    const RecordingInfo& info = rec->info();
    // A recording cut short before its first event (the recorder killed at once) holds
    // nothing to report: an error naming the file, not an empty report (count --from
    // refuses it too). Read before any output is written.
    Event ev;
    const bool first = rec->next(ev);
    if (!first && !rec->damaged() && !rec->summary())
        return runtimeError(
            io, kReportCmd,
            makeError(
                0, rec->note().empty()
                       ? fmt::format("{}: the recording holds no event and no summary", o.file)
                       : fmt::format("{}: {}: it holds no event to report", o.file, rec->note())));
    TraceLayout layout = recordingLayout(info.flags);
    layout.zeros = o.zeros;
    auto sink = openTraceSink(o.format, o.output, layout, io, nullptr);
    if (!sink)
        return runtimeError(io, kReportCmd, sink.error());

    (*sink)->begin(info.t0_ns, info.clocks);
    // Not over the report itself when both go to the terminal: there it is its own progress.
    Progress progress(io.err, io.err_is_tty && (to_file || !io.out_is_tty), o.file);
    std::uint64_t events = 0;
    progress.update(rec->offset(), events);
    for (bool more = first; more; more = rec->next(ev)) {
        (*sink)->event(ev);
        // The offset moves a block (up to 64 KiB) at a time: checking it is cheap.
        if (++events % 4096 == 0)
            progress.update(rec->offset(), events);
    }
    progress.update(rec->offset(), events, true);
    progress.done();
    // Damage is an error, and an -o output of what came before it is incomplete: removed. A
    // recording cut short (the tracer was killed) is what there is.
    if (rec->damaged())
        return runtimeError(
            io, kReportCmd,
            (*sink)->abandon(makeError(EBADMSG, fmt::format("{}: {}", o.file, rec->note()))));
    // A recording cut short has no summary.
    const auto& stats = rec->summary();
    auto done = (*sink)->finish(stats ? &*stats : nullptr);
    if (!rec->note().empty())
        io.err << fmt::format("note: {}: {}\n", o.file, rec->note());
    if (!done)
        return runtimeError(io, kReportCmd, done.error());
    if (stats)
        if (auto w = lossWarning(*stats); !w.empty())
            io.err << w << '\n';
    return kExitOk;
}

int runRecord(const std::vector<std::string>& args, Io& io) {
    // record is trace with its events recorded: the options before any "--" get
    // --format record (trace's parser rejects a second --format).
    std::vector<std::string> a = {"--format", "record"};
    a.insert(a.end(), args.begin(), args.end());
    for (const auto& s : args) {
        if (s == "--")
            break;
        if (s == "-h" || s == "--help") {
            printHelp(*findCommand("record"), io.out);
            return kExitOk;
        }
        if (s == "--format" || s.rfind("--format=", 0) == 0)
            return usageError(io, "record",
                              UsageError{"record writes its own format: convert with "
                                         "'probectl report FILE --format ...'"});
    }
    return runTraceAs(a, io, "record");
}

}  // namespace probectl::cli
