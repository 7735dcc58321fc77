// Opening the backend a command's options name (trace, record, count, hist, latency): one
// place for which option goes to which backend, for every options struct with the same
// fields (backend, pids, follow, command, maxactive, force, match_*).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>

#include "cli.hpp"
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
    // probectl has no children but the command: a stopped run kills every process under
    // it, the command's orphans too (a daemon it started, what it left when it ended).
    so.adopt_orphans = true;
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

// --seccomp-bpf, the same for every command that takes it (trace, record, count, hist,
// latency): the filter is installed in -- CMD as it starts. `from`: count's --from FILE.
template <class O>
std::optional<UsageError> seccompBpfError(const O& o, bool seccomp, bool from = false) {
    if (seccomp && (o.backend != "ptrace" || o.command.empty() || !o.pids.empty() || from))
        return UsageError{
            fmt::format("--seccomp-bpf needs --backend=ptrace and -- CMD (and no -p{})",
                        from ? " or --from" : "")};
    return std::nullopt;
}

// Whether --seccomp-bpf's filter goes in. The command's children inherit it, and without -f
// no one traces them: each syscall the filter traps would fail with ENOSYS. As strace, the
// run goes on without it, said on `err`.
template <class O>
bool seccompFilterOn(const O& o, bool seccomp, std::ostream& err, const char* cmd) {
    if (!seccomp || o.follow)
        return seccomp;
    err << fmt::format(
        "probectl {}: warning: --seccomp-bpf needs -f (the command's children inherit the "
        "filter, and their syscalls fail untraced): off for this run\n",
        cmd);
    return false;
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
