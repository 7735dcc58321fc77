// From probes to int3 bytes: resolving a spec to file sites, finding where each site is
// mapped in a process, and writing (and restoring) the bytes and USDT semaphores.
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/x86.hpp"
#include "probectl/predicate.hpp"
#include "probectl/proc_maps.hpp"
#include "ptrace/engine.hpp"
#include "ptrace/site_fetch.hpp"

namespace probectl::ptrace {

namespace {

// maps names the device as major:minor of the inode's superblock, as stat's st_dev does;
// the path is compared too because some filesystems (overlayfs) show another device.
bool sameFile(const ProcMapping& m, const Site& s) {
    if (m.inode != s.ino)
        return false;
    return (m.dev_major == major(s.dev) && m.dev_minor == minor(s.dev)) || m.path == s.path;
}

}  // namespace

Result<std::vector<ResolvedProbe>> Engine::resolve(const ProbeSpec& spec) const {
    ResolveContext ctx;
    ctx.backend = ResolveBackend::Ptrace;
    ctx.symbols = [] { return static_cast<const KernelSymbols*>(nullptr); };
    ctx.pid = options_.resolve_pid;
    ctx.user_cache = options_.resolve_cache;
    return resolveSpec(spec, ctx);
}

Result<void> Engine::setupSites(Probe& p, const ProbeSpec& spec,
                                const std::vector<ResolvedProbe>& resolved) {
    for (const auto& r : resolved) {
        const ProbeRequest& req = r.res.request;
        struct stat st {};
        if (::stat(req.path.c_str(), &st) < 0)
            return makeError(errno, fmt::format("{}: cannot stat {}", spec.text, req.path));
        Site s;
        s.path = req.path;
        s.dev = st.st_dev;
        s.ino = st.st_ino;
        s.file_offset = req.file_offset;
        s.semaphore_offset = req.ref_ctr_offset;
        if (r.has_fetch) {
            if (!siteFetchSupported(r.fetch)) {
                Error e =
                    makeError(EOPNOTSUPP, fmt::format("{}: the ptrace backend cannot read this "
                                                      "site's arguments (use --backend=kernel)",
                                                      spec.text));
                e.usage = true;
                return e;
            }
            s.fetch = r.fetch;
            s.fetch_args = r.args;
        }
        p.sites.push_back(s);
        rememberFile(files_, req.path);
    }
    return {};
}

Result<std::uint32_t> Engine::addProbe(const ProbeSpec& given) {
    ProbeSpec spec = given;
    if (spec.text.empty())
        spec.text = spec.str();
    auto resolved = resolve(spec);
    if (!resolved)
        return std::move(resolved).error();
    // Only $pid $tid $uid $cpu $comm can be named here (no fetch arguments), the same fields
    // and semantics as the kernel's predicate, so both backends keep the same hits.
    ResolvedProbe& first = resolved->front();
    if (auto r = compileProbePredicate(spec, first); !r)
        return std::move(r).error();
    auto p = std::make_unique<Probe>();
    p->info.spec = spec.text;
    p->info.kind = spec.kind;
    p->filter = std::move(first.res.request.filter);
    for (const auto& in : p->filter.insns)
        p->filter_uid |= in.field_kind == static_cast<std::uint8_t>(PredicateFieldKind::Uid);
    if (first.syscall_nr >= 0) {
        if (options_.seccomp && released_)
            return makeError(EINVAL, fmt::format("{}: the seccomp filter is already installed "
                                                 "in the command; add syscall probes before "
                                                 "release()",
                                                 spec.text));
        p->syscall_nr = first.syscall_nr;
        p->plan = first.plan;
        const auto [at, added] =
            traced_syscalls_.insert(static_cast<std::uint64_t>(first.syscall_nr));
        if (options_.seccomp && added)
            if (auto f = seccompFilter(); !f) {
                traced_syscalls_.erase(at);
                return makeError(f.error().err,
                                 fmt::format("{}: {}", spec.text, f.error().message));
            }
    } else {
        if (auto r = setupSites(*p, spec, *resolved); !r)
            return std::move(r).error();
        for (const ResolvedProbe& r : *resolved)
            if (!r.note.empty())
                add_notes_.push_back(fmt::format("{}: {}", spec.text, r.note));
        addLinkerHook();
    }
    p->info.id = next_id_++;
    const std::uint32_t id = p->info.id;
    probes_.push_back(std::move(p));
    // Stopped while the bytes go in, and restarted in the mode the probes now need
    // (PTRACE_SYSCALL once a syscall probe exists).
    for (auto& [sid, s] : spaces_) {
        stopSpace(*s, 0);
        placeAll(*s);
        resumeSpace(*s, 0);
    }
    return id;
}

Result<void> Engine::insert(Space& s, std::uint64_t addr, std::uint32_t probe_id) {
    auto it = s.bps.find(addr);
    if (it == s.bps.end()) {
        Breakpoint bp;
        if (auto r = s.mem.read(addr, &bp.orig, 1); !r)
            return r;
        if (auto r = s.mem.write(addr, &kInt3, 1); !r)
            return r;
        it = s.bps.emplace(addr, bp).first;
        s.patched.insert(addr);
    }
    if (probe_id)
        it->second.entries.push_back(probe_id);
    else
        it->second.returns++;
    return {};
}

std::vector<Engine::Placement> Engine::placements(const ProcMaps& maps) const {
    std::vector<Placement> out;
    for (const auto& p : probes_) {
        for (std::size_t i = 0; i < p->sites.size(); i++) {
            const Site& site = p->sites[i];
            for (const auto& m : maps.mappings()) {
                if (!sameFile(m, site))
                    continue;
                if (m.executable() && m.holdsFileOffset(site.file_offset))
                    out.push_back({p->info.id, i, m.address(site.file_offset), false});
                // The semaphore lives in the writable data mapping of the same file.
                if (site.semaphore_offset && m.writable() &&
                    m.holdsFileOffset(site.semaphore_offset))
                    out.push_back({p->info.id, i, m.address(site.semaphore_offset), true});
            }
        }
    }
    return out;
}

void Engine::forgetUnmapped(Space& s, const std::vector<Placement>& wanted) {
    // An int3 no longer in memory went with its mapping (dlclose, munmap), maybe replaced
    // since (the library loaded again, even at the same address): the byte saved from the
    // old mapping is not the new one's to restore, and the new mapping gets its own.
    std::set<std::uint64_t> gone;
    for (auto it = s.bps.begin(); it != s.bps.end();) {
        std::uint8_t b = 0;
        if (s.mem.read(it->first, &b, 1) && b == kInt3) {
            ++it;
            continue;
        }
        gone.insert(it->first);
        it = s.bps.erase(it);
    }
    // A placement whose file is no longer mapped there: its entry (or semaphore raise) goes,
    // and the byte is not written back (what is at that address now is not that file).
    std::set<std::pair<std::uint32_t, std::uint64_t>> still;
    for (const Placement& w : wanted)
        still.insert({w.probe_id, w.addr});
    for (auto it = s.placed.begin(); it != s.placed.end();) {
        const auto [id, addr] = *it;
        if (!gone.count(addr) && still.count(*it)) {
            ++it;
            continue;
        }
        if (auto bp = s.bps.find(addr); bp != s.bps.end()) {
            auto& e = bp->second.entries;
            if (auto at = std::find(e.begin(), e.end(), id); at != e.end())
                e.erase(at);
            if (!bp->second.needed())
                s.bps.erase(bp);
        } else if (auto sem = s.semaphores.find(addr); sem != s.semaphores.end()) {
            if (--sem->second == 0)
                s.semaphores.erase(sem);
        }
        s.site_at.erase(*it);
        it = s.placed.erase(it);
    }
}

void Engine::placeAll(Space& s) {
    if (!s.mem.valid())
        return;
    auto maps = ProcMaps::read(s.id);
    if (!maps)
        return;
    const std::vector<Placement> wanted = placements(*maps);
    forgetUnmapped(s, wanted);
    for (const Placement& w : wanted) {
        const std::pair<std::uint32_t, std::uint64_t> key{w.probe_id, w.addr};
        if (s.placed.count(key))
            continue;
        if (!w.semaphore) {
            if (insert(s, w.addr, w.probe_id)) {
                s.placed.insert(key);
                if (!probe(w.probe_id)->sites[w.site].fetch.empty())
                    s.site_at[key] = w.site;
            }
            continue;
        }
        std::uint16_t v = 0;
        if (!s.mem.read(w.addr, &v, sizeof(v)))
            continue;
        ++v;
        if (s.mem.write(w.addr, &v, sizeof(v))) {
            s.semaphores[w.addr]++;
            s.placed.insert(key);
        }
    }
}

void Engine::removeUnneeded(Space& s) {
    for (auto it = s.bps.begin(); it != s.bps.end();) {
        if (it->second.needed()) {
            ++it;
            continue;
        }
        (void)s.mem.write(it->first, &it->second.orig, 1);
        it = s.bps.erase(it);
    }
}

void Engine::adjustSemaphores(Space& s, int delta) {
    for (const auto& [addr, n] : s.semaphores) {
        std::uint16_t v = 0;
        if (!s.mem.read(addr, &v, sizeof(v)))
            continue;
        const int next = static_cast<int>(v) + delta * static_cast<int>(n);
        v = static_cast<std::uint16_t>(next < 0 ? 0 : next);
        (void)s.mem.write(addr, &v, sizeof(v));
    }
}

void Engine::restoreAll(Space& s) {
    if (s.mem.valid()) {
        // Only where our bytes still are: a mapping replaced since the last look (munmap
        // then mmap, no dynamic linker event) is the program's, not ours to write.
        if (auto maps = ProcMaps::read(s.id))
            forgetUnmapped(s, placements(*maps));
        for (const auto& [addr, bp] : s.bps)
            (void)s.mem.write(addr, &bp.orig, 1);
        adjustSemaphores(s, -1);
    }
    s.bps.clear();
    s.semaphores.clear();
    s.placed.clear();
    s.site_at.clear();
}

void Engine::addLinkerHook() {
    // Libraries a process loads after exec (and by dlopen) are not mapped when the probes
    // are first placed. The dynamic linker calls _dl_debug_state() after every change of
    // its link map (the r_debug rendezvous gdb uses): a breakpoint there re-places probes.
    std::vector<pid_t> where;
    for (const auto& [id, s] : spaces_)
        where.push_back(id);
    where.push_back(::getpid());  // a held command still maps the tracer's linker
    for (pid_t pid : where) {
        auto maps = ProcMaps::read(pid);
        if (!maps)
            continue;
        for (const auto& m : maps->mappings()) {
            if (!m.isFile() || !m.executable())
                continue;
            const auto slash = m.path.rfind('/');
            const std::string name = m.path.substr(slash + 1);
            if (name.rfind("ld-linux", 0) != 0 && name.rfind("ld-", 0) != 0)
                continue;
            if (!hooked_linkers_.insert(m.path).second)
                continue;
            ProbeSpec spec;
            spec.kind = SpecKind::Uprobe;
            spec.path = m.path;
            spec.symbol = "_dl_debug_state";
            spec.text = fmt::format("uprobe:{}:_dl_debug_state", m.path);
            auto p = std::make_unique<Probe>();
            p->internal = true;
            // Out of the range of user probe ids, which count 1, 2, ... as added.
            p->info.id = 0x80000000u + static_cast<std::uint32_t>(hooked_linkers_.size());
            p->info.spec = spec.text;
            p->info.kind = SpecKind::Uprobe;
            auto resolved = resolve(spec);
            if (resolved && setupSites(*p, spec, *resolved))
                probes_.push_back(std::move(p));
        }
    }
}

}  // namespace probectl::ptrace
