#include "aggr_timeline.hpp"

#include <fmt/format.h>

#include <set>

namespace probectl::cli {

namespace {

std::string keyText(const AggrTable& t, const AggrEntry& e) {
    std::string s;
    for (std::size_t i = 0; i < e.key.size(); i++)
        s += fmt::format("{}{}={}", s.empty() ? "" : ", ",
                         i < t.key_names.size() ? t.key_names[i] : "?",
                         formatAggrKeyPart(t, i, e.key[i]));
    return s;
}

}  // namespace

std::vector<std::pair<std::string, std::int64_t>> aggrCounterSamples(const AggrTable& t) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const AggrEntry* e : sortedEntries(t)) {
        const std::string key = keyText(t, *e);
        const std::string track = key.empty() ? t.spec : fmt::format("{} [{}]", t.spec, key);
        out.emplace_back(track + ": count", static_cast<std::int64_t>(e->count));
        // an average that is not known (aggrSum) has no sample, nor has an unsigned one
        // past INT64_MAX, which a counter track cannot hold
        const auto avg = aggrAvgValue(t, *e);
        if (t.value != AggrValue::None && avg && (t.is_signed || *avg <= INT64_MAX))
            out.emplace_back(fmt::format("{}: avg {}{}", track, t.value_name,
                                         t.value == AggrValue::Latency ? " (ns)" : ""),
                             static_cast<std::int64_t>(*avg));
    }
    return out;
}

Result<AggrTimeline> AggrTimeline::open(const std::string& format, const std::string& path) {
    auto w = openTraceWriter(format, path);
    if (!w)
        return std::move(w).error();
    return AggrTimeline(std::move(*w));
}

Result<void> AggrTimeline::start(std::uint64_t t0_ns) {
    t_prev_ = t0_ns;
    return w_->begin(t0_ns, TraceClocks::now());
}

Result<void> AggrTimeline::readout(const std::vector<AggrTable>& tables, std::uint64_t ts_ns,
                                   bool cleared) {
    std::vector<std::pair<std::string, std::int64_t>> now;
    for (const auto& t : tables)
        for (auto& s : aggrCounterSamples(t))
            now.push_back(std::move(s));
    // Samples in time order: the new tracks' zeros at the previous read-out come first.
    for (const auto& [track, v] : now)
        if (!last_.count(track))
            if (auto r = w_->counter(track, t_prev_, 0); !r)
                return r;
    std::set<std::string> seen;
    for (const auto& [track, v] : now) {
        if (auto r = w_->counter(track, ts_ns, v); !r)
            return r;
        last_[track] = v;
        seen.insert(track);
    }
    if (cleared)
        for (auto& [track, v] : last_)
            if (!seen.count(track) && v != 0) {
                if (auto r = w_->counter(track, ts_ns, 0); !r)
                    return r;
                v = 0;
            }
    t_prev_ = ts_ns;
    return w_->flush();
}

Result<void> AggrTimeline::finish(const SessionStats& stats) {
    return w_->finish(stats);
}

}  // namespace probectl::cli
