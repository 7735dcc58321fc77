// The route from a parsed spec to probes, one step each: resolve (one resolver per kind
// family: kernel symbols, syscall, tracepoint, user-space ELF and USDT), then compile the
// fetch arguments and the predicate. Session::add sends what comes out as PROBE_ADD
// requests; the ptrace backend (ctx.backend = Ptrace) places breakpoints and syscall stops
// from the same resolution.
#pragma once

#include <sys/types.h>
#include <functional>
#include <memory>
#include <vector>

#include "probectl/fetch_program.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/syscall_probe.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/user_target.hpp"

namespace probectl {

// Which backend the probes are for: the kernel module, or the ptrace backend, which reaches
// only user space and syscalls, records no fetch arguments, numbers syscalls from the
// builtin table and leaves return addresses alone (no C++ exception refusal).
enum class ResolveBackend { Kernel, Ptrace };

// What the resolvers may consult; each is loaded only when a spec needs it.
struct ResolveContext {
    ResolveBackend backend = ResolveBackend::Kernel;
    // null: no kallsyms (the kernel resolves names itself)
    std::function<const KernelSymbols*()> symbols;
    std::function<Result<const Tracepoints*>()> tracepoints;
    pid_t pid = 0;  // user-space specs resolve as this process sees them (0: as we do)
    std::shared_ptr<UserResolveCache> user_cache;  // their resolutions to reuse (null: none)
    bool uretprobe_despite_exceptions = false;     // SessionOptions' flag
    // Leave to the kernel the names it resolves alone (resolveByName: syscalls), without
    // reading kallsyms; the caller resolves again without it to explain a refusal.
    bool by_name = false;
};

// One site of a spec, resolved: the request without its programs, and what it records.
struct ResolvedProbe {
    Resolution res;
    // The fetch arguments the probe records (Event::values) and its predicate reads.
    std::vector<FetchArg> args;
    // Programs that come resolved (a USDT probe's from its note) instead of from `args`.
    std::vector<FetchInsn> fetch;
    bool has_fetch = false;
    // syscall: what strace would show, fetched and decoded by the plan when `args` is
    // empty; with the spec's own arguments only the syscall's name (hints and args empty).
    std::shared_ptr<const SyscallPlan> plan;
    // Where the spec's argument i is in `args` (empty: the same place). A syscall's $retval
    // arguments are read at the return, after the entry ones, so they move to the end.
    std::vector<std::size_t> shown;
    // The ptrace backend's syscall number (builtin table); -1 for other probes.
    int syscall_nr = -1;
    // Resolved by name only (ResolveContext::by_name): not checked against kallsyms.
    bool by_name = false;
    // UserTarget::semaphore_page_shared: the kernel cannot be trusted to raise the
    // semaphore in a process exec'd after the probe is added.
    bool semaphore_page_shared = false;
    // For the user before the trace starts (UserTarget::note), "" when none.
    std::string note;
    // Appended to the spec to name this site among the spec's probes, "" for the main one:
    // " (inlined in twice+0x1c)".
    std::string site_label;
};

// Every site of `spec` (a USDT probe and a function with inlined copies can have several;
// other kinds have one).
Result<std::vector<ResolvedProbe>> resolveSpec(const ProbeSpec& spec, const ResolveContext& ctx);

// Fills the request's fetch program and predicate.
Result<void> compileProbe(const ProbeSpec& spec, ResolvedProbe& probe);

// Fills only the request's predicate (res.request.filter), for backends that record no fetch
// programs. Errors: EINVAL with the spec's text and the column at fault.
Result<void> compileProbePredicate(const ProbeSpec& spec, ResolvedProbe& probe);

}  // namespace probectl
