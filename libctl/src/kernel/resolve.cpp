// ProbeSpec -> ProbeRequest against the symbol table: the "userspace resolves, the kernel
// registers" step. Checks here only improve the error text; the kernel still validates.
#include <fmt/format.h>

#include <cerrno>

#include "kernel/resolve_by_name.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/syscall_meta.hpp"
#include "probectl/syscall_probe.hpp"
#include "uapi/probectl.h"

namespace probectl {

namespace {

Error withSpec(const ProbeSpec& spec, const Error& e) {
    return makeError(e.err,
                     fmt::format("{}: {}", spec.text.empty() ? spec.str() : spec.text, e.message),
                     e.extack);
}

// A location in vmlinux's init text: what it is and why the kernel refuses it (init code is
// freed once the kernel has booted; register_kprobe accepts it only before).
std::string initTextRefusal(const std::string& what) {
    return fmt::format(
        "{} is init code (in the kernel's .init.text), freed after boot: the "
        "kernel refuses probes there",
        what);
}

// Size of the function at `sym`: distance to the next text symbol, 0 when unknown.
std::uint64_t functionSize(const KernelSymbols& ks, const KernelSymbol& sym) {
    if (ks.addressesHidden() || sym.addr == 0)
        return 0;
    // Linear scan: only runs for specs with an offset, so not worth another index.
    std::uint64_t next = 0;
    for (const auto& s : ks.symbols())
        if (s.isFunction() && s.addr > sym.addr && (next == 0 || s.addr < next))
            next = s.addr;
    return next ? next - sym.addr : 0;
}

// A syscall's probe on its entry symbol `name`: SYSCALL_SPEC keeps how it was written for
// `probectl list`; SYSCALL means "arg0 is the user's pt_regs", true only of the
// __x64_sys_ wrappers. One record per call, entry arguments with the return value: a
// kretprobe, except for the calls that never return (their kretprobe would never fire).
void syscallRequest(std::string_view syscall, std::string_view name, Resolution& r) {
    r.request.flags |= PROBECTL_PROBE_F_SYSCALL_SPEC;
    if (name.starts_with(kSyscallWrapperPrefix))
        r.request.flags |= PROBECTL_PROBE_F_SYSCALL;
    if (syscallNeverReturns(syscall)) {
        r.request.kind = ProbeKind::Kprobe;
        r.request.maxactive = 0;
    }
}

bool identifier(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9')))
            return false;
    return true;
}

}  // namespace

std::optional<Resolution> resolveByName(const ProbeSpec& spec) {
    if (spec.has_addr || spec.offset != 0 || spec.maxactive > PROBECTL_MAXACTIVE_MAX)
        return std::nullopt;
    std::string name;
    if (spec.kind == SpecKind::Syscall) {
        if (!identifier(spec.symbol) || !syscallKernelNameMisuse(spec.symbol).empty())
            return std::nullopt;
        name = fmt::format("{}{}", kSyscallWrapperPrefix, syscallKernelName(spec.symbol));
    } else if (spec.kind == SpecKind::Kprobe || spec.kind == SpecKind::Kretprobe) {
        if (!spec.symbol.starts_with(kSyscallWrapperPrefix) ||
            !identifier(std::string_view(spec.symbol).substr(kSyscallWrapperPrefix.size())))
            return std::nullopt;
        name = spec.symbol;
    } else {
        return std::nullopt;
    }
    if (name.size() >= PROBECTL_SYMBOL_MAX)
        return std::nullopt;
    Resolution r;
    r.request.kind = static_cast<ProbeKind>(kindInfo(spec.kind).kernel_kind);
    r.request.maxactive = spec.maxactive;
    if (spec.kind == SpecKind::Syscall)
        syscallRequest(spec.symbol, name, r);
    else
        r.request.flags |= PROBECTL_PROBE_F_SYSCALL;
    r.request.symbol = name;
    r.symbol = std::move(name);
    return r;
}

Result<Resolution> KernelSymbols::resolve(const ProbeSpec& spec) const {
    // A user-space function may share its name with a kernel one (memcpy): never let a
    // uprobe spec become a kprobe.
    if (isUserSpace(spec.kind))
        return withSpec(spec, makeError(EINVAL, fmt::format("{} specs name a location in a "
                                                            "user-space file; they are resolved "
                                                            "by resolveUserSpec, not against "
                                                            "kernel symbols",
                                                            toString(spec.kind))));
    if (spec.kind == SpecKind::Tracepoint)
        return withSpec(spec, makeError(EINVAL,
                                        "tracepoint specs are resolved by Tracepoints "
                                        "(tracepoints.hpp), not against kernel symbols"));
    Resolution r;
    r.request.kind = static_cast<ProbeKind>(kindInfo(spec.kind).kernel_kind);
    r.request.maxactive = spec.maxactive;
    if (spec.maxactive > PROBECTL_MAXACTIVE_MAX)
        return withSpec(spec,
                        makeError(EINVAL, fmt::format("maxactive {} exceeds the kernel's "
                                                      "limit {}",
                                                      spec.maxactive, PROBECTL_MAXACTIVE_MAX)));

    if (spec.has_addr) {
        if (hidden_)
            return withSpec(spec, makeError(EACCES,
                                            "addresses hidden: run as root / "
                                            "kptr_restrict (cannot check the address)"));
        if (auto bl = blacklistedAddr(spec.addr))
            return withSpec(spec, makeError(EINVAL, fmt::format("{:#x} is in the kprobes "
                                                                "blacklist ({})",
                                                                spec.addr, bl->symbol)));
        const KernelSymbol* s = symbolAt(spec.addr);
        if (!s)
            return withSpec(spec, makeError(EINVAL, fmt::format("{:#x} is not inside any function "
                                                                "(in data, or past the last "
                                                                "symbol)",
                                                                spec.addr)));
        if (s->name.starts_with("__pfx_"))
            return withSpec(spec, makeError(EINVAL, fmt::format("{:#x} is in '{}', padding before "
                                                                "a function, not code",
                                                                spec.addr, s->name)));
        if (s->module.empty() && inInitText(spec.addr))
            return withSpec(spec, makeError(EINVAL, initTextRefusal(fmt::format(
                                                        "{:#x} (in '{}')", spec.addr, s->name))));
        const std::uint64_t off = spec.addr - s->addr;
        // The kernel treats offset 0, and 4 over an ENDBR (IBT kernels report the entry
        // there), as the function's entry; anything else is refused for a kretprobe.
        if (spec.kind == SpecKind::Kretprobe && off != 0 && off != 4)
            return withSpec(spec, makeError(EINVAL, fmt::format("a kretprobe must be at a "
                                                                "function's entry: {:#x} is "
                                                                "{}+{:#x}",
                                                                spec.addr, s->name, off)));
        r.request.addr = spec.addr;
        r.address = spec.addr;
        r.symbol = s->name;
        r.module = s->module;
        r.symbol_offset = off;
        return r;
    }

    std::string name = spec.symbol;
    if (spec.kind == SpecKind::Syscall) {
        if (auto misuse = syscallKernelNameMisuse(spec.symbol); !misuse.empty())
            return withSpec(spec, makeError(0, std::move(misuse)));  // no errno: a wrong name
        auto sys = syscallSymbol(spec.symbol);
        if (!sys) {
            // A real x86-64 syscall this kernel was built without (or has removed): say so
            // rather than calling the name unknown.
            static const SyscallTable builtin = SyscallTable::builtin();
            if (const SyscallInfo* known = builtin.find(spec.symbol); known && known->nr >= 0)
                return withSpec(spec,
                                makeError(ENOENT, fmt::format("this kernel has no syscall '{}' "
                                                              "(x86-64 number {}): no "
                                                              "__x64_sys_{} in its symbols "
                                                              "(configured out or removed)",
                                                              spec.symbol, known->nr,
                                                              syscallKernelName(spec.symbol))));
            return withSpec(spec, sys.error());
        }
        name = *sys;
        syscallRequest(spec.symbol, name, r);
    }
    if (name.size() >= PROBECTL_SYMBOL_MAX)
        return withSpec(spec, makeError(ENAMETOOLONG, fmt::format("symbol name longer than {} "
                                                                  "bytes",
                                                                  PROBECTL_SYMBOL_MAX - 1)));
    auto sym = resolveFunction(name);
    if (!sym) {
        Error e = sym.error();
        // The duplicate hint names the spec's own kind: kretprobe:0xADDR for a kretprobe.
        constexpr std::string_view hint = "pick one with kprobe:0xADDR";
        if (spec.kind == SpecKind::Kretprobe)
            if (auto at = e.message.find(hint); at != std::string::npos)
                e.message.replace(at, hint.size(), "pick one with kretprobe:0xADDR");
        return withSpec(spec, e);
    }
    const KernelSymbol& s = **sym;
    if (auto bl = blacklisted(name))
        return withSpec(spec, makeError(EINVAL, fmt::format("'{}' is in the kprobes blacklist "
                                                            "(the kernel refuses to probe it)",
                                                            name)));
    if (auto bl = blacklistedAddr(s.addr + spec.offset))
        return withSpec(
            spec, makeError(EINVAL, fmt::format("'{}'{} lies in the kprobes "
                                                "blacklist range of '{}'",
                                                name,
                                                spec.offset ? fmt::format("+{:#x}", spec.offset)
                                                            : std::string(),
                                                bl->symbol)));
    if (s.module.empty() && inInitText(s.addr))
        return withSpec(spec, makeError(EINVAL, initTextRefusal(fmt::format("'{}'", name))));
    if (spec.offset != 0) {
        const std::uint64_t size = functionSize(*this, s);
        if (size != 0 && spec.offset >= size)
            return withSpec(spec, makeError(EINVAL, fmt::format("offset {:#x} is beyond '{}' "
                                                                "({} byte{} long)",
                                                                spec.offset, name, size,
                                                                size == 1 ? "" : "s")));
    }
    // kprobe on a syscall wrapper: its one argument is the user's pt_regs, so $argN and the
    // record's arguments are the syscall's own, read from there (as for syscall:NAME). Only
    // at the entry: fetch_spec already refuses $argN at an offset.
    if ((spec.kind == SpecKind::Kprobe || spec.kind == SpecKind::Kretprobe) &&
        name.starts_with(kSyscallWrapperPrefix) && spec.offset == 0)
        r.request.flags |= PROBECTL_PROBE_F_SYSCALL;
    r.request.symbol = name;
    r.request.offset = spec.offset;
    r.symbol = name;
    r.module = s.module;
    r.address = s.addr ? s.addr + spec.offset : 0;
    r.symbol_offset = spec.offset;
    return r;
}

}  // namespace probectl
