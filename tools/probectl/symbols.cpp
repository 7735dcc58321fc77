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
         "only functions (text symbols)")
        ("kallsyms", po::value<std::string>(o ? &o->kallsyms : nullptr)->value_name("FILE")
             ->default_value("/proc/kallsyms"), "symbol table to read")
        ("blacklist", po::value<std::string>(o ? &o->blacklist : nullptr)->value_name("FILE")
             ->default_value("/sys/kernel/debug/kprobes/blacklist"),
         "kprobes blacklist to read (\"\" for none)");
    // clang-format on
    return d;
}

Parsed<SymbolsOptions> parseSymbolsOptions(const std::vector<std::string>& args) {
    SymbolsOptions o;
    auto desc = symbolsOptionsDescription(&o);
    std::vector<std::string> globs;
    desc.add_options()("glob", po::value<std::vector<std::string>>(&globs), "pattern");
    po::positional_options_description pos;
    pos.add("glob", -1);
    po::variables_map vm;
    auto r = parseCommandLine(args, desc, pos, vm);
    if (!r)
        return std::move(r).error();
    if (*r) {
        o.help = true;
        return o;
    }
    if (globs.size() != 1)
        return UsageError{"symbols takes exactly one GLOB (quote it: 'sys_open*')"};
    o.glob = globs[0];
    if (auto why = globError(o.glob); !why.empty())
        return UsageError{why};
    return o;
}

int runSymbols(const std::vector<std::string>& args, Io& io) {
    auto o = parseSymbolsOptions(args);
    if (!o)
        return usageError(io, kCmd, o.error());
    if (o->help) {
        printHelp(*findCommand(kCmd), io.out);
        return kExitOk;
    }
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
