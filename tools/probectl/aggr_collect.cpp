// AggrCollector: the kernel's maps, or events aggregated here (ptrace backend, --ustack=dwarf).
#include "aggr_collect.hpp"

#include <algorithm>
#include <cerrno>
#include <set>

#include <fmt/format.h>

#include "open_tracer.hpp"
#include "probectl/expand.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli {

std::size_t mapProbesOf(const std::vector<ProbeSpec>& specs, pid_t pid,
                        const std::shared_ptr<UserResolveCache>& cache) {
    SpecExpander expander(pid, nullptr, cache);
    std::set<std::string> given;      // attachSpecs adds a spec given twice once
    std::set<std::string> locations;  // a glob skips a name an earlier spec probes
    std::size_t probes = 0;
    for (const ProbeSpec& s : specs) {
        if (!given.insert(s.str()).second)
            continue;
        auto x = expander.expand(s);
        if (!x) {
            probes++;
            continue;
        }
        const bool glob = hasGlob(s) && !x->exact;
        for (const ProbeSpec& one : x->specs) {
            if (!locations.insert(one.locationStr()).second && glob)
                continue;
            // Session::add adds a probe, and a map, per site: a USDT probe's every site, a
            // function's out-of-line and inlined copies.
            std::size_t sites = 1;
            if (kindInfo(one.kind).user_space) {
                UserResolveOptions ro;
                ro.pid = pid;
                ro.cache = cache;
                if (auto all = resolveUserSpecAll(one, ro); all && !all->empty())
                    sites = all->size();
            }
            probes += sites;
        }
    }
    return probes;
}

MapShare mapShareFor(const AggrCliOptions& o, pid_t pid,
                     const std::shared_ptr<UserResolveCache>& cache) {
    MapShare share;
    if (o.backend == "ptrace" || o.ustack == "dwarf" || o.aggr.max_entries || o.aggr.keys.empty())
        return share;
    share.probes = mapProbesOf(o.specs, pid, cache);
    if (share.probes == 0)
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
    const std::string keys =
        fmt::format("{} key{}", share.smallest, share.smallest == 1 ? "" : "s");
    const std::string rest =
        "hits with a key beyond are counted as map full (--max-entries N asks for N keys a map)";
    if (share.probes == 1 && share.attached <= 1)
        return fmt::format(
            "probectl: note: a map of {} keys does not fit the module's max_map_kb ({} KiB): the "
            "probe's map holds up to {}; {}",
            kAggrDefaultEntries, share.limit_bytes / 1024, keys, rest);
    if (share.attached >= share.probes)
        return fmt::format(
            "probectl: note: {} probes share the module's max_map_kb ({} KiB): each map holds up "
            "to {}, not {}; {}",
            share.attached, share.limit_bytes / 1024, keys, kAggrDefaultEntries, rest);
    // Sized before attaching: some of the probes counted were refused since.
    return fmt::format(
        "probectl: note: the maps were sized for the {} probes asked for to share the module's "
        "max_map_kb ({} KiB); {} of them attached, each map holding up to {}, not {}; {}",
        share.probes, share.limit_bytes / 1024, share.attached, keys, kAggrDefaultEntries, rest);
}

Error mapShareRefusal(const MapShare& share, std::uint64_t one_key) {
    const std::uint64_t need_kb = (one_key * share.probes + 1023) / 1024;
    const std::string raise = fmt::format(
        "raise the module parameter max_map_kb to {} or more (at {} {} one key: echo {} > "
        "/sys/module/probectl/parameters/max_map_kb)",
        need_kb, need_kb, share.probes == 1 ? "the map holds" : "each map holds", need_kb);
    const std::string keys = "use fewer or smaller keys (an integer key takes 8 bytes, a string " +
                             std::to_string(kAggrStrLen) + ")";
    const std::string one = fmt::format("one key of this map needs {} bytes ({} possible CPU{})",
                                        one_key, share.ncpus, share.ncpus == 1 ? "" : "s");
    if (share.probes == 1)
        return makeError(ENOSPC,
                         fmt::format("not even one key fits the map: the module's max_map_kb is "
                                     "{} KiB and {} (limit: max_map_kb); {}, or {}",
                                     share.limit_bytes / 1024, one, raise, keys));
    return makeError(
        ENOSPC,
        fmt::format("not even one key fits the map: {} probes share the module's max_map_kb "
                    "({} KiB), {} bytes each, and {} (limit: max_map_kb); trace fewer probes, "
                    "{}, or {}",
                    share.probes, share.limit_bytes / 1024, share.bytes, one, raise, keys));
}

Result<std::unique_ptr<Tracer>> openAggrTracer(const AggrCliOptions& o, MapShare* share,
                                               std::shared_ptr<UserResolveCache> cache) {
    const AggrSpec spec = o.aggr;
    // --ustack=dwarf: no map in the kernel, every hit is recorded with its snapshot.
    const bool dwarf = o.ustack == "dwarf";
    const std::uint32_t bytes = o.stack_size ? o.stack_size : kUstackSnapshotDefault;
    return openTracerFor(
        o, o.seccomp,
        [spec, dwarf, bytes, share, cache](SessionOptions& so) {
            so.resolve_cache = cache;
            so.prepare = [spec, dwarf, bytes, share](ProbeRequest& req,
                                                     std::vector<FetchArg>& fetch) -> Result<void> {
                if (!dwarf) {
                    auto r = prepareAggregation(spec, req, fetch);
                    if (r && share && share->bytes && !spec.max_entries && req.aggr &&
                        req.aggr->nkeys) {
                        const AggrMapSize size = aggrMapSize(req, fetch);
                        const std::uint32_t n = aggrEntriesWithin(
                            size, share->bytes, req.aggr->max_entries, share->ncpus);
                        // Not even one key fits: refused here, with the cause and what to
                        // do (asked as is, the kernel's refusal named a map of 1024 keys).
                        if (n == 0)
                            return mapShareRefusal(*share, aggrMapBytes(size, 1, share->ncpus));
                        if (n < req.aggr->max_entries) {
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
        [spec, dwarf, bytes, cache](PtraceSessionOptions& so) {
            so.resolve_cache = cache;
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
