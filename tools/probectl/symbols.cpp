// probectl symbols: `grep NAME /proc/kallsyms`, done properly: glob match, kind from the
// type letter, module, and whether a kprobe can go there.
#include <fmt/format.h>

#include <ostream>

#include "probectl/kernel_symbols.hpp"
#include "subcommands.hpp"
#include "table.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kCmd = "symbols";
}

po::options_description symbolsOptionsDescription(SymbolsOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("functions,f", po::bool_switch(o ? &o->functions_only : nullptr),
         "only functions (text symbols)");
    // clang-format on
    addSymbolSourceOptions(d, o ? &o->kallsyms : nullptr, o ? &o->blacklist : nullptr);
    return d;
}

Parsed<SymbolsOptions> parseSymbolsOptions(const std::vector<std::string>& args) {
    SymbolsOptions o;
    auto desc = symbolsOptionsDescription(&o);
    po::variables_map vm;
    auto glob = parseOnePositional(args, desc, "glob", "pattern",
                                   "symbols takes exactly one GLOB (quote it: 'sys_open*')", vm);
    if (!glob)
        return std::move(glob).error();
    o.help = !*glob;
    if (o.help)
        return o;
    o.glob = std::move(**glob);
    if (auto why = globError(o.glob); !why.empty())
        return UsageError{why};
    return o;
}

int runSymbols(const std::vector<std::string>& args, Io& io) {
    auto o = parseSymbolsOptions(args);
    if (auto rc = parsedExit(io, kCmd, o))
        return *rc;
    auto ks = KernelSymbols::load(o->kallsyms, o->blacklist);
    if (!ks)
        return runtimeError(io, kCmd, ks.error());
    // A bare word means "contains", as grep would.
    std::string glob = o->glob;
    if (glob.find_first_of("*?[") == std::string::npos)
        glob = "*" + glob + "*";

    using A = Table::Align;
    Table t({{"ADDRESS", A::Left},
             {"TYPE", A::Left},
             {"KIND", A::Left},
             {"MODULE", A::Left},
             {"PROBE", A::Left},
             {"NAME", A::Left}});
    for (const auto* s : ks->match(glob)) {
        if (o->functions_only && !s->isFunction())
            continue;
        t.add({ks->addressesHidden() ? "(hidden)" : fmt::format("{:016x}", s->addr),
               std::string(1, s->type), std::string(s->kindName()),
               s->module.empty() ? "vmlinux" : s->module,
               std::string(toString(ks->probeability(*s))), s->name});
    }
    if (t.rows() == 0) {
        io.err << fmt::format("probectl {}: no symbol matches '{}'\n", kCmd, glob);
        return kExitRuntime;
    }
    t.print(io.out);
    if (ks->addressesHidden())
        io.err << "note: addresses hidden: run as root / kptr_restrict\n";
    if (!ks->hasBlacklist())
        io.err << "note: kprobes blacklist not read (mount debugfs, run as root); PROBE may "
                  "say yes where the kernel says no\n";
    return kExitOk;
}

}  // namespace probectl::cli
