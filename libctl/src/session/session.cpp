// Session: a Client plus the bookkeeping that turns raw records into tagged events and
// end-of-trace statistics.
#include "probectl/session.hpp"

#include "kernel_code.hpp"

#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "command/entry_hold.hpp"
#include "core/event_view_access.hpp"
#include "core/step_timing.hpp"
#include "kernel/entry_stack.hpp"
#include "probectl/fetch_decode.hpp"
#include "probectl/held_command.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/user_target.hpp"
#include "session/open_test_hook.hpp"
#include "session/removed_notes.hpp"
#include "session/resolve_spec.hpp"
#include "target/file_identity.hpp"
#include "target/process_tree.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <optional>
#include <unordered_map>

namespace probectl {

namespace {

// Why a USDT probe with ResolvedProbe::semaphore_page_shared may see no hits.
std::string execedLaterNote(const std::string& path) {
    return fmt::format(
        "a process that execs {} while this probe exists reads the probe's "
        "semaphore as 0 and may skip the probe: the file's RELRO segment "
        "shares the semaphore's page (lld's layout) and the kernel raises it "
        "there at exec. Running processes (-p PID) and the command of "
        "`-- CMD` get it right; linking with -z separate-loadable-segments "
        "avoids it",
        path);
}

// Where the semaphore at file offset `offset` of `path` is in a process whose dynamic loader
// has run: the writable mapping of that file holding the offset (RELRO is read-only by
// then). Errors: ENOENT when no writable mapping holds it (the file is not loaded yet).
Result<std::uint64_t> semaphoreAddress(const ProcMaps& maps, const std::string& path,
                                       std::uint64_t offset) {
    auto id = identifyFile(path);
    for (const ProcMapping& m : maps.mappings())
        if (id && m.isFile() && m.writable() && m.inode == id->ino &&
            m.dev_major == major(id->dev) && m.dev_minor == minor(id->dev) &&
            m.holdsFileOffset(offset))
            return m.address(offset);
    return makeError(ENOENT, fmt::format("no writable mapping of {} holds file offset {:#x}: "
                                         "it is not loaded at the command's entry point",
                                         path, offset));
}

// After SessionOptions::prepare: a value it put among a syscall's entry reads (a stack,
// kernel_stacks.hpp) sits before the plan's return values, which the plan's copy says; and
// the values print as before, the added ones after them, wherever they are in the record.
void settleLayout(ResolvedProbe& site, const std::vector<FetchArg>& before) {
    const ProbeRequest& req = site.res.request;
    if (site.plan && !site.plan->hints.empty() &&
        detail::programCount(req.fetch) == site.plan->hints.size() + site.args.size() &&
        req.fetch_entry > site.plan->entry_args) {
        auto plan = std::make_shared<SyscallPlan>(*site.plan);
        plan->entry_extra = req.fetch_entry - plan->entry_args;
        site.plan = std::move(plan);
    }
    std::vector<std::size_t> order;  // the arguments before, in the order they print
    if (!site.shown.empty())
        order = site.shown;
    else
        for (std::size_t i = 0; i < before.size(); i++)
            order.push_back(i);
    bool moved = !site.shown.empty() && site.args.size() != before.size();
    std::vector<bool> taken(site.args.size());
    std::vector<std::size_t> shown;
    for (std::size_t i : order) {
        std::size_t j = 0;
        while (j < site.args.size() && (taken[j] || site.args[j].name != before[i].name))
            j++;
        if (j == site.args.size())
            return;  // prepare took an argument away: nothing to reorder by
        taken[j] = true;
        moved = moved || j != i;
        shown.push_back(j);
    }
    if (!moved)
        return;
    for (std::size_t j = 0; j < site.args.size(); j++)
        if (!taken[j])
            shown.push_back(j);
    site.shown = std::move(shown);
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
    HeldCommand command;  // first: destroyed last, after the probes are gone
    Client client;
    SessionOptions options;
    std::optional<KernelSymbols> own_symbols;  // loaded on demand when options.symbols is null
    bool symbols_tried = false;
    std::optional<Result<Tracepoints>> tracepoints;  // loaded by the first tracepoint: spec
    std::vector<SessionProbe> probes;
    // Spec texts live here, not in `probes`, so Event::spec views stay valid as it grows.
    std::deque<std::string> spec_texts;
    std::unordered_map<std::uint32_t, std::size_t> index;  // probe id -> probes[]
    std::vector<FileIdentity> files;                       // probed files as they were when added
    std::unordered_map<std::uint32_t, std::string_view> spec_of;
    // probe id -> where each of the spec's fetch arguments is in the record (ResolvedProbe)
    std::unordered_map<std::uint32_t, std::vector<std::size_t>> shown_of;
    std::uint64_t lost = 0;
    // USDT semaphores the kernel would raise in the wrong mapping when the command execs
    // (ResolvedProbe::semaphore_page_shared): raised here at its entry point instead.
    struct EntrySemaphore {
        std::uint32_t id;  // its probe: counted only if the probe stayed
        std::string spec;
        std::string path;
        std::uint64_t offset;
    };
    std::vector<EntrySemaphore> entry_semaphores;
    std::vector<std::string> start_notes;  // for stats(): found by start()
    // Readable once the released command has ended (pidfd_open), so a poll wakes at its
    // exit instead of at the caller's next tick; -1 without a command or a pidfd.
    int command_fd = -1;

    explicit Impl(Client c, SessionOptions o) : client(std::move(c)), options(std::move(o)) {}
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    // The probes go when `client` closes its socket: the kernel removes a socket's probes in
    // one batch (one RCU grace period per kind), where a PROBE_DEL each would wait for one
    // per probe: seconds for a glob's thousand kprobes.
    ~Impl() {
        if (command_fd >= 0)
            ::close(command_fd);
    }

    // `exact`: the spec is an address, which the cache's table (no BPF programs or
    // trampolines) could place in the wrong function: the whole of /proc/kallsyms then.
    const KernelSymbols* symbols(bool exact) {
        if (options.symbols)
            return options.symbols;
        if (!symbols_tried || (exact && own_symbols && !own_symbols->complete())) {
            symbols_tried = true;
            auto ks = exact ? KernelSymbols::load() : KernelSymbols::loadCurrent();
            if (ks)
                own_symbols = std::move(*ks);
        }
        return own_symbols ? &*own_symbols : nullptr;
    }

    // Each record's view with what the session knows of its probe (spec, syscall plan,
    // fetch arguments in the spec's order): still no copy. The last probe's lookups are
    // kept for the next record (a batch mostly holds one probe's records); the cache lives
    // as long as one read, within which only an add() from the callback could change the
    // tables, and that only appends.
    EventViewCallback wrap(const EventViewCallback& cb) {
        struct Last {
            std::uint32_t id = 0;
            std::size_t probe = SIZE_MAX;  // SIZE_MAX: no probe looked up yet
            std::string_view spec;
            const std::vector<std::size_t>* shown = nullptr;
        };
        return [this, &cb, last = Last{}](const EventView& v) mutable {
            const std::uint32_t id = v.probeId();
            if (last.probe == SIZE_MAX || last.id != id) {
                auto it = index.find(id);
                if (it == index.end()) {
                    // A record for a probe we no longer track (removed mid-flight): pass it on.
                    if (cb)
                        cb(v);
                    return;
                }
                auto s = shown_of.find(id);
                last = {id, it->second, spec_of[id], s == shown_of.end() ? nullptr : &s->second};
            }
            SessionProbe& p = probes[last.probe];
            p.delivered++;
            if (cb)
                cb(detail::EventViewAccess::withProbe(v, last.spec, p.syscall.get(), &p.fetch_args,
                                                      last.shown));
        };
    }

    LostCallback lostCounter() {
        return [this](std::uint64_t n) { lost += n; };
    }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    setAdoptsOrphans(impl_->command.adoptsOrphans());
}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() {
    if (!impl_)
        return;
    // Closing the socket takes the probes away (see ~Impl).
    detail::StepTimer timer("session: close");
    impl_.reset();
}

Result<Session> Session::open(SessionOptions options) {
    // The command is forked before the socket exists: a held child that still had the
    // probes' owner socket would keep the probes alive after a SIGKILLed tracer until the
    // child, killed by PDEATHSIG, got round to exiting.
    HeldCommand command;
    detail::StepTimer opening("session: fork, connect, filter");
    if (!options.command.empty()) {
        auto held = HeldCommand::spawn(options.command, options.adopt_orphans);
        if (!held)
            return std::move(held).error();
        command = std::move(*held);
    }
    auto c = Client::connect(options.client);
    if (!c)
        return std::move(c).error();
    auto impl = std::make_unique<Impl>(std::move(*c), std::move(options));
    if (command.pid() > 0) {
        impl->command = std::move(command);
        impl->options.tgids.push_back(static_cast<std::uint32_t>(impl->command.pid()));
    }
    if (!impl->options.tgids.empty())
        if (auto r = impl->client.setSessionTgids(impl->options.tgids, impl->options.follow); !r)
            return r.error();
    // Following covers forks from now on; the children the traced processes have already
    // (read after the filter is set, so none forked before the read is missed) are added to
    // it. Added, not set: a second SESSION_SET would replace the filter, dropping the
    // processes forked between the read and it, which only the module's following put in.
    if (impl->options.follow && !impl->options.tgids.empty()) {
        std::vector<std::uint32_t> children;
        const auto known = [&](std::uint32_t id) {
            return std::ranges::find(impl->options.tgids, id) != impl->options.tgids.end() ||
                   std::ranges::find(children, id) != children.end();
        };
        for (std::uint32_t tgid : impl->options.tgids)
            for (pid_t d : descendantsOf(static_cast<pid_t>(tgid)))
                if (!known(static_cast<std::uint32_t>(d)))
                    children.push_back(static_cast<std::uint32_t>(d));
        if (test_hooks::afterReadingChildrenOnOpen)
            test_hooks::afterReadingChildrenOnOpen();
        if (!children.empty()) {
            std::vector<std::uint32_t> all = impl->options.tgids;
            all.insert(all.end(), children.begin(), children.end());
            auto r = impl->client.addSessionTgids(children);
            if (!r && r.error().err == EOPNOTSUPP) {
                // A module older than SESSION_ADD: the whole list set again, as before it,
                // which drops what was forked since the read; the end of the run says so.
                r = impl->client.setSessionTgids(all, true);
                if (r)
                    impl->start_notes.emplace_back(
                        "the loaded probectl.ko has no SESSION_ADD, so a process forked while "
                        "the trace started may have been left out of it: load the probectl.ko "
                        "of this release");
            }
            if (!r)
                return r.error();
            impl->options.tgids = std::move(all);
        }
    }
    const SessionOptions& o = impl->options;
    if (!o.match_pids.empty() || !o.match_tids.empty() || !o.match_uids.empty() ||
        !o.match_comm.empty())
        if (auto r = impl->client.setSessionMatch(o.match_pids, o.match_tids, o.match_uids,
                                                  o.match_comm);
            !r)
            return r.error();
    opening.done();
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
    detail::StepTimer timer("add " + spec.text);
    if (kindInfo(spec.kind).maxactive && spec.maxactive == 0)
        spec.maxactive = impl_->options.maxactive;

    ResolveContext ctx;
    ctx.symbols = [this, exact = spec.has_addr] { return impl_->symbols(exact); };
    ctx.tracepoints = [this]() -> Result<const Tracepoints*> {
        if (!impl_->tracepoints)
            impl_->tracepoints = Tracepoints::load();
        if (!*impl_->tracepoints)
            return impl_->tracepoints->error();
        return &**impl_->tracepoints;
    };
    ctx.pid = impl_->options.resolve_pid;
    ctx.user_cache = impl_->options.resolve_cache;
    ctx.uretprobe_despite_exceptions = impl_->options.uretprobe_despite_exceptions;
    // Every site or none; `by_name`: a site was resolved without kallsyms.
    auto addSites = [&](bool& by_name) -> Result<std::uint32_t> {
        auto sites = resolveSpec(spec, ctx);
        if (!sites)
            return std::move(sites).error();
        for (ResolvedProbe& site : *sites) {
            by_name = by_name || site.by_name;
            if (auto r = compileProbe(spec, site); !r)
                return r.error();
            // A refusal keeps its kind: one marked usage (an unknown key) exits 2 in the CLI.
            if (impl_->options.prepare) {
                const std::vector<FetchArg> before = site.args;
                if (auto r = impl_->options.prepare(site.res.request, site.args); !r) {
                    Error e = std::move(r).error();
                    e.message = fmt::format("{}: {}", spec.text, e.message);
                    return e;
                }
                settleLayout(site, before);
            }
            markUserStackEntry(site.res.request);
        }

        const std::size_t before = impl_->probes.size();
        for (ResolvedProbe& site : *sites) {
            const bool own_semaphore = site.semaphore_page_shared &&
                                       site.res.request.ref_ctr_offset && impl_->command.held();
            const std::uint64_t semaphore = site.res.request.ref_ctr_offset;
            if (own_semaphore)
                site.res.request.ref_ctr_offset = 0;
            auto id = addRequestImpl(site.res, spec.text + site.site_label, std::move(site.args));
            if (!id) {
                // All sites or none: take back the ones already added (the newest probes).
                while (impl_->probes.size() > before) {
                    const SessionProbe& last = impl_->probes.back();
                    (void)impl_->client.removeProbe(last.id);
                    impl_->index.erase(last.id);
                    impl_->spec_of.erase(last.id);
                    impl_->shown_of.erase(last.id);
                    impl_->probes.pop_back();
                }
                return id;
            }
            impl_->probes.back().syscall = std::move(site.plan);
            if (own_semaphore)
                impl_->entry_semaphores.push_back(
                    {*id, spec.text, site.res.request.path, semaphore});
            if (site.semaphore_page_shared && semaphore && !own_semaphore &&
                (impl_->options.tgids.empty() || impl_->options.follow))
                addNote(fmt::format("{}: {}", spec.text, execedLaterNote(site.res.request.path)));
            if (!site.note.empty())
                addNote(fmt::format("{}: {}", spec.text, site.note));
            if (!site.shown.empty())
                impl_->shown_of[impl_->probes.back().id] = std::move(site.shown);
        }
        return impl_->probes[before].id;
    };
    // First without kallsyms where the kernel resolves the name alone (unless the caller
    // gave a table: nothing to save); a refusal of such a site is resolved again against
    // kallsyms, whose checks name what is wrong.
    ctx.by_name = !impl_->options.symbols;
    bool by_name = false;
    auto id = addSites(by_name);
    if (id || !by_name)
        return id;
    ctx.by_name = false;
    return addSites(by_name);
}

Result<ProbeRequest> Session::resolveRequest(const ProbeSpec& spec_in,
                                             const SessionOptions& options) {
    ProbeSpec spec = spec_in;
    if (spec.text.empty())
        spec.text = spec.str();
    if (!spec.fetch_args.empty() || !spec.predicate.empty())
        return makeError(EINVAL, fmt::format("{}: a request alone carries no fetch arguments "
                                             "or predicate",
                                             spec.text));
    if (kindInfo(spec.kind).maxactive && spec.maxactive == 0)
        spec.maxactive = options.maxactive;
    std::optional<Result<KernelSymbols>> symbols;
    std::optional<Result<Tracepoints>> tracepoints;
    ResolveContext ctx;
    ctx.symbols = [&]() -> const KernelSymbols* {
        if (options.symbols)
            return options.symbols;
        if (!symbols)
            symbols = spec.has_addr ? KernelSymbols::load() : KernelSymbols::loadCurrent();
        return *symbols ? &**symbols : nullptr;
    };
    ctx.tracepoints = [&]() -> Result<const Tracepoints*> {
        if (!tracepoints)
            tracepoints = Tracepoints::load();
        if (!*tracepoints)
            return tracepoints->error();
        return &**tracepoints;
    };
    ctx.pid = options.resolve_pid;
    ctx.user_cache = options.resolve_cache;
    ctx.uretprobe_despite_exceptions = options.uretprobe_despite_exceptions;
    auto sites = resolveSpec(spec, ctx);
    if (!sites)
        return std::move(sites).error();
    if (sites->size() > 1) {
        // A USDT probe in several places: resolveUserSpec's error names each site.
        UserResolveOptions ro;
        ro.pid = options.resolve_pid;
        if (auto one = resolveUserSpec(spec, ro); !one)
            return std::move(one).error();
        return makeError(ENOTUNIQ, fmt::format("{}: {} sites", spec.text, sites->size()));
    }
    ProbeRequest req = std::move(sites->front().res.request);
    req.label = labelOf(spec.text);
    return req;
}

Result<std::uint32_t> Session::addRequest(const ProbeRequest& req, std::string spec) {
    Resolution res;
    res.request = req;
    res.symbol = req.symbol;
    res.address = req.addr;
    return addRequestImpl(res, std::move(spec));
}

Result<std::uint32_t> Session::addRequestImpl(const Resolution& res, std::string spec,
                                              std::vector<FetchArg> fetch_args) {
    ProbeRequest req = res.request;
    if (req.label.empty())
        req.label = labelOf(spec);
    auto added = impl_->client.addProbe(req);
    if (!added) {
        Error e = added.error();
        // Lead with the user's spec: the kernel's wording names the resolved symbol.
        e.message = fmt::format("{}: {}", spec, e.message);
        if (e.err == EILSEQ && res.address && res.symbol_offset)
            if (std::string hint = kprobeBoundaryHint(res.symbol, res.address - res.symbol_offset,
                                                      res.symbol_offset);
                !hint.empty())
                e.message += "; " + hint;
        if (e.err == EINVAL && e.message.find("fetched values need up to") != std::string::npos)
            for (const auto& in : req.fetch)
                if (in.op == static_cast<std::uint8_t>(FetchOpcode::StoreUstackSnapshot))
                    e.message += fmt::format(
                        "; the user stack copy takes {} bytes of it ({} of registers and "
                        "--stack-size {}): a smaller --stack-size or fewer fetched bytes fit",
                        kUstackRegsBytes + in.operand, kUstackRegsBytes, in.operand);
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
    rememberFile(impl_->files, res.request.path);
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

Result<TracedProcesses> Session::tracedProcesses() {
    auto r = impl_->client.getSessionFilter();
    if (!r)
        return std::move(r).error();
    return TracedProcesses{r->session_live, r->session_procs};
}

Result<std::size_t> Session::pollViews(int timeout_ms, const EventViewCallback& cb) {
    if (impl_->command_fd >= 0 && timeout_ms != 0) {
        // Wait for records or the command's end, whichever comes first; the timeout stays
        // the bound, so a pidfd that never fires costs the old tick and no more.
        pollfd fds[2] = {{impl_->client.fd(), POLLIN, 0}, {impl_->command_fd, POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms) < 0)
            return makeError(errno, "poll");
        // It stays readable: wake once, so a caller that polls on after the end (without
        // reaping) waits its timeouts again instead of spinning.
        if (fds[1].revents) {
            ::close(impl_->command_fd);
            impl_->command_fd = -1;
        }
        // Polled already: read straight away rather than poll the socket a second time.
        return impl_->client.consumeAtMostViews(Client::kPollMaxDatagrams, impl_->wrap(cb),
                                                impl_->lostCounter());
    }
    return impl_->client.pollViews(timeout_ms, impl_->wrap(cb), impl_->lostCounter());
}

Result<std::size_t> Session::poll(int timeout_ms, const EventCallback& cb) {
    return pollViews(timeout_ms, detail::asViewCallback(cb));
}

Result<std::size_t> Session::consumeViews(const EventViewCallback& cb) {
    return impl_->client.consumeViews(impl_->wrap(cb), impl_->lostCounter());
}

Result<std::size_t> Session::consume(const EventCallback& cb) {
    return consumeViews(detail::asViewCallback(cb));
}

Result<void> Session::start() {
    if (impl_->command.pid() <= 0)
        return {};
    if (impl_->command_fd < 0)
        impl_->command_fd = static_cast<int>(::syscall(SYS_pidfd_open, impl_->command.pid(), 0));
    std::vector<const Impl::EntrySemaphore*> sems;
    for (const auto& e : impl_->entry_semaphores)
        if (impl_->index.count(e.id))
            sems.push_back(&e);
    if (sems.empty())
        return impl_->command.release();
    auto raise = [&](pid_t pid, const ptrace::ProcMem& mem) -> Result<void> {
        auto maps = ProcMaps::read(pid);
        for (const auto* e : sems) {
            auto where = maps ? semaphoreAddress(*maps, e->path, e->offset)
                              : Result<std::uint64_t>{maps.error()};
            auto r = where ? addToU16(mem, *where, 1) : Result<void>{where.error()};
            if (!r)
                impl_->start_notes.push_back(
                    fmt::format("{}: its semaphore was not raised in the command ({}), so the "
                                "program may skip the probe; {}",
                                e->spec, r.error().message, execedLaterNote(e->path)));
        }
        return {};
    };
    auto r = releaseToEntry(impl_->command, raise);
    if (!r && impl_->command.held()) {
        // Not even started (no ptrace permission): run it as usual and say what that costs.
        for (const auto* e : sems)
            impl_->start_notes.push_back(fmt::format(
                "{}: the command could not be held at its entry point to raise the probe's "
                "semaphore ({}), so the program may skip the probe; {}",
                e->spec, r.error().message, execedLaterNote(e->path)));
        return impl_->command.release();
    }
    return r;
}

pid_t Session::commandPid() const {
    return impl_->command.pid();
}

std::optional<int> Session::commandStatus() const {
    const auto status = impl_->command.tryWait();
    // Adopted, the command's orphans are this process's children (HeldCommand::spawn):
    // reaped here as they end, since nothing else here waits for them (the ptrace backend's
    // wait loop does). Not adopted, this process's other children are not ours to reap.
    if (impl_->command.pid() > 0 && adoptsOrphans())
        reapChildren(impl_->command.pid());
    return status;
}

std::optional<int> Session::terminateCommand(int grace_ms) {
    if (impl_->command.pid() <= 0)
        return std::nullopt;
    return impl_->command.terminate(grace_ms);
}

bool Session::killCommand() {
    if (impl_->command.pid() <= 0)
        return false;
    // The whole tree, -f or not: a process left behind would run on after probectl.
    if (adoptsOrphans()) {
        // And what the command left when it ended: every process under this one is the
        // command's (HeldCommand made this process the subreaper of its orphans).
        killTree(::getpid(), 2000);
        reapChildren(impl_->command.pid());
    } else if (!impl_->command.tryWait()) {
        // Not reaped, so the pid is still the command's.
        killTree(impl_->command.pid(), 2000);
    }
    return false;
}

Result<SessionStats> Session::stopViews(const EventViewCallback& cb) {
    detail::StepTimer timer("session: disable, flush, drain");
    // Disable first so the flush drains a buffer that no longer grows; all probes at once,
    // so that two on one code path end with the same hits.
    if (auto r = impl_->client.disableSession(); !r)
        return r.error();
    if (auto r = impl_->client.flush(); !r)
        return r.error();
    if (auto r = consumeViews(cb); !r)
        return r.error();
    return stats();
}

Result<SessionStats> Session::stop(const EventCallback& cb) {
    return stopViews(detail::asViewCallback(cb));
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
#define PROBECTL_COPY_COUNTER(name) ps.name = it->second->name;
            PROBECTL_PROBE_COUNTERS(PROBECTL_COPY_COUNTER)
#undef PROBECTL_COPY_COUNTER
            ps.depth_limit = it->second->depth_limit;
            ps.removed_by = it->second->removed_by;
            ps.removed_by_pid = it->second->removed_by_pid;
            ps.removed_by_comm = it->second->removed_by_comm;
        }
        s.probes.push_back(std::move(ps));
    }
    s.notes = removedProbeNotes(s.probes);
    // Where the module cannot read the uretprobe nesting depth, the returns the kernel skips
    // past its limit are in unreturned: say so rather than have them read as left by longjmp.
    for (const auto& ps : s.probes)
        if (auto it = by_id.find(ps.id); it != by_id.end() &&
                                         it->second->kind == ProbeKind::Uretprobe &&
                                         !it->second->depth_limit && ps.unreturned)
            s.notes.push_back(fmt::format(
                "probe {} ({}): the module cannot read the uretprobe nesting depth on this "
                "kernel: calls nested deeper than the kernel's uretprobe limit (64 on Linux 6.1 "
                "to 7.2) have no return probe and are counted as never returned",
                ps.id, ps.spec));
    auto replaced = replacedFileNotes(impl_->files);
    s.notes.insert(s.notes.end(), replaced.begin(), replaced.end());
    s.notes.insert(s.notes.end(), impl_->start_notes.begin(), impl_->start_notes.end());
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
