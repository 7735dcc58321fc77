// Session: a Client plus the bookkeeping that turns raw records into tagged events and
// end-of-trace statistics.
#include "probectl/session.hpp"

#include <fmt/format.h>

#include "probectl/fetch_decode.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/user_target.hpp"

#include <cerrno>
#include <deque>
#include <optional>
#include <unordered_map>

namespace probectl {

namespace {

// The spec's fetch arguments as one concatenated program list for ProbeRequest::fetch.
Result<std::vector<FetchInsn>> fetchProgram(const ProbeSpec& spec) {
    std::vector<FetchInsn> out;
    auto progs = compileFetchArgs(spec.fetch_args);
    if (!progs)
        return makeError(EINVAL, fmt::format("{}: {}", spec.text, progs.error().message));
    for (const auto& p : *progs)
        out.insert(out.end(), p.insns.begin(), p.insns.end());
    return out;
}

// The spec's predicate compiled against `args` (the spec's fetch arguments, or a USDT
// probe's own); an empty program when the spec has none.
Result<FilterProgram> filterProgram(const ProbeSpec& spec, const std::vector<FetchArg>& args) {
    if (spec.filter.empty())
        return FilterProgram{};
    auto node = parseFilter(spec.text, args, spec.filter_begin);
    if (!node)
        return toError(node.error());
    auto prog = compileFilter(**node);
    if (!prog)
        return makeError(EINVAL, fmt::format("{}: {}", spec.text, prog.error().message));
    return prog;
}

}  // namespace

bool SessionStats::anyLoss() const {
    if (lost || overruns)
        return true;
    for (const auto& p : probes)
        if (p.dropped || p.nmissed)
            return true;
    return false;
}

struct Session::Impl {
    Client client;
    SessionOptions options;
    std::optional<KernelSymbols> own_symbols;  // loaded on demand when options.symbols is null
    bool symbols_tried = false;
    std::optional<Result<Tracepoints>> tracepoints;  // loaded by the first tracepoint: spec
    std::vector<SessionProbe> probes;
    // Spec texts live here, not in `probes`, so Event::spec views stay valid as it grows.
    std::deque<std::string> spec_texts;
    std::unordered_map<std::uint32_t, std::size_t> index;  // probe id -> probes[]
    std::unordered_map<std::uint32_t, std::string_view> spec_of;
    std::uint64_t lost = 0;

    explicit Impl(Client c, SessionOptions o) : client(std::move(c)), options(std::move(o)) {}

    ~Impl() {
        // The kernel removes them when the socket closes anyway; removing them first makes
        // the end explicit and keeps `probectl list` tidy if the socket lingers.
        for (const auto& p : probes)
            (void)client.removeProbe(p.id);
    }

    const KernelSymbols* symbols() {
        if (options.symbols)
            return options.symbols;
        if (!symbols_tried) {
            symbols_tried = true;
            auto ks = KernelSymbols::load();
            if (ks)
                own_symbols = std::move(*ks);
        }
        return own_symbols ? &*own_symbols : nullptr;
    }

    EventCallback wrap(const EventCallback& cb) {
        return [this, &cb](const Event& ev) {
            auto it = index.find(ev.probe_id);
            if (it == index.end()) {
                // A record for a probe we no longer track (removed mid-flight): pass it on.
                if (cb)
                    cb(ev);
                return;
            }
            SessionProbe& p = probes[it->second];
            p.delivered++;
            if (cb) {
                Event tagged = ev;
                tagged.spec = spec_of[ev.probe_id];
                tagged.syscall = p.syscall.get();
                tagged.syscall_returned = p.syscall && ev.is_return;
                for (std::size_t i = 0; i < tagged.fetched.size() && i < p.fetch_args.size(); i++)
                    tagged.values.push_back(decodeFetchedValue(
                        p.fetch_args[i], tagged.fetched[i].bytes, tagged.fetched[i].flags));
                cb(tagged);
            }
        };
    }

    LostCallback lostCounter() {
        return [this](std::uint64_t n) { lost += n; };
    }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session> Session::open(SessionOptions options) {
    auto c = Client::connect(options.client);
    if (!c)
        return std::move(c).error();
    auto impl = std::make_unique<Impl>(std::move(*c), std::move(options));
    if (!impl->options.tgids.empty())
        if (auto r = impl->client.setSessionTgids(impl->options.tgids, impl->options.follow); !r)
            return r.error();
    const SessionOptions& o = impl->options;
    if (!o.match_pids.empty() || !o.match_tids.empty() || !o.match_uids.empty() ||
        !o.match_comm.empty())
        if (auto r = impl->client.setSessionMatch(o.match_pids, o.match_tids, o.match_uids,
                                                  o.match_comm);
            !r)
            return r.error();
    return Session(std::move(impl));
}

Result<std::uint32_t> Session::add(std::string_view spec) {
    auto parsed = parseProbeSpec(spec);
    if (!parsed)
        return toError(parsed.error());
    return add(*parsed);
}

Result<std::uint32_t> Session::add(const ProbeSpec& spec_in) {
    ProbeSpec spec = spec_in;
    if (spec.text.empty())
        spec.text = spec.str();
    if ((spec.kind == SpecKind::Kretprobe || spec.kind == SpecKind::Syscall) && spec.maxactive == 0)
        spec.maxactive = impl_->options.maxactive;

    if (isUserSpace(spec.kind))
        return addUser(spec);
    Resolution res;
    if (spec.kind == SpecKind::Tracepoint) {
        if (!impl_->tracepoints)
            impl_->tracepoints = Tracepoints::load();
        if (!*impl_->tracepoints)
            return makeError(impl_->tracepoints->error().err,
                             fmt::format("{}: {}", spec.text, impl_->tracepoints->error().message));
        const Tracepoints& tps = **impl_->tracepoints;
        auto tp = tps.find(spec);
        if (!tp)
            return std::move(tp).error();
        if (spec.fetch_args.empty()) {
            spec.fetch_args = tps.defaultArgs(**tp);
        } else {
            auto args = tps.resolveArgs(**tp, spec.fetch_args);
            if (!args)
                return std::move(args).error();
            spec.fetch_args = std::move(*args);
        }
        res.request.kind = ProbeKind::Tracepoint;
        res.request.symbol = spec.symbol;
        res.symbol = spec.symbol;
        auto fetch = fetchProgram(spec);
        if (!fetch)
            return std::move(fetch).error();
        res.request.fetch = std::move(*fetch);
        auto filter = filterProgram(spec, spec.fetch_args);
        if (!filter)
            return std::move(filter).error();
        res.request.filter = std::move(*filter);
        return addRequestImpl(res, spec.text, spec.fetch_args);
    }
    if (const KernelSymbols* ks = impl_->symbols()) {
        auto r = ks->resolve(spec);
        if (!r)
            return std::move(r).error();
        res = std::move(*r);
    } else {
        // No symbol table (no /proc/kallsyms?): let the kernel resolve names itself.
        if (spec.kind == SpecKind::Syscall)
            return makeError(ENOENT, fmt::format("{}: cannot resolve a syscall without "
                                                 "/proc/kallsyms",
                                                 spec.text));
        res.request.kind =
            spec.kind == SpecKind::Kretprobe ? ProbeKind::Kretprobe : ProbeKind::Kprobe;
        res.request.symbol = spec.symbol;
        res.request.offset = spec.offset;
        res.request.addr = spec.has_addr ? spec.addr : 0;
        res.request.maxactive = spec.maxactive;
        res.symbol = spec.symbol;
    }
    std::shared_ptr<const SyscallPlan> plan;
    if (spec.kind == SpecKind::Syscall && spec.fetch_args.empty()) {
        // Generated from the syscall's metadata: what strace would show of its memory.
        auto pl = std::make_shared<SyscallPlan>(
            syscallPlan(spec.symbol, systemSyscallTable().find(spec.symbol)));
        auto progs = compileFetchArgs(pl->args);
        if (!progs)
            return makeError(EINVAL, fmt::format("{}: {}", spec.text, progs.error().message));
        for (const auto& p : *progs)
            res.request.fetch.insert(res.request.fetch.end(), p.insns.begin(), p.insns.end());
        plan = std::move(pl);
    } else {
        auto fetch = fetchProgram(spec);
        if (!fetch)
            return std::move(fetch).error();
        res.request.fetch = std::move(*fetch);
    }
    auto filter = filterProgram(spec, spec.fetch_args);
    if (!filter)
        return std::move(filter).error();
    res.request.filter = std::move(*filter);
    // A syscall's memory is read at its entry (execve's path is gone at the return); only
    // output buffers wait for the return, and they come last in a plan.
    if (spec.kind == SpecKind::Syscall && res.request.kind == ProbeKind::Kretprobe)
        res.request.fetch_entry =
            static_cast<std::uint32_t>(plan ? plan->entry_args : spec.fetch_args.size());
    auto id = addRequestImpl(res, spec.text, plan ? std::vector<FetchArg>{} : spec.fetch_args);
    if (id && plan)
        impl_->probes.back().syscall = std::move(plan);
    return id;
}

Result<std::uint32_t> Session::addUser(const ProbeSpec& spec) {
    UserResolveOptions ro;
    ro.pid = impl_->options.resolve_pid;
    auto targets = resolveUserSpecAll(spec, ro);
    if (!targets)
        return std::move(targets).error();
    std::vector<std::uint32_t> ids;
    for (const UserTarget& t : *targets) {
        Resolution res;
        res.request.kind = t.is_return ? ProbeKind::Uretprobe : ProbeKind::Uprobe;
        res.request.path = t.path;
        res.request.file_offset = t.file_offset;
        res.request.ref_ctr_offset = t.ref_ctr_offset;
        res.symbol = t.symbol;
        res.symbol_offset = t.symbol_offset;
        res.address = t.vaddr;
        std::vector<FetchArg> fetch_args = spec.fetch_args;
        if (spec.kind == SpecKind::Usdt) {
            auto u = usdtFetch(t.usdt_args);
            if (!u)
                return makeError(EINVAL, fmt::format("{}: {}", spec.text, u.error().message));
            fetch_args = std::move(u->args);
            res.request.fetch = std::move(u->insns);
        } else {
            auto fetch = fetchProgram(spec);
            if (!fetch)
                return std::move(fetch).error();
            res.request.fetch = std::move(*fetch);
        }
        // USDT: the predicate meets the site's own arguments only here.
        auto filter = filterProgram(spec, fetch_args);
        if (filter)
            res.request.filter = std::move(*filter);
        auto id = filter ? addRequestImpl(res, spec.text, std::move(fetch_args))
                         : Result<std::uint32_t>(filter.error());
        if (!id) {
            // All sites or none: take back the ones already added (the newest probes).
            for (std::size_t i = 0; i < ids.size(); i++) {
                const SessionProbe& last = impl_->probes.back();
                (void)impl_->client.removeProbe(last.id);
                impl_->index.erase(last.id);
                impl_->spec_of.erase(last.id);
                impl_->probes.pop_back();
            }
            return id;
        }
        ids.push_back(*id);
    }
    return ids.front();
}

Result<std::uint32_t> Session::addRequest(const ProbeRequest& req, std::string spec) {
    Resolution res;
    res.request = req;
    res.symbol = req.symbol;
    res.address = req.addr;
    return addRequestImpl(res, std::move(spec));
}

Result<std::uint32_t> Session::addRequestImpl(const Resolution& res_in, std::string spec,
                                              std::vector<FetchArg> fetch_args) {
    Resolution res = res_in;
    if (impl_->options.prepare)
        if (auto r = impl_->options.prepare(res.request, fetch_args); !r)
            return makeError(r.error().err, fmt::format("{}: {}", spec, r.error().message));
    auto added = impl_->client.addProbe(res.request);
    if (!added) {
        Error e = added.error();
        // Lead with the user's spec: the kernel's wording names the resolved symbol.
        e.message = fmt::format("{}: {}", spec, e.message);
        return e;
    }
    SessionProbe p;
    p.id = added->id;
    p.spec = spec;
    p.resolution = res;
    p.addr = added->addr;
    p.fetch_args = std::move(fetch_args);
    impl_->spec_texts.push_back(std::move(spec));
    impl_->spec_of[p.id] = impl_->spec_texts.back();
    impl_->index[p.id] = impl_->probes.size();
    impl_->probes.push_back(std::move(p));
    return added->id;
}

Result<void> Session::setTgids(const std::vector<std::uint32_t>& tgids, bool follow) {
    auto r = impl_->client.setSessionTgids(tgids, follow);
    if (r) {
        impl_->options.tgids = tgids;
        impl_->options.follow = follow;
    }
    return r;
}

Result<std::size_t> Session::poll(int timeout_ms, const EventCallback& cb) {
    return impl_->client.poll(timeout_ms, impl_->wrap(cb), impl_->lostCounter());
}

Result<std::size_t> Session::consume(const EventCallback& cb) {
    return impl_->client.consume(impl_->wrap(cb), impl_->lostCounter());
}

Result<void> Session::run(const EventCallback& cb, const std::function<bool()>& should_stop,
                          int tick_ms) {
    while (!(should_stop && should_stop())) {
        auto r = poll(tick_ms, cb);
        if (!r && r.error().err != EINTR)
            return r.error();
    }
    return {};
}

Result<SessionStats> Session::stop(const EventCallback& cb) {
    // Disable first so the flush drains a buffer that no longer grows.
    for (const auto& p : impl_->probes)
        if (auto r = impl_->client.disable(p.id); !r)
            return r.error();
    if (auto r = impl_->client.flush(); !r)
        return r.error();
    if (auto r = consume(cb); !r)
        return r.error();
    return stats();
}

Result<SessionStats> Session::stats() {
    auto list = impl_->client.listProbes();
    if (!list)
        return std::move(list).error();
    std::unordered_map<std::uint32_t, const ProbeInfo*> by_id;
    for (const auto& info : *list)
        by_id[info.id] = &info;
    SessionStats s;
    s.lost = impl_->lost;
    s.overruns = impl_->client.overruns();
    for (const auto& p : impl_->probes) {
        ProbeStats ps;
        ps.id = p.id;
        ps.spec = p.spec;
        ps.delivered = p.delivered;
        if (auto it = by_id.find(p.id); it != by_id.end()) {
            ps.hits = it->second->hits;
            ps.dropped = it->second->dropped;
            ps.nmissed = it->second->nmissed;
            ps.filtered = it->second->filtered;
            ps.rejected = it->second->rejected;
        }
        s.probes.push_back(std::move(ps));
    }
    return s;
}

const std::vector<SessionProbe>& Session::probes() const {
    return impl_->probes;
}
std::uint64_t Session::lost() const {
    return impl_->lost;
}
int Session::fd() const {
    return impl_->client.fd();
}
Client& Session::client() {
    return impl_->client;
}

}  // namespace probectl
