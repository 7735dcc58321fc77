// AggrCollector: the kernel's maps, or the ptrace backend's events aggregated here.
#include "aggr_collect.hpp"

#include "probectl/ptrace_session.hpp"

namespace probectl::cli {

Result<std::unique_ptr<Tracer>> openAggrTracer(const AggrCliOptions& o) {
    const pid_t resolve_pid = o.pids.size() == 1 ? static_cast<pid_t>(o.pids[0]) : 0;
    if (o.backend == "ptrace") {
        PtraceSessionOptions so;
        so.tgids = o.pids;
        so.follow = o.follow;
        so.command = o.command;
        so.resolve_pid = resolve_pid;
        so.seccomp = o.seccomp;
        auto s = PtraceSession::open(so);
        if (!s)
            return std::move(s).error();
        return std::unique_ptr<Tracer>(std::make_unique<PtraceSession>(std::move(*s)));
    }
    SessionOptions so;
    so.tgids = o.pids;
    so.follow = o.follow;
    so.command = o.command;
    so.resolve_pid = resolve_pid;
    so.uretprobe_despite_exceptions = o.force;
    so.maxactive = o.maxactive;
    so.match_pids = o.match_pids;
    so.match_tids = o.match_tids;
    so.match_uids = o.match_uids;
    so.match_comm = o.match_comm;
    const AggrSpec spec = o.aggr;
    so.prepare = [spec](ProbeRequest& req, std::vector<FetchArg>& fetch) {
        return prepareAggregation(spec, req, fetch);
    };
    auto s = Session::open(so);
    if (!s)
        return std::move(s).error();
    return std::unique_ptr<Tracer>(std::make_unique<Session>(std::move(*s)));
}

Result<AggrCollector> AggrCollector::create(Tracer& tracer, const AggrSpec& spec) {
    AggrCollector c(tracer, spec);
    if (auto r = c.reset(); !r)
        return std::move(r).error();
    return c;
}

Result<void> AggrCollector::reset() {
    auto* pt = dynamic_cast<PtraceSession*>(tracer_);
    if (!pt)
        return {};
    events_.clear();
    for (const PtraceProbe& p : pt->probes()) {
        auto a = EventAggregator::create(spec_, p.spec);
        if (!a)
            return std::move(a).error();
        events_.emplace_back(p.id, std::move(*a));
    }
    return {};
}

EventCallback AggrCollector::callback() {
    return [this](const Event& ev) {
        for (auto& [id, a] : events_)
            if (id == ev.probe_id) {
                a.add(ev);
                return;
            }
    };
}

Result<std::vector<AggrTable>> AggrCollector::tables(bool clear) {
    std::vector<AggrTable> out;
    if (auto* session = dynamic_cast<Session*>(tracer_)) {
        for (const SessionProbe& p : session->probes()) {
            auto t =
                readAggregation(session->client(), p.id, p.resolution.request, p.fetch_args, clear);
            if (!t)
                return std::move(t).error();
            t->spec = p.spec;
            out.push_back(std::move(*t));
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
        ps.unreturned = p.unreturned;
        s.probes.push_back(std::move(ps));
    }
    return s;
}

}  // namespace probectl::cli
