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

void printSummary(Printer& p, const std::vector<ProbeCounters>& probes, std::uint64_t lost,
                  std::uint64_t overruns) {
    std::vector<Table::Column> cols = {{"PROBE", Table::Align::Left}};
    if (!probes.empty()) {
        auto counters = counterColumns(probes.front().counters);
        cols.insert(cols.end(), counters.begin(), counters.end());
    }
    p.beginRecord("summary");
    p.beginTable("probes", std::move(cols));
    bool any_filter = false, any_unreturned = false;
    for (const auto& probe : probes) {
        p.beginRow();
        p.u64(Show::Json, "id", {}, probe.id);
        // a path with a newline or an escape sequence must not reach the terminal as it is
        p.str(Show::Json, "probe", {}, probe.probe);
        p.str(Show::Text, "probe", "{}", shownName(probe.probe));
        printCounters(p, probe.counters);
        p.endRow();
        for (const auto& c : probe.counters) {
            any_filter |= (c.name == "filtered" || c.name == "rejected") && c.value;
            any_unreturned |= c.name == "unreturned" && c.value;
        }
    }
    p.endTable();
    if (any_filter)
        p.text(
            "\nFILTERED: skipped by the process filter (not in HITS); REJECTED: hits the "
            "spec's `if` predicate rejected (HITS = DELIVERED + DROPPED + REJECTED + "
            "UNRETURNED)");
    if (any_unreturned)
        p.text(
            "\nUNRETURNED: return-probe entries with no return (left by longjmp or an "
            "exception, ended by the thread's exit, or still inside when tracing ended)");
    p.u64(Show::Any, "lost", "\nlost records: {} (session)", lost);
    p.u64(Show::Any, "overruns", ", receive-buffer overruns: {}", overruns);
    p.endRecord();
}

}  // namespace probectl
