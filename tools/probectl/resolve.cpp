// probectl resolve: what a spec points at and whether the kernel will accept it, without
// adding anything (a dry run of the userspace half of `add`).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

#include "probectl/kernel_symbols.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/user_target.hpp"
#include "spec_hints.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kResolveCmd = "resolve";

// A text of several lines as rows: the key on the first only.
template <typename Row>
void printLines(const Row& row, std::string_view key, std::string_view text) {
    bool first = true;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        row(first ? key : "", std::string(text.substr(0, nl)));
        first = false;
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
}

// uprobe/uretprobe/usdt: ELF resolution only, no kallsyms and no kernel.
int resolveUser(const ResolveOptions& o, Io& io) {
    auto row = [&](std::string_view k, const std::string& v) {
        io.out << fmt::format("{:<14}{}\n", k, v);
    };
    row("spec:", o.spec.text);
    row("kind:", std::string(toString(o.spec.kind)));
    UserResolveOptions uo;
    uo.pid = static_cast<pid_t>(o.pid);
    auto all = resolveUserSpecAll(o.spec, uo);
    if (!all) {
        row("probe-able:", "no");
        row("why:", all.error().message);
        return kExitRuntime;
    }
    for (std::size_t i = 0; i < all->size(); ++i) {
        const UserTarget& t = (*all)[i];
        if (all->size() > 1)
            row("site:", fmt::format("{} of {}", i + 1, all->size()));
        row("file:",
            t.path == t.file ? t.path : fmt::format("{} ({} in pid {})", t.path, t.file, o.pid));
        if (t.kind == SpecKind::Usdt)
            row("usdt:", fmt::format("{}:{}", t.usdt_provider, t.usdt_name));
        row("symbol:", t.symbol.empty()  ? std::string("(none)")
                       : t.symbol_offset ? fmt::format("{}+{:#x}", t.symbol, t.symbol_offset)
                                         : t.symbol);
        if (!t.inlined_from.empty())
            row("inlined:", fmt::format("a copy of {} inlined here{}", t.inlined_from,
                                        t.call_site.empty() ? "" : ", called at " + t.call_site));
        row("ELF address:", fmt::format("{:#x}", t.vaddr));
        row("file offset:", fmt::format("{:#x}", t.file_offset));
        if (t.kind == SpecKind::Usdt) {
            row("semaphore:", t.ref_ctr_offset ? fmt::format("file offset {:#x} (ref_ctr_offset)",
                                                             t.ref_ctr_offset)
                                               : std::string("none"));
            std::vector<std::string> args;
            for (const auto& a : t.usdt_args)
                args.push_back(fmt::format("{} ({})", a.str(), a.text));
            row("args:",
                args.empty() ? std::string("none") : fmt::format("{}", fmt::join(args, ", ")));
        }
        row("registers:",
            fmt::format(
                "{} {}:{:#x}{}", t.is_return ? "uretprobe" : "uprobe", t.path, t.file_offset,
                t.ref_ctr_offset ? fmt::format(" ref_ctr_offset {:#x}", t.ref_ctr_offset) : ""));
        if (!t.note.empty())
            printLines(row, "note:", t.note);
        printLines(row, "how:", t.how);
    }
    row("probe-able:", "yes as far as userspace can tell (the kernel checks the instruction)");
    return kExitOk;
}

// A tracepoint: where it was found, its prototype, and its fetch arguments as compiled.
int resolveTracepoint(const ResolveOptions& o, Io& io) {
    auto row = [&](std::string_view k, const std::string& v) {
        io.out << fmt::format("{:<12}{}\n", k, v);
    };
    TracepointSources src;
    src.kallsyms = o.kallsyms;
    auto tps = Tracepoints::load(src);
    if (!tps)
        return runtimeError(io, kResolveCmd, tps.error());
    row("spec:", o.spec.text);
    row("kind:", "tracepoint");
    auto tp = tps->find(o.spec);
    if (!tp) {
        row("probe-able:", "no");
        row("why:", tp.error().message);
        return kExitRuntime;
    }
    row("tracepoint:",
        fmt::format("{} ({})", (*tp)->name, (*tp)->module.empty() ? "vmlinux" : (*tp)->module));
    row("subsystem:",
        (*tp)->subsystem.empty()
            ? std::string(tps->hasTracefs() ? "none (no trace event)" : "unknown (no tracefs)")
            : fmt::format("{} ({}/events/{}/{})", (*tp)->subsystem, tps->tracefs(),
                          (*tp)->subsystem, (*tp)->name));
    row("args:", tps->hasBtf() ? (*tp)->protoStr() : "unknown (no /sys/kernel/btf/vmlinux)");
    auto args = o.spec.fetch_args.empty() ? Result<std::vector<FetchArg>>(tps->defaultArgs(**tp))
                                          : tps->resolveArgs(**tp, o.spec.fetch_args);
    if (!args) {
        row("probe-able:", "no");
        row("why:", args.error().message);
        return kExitRuntime;
    }
    for (const auto& a : *args)
        row("fetch:", a.str());
    row("registers:", fmt::format("tracepoint {}", (*tp)->name));
    row("probe-able:", "yes");
    return kExitOk;
}

}  // namespace

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
    d.add_options()(
        "pid,p",
        boost::program_options::value<std::uint32_t>(o ? &o->pid : nullptr)->value_name("PID"),
        "user-space specs: find PATH and va= addresses in process PID");
    return d;
}

Parsed<ResolveOptions> parseResolveOptions(const std::vector<std::string>& args) {
    po::variables_map vm;
    auto o = parseSpecOptions(kResolveCmd, args, resolveOptionsDescription, vm);
    if (o && !o->help && vm.count("pid")) {
        if (o->pid == 0)
            return UsageError{"-p takes a process id (> 0)"};
        if (!isUserSpace(o->spec.kind))
            return UsageError{"-p applies to uprobe:, uretprobe: and usdt: specs"};
    }
    // A glob was looked up as one name: "unknown kernel symbol 'vfs_*'".
    if (o && !o->help)
        if (auto glob = globRefusal(o->spec, "resolve", "resolve them one at a time"))
            return UsageError{*glob};
    return o;
}

int runResolve(const std::vector<std::string>& args, Io& io) {
    auto o = parseResolveOptions(args);
    if (auto rc = parsedExit(io, kResolveCmd, o))
        return *rc;
    if (isUserSpace(o->spec.kind))
        return resolveUser(*o, io);
    if (o->spec.kind == SpecKind::Tracepoint)
        return resolveTracepoint(*o, io);
    auto ks = KernelSymbols::load(o->kallsyms, o->blacklist);
    if (!ks)
        return runtimeError(io, kResolveCmd, ks.error());

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
