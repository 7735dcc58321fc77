#include "cli.hpp"

#include "subcommands.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ostream>

namespace po = boost::program_options;

namespace probectl::cli {

const Command* findCommand(const std::string& name) {
    for (const auto& c : commands())
        if (name == c.name)
            return &c;
    return nullptr;
}

void printHelp(const Command& cmd, std::ostream& os) {
    os << cmd.help << "\n" << cmd.options() << "\n";
}

void printMainHelp(std::ostream& os) {
    os << "probectl: dynamic tracing with kprobes and kretprobes (probectl.ko)\n\n"
          "Usage: probectl COMMAND [OPTIONS] [ARGS]\n"
          "       probectl COMMAND --help     (details and examples for one command)\n\n"
          "Commands:\n";
    for (const auto& c : commands())
        os << fmt::format("  {:<9} {}\n", c.name, c.summary);
    os << "\nProbe specs:\n"
          "  kprobe:SYMBOL[+OFFSET]   function entry (or OFFSET bytes in; decimal or 0x hex)\n"
          "  kprobe:0xADDR            an exact kernel address (for duplicate symbol names)\n"
          "  kretprobe:SYMBOL         function return: return value and latency\n"
          "  syscall:NAME             a syscall's entry, with the syscall's own six arguments\n"
          "\nExamples:\n"
          "  sudo probectl trace syscall:openat -- ls -al\n"
          "  sudo probectl trace kretprobe:do_sys_openat2 -p 1234 --duration 5\n"
          "  sudo probectl resolve syscall:execve\n"
          "  sudo probectl symbols 'do_sys_open*'\n"
          "  sudo probectl add kprobe:do_nanosleep --persist && sudo probectl list\n"
          "\nExit status: 0 ok, 1 runtime error (kernel, symbols, files), 2 usage error.\n"
          "Most commands need root (CAP_SYS_ADMIN or CAP_PERFMON) and probectl.ko loaded.\n";
}

Parsed<bool> parseCommandLine(const std::vector<std::string>& args,
                              const po::options_description& desc,
                              const po::positional_options_description& pos,
                              po::variables_map& vm) {
    try {
        // Options may not be abbreviated: a typo should fail, not match another option.
        const int style =
            po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
        po::store(po::command_line_parser(args).options(desc).positional(pos).style(style).run(),
                  vm);
        if (vm.count("help"))
            return true;
        po::notify(vm);
    } catch (const po::error& e) {
        return UsageError{e.what()};
    }
    return false;
}

int usageError(Io& io, const char* command, const UsageError& e) {
    io.err << fmt::format("probectl {}: {}\nTry 'probectl {} --help'.\n", command, e.message,
                          command);
    return kExitUsage;
}

int runtimeError(Io& io, const char* command, const Error& e) {
    io.err << fmt::format("probectl {}: {}\n", command, e.describe());
    return kExitRuntime;
}

Parsed<std::uint32_t> parseProbeId(const std::string& s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
        return UsageError{fmt::format("'{}' is not a probe id (a number from 'probectl list')", s)};
    return v;
}

Parsed<ProbeSpec> parseSpecArgument(const std::string& text) {
    auto spec = parseProbeSpec(text);
    if (!spec)
        return UsageError{"bad probe spec\n" + spec.error().render()};
    return std::move(*spec);
}

po::options_description probeIdOptionsDescription(ProbeIdOptions* o) {
    po::options_description d("Options");
    d.add_options()("help,h", "show this help");
    (void)o;
    return d;
}

Parsed<ProbeIdOptions> parseProbeIdOptions(const char* command,
                                           const std::vector<std::string>& args) {
    ProbeIdOptions o;
    auto desc = probeIdOptionsDescription(&o);
    std::vector<std::string> ids;
    desc.add_options()("id", po::value<std::vector<std::string>>(&ids), "probe id");
    po::positional_options_description pos;
    pos.add("id", -1);
    po::variables_map vm;
    auto r = parseCommandLine(args, desc, pos, vm);
    if (!r)
        return std::move(r).error();
    if (*r) {
        o.help = true;
        return o;
    }
    if (ids.size() != 1)
        return UsageError{
            fmt::format("{} takes exactly one probe id (see 'probectl list')", command)};
    auto id = parseProbeId(ids[0]);
    if (!id)
        return std::move(id).error();
    o.id = *id;
    return o;
}

}  // namespace probectl::cli
