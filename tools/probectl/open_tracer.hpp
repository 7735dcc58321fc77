// Opening the backend a command's options name (trace, record, count, hist, latency): one
// place for which option goes to which backend, for every options struct with the same
// fields (backend, pids, follow, command, maxactive, force, match_*).
#pragma once

#include <functional>
#include <memory>

#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"
#include "probectl/tracer.hpp"

namespace probectl::cli {

// Either backend's options on o's target (-p pids, -f, -- CMD held).
template <class Options, class O>
Options onTarget(const O& o) {
    Options so;
    so.tgids = o.pids;
    so.follow = o.follow;
    so.command = o.command;
    // Library names resolve as the one traced process sees them.
    so.resolve_pid = o.pids.size() == 1 ? static_cast<pid_t>(o.pids[0]) : 0;
    return so;
}

template <class Backend, class Options>
Result<std::unique_ptr<Tracer>> openBackend(const Options& so) {
    auto s = Backend::open(so);
    if (!s)
        return std::move(s).error();
    return std::unique_ptr<Tracer>(std::make_unique<Backend>(std::move(*s)));
}

// The backend o.backend names, opened on o's target; `seccomp` is the ptrace backend's
// --seccomp-bpf, `kernel` adds what only one command sets on the kernel backend.
template <class O>
Result<std::unique_ptr<Tracer>> openTracerFor(
    const O& o, bool seccomp, const std::function<void(SessionOptions&)>& kernel = {},
    const std::function<void(PtraceSessionOptions&)>& ptrace = {}) {
    if (o.backend == "ptrace") {
        auto so = onTarget<PtraceSessionOptions>(o);
        so.seccomp = seccomp;
        if (ptrace)
            ptrace(so);
        return openBackend<PtraceSession>(so);
    }
    auto so = onTarget<SessionOptions>(o);
    so.maxactive = o.maxactive;
    so.uretprobe_despite_exceptions = o.force;
    so.match_pids = o.match_pids;
    so.match_tids = o.match_tids;
    so.match_uids = o.match_uids;
    so.match_comm = o.match_comm;
    if (kernel)
        kernel(so);
    return openBackend<Session>(so);
}

}  // namespace probectl::cli
