// count, hist and latency's read-outs as text, JSON, folded stacks or a flame graph.
#include "aggr_print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "format.hpp"
#include "output_file.hpp"
#include "probectl/event_json.hpp"
#include "probectl/flame_svg.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/strace_format.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl::cli {

std::string intervalClock(const std::tm& tm, unsigned millis, double interval) {
    char buf[16];
    std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
    const double ms = interval * 1000;
    if (interval <= 0 || static_cast<long long>(ms) % 1000 == 0)
        return buf;
    return fmt::format("{}.{:03}", buf, millis % 1000);
}

bool quietProbe(const AggrTable& t, const ProbeStats* ps, std::uint64_t entered_before) {
    // A hit the process filter skipped (FILTERED), lost (nmissed, dropped) or left
    // unreturned is a hit all the same: the probe fired, and its row or header says how.
    if (ps && anyCounterSet(*ps))
        return false;
    // A map without keys holds its one key, counted or not; a keyed one only the keys hit.
    const bool counted = t.key_names.empty() ? t.totalCount() != 0 : !t.entries.empty();
    return entered_before == 0 && !counted && !t.overflow && !t.nested && !t.faulted && !t.unknown;
}

namespace {

// Why a probe of the spec's kind misses hits (its nmissed), and what helps: only
// kretprobe instances can be raised; a kprobe's misses are reentry alone.
std::string_view missedCause(std::string_view spec) {
    const auto colon = spec.find(':');
    const KindInfo* kind =
        colon == std::string_view::npos ? nullptr : findKind(spec.substr(0, colon));
    if (!kind || kind->maxactive)
        return "probe reentry, or too few kretprobe instances: raise --maxactive";
    if (kind->kind == SpecKind::Uretprobe)
        return "returns whose entry was pushed out of the probe's table of calls in flight";
    return "probe reentry: the probe fired inside another probe's handler on its CPU";
}

// The calls entered before this interval that had not returned at the read-out before it;
// 0 when the read-out is not of an interval on its own.
std::uint64_t enteredBefore(const AggrReadout& r, std::size_t i) {
    return i < r.entered_before.size() ? r.entered_before[i] : 0;
}

// Kernel uretprobe calls whose return the kernel did not probe, the thread nested deeper than
// its uretprobe limit: not in "never returned", no row or bucket. "" when there are none.
std::string depthSkippedText(const ProbeStats& ps) {
    if (!ps.depth_skipped)
        return "";
    return fmt::format(
        "; {} returns not probed: nesting deeper than the kernel's uretprobe limit{}",
        ps.depth_skipped, ps.depth_limit ? fmt::format(" of {}", ps.depth_limit) : std::string());
}

// Whether the probe waits for returns (a kretprobe or uretprobe; any latency probe; count
// or hist of a syscall but exit and exit_group, counted at its return as latency's is) or
// knows of entries that never came back or came back from before the interval.
bool pairsReturns(const AggrCliOptions& o, const AggrReadout& r, std::size_t i) {
    const AggrTable& t = r.tables[i];
    const std::string_view spec = t.spec;
    const KindInfo* kind = findKind(spec.substr(0, spec.find(':')));
    const std::string_view syscall = specSyscall(spec);
    const bool returning_syscall = !syscall.empty() && !syscallNeverReturns(syscall);
    return o.mode == AggrMode::Latency || (kind && kind->is_return) || returning_syscall ||
           r.stats.probes[i].unreturned || r.stats.probes[i].depth_skipped || enteredBefore(r, i);
}

// The calls that were entered but never returned (longjmp, an exception, the thread's exit,
// still inside at the end) are in no row or bucket; the header says how many. Before the
// last read-out they may still return: "not returned yet". With each interval on its own,
// the calls entered before it that had not returned: hits + entered before = the returns
// the table counts + not returned.
std::string unreturnedText(const AggrCliOptions& o, const AggrReadout& r, std::size_t i) {
    const ProbeStats& ps = r.stats.probes[i];
    if (!pairsReturns(o, r, i))
        return "";
    std::string before;
    if (i < r.entered_before.size())
        before = fmt::format(", entered before {}", r.entered_before[i]);
    return fmt::format("{}, {} {}{}", before, r.more ? "not returned yet" : "never returned",
                       ps.unreturned, depthSkippedText(ps));
}

// With --interval, which span the header's counters are of (the tables' too).
std::string periodText(const AggrCliOptions& o) {
    if (o.interval <= 0)
        return "";
    return o.cumulative ? " (since the start)" : " (this interval)";
}

// The hits the map could not hold; "" when none.
std::string uncountedText(const AggrTable& t) {
    if (!t.overflow && !t.nested)
        return "";
    return fmt::format(
        "{}: {} hits not counted (map full {}, nested {}; "
        "--max-entries holds more keys)\n",
        shownName(t.spec), t.overflow + t.nested, t.overflow, t.nested);
}

// --ustack=dwarf: a hit counts only when its record arrives, so the records dropped are
// hits not counted; "" when none.
std::string droppedText(const std::string& spec, const ProbeStats& ps) {
    if (!ps.dropped)
        return "";
    return fmt::format(
        "{}: {} hits not counted (their records were dropped: ring full or delivery failed)\n",
        shownName(spec), ps.dropped);
}

// With several probes in one flame graph or folded output, each one's stacks stand on a
// frame named by its spec, so that the tools keep them apart.
std::string probeFrame(const std::vector<AggrTable>& tables, const AggrTable& t) {
    return tables.size() > 1 ? shownName(t.spec) : std::string();
}

// --top N with folded and svg: the N heaviest stacks of each probe.
std::vector<StackRow> heaviestRows(const AggrTable& t, const StackLines& lines, std::size_t top) {
    auto rows = stackRows(t, lines);  // most hits first
    if (top && rows.size() > top)
        rows.resize(top);
    return rows;
}

// --format svg: one flame graph of every table.
std::string flameGraph(const std::vector<AggrTable>& tables, const StackLines& lines,
                       std::size_t top) {
    std::vector<FlameStack> all;
    FlameGraphOptions fo;
    for (const auto& t : tables) {
        auto s = flameStacks(heaviestRows(t, lines, top), probeFrame(tables, t));
        all.insert(all.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
        fo.title += (fo.title.empty() ? "" : ", ") + t.spec;
    }
    if (top)
        fo.title += fmt::format(" (top {} stacks{})", top, tables.size() > 1 ? " each" : "");
    return flameGraphSvg(all, fo);
}

// Folded lines and flame graphs have no footer: the hits the map could not hold are said
// on `err`.
std::string foldedOrSvg(const AggrCliOptions& o, const AggrReadout& r, const StackLines& stacks,
                        std::string& err) {
    std::string out;
    if (o.format == "svg")
        out = flameGraph(r.tables, stacks, o.top);
    else
        for (const auto& t : r.tables)
            out += formatFoldedRows(heaviestRows(t, stacks, o.top), probeFrame(r.tables, t));
    for (const auto& t : r.tables)
        err += uncountedText(t);
    if (o.ustack == "dwarf")
        for (std::size_t i = 0; i < r.tables.size() && i < r.stats.probes.size(); i++)
            err += droppedText(r.tables[i].spec, r.stats.probes[i]);
    return out;
}

// A glob's hundreds of probes that never fired would bury the ones that did: without
// --zeros, the text shows only those with hits (or keys), or with a call in flight (not
// returned yet, or entered before the interval), as count's lines say them. JSON has every
// probe.
bool shown(const AggrCliOptions& o, const AggrReadout& r, std::size_t i) {
    if (o.zeros || r.tables.size() < 2)
        return true;
    return !quietProbe(r.tables[i], i < r.stats.probes.size() ? &r.stats.probes[i] : nullptr,
                       enteredBefore(r, i));
}

std::string topLine(std::size_t rows, std::size_t top, std::string_view what) {
    if (!top || rows <= top)
        return "";
    const std::size_t left = rows - top;
    return fmt::format("({} {}{} with fewer hits not shown; --top {} shows the {} with the most)\n",
                       left, what, left == 1 ? "" : "s", top, top);
}

std::string hiddenLine(std::size_t hidden) {
    const std::string note = hiddenProbesNote(hidden);
    return note.empty() ? note : note + '\n';
}

std::string hiddenText(const AggrCliOptions& o, const AggrReadout& r) {
    std::size_t hidden = 0;
    for (std::size_t i = 0; i < r.tables.size(); i++)
        hidden += !shown(o, r, i);
    return hiddenLine(hidden);
}

std::string jsonLines(const AggrCliOptions& o, const AggrReadout& r, const StackLines* stacks) {
    std::string out;
    for (std::size_t i = 0; i < r.tables.size(); i++) {
        auto j = aggrJson(r.tables[i], o.top);
        if (stacks)
            for (auto& e : j["entries"]) {
                // A copy: adding to `e` moves its members (an ordered map is a vector).
                const nlohmann::ordered_json key = e["key"];
                for (const char* name : {kKernelStackArg, kUserStackArg}) {
                    if (!key.contains(name))
                        continue;
                    const auto id = key[name].is_number() ? key[name].get<std::uint32_t>() : 0u;
                    const auto* lines = (*stacks)(r.tables[i].probe_id, id);
                    e[name] = lines ? nlohmann::ordered_json(*lines) : nlohmann::ordered_json();
                }
            }
        if (!r.when.empty())
            j["time"] = r.when;
        if (o.interval > 0)
            j["period"] = o.cumulative ? "cumulative" : "interval";
        const ProbeStats& ps = r.stats.probes[i];
        j["hits"] = ps.hits;
        j["filtered"] = ps.filtered;
        j["rejected"] = ps.rejected;
        j["nmissed"] = ps.nmissed;
        if (o.ustack == "dwarf")
            j["dropped"] = ps.dropped;
        if (i < r.entered_before.size())
            j["entered_before"] = r.entered_before[i];
        j["unreturned"] = ps.unreturned;
        j["depth_skipped"] = ps.depth_skipped;
        if (o.interval > 0)
            j["final"] = !r.more;
        out += toJsonLine(j) + '\n';
    }
    return out;
}

std::string textTables(const AggrCliOptions& o, const AggrReadout& r, const StackLines* stacks) {
    const bool dwarf = o.ustack == "dwarf";
    std::string out;
    if (!r.when.empty())
        out += r.when + '\n';
    if (o.mode == AggrMode::Count && o.aggr.keys.empty()) {
        // The kernel's process filter (ptrace traces its processes alone): FILTERED is a
        // column of every such run, as of trace's summary.
        const bool filter =
            o.from.empty() && o.backend != "ptrace" &&
            (!o.command.empty() || !o.pids.empty() || !o.match_pids.empty() ||
             !o.match_tids.empty() || !o.match_uids.empty() || !o.match_comm.empty());
        out += formatProbeCounts(r.tables, o.top, &r.stats, o.zeros, filter, r.more,
                                 &r.entered_before);
    } else {
        bool first = true;
        for (std::size_t i = 0; i < r.tables.size(); i++) {
            if (!shown(o, r, i))
                continue;
            if (!first)
                out += '\n';
            first = false;
            const AggrTable& t = r.tables[i];
            const ProbeStats& ps = r.stats.probes[i];
            out += fmt::format("{}  hits {}, filtered {}, rejected {}, nmissed {}{}{}{}\n",
                               shownName(t.spec), ps.hits, ps.filtered, ps.rejected, ps.nmissed,
                               dwarf ? fmt::format(", dropped {}", ps.dropped) : "",
                               unreturnedText(o, r, i), periodText(o));
            if (stacks) {
                const auto rows = stackRows(t, *stacks);
                out += formatStackRows(rows, o.top, stackRowKeyNames(t));
                out += topLine(rows.size(), o.top, "stack");
                out += uncountedText(t);
                if (dwarf)
                    out += droppedText(t.spec, ps);
            } else {
                out += o.mode == AggrMode::Count ? formatAggrTable(t, o.top)
                                                 : formatAggrHist(t, o.top);
                out += topLine(t.entries.size(), o.top, "key");
            }
        }
        out += hiddenText(o, r);
    }
    if (!r.when.empty())
        out += '\n';
    return out;
}

// Writes `text` whole; the error names `name` with the errno of the write that failed.
Result<void> writeAll(std::ostream& out, const std::string& text, const std::string& name) {
    errno = 0;
    out << text;
    out.flush();
    if (const int err = streamErrno(out))
        return makeError(err, fmt::format("cannot write {}", name));
    return {};
}

}  // namespace

Result<void> printAggrReadout(const AggrCliOptions& o, const AggrReadout& r, std::ostream& out,
                              std::ostream& err, const std::string& out_name,
                              const StackLines* stacks) {
    std::string text, notes;
    if (o.format == "folded" || o.format == "svg")
        text = foldedOrSvg(o, r, *stacks, notes);
    else if (o.format == "json")
        text = jsonLines(o, r, stacks);
    else
        text = textTables(o, r, stacks);
    auto written = writeAll(out, text, out_name);
    err << notes;
    return written;
}

std::string formatProbeCounts(const std::vector<AggrTable>& tables, std::size_t top,
                              const SessionStats* stats, bool zeros, bool process_filter, bool more,
                              const std::vector<std::uint64_t>* entered_before) {
    struct Row {
        std::uint64_t count;
        std::uint64_t filtered;
        const AggrTable* table;
    };
    std::vector<Row> rows;
    std::size_t w = 5, hidden = 0;
    for (std::size_t i = 0; i < tables.size(); i++) {
        const AggrTable& t = tables[i];
        const bool known = stats && i < stats->probes.size();
        // A glob's hundreds of probes that never fired would bury the ones that did.
        if (!zeros && tables.size() > 1 &&
            quietProbe(t, known ? &stats->probes[i] : nullptr,
                       entered_before && i < entered_before->size() ? (*entered_before)[i] : 0)) {
            hidden++;
            continue;
        }
        rows.push_back({t.totalCount(), known ? stats->probes[i].filtered : 0, &t});
        w = std::max(w, shownName(t.spec).size());
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.count > b.count; });
    const std::size_t probes = rows.size();
    if (top && rows.size() > top)
        rows.resize(top);
    // Hits the process filter skipped, as trace's summary and the keyed tables' headers
    // show them: without them a 0 under --uid read as "the code never ran".
    const bool filtered =
        std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.filtered; });
    const bool column = filtered || process_filter;
    std::string out = fmt::format("{:<{}}  {:>10}{}\n", "PROBE", w, "COUNT",
                                  column ? fmt::format("  {:>10}", "FILTERED") : "");
    for (const Row& r : rows)
        out += fmt::format("{:<{}}  {:>10}{}\n", shownName(r.table->spec), w, r.count,
                           column ? fmt::format("  {:>10}", r.filtered) : "");
    out += topLine(probes, top, "probe");
    out += hiddenLine(hidden);
    if (filtered)
        out +=
            "FILTERED: hits the process filter skipped (-p, -- CMD, --pid, --tid, --uid, "
            "--comm), not in COUNT\n";
    for (std::size_t i = 0; i < tables.size(); i++) {
        const AggrTable& t = tables[i];
        if (t.overflow || t.nested)
            out += fmt::format("{}: {} hits not counted (map full {}, nested {})\n",
                               shownName(t.spec), t.overflow + t.nested, t.overflow, t.nested);
        // Hits the kernel could not count (outside HITS): a bare COUNT would read as all.
        if (stats && i < stats->probes.size() && stats->probes[i].nmissed)
            out += fmt::format("{}: {} hits missed, not in COUNT ({})\n", shownName(t.spec),
                               stats->probes[i].nmissed, missedCause(t.spec));
        // A return probe counts returns: the entries that never came back are not in COUNT,
        // those entered before the interval and returned in it are. No unreturned call has
        // an event on either backend (ptrace's syscall of a killed thread is a return, as
        // the kernel's is), so none is in COUNT through a probe counted at its entry.
        const std::uint64_t before =
            entered_before && i < entered_before->size() ? (*entered_before)[i] : 0;
        if (stats && i < stats->probes.size() &&
            (stats->probes[i].unreturned || stats->probes[i].depth_skipped || before))
            out += fmt::format(
                "{}: {} {} (not counted){}{}\n", shownName(t.spec),
                more ? "not returned yet" : "never returned", stats->probes[i].unreturned,
                before ? fmt::format("; entered before this interval {}", before) : "",
                depthSkippedText(stats->probes[i]));
    }
    return out;
}

}  // namespace probectl::cli
