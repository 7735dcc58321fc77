// AggrCollector: the kernel's maps, or events aggregated here (ptrace backend, --ustack=dwarf).
#include "aggr_collect.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "open_tracer.hpp"
#include "probectl/expand.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/ptrace_session.hpp"

namespace probectl::cli {

MapShare mapShareFor(const AggrCliOptions& o, pid_t pid) {
    MapShare share;
    if (o.backend == "ptrace" || o.ustack == "dwarf" || o.aggr.max_entries || o.aggr.keys.empty())
        return share;
    SpecExpander expander(pid);
    std::set<std::string> seen;  // attachSpecs adds a spec given twice once
    for (const ProbeSpec& s : o.specs) {
        if (!seen.insert(s.str()).second)
            continue;
        auto x = expander.expand(s);
        share.probes += x ? x->specs.size() : 1;
    }
    if (share.probes < 2)
        return share;
    auto budget = readAggrBudget();
    if (!budget)
        return share;  // the kernel's refusals name the limit
    share.limit_bytes = budget->limit_bytes;
    share.bytes = aggrShare(*budget, share.probes);
    share.ncpus = budget->ncpus;
    return share;
}

std::string mapShareNote(const MapShare& share) {
    return fmt::format(
        "probectl: note: {} probes share the module's max_map_kb ({} KiB): each map holds up to "
        "{} key{}, not {}; hits with a key beyond are counted as map full (--max-entries N "
        "asks for N keys a map)",
        share.probes, share.limit_bytes / 1024, share.smallest, share.smallest == 1 ? "" : "s",
        kAggrDefaultEntries);
}

Result<std::unique_ptr<Tracer>> openAggrTracer(const AggrCliOptions& o, MapShare* share) {
    const AggrSpec spec = o.aggr;
    // --ustack=dwarf: no map in the kernel, every hit is recorded with its snapshot.
    const bool dwarf = o.ustack == "dwarf";
    const std::uint32_t bytes = o.stack_size ? o.stack_size : kUstackSnapshotDefault;
    return openTracerFor(
        o, o.seccomp,
        [spec, dwarf, bytes, share](SessionOptions& so) {
            so.prepare = [spec, dwarf, bytes, share](ProbeRequest& req,
                                                     std::vector<FetchArg>& fetch) {
                if (!dwarf) {
                    auto r = prepareAggregation(spec, req, fetch);
                    if (r && share && share->bytes && !spec.max_entries && req.aggr &&
                        req.aggr->nkeys) {
                        // Not even one key fits: asked as is, the kernel's refusal says why.
                        const std::uint32_t n =
                            aggrEntriesWithin(aggrMapSize(req, fetch), share->bytes,
                                              req.aggr->max_entries, share->ncpus);
                        if (n && n < req.aggr->max_entries) {
                            req.aggr->max_entries = n;
                            share->smallest = share->smallest ? std::min(share->smallest, n) : n;
                        }
                    }
                    return r;
                }
                // Only for its refusals (an unknown key, retval not at a return): the events
                // are aggregated here by the same keys.
                ProbeRequest checked = req;
                std::vector<FetchArg> checked_fetch = fetch;
                if (auto r = prepareAggregation(spec, checked, checked_fetch); !r)
                    return r;
                return appendUserStackSnapshotArg(req, fetch, bytes);
            };
        },
        [spec, dwarf, bytes](PtraceSessionOptions& so) {
            if (dwarf)
                so.ustack_snapshot = bytes;
            // What the events cannot fill is refused per spec, when it is added, as the
            // kernel backend's prepare does: a glob then skips those names (latency of exit
            // and exit_group) and goes on, where AggrCollector's refusal ended the run.
            so.check = [spec](const ProbeSpec& s) -> Result<void> {
                auto a = EventAggregator::create(spec, s.text.empty() ? s.str() : s.text);
                if (!a)
                    return std::move(a).error();
                return {};
            };
        });
}

Result<AggrCollector> AggrCollector::create(Tracer& tracer, const AggrSpec& spec,
                                            SnapshotStacks* snapshots) {
    AggrCollector c(tracer, spec, snapshots);
    if (auto r = c.reset(); !r)
        return std::move(r).error();
    return c;
}

bool AggrCollector::kernelMaps() const {
    return !snapshots_ && dynamic_cast<Session*>(tracer_);
}

Result<void> AggrCollector::reset() {
    if (kernelMaps())
        return {};
    std::vector<std::pair<std::uint32_t, std::string>> probes;
    if (auto* pt = dynamic_cast<PtraceSession*>(tracer_)) {
        for (const PtraceProbe& p : pt->probes())
            probes.emplace_back(p.id, p.spec);
    } else
        for (const SessionProbe& p : dynamic_cast<Session&>(*tracer_).probes())
            probes.emplace_back(p.id, p.spec);
    events_.clear();
    for (const auto& [id, text] : probes) {
        auto a = EventAggregator::create(spec_, text);
        if (!a)
            return std::move(a).error();
        events_.emplace_back(id, std::move(*a));
    }
    return {};
}

EventCallback AggrCollector::callback() {
    return [this](const Event& ev) {
        for (auto& [id, a] : events_)
            if (id == ev.probe_id) {
                if (!snapshots_) {
                    a.add(ev);
                    return;
                }
                Event copy = ev;
                snapshots_->replace(copy);
                a.add(copy);
                return;
            }
    };
}

Result<std::vector<AggrTable>> AggrCollector::tables(bool clear, const SessionStats& now) {
    std::vector<AggrTable> out;
    if (auto* session = kernelMaps() ? dynamic_cast<Session*>(tracer_) : nullptr) {
        for (const SessionProbe& p : session->probes()) {
            const bool shown = std::find(removed_shown_.begin(), removed_shown_.end(), p.id) !=
                               removed_shown_.end();
            if (shown && clear)
                continue;
            auto t =
                readAggregation(session->client(), p.id, p.resolution.request, p.fetch_args, clear);
            if (!t)
                return std::move(t).error();
            t->spec = p.spec;
            out.push_back(std::move(*t));
            const auto ps = std::find_if(now.probes.begin(), now.probes.end(),
                                         [&](const ProbeStats& s) { return s.id == p.id; });
            if (!shown && ps != now.probes.end() && ps->removed_by) {
                removed_shown_.push_back(p.id);
                removed_new_.push_back(*ps);
            }
        }
        return out;
    }
    for (const auto& [id, a] : events_) {
        out.push_back(a.table());
        out.back().probe_id = id;
    }
    if (clear)
        if (auto r = reset(); !r)
            return std::move(r).error();
    return out;
}

Result<SessionStats> AggrCollector::stats() {
    if (auto* session = dynamic_cast<Session*>(tracer_))
        return session->stats();
    SessionStats s;
    for (const PtraceProbe& p : dynamic_cast<PtraceSession&>(*tracer_).probes()) {
        ProbeStats ps;
        ps.id = p.id;
        ps.spec = p.spec;
        ps.hits = p.hits;
        ps.delivered = p.delivered;
        ps.rejected = p.rejected;
        // As the kernel's: the calls entered and not returned, left (p.unreturned) or still
        // inside. A return is delivered or rejected; ptrace drops none.
        ps.unreturned = std::max(p.hits - std::min(p.hits, p.delivered + p.rejected), p.unreturned);
        s.probes.push_back(std::move(ps));
    }
    return s;
}

namespace {

// The start of every note on probe `id`'s removal, the session's and ours.
std::string removedPrefix(std::uint32_t id, const std::string& spec) {
    return fmt::format("probe {} ({}) was removed by another client", id, spec);
}

}  // namespace

std::vector<std::string> AggrCollector::takeRemovedNotes(bool clear) {
    std::vector<std::string> out;
    for (const ProbeStats& p : removed_new_) {
        removed_said_.push_back(removedPrefix(p.id, p.spec));
        out.push_back(fmt::format("{}, {}: its table above ends at the removal{}",
                                  removed_said_.back(), probeRemover(p),
                                  clear ? "; the next read-outs leave it out" : ""));
    }
    removed_new_.clear();
    return out;
}

std::vector<std::string> AggrCollector::notSaidYet(std::vector<std::string> notes) const {
    std::erase_if(notes, [&](const std::string& n) {
        return std::any_of(removed_said_.begin(), removed_said_.end(),
                           [&](const std::string& said) { return n.starts_with(said); });
    });
    return notes;
}

}  // namespace probectl::cli
