// probectl symbols: `grep NAME /proc/kallsyms`, done properly: glob match, kind from the
// type letter, module, and whether a kprobe can go there. With PATH[:GLOB], the same for a
// user-space binary: its functions with file offsets, and its USDT probes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gelf.h>

#include <algorithm>
#include <ostream>

#include "probectl/elf_resolver.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/text_table.hpp"
#include "probectl/tracepoints.hpp"
#include "probectl/user_target.hpp"
#include "subcommands.hpp"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {
constexpr const char* kSymbolsCmd = "symbols";

// A bare word means "contains", as grep would.
std::string globOf(const std::string& word) {
    if (word.find_first_of("*?[") == std::string::npos)
        return "*" + word + "*";
    return word;
}

int userSymbols(const SymbolsOptions& o, Io& io) {
    UserResolveOptions uo;
    uo.pid = static_cast<pid_t>(o.pid);
    auto file = findUserFile(o.elf_path, uo);
    if (!file)
        return runtimeError(io, kSymbolsCmd, file.error());
    ElfOpenOptions eo;
    eo.debug_dir = file->root + uo.debug_dir;
    auto elf = ElfResolver::open(file->path, eo);
    if (!elf)
        return runtimeError(io, kSymbolsCmd, elf.error());
    // A glob or a signature that names a function exactly is that function, as in a probe
    // spec: "ns::g(char*)", "S::operator[](unsigned long)", "f(long unsigned int)". Any other
    // bare word still means "contains".
    std::vector<const ElfSymbol*> exact;
    if (o.glob.find_first_of("*?[(") != std::string::npos)
        exact = elf->functionsNamed(o.glob);
    if (exact.empty()) {
        if (auto why = globError(o.glob); !why.empty()) {
            const auto overloads = elf->overloadsOf(o.glob);
            if (overloads.empty())
                return usageError(io, kSymbolsCmd, UsageError{why});
            io.err << fmt::format("probectl {}: {}\n", kSymbolsCmd,
                                  noSuchOverloadMessage(o.glob, file->path, overloads));
            return kExitRuntime;
        }
    }
    auto listed = [&](const ElfSymbol& s, const std::string& glob) {
        if (!exact.empty())
            return std::find(exact.begin(), exact.end(), &s) != exact.end();
        return s.matchesGlob(glob) || globMatch(glob, s.displayName());
    };
    const std::string glob = o.glob.empty() ? "*" : globOf(o.glob);
    io.out << fmt::format("file: {} ({}{}; symbols from {})\n", file->path, toString(elf->type()),
                          elf->buildId().empty() ? "" : ", build-id " + elf->buildId(),
                          elf->symbolSource());
    using A = Table::Align;
    Table t({{"ADDRESS", A::Left},
             {"SIZE", A::Right},
             {"OFFSET", A::Left},
             {"TYPE", A::Left},
             {"BIND", A::Left},
             {"NAME", A::Left},
             {"FILE", A::Left}});
    for (const auto& s : elf->symbols()) {
        if (!s.isFunction() || !listed(s, glob))
            continue;
        auto off = elf->fileOffset(s.value);
        t.add({fmt::format("{:#x}", s.value), std::to_string(s.size),
               off ? fmt::format("{:#x}", *off) : "-", s.isIfunc() ? "IFUNC" : "FUNC",
               s.bind == STB_LOCAL  ? "local"
               : s.bind == STB_WEAK ? "weak"
                                    : "global",
               s.displayName(), s.file});
    }
    Table u({{"USDT", A::Left}, {"OFFSET", A::Left}, {"SEMAPHORE", A::Left}, {"ARGS", A::Left}});
    for (const auto& p : elf->usdtProbes()) {
        const std::string name = p.provider + ":" + p.name;
        if (!exact.empty() || (!globMatch(glob, name) && !globMatch(glob, p.name)))
            continue;
        std::vector<std::string> args;
        for (const auto& a : p.decoded)
            args.push_back(a.str());
        u.add({name, fmt::format("{:#x}", p.file_offset),
               p.semaphore_offset ? fmt::format("{:#x}", p.semaphore_offset) : "-",
               p.args_error.empty() ? fmt::format("{}", fmt::join(args, ", "))
                                    : "? " + p.args_error});
    }
    if (t.rows() == 0 && u.rows() == 0) {
        io.err << fmt::format("probectl {}: no function or USDT probe of {} matches '{}'\n",
                              kSymbolsCmd, file->path, glob);
        return kExitRuntime;
    }
    if (t.rows())
        t.print(io.out);
    if (u.rows()) {
        if (t.rows())
            io.out << "\n";
        u.print(io.out);
    }
    io.out << "ADDRESS is the ELF address (readelf -s); OFFSET the file offset a uprobe uses.\n";
    return kExitOk;
}

// symbols tracepoint:SUBSYS[:EVENT]: one row per tracepoint, its arguments as name:type.
int tracepointSymbols(const SymbolsOptions& o, Io& io) {
    TracepointSources src;
    src.kallsyms = o.kallsyms;
    auto tps = Tracepoints::load(src);
    if (!tps)
        return runtimeError(io, kSymbolsCmd, tps.error());
    using A = Table::Align;
    Table t({{"TRACEPOINT", A::Left}, {"MODULE", A::Left}, {"ARGS", A::Left}});
    for (const auto* tp : tps->match(o.tp_subsys, o.tp_event))
        t.add({tp->spec(), tp->module.empty() ? "vmlinux" : tp->module, tp->protoStr()});
    if (t.rows() == 0) {
        // Without tracefs (unreadable but by root) no tracepoint has a known subsystem:
        // "no match" would be wrong.
        if (!tps->hasTracefs() && o.tp_subsys != "*")
            return runtimeError(
                io, kSymbolsCmd,
                makeError(EACCES, fmt::format("cannot tell which tracepoints are in '{}': "
                                              "tracefs (/sys/kernel/tracing) is not readable; "
                                              "run as root (sudo), or give the subsystem as "
                                              "'*' ('tracepoint:*:{}')",
                                              o.tp_subsys, o.tp_event)));
        io.err << fmt::format("probectl {}: no tracepoint matches 'tracepoint:{}:{}'\n",
                              kSymbolsCmd, o.tp_subsys, o.tp_event);
        return kExitRuntime;
    }
    t.print(io.out);
    if (!tps->hasBtf())
        io.err << "note: no kernel BTF (/sys/kernel/btf/vmlinux): argument names and types "
                  "unknown (ARGS '?'); use $arg1..$arg6\n";
    if (!tps->hasTracefs())
        io.err << "note: tracefs not available: subsystems unknown ('*'); SUBSYS is not "
                  "checked\n";
    return kExitOk;
}

}  // namespace

po::options_description symbolsOptionsDescription(SymbolsOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        // No -f: that letter is trace's --follow.
        ("functions", po::bool_switch(o ? &o->functions_only : nullptr),
         "only functions (text symbols)")
        ("pid,p", po::value<std::uint32_t>(o ? &o->pid : nullptr)->value_name("PID"),
         "PATH[:GLOB]: find PATH as process PID sees it");
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
    if (!glob) {
        // `symbols /bin/ls 'ma*'`: a binary's functions take PATH:GLOB, one word.
        std::vector<std::string> words;
        for (const auto& a : args)
            if (!a.starts_with('-'))
                words.push_back(a);
        if (words.size() == 2 && words[0].find('/') != std::string::npos &&
            words[0].find(':') == std::string::npos)
            return UsageError{fmt::format("{}; a binary's functions: probectl symbols '{}:{}'",
                                          glob.error().message, words[0], words[1])};
        return std::move(glob).error();
    }
    o.help = !*glob;
    if (o.help)
        return o;
    o.glob = std::move(**glob);
    // '' matched every symbol (a bare word matches as a substring): most likely an empty
    // shell variable, not a wish for the whole table.
    if (o.glob.empty())
        return UsageError{
            "the pattern is empty (an unset shell variable?): give a GLOB such as "
            "'vfs_*', or '*' for every symbol"};
    if (o.glob.starts_with("tracepoint:") || o.glob.starts_with("t:")) {
        if (vm.count("pid"))
            return UsageError{"-p applies to PATH[:GLOB] (user-space binaries)"};
        std::string rest = o.glob.substr(o.glob.find(':') + 1);
        const auto colon = rest.find(':');
        o.tracepoints = true;
        o.tp_subsys = rest.substr(0, colon);
        o.tp_event = colon == std::string::npos ? "*" : rest.substr(colon + 1);
        if (o.tp_subsys.empty())
            o.tp_subsys = "*";
        if (o.tp_event.empty())
            o.tp_event = "*";
        for (const auto& g : {o.tp_subsys, o.tp_event})
            if (auto why = globError(g); !why.empty())
                return UsageError{why};
        return o;
    }
    // PATH[:GLOB]: kernel symbols have neither '/' nor ':'.
    if (o.glob.find_first_of("/:") != std::string::npos) {
        const auto colon = o.glob.find(':');
        o.elf_path = o.glob.substr(0, colon);
        o.glob = colon == std::string::npos ? std::string() : o.glob.substr(colon + 1);
        if (o.elf_path.empty())
            return UsageError{"PATH[:GLOB] needs a PATH before ':' (a file or a library name)"};
        // Quoted as in a spec (uprobe:/bin/x:'ns::*'): the same glob.
        if (o.glob.size() >= 2 && (o.glob.front() == '\'' || o.glob.front() == '"') &&
            o.glob.back() == o.glob.front())
            o.glob = o.glob.substr(1, o.glob.size() - 2);
    } else if (vm.count("pid")) {
        return UsageError{"-p applies to PATH[:GLOB] (user-space binaries)"};
    }
    if (vm.count("pid") && o.pid == 0)
        return UsageError{"-p takes a process id (> 0)"};
    // A binary's function may be named exactly with brackets ("S::operator[](int)"):
    // userSymbols reads the file before it calls the name a bad glob.
    if (o.elf_path.empty())
        if (auto why = globError(o.glob); !why.empty())
            return UsageError{why};
    return o;
}

int runSymbols(const std::vector<std::string>& args, Io& io) {
    auto o = parseSymbolsOptions(args);
    if (auto rc = parsedExit(io, kSymbolsCmd, o))
        return *rc;
    if (o->tracepoints)
        return tracepointSymbols(*o, io);
    if (!o->elf_path.empty())
        return userSymbols(*o, io);
    auto ks = KernelSymbols::load(o->kallsyms, o->blacklist);
    if (!ks)
        return runtimeError(io, kSymbolsCmd, ks.error());
    const std::string glob = globOf(o->glob);

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
        io.err << fmt::format("probectl {}: no symbol matches '{}'\n", kSymbolsCmd, glob);
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
