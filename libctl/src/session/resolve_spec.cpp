// Spec -> resolved sites -> compiled requests. The family in the kind table picks the
// resolver; nothing after this file switches on the kind.
#include "session/resolve_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "kernel/resolve_by_name.hpp"
#include "probectl/fetch_decode.hpp"
#include "probectl/glob.hpp"
#include "probectl/predicate.hpp"
#include "probectl/syscall_meta.hpp"
#include "probectl/user_target.hpp"

namespace probectl {

namespace {

Error withText(const ProbeSpec& spec, const Error& e) {
    return makeError(e.err, fmt::format("{}: {}", spec.text, e.message), e.extack);
}

Result<std::vector<ResolvedProbe>> one(ResolvedProbe p) {
    std::vector<ResolvedProbe> v;
    v.push_back(std::move(p));
    return v;
}

Result<std::vector<ResolvedProbe>> kernelSymbol(const ProbeSpec& spec, const ResolveContext& ctx) {
    ResolvedProbe p;
    p.args = spec.fetch_args;
    if (ctx.by_name)
        if (auto r = resolveByName(spec)) {
            p.res = std::move(*r);
            p.by_name = true;
            return one(std::move(p));
        }
    if (const KernelSymbols* ks = ctx.symbols()) {
        auto r = ks->resolve(spec);
        if (!r)
            return std::move(r).error();
        p.res = std::move(*r);
        return one(std::move(p));
    }
    // No symbol table (no /proc/kallsyms?): let the kernel resolve names itself.
    p.res.request.kind = static_cast<ProbeKind>(kindInfo(spec.kind).kernel_kind);
    p.res.request.symbol = spec.symbol;
    p.res.request.offset = spec.offset;
    p.res.request.addr = spec.has_addr ? spec.addr : 0;
    p.res.request.maxactive = spec.maxactive;
    p.res.symbol = spec.symbol;
    return one(std::move(p));
}

bool readsRetval(const FetchSource* s) {
    for (; s; s = s->inner.get())
        if (s->kind == FetchSource::Kind::Retval)
            return true;
    return false;
}

// ptrace stops the task at the syscall itself: the builtin table numbers it, and the plan
// decodes its arguments as strace would.
Result<std::vector<ResolvedProbe>> ptraceSyscall(const ProbeSpec& spec) {
    static const SyscallTable table = SyscallTable::builtin();
    if (auto misuse = syscallKernelNameMisuse(spec.symbol); !misuse.empty())
        return makeError(0, fmt::format("{}: {}", spec.text, misuse));  // no errno: a wrong name
    const SyscallInfo* info = table.find(spec.symbol);
    if (!info || info->nr < 0) {
        std::vector<std::string_view> names;
        for (const SyscallName& n : builtinSyscallNames())
            if (n.nr >= 0)
                names.emplace_back(n.name);
        return makeError(ENOENT, fmt::format("{}: unknown syscall '{}'{}", spec.text, spec.symbol,
                                             didYouMean(nearNames(spec.symbol, names))));
    }
    ResolvedProbe p;
    p.syscall_nr = info->nr;
    p.res.symbol = spec.symbol;
    p.plan = std::make_shared<SyscallPlan>(
        syscallPlan(spec.symbol, systemSyscallTable().find(spec.symbol)));
    return one(std::move(p));
}

Result<std::vector<ResolvedProbe>> syscall(const ProbeSpec& spec, const ResolveContext& ctx) {
    if (ctx.backend == ResolveBackend::Ptrace)
        return ptraceSyscall(spec);
    ResolvedProbe p;
    if (auto by_name = ctx.by_name ? resolveByName(spec) : std::nullopt) {
        p.res = std::move(*by_name);
        p.by_name = true;
    } else {
        const KernelSymbols* ks = ctx.symbols();
        if (!ks)
            return makeError(ENOENT, fmt::format("{}: cannot resolve a syscall without "
                                                 "/proc/kallsyms",
                                                 spec.text));
        auto r = ks->resolve(spec);
        if (!r)
            return std::move(r).error();
        p.res = std::move(*r);
    }
    std::size_t entry_args = spec.fetch_args.size();
    if (spec.fetch_args.empty()) {
        // Generated from the syscall's metadata: what strace would show of its memory.
        auto plan = std::make_shared<SyscallPlan>(
            syscallPlan(spec.symbol, systemSyscallTable().find(spec.symbol)));
        entry_args = plan->entry_args;
        p.plan = std::move(plan);
    } else {
        // The spec's own arguments replace the strace decoding; the plan only names the
        // syscall, so its lines still end in " = RET".
        auto plan = std::make_shared<SyscallPlan>();
        plan->name = spec.symbol;
        plan->returns = !syscallNeverReturns(spec.symbol);
        p.plan = std::move(plan);
        // $retval exists only at the return, which reads after the entry's arguments: those
        // go last in the record, and `shown` puts them back in the spec's order.
        std::vector<std::size_t> order(spec.fetch_args.size());
        for (std::size_t i = 0; i < order.size(); i++)
            order[i] = i;
        std::stable_partition(order.begin(), order.end(), [&](std::size_t i) {
            return !readsRetval(spec.fetch_args[i].source.get());
        });
        entry_args = 0;
        p.shown.assign(order.size(), 0);
        for (std::size_t k = 0; k < order.size(); k++) {
            p.args.push_back(spec.fetch_args[order[k]]);
            p.shown[order[k]] = k;
            entry_args += !readsRetval(spec.fetch_args[order[k]].source.get());
        }
    }
    // A syscall's memory is read at its entry (execve's path is gone at the return); only
    // output buffers wait for the return, and they come last in a plan.
    if (p.res.request.kind == ProbeKind::Kretprobe)
        p.res.request.fetch_entry = static_cast<std::uint32_t>(entry_args);
    return one(std::move(p));
}

Result<std::vector<ResolvedProbe>> tracepoint(const ProbeSpec& spec, const ResolveContext& ctx) {
    auto tps = ctx.tracepoints();
    if (!tps)
        return withText(spec, tps.error());
    auto tp = (*tps)->find(spec);
    if (!tp)
        return std::move(tp).error();
    ResolvedProbe p;
    if (spec.fetch_args.empty()) {
        p.args = (*tps)->defaultArgs(**tp);
    } else {
        auto args = (*tps)->resolveArgs(**tp, spec.fetch_args);
        if (!args)
            return std::move(args).error();
        p.args = std::move(*args);
    }
    p.res.request.kind = ProbeKind::Tracepoint;
    p.res.request.symbol = spec.symbol;
    p.res.symbol = spec.symbol;
    return one(std::move(p));
}

Result<std::vector<ResolvedProbe>> userElf(const ProbeSpec& spec, const ResolveContext& ctx) {
    UserResolveOptions ro;
    ro.pid = ctx.pid;
    ro.cache = ctx.user_cache;
    auto targets = resolveUserSpecAll(spec, ro);
    if (!targets)
        return std::move(targets).error();
    std::vector<ResolvedProbe> out;
    for (const UserTarget& t : *targets) {
        if (!t.exception_use.empty() && !ctx.uretprobe_despite_exceptions &&
            ctx.backend == ResolveBackend::Kernel) {
            Error e = makeError(
                EINVAL,
                fmt::format("{}: refused: {} unwinds C++ exceptions ({}). A kernel uretprobe "
                            "replaces the return address on the stack with a trampoline that "
                            "has no unwind information, so an exception thrown through {} "
                            "would end the program (std::terminate). Use --backend=ptrace "
                            "(it leaves return addresses alone), or --force if no exception "
                            "passes through it",
                            spec.text, t.file, t.exception_use,
                            t.symbol.empty() ? "this function" : t.symbol));
            e.usage = true;
            return e;
        }
        ResolvedProbe p;
        p.res.request.kind = t.is_return ? ProbeKind::Uretprobe : ProbeKind::Uprobe;
        p.res.request.path = t.path;
        p.res.request.file_offset = t.file_offset;
        p.res.request.ref_ctr_offset = t.ref_ctr_offset;
        p.semaphore_page_shared = t.semaphore_page_shared;
        p.res.request.function_entry = !t.is_return && !t.symbol.empty() && t.symbol_offset == 0 &&
                                       spec.kind != SpecKind::Usdt;
        p.res.symbol = t.symbol;
        p.res.symbol_offset = t.symbol_offset;
        p.res.address = t.vaddr;
        p.note = t.note;
        if (!t.inlined_from.empty())
            p.site_label = t.symbol.empty()
                               ? fmt::format(" (inlined at {:#x})", t.vaddr)
                               : fmt::format(" (inlined in {}+{:#x})", t.symbol, t.symbol_offset);
        p.args = spec.fetch_args;
        if (spec.kind == SpecKind::Usdt) {
            // The site's own arguments, from its note; the predicate meets them only here.
            auto u = usdtFetch(t.usdt_args);
            if (!u)
                return makeError(EINVAL, fmt::format("{}: {}", spec.text, u.error().message));
            p.args = std::move(u->args);
            p.fetch = std::move(u->insns);
            p.has_fetch = true;
        }
        out.push_back(std::move(p));
    }
    return out;
}

// What the ptrace backend cannot do is the command line's mistake on any system: a usage
// error that names the backend that can.
std::optional<Error> ptraceRefusal(const ProbeSpec& spec) {
    auto refuse = [](std::string message) {
        Error e = makeError(EOPNOTSUPP, std::move(message));
        e.usage = true;
        return e;
    };
    if (!isUserSpace(spec.kind) && kindInfo(spec.kind).family != KindFamily::Syscall)
        return refuse(
            fmt::format("{}: {} probes are in the kernel, which ptrace cannot "
                        "reach (use --backend=kernel)",
                        spec.text, toString(spec.kind)));
    if (!spec.fetch_args.empty())
        return refuse(
            fmt::format("{}: the ptrace backend records the argument registers "
                        "only; fetch arguments need --backend=kernel",
                        spec.text));
    return std::nullopt;
}

}  // namespace

Result<std::vector<ResolvedProbe>> resolveSpec(const ProbeSpec& spec, const ResolveContext& ctx) {
    if (hasGlob(spec)) {
        // A name that names a function exactly is that function, glob characters or not: a
        // C++ signature with a pointer ("ns::g(char*)") or operator[].
        if (kindInfo(spec.kind).family == KindFamily::UserElf) {
            if (ctx.backend == ResolveBackend::Ptrace)
                if (auto e = ptraceRefusal(spec))
                    return *e;
            auto exact = userElf(spec, ctx);
            // A name that is no valid glob ("S::operator[](int)") is a name of no function.
            if (exact || exact.error().err != ENOENT || !globError(spec.symbol).empty())
                return exact;
        }
        Error e = makeError(EINVAL, fmt::format("{}: a glob names many probes: expand it first "
                                                "(SpecExpander, expand.hpp)",
                                                spec.text));
        e.usage = true;
        return e;
    }
    if (ctx.backend == ResolveBackend::Ptrace) {
        if (auto e = ptraceRefusal(spec))
            return *e;
    }
    switch (kindInfo(spec.kind).family) {
        case KindFamily::KernelSymbol:
            return kernelSymbol(spec, ctx);
        case KindFamily::Syscall:
            return syscall(spec, ctx);
        case KindFamily::Tracepoint:
            return tracepoint(spec, ctx);
        case KindFamily::UserElf:
            return userElf(spec, ctx);
    }
    return makeError(EINVAL, fmt::format("{}: no resolver for this kind", spec.text));
}

Result<void> compileProbe(const ProbeSpec& spec, ResolvedProbe& probe) {
    ProbeRequest& req = probe.res.request;
    if (probe.has_fetch) {
        req.fetch = probe.fetch;
    } else {
        auto progs =
            compileFetchArgs(probe.args.empty() && probe.plan ? probe.plan->args : probe.args);
        if (!progs)
            return makeError(EINVAL, fmt::format("{}: {}", spec.text, progs.error().message));
        req.fetch.clear();
        for (const auto& p : *progs)
            req.fetch.insert(req.fetch.end(), p.insns.begin(), p.insns.end());
    }
    return compileProbePredicate(spec, probe);
}

Result<void> compileProbePredicate(const ProbeSpec& spec, ResolvedProbe& probe) {
    ProbeRequest& req = probe.res.request;
    req.filter = {};
    if (spec.predicate.empty())
        return {};
    auto node = parsePredicate(spec.text, probe.args, spec.predicate_begin,
                               PredicateOptions{firesAtReturn(spec)});
    if (!node)
        return toError(node.error());
    auto prog = compilePredicate(**node);
    if (!prog)
        return makeError(EINVAL, fmt::format("{}: {}", spec.text, prog.error().message));
    req.filter = std::move(*prog);
    return {};
}

}  // namespace probectl
