// Per-probe counters through a Printer: the end-of-trace summary (event_print.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "probectl/event_print.hpp"
#include "probectl/strace_format.hpp"

namespace probectl {

std::vector<Table::Column> counterColumns(const std::vector<Counter>& counters) {
    std::vector<Table::Column> cols;
    for (const auto& c : counters) {
        std::string header(c.name);
        std::transform(header.begin(), header.end(), header.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
        cols.push_back({std::move(header), Table::Align::Right});
    }
    return cols;
}

void printCounters(Printer& p, const std::vector<Counter>& counters) {
    for (const auto& c : counters)
        p.u64(Show::Any, c.name, "{}", c.value);
}

namespace {

// Only kernel uretprobes nested past the kernel's limit have it: the text table shows its
// column when some probe has one (JSON always has the key).
constexpr std::string_view kDepthSkipped = "depth_skipped";

}  // namespace

void printSummary(Printer& p, const std::vector<ProbeCounters>& probes, std::uint64_t lost,
                  std::uint64_t overruns, std::string_view note) {
    bool any_filter = false, any_unreturned = false, any_depth = false;
    for (const auto& probe : probes)
        for (const auto& c : probe.counters) {
            any_filter |= (c.name == "filtered" || c.name == "rejected") && c.value;
            any_unreturned |= c.name == "unreturned" && c.value;
            any_depth |= c.name == kDepthSkipped && c.value;
        }
    std::vector<Table::Column> cols = {{"PROBE", Table::Align::Left}};
    if (!probes.empty()) {
        std::vector<Counter> shown = probes.front().counters;
        if (!any_depth)
            std::erase_if(shown, [](const Counter& c) { return c.name == kDepthSkipped; });
        auto counters = counterColumns(shown);
        cols.insert(cols.end(), counters.begin(), counters.end());
    }
    p.beginRecord("summary");
    p.beginTable("probes", std::move(cols));
    for (const auto& probe : probes) {
        p.beginRow();
        p.u64(Show::Json, "id", {}, probe.id);
        // a path with a newline or an escape sequence must not reach the terminal as it is
        p.str(Show::Json, "probe", {}, probe.probe);
        p.str(Show::Text, "probe", "{}", shownName(probe.probe));
        for (const auto& c : probe.counters)
            p.u64(c.name == kDepthSkipped && !any_depth ? Show::Json : Show::Any, c.name, "{}",
                  c.value);
        p.endRow();
    }
    p.endTable();
    if (!note.empty())
        p.text(fmt::format("\n{}", note));
    if (any_filter)
        p.text(
            fmt::format("\nFILTERED: skipped by the process filter (not in HITS); REJECTED: hits "
                        "the spec's `if` predicate rejected (HITS = DELIVERED + DROPPED + "
                        "REJECTED + UNRETURNED{})",
                        any_depth ? " + DEPTH_SKIPPED" : ""));
    if (any_unreturned)
        p.text(
            "\nUNRETURNED: return-probe entries with no return (left by longjmp or an "
            "exception, ended by the thread's exit, or still inside when tracing ended)");
    if (any_depth)
        p.text(
            "\nDEPTH_SKIPPED: uretprobe calls whose return the kernel did not probe: the thread "
            "was nested deeper than the kernel's uretprobe limit (not in UNRETURNED; the "
            "ptrace backend has no such limit)");
    p.u64(Show::Any, "lost", "\nlost records: {} (session)", lost);
    p.u64(Show::Any, "overruns", ", receive-buffer overruns: {}", overruns);
    p.endRecord();
}

}  // namespace probectl
