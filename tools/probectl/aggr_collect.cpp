// AggrCollector: the kernel's maps, or the ptrace backend's events aggregated here.
#include "aggr_collect.hpp"

#include "open_tracer.hpp"
#include "probectl/ptrace_session.hpp"

namespace probectl::cli {

Result<std::unique_ptr<Tracer>> openAggrTracer(const AggrCliOptions& o) {
    const AggrSpec spec = o.aggr;
    return openTracerFor(o, o.seccomp, [spec](SessionOptions& so) {
        so.prepare = [spec](ProbeRequest& req, std::vector<FetchArg>& fetch) {
            return prepareAggregation(spec, req, fetch);
        };
    });
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
