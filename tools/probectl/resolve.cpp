// probectl resolve: what a spec points at and whether the kernel will accept it, without
// adding anything (a dry run of the userspace half of `add`).
#include <fmt/format.h>

#include <ostream>

#include "probectl/kernel_symbols.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "resolve";
}

std::string probeableVerdict(const Resolution& res, bool blacklist_read) {
    // Userspace cannot decode instructions: a location inside a function may split one, and
    // only the kernel's check (register_kprobe) can tell.
    if (res.symbol_offset != 0) {
        if (res.request.kind == ProbeKind::Kretprobe)
            return "unknown until the kernel tries (entry+4 is the entry only on IBT kernels, "
                   "after ENDBR)";
        return "unknown until the kernel tries (offset inside the function; instruction "
               "boundaries are checked by the kernel)";
    }
    if (!blacklist_read)
        return "yes as far as userspace can tell (kprobes blacklist not readable: the kernel "
               "has the last word)";
    return "yes";
}

po::options_description resolveOptionsDescription(ResolveOptions* o) {
    po::options_description d("Options");
    d.add_options()("help,h", "show this help");
    addSymbolSourceOptions(d, o ? &o->kallsyms : nullptr, o ? &o->blacklist : nullptr);
    return d;
}

Parsed<ResolveOptions> parseResolveOptions(const std::vector<std::string>& args) {
    po::variables_map vm;
    return parseSpecOptions(kCmd, args, resolveOptionsDescription, vm);
}

int runResolve(const std::vector<std::string>& args, Io& io) {
    auto o = parseResolveOptions(args);
    if (auto rc = parsedExit(io, kCmd, o))
        return *rc;
    auto ks = KernelSymbols::load(o->kallsyms, o->blacklist);
    if (!ks)
        return runtimeError(io, kCmd, ks.error());

    auto row = [&](std::string_view k, const std::string& v) {
        io.out << fmt::format("{:<12}{}\n", k, v);
    };
    row("spec:", o->spec.text);
    row("kind:", std::string(toString(o->spec.kind)));
    auto res = ks->resolve(o->spec);
    if (!res) {
        row("probe-able:", "no");
        row("why:", res.error().message);
        if (!ks->hasBlacklist())
            io.err << "note: kprobes blacklist not read (mount debugfs, run as root)\n";
        return kExitRuntime;
    }
    row("symbol:", res->symbol_offset ? fmt::format("{}+{:#x}", res->symbol, res->symbol_offset)
                                      : res->symbol);
    row("module:", res->module.empty() ? "vmlinux" : res->module);
    row("address:", ks->addressesHidden() ? std::string("hidden (run as root / kptr_restrict)")
                                          : fmt::format("{:#018x}", res->address));
    const auto& rq = res->request;
    std::string sends = rq.symbol.empty() ? fmt::format("{:#x}", rq.addr) : rq.symbol;
    if (rq.offset)
        sends += fmt::format("+{:#x}", rq.offset);
    if (rq.flags & PROBECTL_PROBE_F_SYSCALL)
        sends += " (syscall wrapper: records carry the syscall's own arguments)";
    row("registers:", fmt::format("{} {}", toString(rq.kind), sends));
    row("probe-able:", probeableVerdict(*res, ks->hasBlacklist()));
    return kExitOk;
}

}  // namespace probectl::cli
