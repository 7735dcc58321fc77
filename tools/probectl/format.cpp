#include "format.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include "probectl/strace_format.hpp"

namespace probectl::cli {

std::uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

TracePrinter::TracePrinter(const TraceLayout& layout, std::uint64_t t0_ns, std::ostream& out,
                           std::ostream& err)
    : layout_(layout),
      format_{t0_ns, layout.strace, layout.pid_prefix, {}, {}},
      out_(makePrinter(layout.json, out)),
      err_(err) {}

void TracePrinter::header() {
    if (!layout_.strace)
        printEventHeader(*out_);
}

void TracePrinter::event(const Event& ev) {
    printEvent(*out_, ev, format_);
}

void TracePrinter::taskEnd(const TaskEnd& end) {
    if (!layout_.strace || layout_.json || (!layout_.pid_prefix && end.tid != end.tgid))
        return;
    out_->beginRecord("end");
    if (layout_.pid_prefix)
        out_->u64(Show::Text, "tid", "{:<5} ", static_cast<std::uint64_t>(end.tid));
    out_->text(straceEndLine(end.status));
    out_->endRecord();
}

void TracePrinter::summary(const SessionStats& stats) {
    if (layout_.json) {
        printSummary(*out_, stats);
    } else if (layout_.strace) {
        out_->flush();  // strace's lines only in the output; counters on stderr
        auto err = makeTextPrinter(err_);
        printSummary(*err, stats, layout_.zeros);
    } else {
        out_->text("");  // a blank line between the events and the summary
        out_->endRecord();
        printSummary(*out_, stats, layout_.zeros);
    }
    out_->flush();
}

void TracePrinter::flush() {
    out_->flush();
}

#define PROBECTL_COUNTER_ENTRY(name) {#name, p.name},

std::vector<Counter> summaryCounters(const ProbeStats& p) {
    return {PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_ENTRY)};
}

std::vector<Counter> listCounters(const ProbeInfo& p) {
    return {PROBECTL_PROBE_COUNTERS(PROBECTL_COUNTER_ENTRY)};
}

#undef PROBECTL_COUNTER_ENTRY

bool anyCounterSet(const ProbeStats& p) {
    const auto counters = summaryCounters(p);
    return std::any_of(counters.begin(), counters.end(),
                       [](const Counter& c) { return c.value != 0; });
}

void printSummary(Printer& p, const SessionStats& stats, bool zeros) {
    // A glob's hundreds of probes that never fired would bury the ones that did (count's
    // rule); a row with any counter set (filtered, nmissed) has something to say.
    const bool hide = !zeros && !p.json() && stats.probes.size() > 1;
    std::vector<ProbeCounters> rows;
    std::size_t hidden = 0;
    for (const auto& s : stats.probes) {
        if (hide && !anyCounterSet(s)) {
            hidden++;
            continue;
        }
        rows.push_back({s.id, s.spec, summaryCounters(s)});
    }
    printSummary(p, rows, stats.lost, stats.overruns, hiddenProbesNote(hidden));
}

std::string hiddenProbesNote(std::size_t hidden) {
    if (!hidden)
        return "";
    return fmt::format("({} probe{} with no hits not shown; --zeros shows them)", hidden,
                       hidden == 1 ? "" : "s");
}

std::string lossWarning(const SessionStats& stats) {
    std::uint64_t dropped = 0, nmissed = 0;
    for (const auto& p : stats.probes) {
        dropped += p.dropped;
        nmissed += p.nmissed;
    }
    if (!stats.anyLoss())
        return {};
    return fmt::format(
        "warning: events were lost: {} dropped (ring full or delivery failed), {} "
        "missed (probe reentry or kretprobe --maxactive too small), {} lost in "
        "transport, {} socket overruns",
        dropped, nmissed, stats.lost, stats.overruns);
}

void printProbeList(Printer& p, const std::vector<ProbeInfo>& probes, const ProbeOwners& owners) {
    using A = Table::Align;
    std::vector<Table::Column> cols = {
        {"ID", A::Right},    {"KIND", A::Left},       {"LOCATION", A::Left}, {"ADDRESS", A::Left},
        {"OWNER", A::Right}, {"PERSISTENT", A::Left}, {"ENABLED", A::Left}};
    auto counters = counterColumns(listCounters(ProbeInfo{}));
    cols.insert(cols.end(), counters.begin(), counters.end());
    cols.push_back({"SPEC", A::Left});
    p.beginRecord("list");
    p.beginTable("probes", std::move(cols));
    for (const auto& probe : probes) {
        p.beginRow();
        p.u64(Show::Any, "id", "{}", probe.id);
        p.str(Show::Any, "kind", "{}", probe.syscallSpec() ? "syscall" : toString(probe.kind));
        p.str(Show::Any, "location", "{}", probe.location());
        if (probe.addr)
            p.hex(Show::Any, "address", "{:#018x}", probe.addr);
        else
            p.null(Show::Any, "address", "-");
        // A persistent probe has no owner: it stays until removed.
        const auto who = owners.find(probe.owner);
        if (probe.owner && who != owners.end()) {
            p.u64(Show::Json, "owner", {}, probe.owner);
            p.str(Show::Text, {}, "{}",
                  fmt::format("{}/{}", who->second.pid, shownName(who->second.comm)));
            p.u64(Show::Json, "owner_pid", {}, static_cast<std::uint64_t>(who->second.pid));
            p.str(Show::Json, "owner_comm", {}, who->second.comm);
        } else if (probe.owner)
            p.u64(Show::Any, "owner", "{}", probe.owner);
        else
            p.null(Show::Any, "owner", probe.persistent() ? "persistent" : "-");
        p.boolean(Show::Any, "persistent", probe.persistent());
        p.boolean(Show::Any, "enabled", probe.enabled());
        printCounters(p, listCounters(probe));
        // Last: as long as the user wrote it (fetch arguments, predicate).
        if (probe.label.empty())
            p.null(Show::Any, "spec", "-");
        else
            p.str(Show::Any, "spec", "{}", probe.label);
        p.endRow();
    }
    p.endTable();
    p.endRecord();
}

namespace {

// The printed text without the record's final newline.
template <typename F>
std::string capture(bool json, F print) {
    std::ostringstream os;
    print(*makePrinter(json, os));
    std::string s = os.str();
    if (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s;
}

}  // namespace

std::string formatEvent(const Event& ev, std::uint64_t t0_ns) {
    return formatTraceEvent(ev, t0_ns, {});
}

std::string formatEventJson(const Event& ev) {
    return formatTraceEvent(ev, 0, {.json = true});
}

std::string formatTraceEvent(const Event& ev, std::uint64_t t0_ns, const TraceLayout& layout) {
    return capture(layout.json, [&](Printer& p) {
        printEvent(p, ev, {t0_ns, layout.strace, layout.pid_prefix, {}, {}});
    });
}

std::string eventHeader() {
    return capture(false, [](Printer& p) { printEventHeader(p); });
}

std::string formatSummaryJson(const SessionStats& stats) {
    return capture(true, [&](Printer& p) { printSummary(p, stats); });
}

void printSummary(std::ostream& os, const SessionStats& stats, bool zeros) {
    printSummary(*makeTextPrinter(os), stats, zeros);
}

void printProbeList(std::ostream& os, const std::vector<ProbeInfo>& probes, bool json,
                    const ProbeOwners& owners) {
    printProbeList(*makePrinter(json, os), probes, owners);
}

}  // namespace probectl::cli
