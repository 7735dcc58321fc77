// Aggregating a recording: one EventAggregator per recorded probe, fed in recorded order.
#include "aggr_recorded.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <map>

#include "probectl/aggr_events.hpp"
#include "probectl/glob.hpp"
#include "probectl/recording.hpp"

namespace probectl::cli {

namespace {

bool wanted(const std::vector<std::string>& only, std::string_view spec) {
    return only.empty() || std::any_of(only.begin(), only.end(),
                                       [&](const std::string& g) { return globMatch(g, spec); });
}

}  // namespace

Result<RecordedAggregation> aggregateRecording(const std::string& file, const AggrSpec& spec,
                                               const std::vector<std::string>& only) {
    auto rec = RecordingReader::open(file);
    if (!rec)
        return rec.error();
    std::map<std::uint32_t, EventAggregator> by_id;
    std::map<std::uint32_t, std::uint64_t> events;
    std::map<std::uint32_t, std::string> specs;
    // A probe the aggregation does not apply to is left out, not fatal: a recording of
    // entries and returns answers latency from its returns. As with a live glob, only a
    // glob whose every probe was left out is an error.
    std::map<std::uint32_t, Error> refused;
    // The events are counted in probectl's memory, not in a kernel map: no key is turned
    // away and no capacity is said, unless --max-entries asks for a map's rules.
    AggrSpec rules = spec;
    if (!rules.max_entries)
        rules.max_entries = std::numeric_limits<std::uint32_t>::max();
    auto aggregatorFor = [&](std::uint32_t id,
                             const std::string& text) -> Result<EventAggregator*> {
        if (auto it = by_id.find(id); it != by_id.end())
            return &it->second;
        if (refused.count(id))
            return nullptr;
        auto a = EventAggregator::create(rules, text);
        if (!a) {
            refused.emplace(id, std::move(a).error());
            return nullptr;
        }
        return &by_id.emplace(id, std::move(*a)).first->second;
    };
    Event ev;
    while (rec->next(ev)) {
        if (!specs.count(ev.probe_id))
            specs[ev.probe_id] = std::string(ev.spec);
        if (!wanted(only, ev.spec))
            continue;
        auto a = aggregatorFor(ev.probe_id, specs[ev.probe_id]);
        if (!a)
            return a.error();
        if (!*a)
            continue;
        (*a)->add(ev);
        events[ev.probe_id]++;
    }
    // Cut short (the recorder killed) is what there is; damage is not: the counts would lack
    // what lies past it and read as the whole answer.
    if (rec->damaged())
        return makeError(EBADMSG,
                         fmt::format("{}: {}: not aggregated, as its counts would lack the "
                                     "events past the damage ('probectl report {}' prints "
                                     "those before it)",
                                     file, rec->note(), file));
    RecordedAggregation out;
    out.note = rec->note();
    const auto& summary = rec->summary();
    out.has_summary = summary.has_value();
    if (summary) {
        out.stats.lost = summary->lost;
        out.stats.overruns = summary->overruns;
        // Probes that recorded nothing have a summary row: they get an empty table.
        for (const ProbeStats& p : summary->probes) {
            specs.emplace(p.id, p.spec);
            if (wanted(only, p.spec))
                if (auto a = aggregatorFor(p.id, p.spec); !a)
                    return a.error();
        }
    }
    if (by_id.empty() && !refused.empty())
        return refused.begin()->second;
    for (const auto& g : only) {
        auto matches = [&](const auto& entry) { return globMatch(g, specs[entry.first]); };
        auto left_out = std::find_if(refused.begin(), refused.end(), matches);
        if (left_out != refused.end() && std::none_of(by_id.begin(), by_id.end(), matches))
            return left_out->second;
    }
    for (const auto& [id, why] : refused)
        out.skipped.push_back(why.message);
    if (by_id.empty()) {
        std::string held;
        for (const auto& [id, text] : specs)
            held += (held.empty() ? "" : ", ") + text;
        // No errno for an empty recording: the file was read, what it holds is the answer.
        if (only.empty())
            return makeError(0, fmt::format("{}: the recording holds no probe{}{}", file,
                                            rec->note().empty() ? "" : ": ", rec->note()));
        return makeError(ENOENT,
                         fmt::format("{}: no recorded probe matches {} (it holds: {})", file,
                                     fmt::join(only, ", "), held.empty() ? "none" : held));
    }
    for (auto& [id, a] : by_id) {
        AggrTable t = a.table();
        t.probe_id = id;
        if (!spec.max_entries)
            t.capacity = 0;
        ProbeStats ps;
        ps.id = id;
        ps.spec = t.spec;
        ps.hits = ps.delivered = events[id];
        if (summary)
            for (const ProbeStats& p : summary->probes)
                if (p.id == id)
                    ps = p;
        out.tables.push_back(std::move(t));
        out.stats.probes.push_back(std::move(ps));
    }
    return out;
}

}  // namespace probectl::cli
