// The Chrome trace-event format ("Trace Event Format", the JSON Object Format): one object
// per line in "traceEvents"; X (complete) for slices, i (instant, thread scope) for other
// events, M (metadata) for process and thread names, C (counter) for drops, calls that
// never returned and the caller's counter tracks (one series, "value", per track name). ts and dur
// are microseconds with three decimals, so no nanosecond is lost.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <ostream>

#include "export/export_fields.hpp"
#include "export/stream_writer.hpp"
#include "export/thread_names.hpp"
#include "output/json_text.hpp"
#include "probectl/trace_export.hpp"

namespace probectl {

namespace {

using exporter::Field;
using json::appendJsonMember;
using json::appendJsonString;

void appendMicros(std::string& out, std::uint64_t ns) {
    fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

class ChromeWriter final : public exporter::StreamTraceWriter {
  public:
    explicit ChromeWriter(std::ostream& out) : StreamTraceWriter(out) {}

    Result<void> begin(std::uint64_t t0_ns, const TraceClocks&) override {
        t_first_ = t_last_ = t0_ns;
        buf_.clear();
        fmt::format_to(std::back_inserter(buf_),
                       "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"probectl\","
                       "\"clock\":\"CLOCK_MONOTONIC\",\"t0_ns\":{}}},\"traceEvents\":[",
                       t0_ns);
        metadata("process_name", exporter::kCountersPid, exporter::kCountersPid, "probectl");
        return write();
    }

    Result<void> event(const Event& ev) override {
        buf_.clear();
        const auto seen = names_.see(ev);
        if (seen.name_process)
            metadata("process_name", ev.tgid, ev.tgid, ev.comm);
        if (seen.name_thread)
            metadata("thread_name", ev.tgid, ev.pid, ev.comm);
        const bool slice = exporter::isSlice(ev);
        const std::uint64_t start = slice ? exporter::sliceStart(ev) : ev.timestamp_ns;
        t_last_ = std::max(t_last_, ev.timestamp_ns);
        t_first_ = seen_event_ ? std::min(t_first_, start) : start;
        seen_event_ = true;
        next();
        buf_ += "{\"name\":";
        appendJsonString(buf_, exporter::eventName(ev, name_scratch_));
        buf_ += ",\"cat\":";
        appendJsonString(buf_, exporter::eventKind(ev));
        buf_ += slice ? ",\"ph\":\"X\",\"ts\":" : ",\"ph\":\"i\",\"s\":\"t\",\"ts\":";
        appendMicros(buf_, start);
        if (slice) {
            buf_ += ",\"dur\":";
            appendMicros(buf_, ev.latency_ns);
        }
        fmt::format_to(std::back_inserter(buf_), ",\"pid\":{},\"tid\":{},\"args\":{{", ev.tgid,
                       ev.pid);
        bool first = true;
        exporter::forEachField(ev, field_scratch_, [&](const Field& f) {
            if (!first)
                buf_ += ',';
            first = false;
            if (f.kind == Field::Kind::String) {
                appendJsonMember(buf_, f.name, f.str);
                return;
            }
            appendJsonString(buf_, f.name);
            buf_ += ':';
            appendValue(f);
        });
        fmt::format_to(std::back_inserter(buf_), "}},\"cpu\":{}}}", ev.cpu);
        return write();
    }

    Result<void> counter(std::string_view track, std::uint64_t ts, std::int64_t v) override {
        buf_.clear();
        t_last_ = std::max(t_last_, ts);
        next();
        buf_ += "{\"name\":";
        appendJsonString(buf_, track);
        buf_ += ",\"ph\":\"C\",\"ts\":";
        appendMicros(buf_, ts);
        fmt::format_to(std::back_inserter(buf_), ",\"pid\":{},\"args\":{{\"value\":{}}}}}",
                       exporter::kCountersPid, v);
        return write();
    }

    Result<void> finish(const SessionStats& stats) override {
        buf_.clear();
        // Each counter steps from 0 at the first event to its total at the last one: the
        // kernel reports drops only as totals.
        for (const bool totals : {false, true})
            counter("dropped", totals ? t_last_ : t_first_, stats, totals, &ProbeStats::dropped);
        // Calls that never returned (exit(), longjmp) have no slice: their count is the trace
        // of them.
        if (std::any_of(stats.probes.begin(), stats.probes.end(),
                        [](const ProbeStats& p) { return p.unreturned > 0; }))
            for (const bool totals : {false, true})
                counter("unreturned", totals ? t_last_ : t_first_, stats, totals,
                        &ProbeStats::unreturned);
        buf_ += "\n]}\n";
        if (auto r = write(); !r)
            return r;
        return flush();
    }

  private:
    void next() { buf_ += ",\n"; }
    void metadata(const char* what, std::uint32_t pid, std::uint32_t tid, std::string_view name) {
        // The first object opens the array: no comma before it.
        if (!opened_)
            buf_ += '\n';
        else
            next();
        opened_ = true;
        fmt::format_to(std::back_inserter(buf_),
                       "{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{", what,
                       pid, tid);
        appendJsonMember(buf_, "name", name);
        buf_ += "}}";
    }
    // One series per probe of `field` (for unreturned, only the probes with some), and for
    // dropped the session's lost records: zeros, or with `totals` the totals.
    void counter(const char* name, std::uint64_t ts, const SessionStats& stats, bool totals,
                 std::uint64_t ProbeStats::*field) {
        const bool dropped = field == &ProbeStats::dropped;
        next();
        fmt::format_to(std::back_inserter(buf_), "{{\"name\":\"{}\",\"ph\":\"C\",\"ts\":", name);
        appendMicros(buf_, ts);
        fmt::format_to(std::back_inserter(buf_), ",\"pid\":{},\"args\":{{", exporter::kCountersPid);
        const char* sep = "";
        for (const auto& p : stats.probes) {
            if (!dropped && !(p.*field))
                continue;
            buf_ += sep;
            sep = ",";
            appendJsonString(buf_, p.spec);
            fmt::format_to(std::back_inserter(buf_), ":{}", totals ? p.*field : 0);
        }
        if (dropped)
            fmt::format_to(std::back_inserter(buf_), "{}\"lost\":{}", sep, totals ? stats.lost : 0);
        buf_ += "}}";
    }
    void appendValue(const Field& f) {
        switch (f.kind) {
            case Field::Kind::Unsigned:
                fmt::format_to(std::back_inserter(buf_), "{}", f.u);
                break;
            case Field::Kind::Signed:
                fmt::format_to(std::back_inserter(buf_), "{}", f.s());
                break;
            case Field::Kind::Hex:
                fmt::format_to(std::back_inserter(buf_), "\"{:#x}\"", f.u);
                break;
            case Field::Kind::Fault:
                buf_ += "null";
                break;
            case Field::Kind::String:
                appendJsonString(buf_, f.str);
                break;
        }
    }
    std::string name_scratch_, field_scratch_;
    exporter::ThreadNames names_;
    std::uint64_t t_first_ = 0, t_last_ = 0;
    bool seen_event_ = false;
    bool opened_ = false;
};

}  // namespace

std::unique_ptr<TraceWriter> chromeTraceWriter(std::ostream& out) {
    return std::make_unique<ChromeWriter>(out);
}

}  // namespace probectl
