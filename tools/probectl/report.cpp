// probectl report FILE: a recording (probectl record, trace --format record) printed as
// trace would have printed it, or converted into a trace file (chrome, perfetto, ctf).
#include <fcntl.h>
#include <fmt/format.h>

#include <ext/stdio_filebuf.h>
#include <iostream>
#include <optional>

#include "probectl/recording.hpp"
#include "subcommands.hpp"
#include "trace_export.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "report";
}  // namespace

po::options_description reportOptionsDescription(ReportOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default), json, chrome, perfetto or ctf, as trace --format")
        ("output,o", po::value<std::string>(o ? &o->output : nullptr)->value_name("FILE"),
         "write to FILE (a directory for ctf) instead of stdout");
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
        return usageError(io, kCmd, r.error());
    if (!*r) {
        printHelp(*findCommand(kCmd), io.out);
        return kExitOk;
    }
    o.file = **r;
    const bool to_file = TraceExport::isExportFormat(o.format) && o.format != "record";
    if (o.format != "text" && o.format != "json" && !to_file)
        return usageError(io, kCmd,
                          UsageError{fmt::format("--format must be text, json, chrome, "
                                                 "perfetto or ctf, not '{}'",
                                                 o.format)});
    if (to_file && o.output.empty())
        return usageError(io, kCmd,
                          UsageError{fmt::format("--format {} writes a file: give -o", o.format)});

    auto rec = RecordingReader::open(o.file);
    if (!rec)
        return runtimeError(io, kCmd, rec.error());
    const RecordingInfo& info = rec->info();

    std::unique_ptr<TraceWriter> writer;
    std::optional<__gnu_cxx::stdio_filebuf<char>> filebuf;
    std::optional<std::ostream> file;
    std::ostream* out = &io.out;
    if (to_file) {
        auto w = openTraceWriter(o.format, o.output);
        if (!w)
            return runtimeError(io, kCmd, w.error());
        writer = std::move(*w);
    } else if (!o.output.empty()) {
        const int fd = ::open(o.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return runtimeError(io, kCmd,
                                makeError(errno, fmt::format("cannot write {}", o.output)));
        filebuf.emplace(fd, std::ios::out);
        file.emplace(&*filebuf);
        out = &*file;
    }
    TraceLayout layout = recordingLayout(info.flags);
    layout.json = o.format == "json";
    if (layout.json)
        layout.strace = false;

    std::optional<Error> failed;
    auto keep = [&](Result<void> res) {
        if (!res && !failed)
            failed = res.error();
    };
    if (writer)
        keep(writer->begin(info.t0_ns, info.clocks));
    else if (!layout.json && !layout.strace)
        *out << eventHeader() << '\n';
    Event ev;
    while (!failed && rec->next(ev)) {
        if (writer)
            keep(writer->event(ev));
        else
            *out << formatTraceEvent(ev, info.t0_ns, layout) << '\n';
    }
    // A recording cut short has no summary: the counters of what it holds stand in.
    const SessionStats stats = rec->summary().value_or(SessionStats{});
    if (writer) {
        if (!failed)
            keep(writer->finish(stats));
    } else if (rec->summary()) {
        if (layout.json) {
            *out << formatSummaryJson(stats) << '\n';
        } else if (layout.strace) {
            out->flush();
            printSummary(io.err, stats);
        } else {
            *out << '\n';
            printSummary(*out, stats);
        }
    }
    out->flush();
    if (!rec->note().empty())
        io.err << fmt::format("note: {}: {}\n", o.file, rec->note());
    if (failed)
        return runtimeError(io, kCmd, *failed);
    if (rec->summary())
        if (auto w = lossWarning(stats); !w.empty())
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
    return runTrace(a, io);
}

}  // namespace probectl::cli
