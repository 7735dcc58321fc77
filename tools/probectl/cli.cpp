#include "cli.hpp"

#include "spec_hints.hpp"
#include "subcommands.hpp"

#include "probectl/probe_kinds.hpp"

#include <fmt/format.h>

#include <cerrno>
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
    os << "probectl: dynamic tracing with kprobes, kretprobes, uprobes, uretprobes and USDT "
          "probes\n(probectl.ko; or ptrace, with trace --backend=ptrace)\n\n"
          "Usage: probectl COMMAND [OPTIONS] [ARGS]\n"
          "       probectl COMMAND --help     (details and examples for one command)\n"
          "       probectl --version          (CLI, library and loaded module releases)\n\n"
          "Commands:\n";
    for (const auto& c : commands())
        os << fmt::format("  {:<9} {}\n", c.name, c.summary);
    os << "\nProbe specs:\n"
          "  kprobe:SYMBOL[+OFFSET]   function entry (or OFFSET bytes in; decimal or 0x hex)\n"
          "  kprobe:0xADDR            an exact kernel address (for duplicate symbol names)\n"
          "  kretprobe:SYMBOL         function return: return value and latency\n"
          "  syscall:NAME             a syscall, one strace-style line per call\n"
          "  uprobe:PATH:FUNC[+OFF]   a user function (PATH: a file or a library name, libc)\n"
          "  uprobe:PATH:0xOFF        an instruction at a FILE offset (also off=, elf=, va=)\n"
          "  uretprobe:PATH:FUNC      a user function's return: return value and latency\n"
          "  usdt:PATH:PROVIDER:NAME  a USDT (sys/sdt.h) probe, with its own arguments\n"
          "  tracepoint:SUBSYS:EVENT  a kernel tracepoint, its arguments by name (args.NAME)\n"
          "  Any spec may be followed by fetch arguments: NAME=SOURCE[:TYPE] ...\n"
          "\nExamples:\n"
          "  sudo probectl trace syscall:openat -- ls -al\n"
          "  sudo probectl trace kretprobe:do_sys_openat2 -p 1234 --duration 5\n"
          "  sudo probectl resolve syscall:execve\n"
          "  sudo probectl symbols 'do_sys_open*'\n"
          "  sudo probectl add kprobe:do_nanosleep --persist && sudo probectl list\n"
          "\nExit status: 0 ok; 2 when the command line is wrong (options, a spec or predicate,\n"
          "a spec the backend cannot run), whichever part of probectl finds it; 1 when the\n"
          "system refused (kernel, module, files, processes), a well-formed spec's symbol,\n"
          "file or process not found included. trace -- CMD exits with CMD's status.\n"
          "A failed write to stdout or stderr (a full disk) makes 0 into 1; stdout's is said.\n"
          "Most commands need root (CAP_SYS_ADMIN or CAP_PERFMON) and probectl.ko loaded.\n";
}

namespace {

// Boost names an option by its long name even when -p was typed: name both.
std::string withShortNames(std::string message, const po::options_description& desc) {
    for (const auto& opt : desc.options()) {
        const std::string shortName =
            opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
        const std::string longName = "'--" + opt->long_name() + "'";
        const std::size_t at = message.find(longName);
        if (shortName.size() == 2 && shortName[0] == '-' && at != std::string::npos)
            message.replace(at, longName.size(),
                            fmt::format("'{}/--{}'", shortName, opt->long_name()));
    }
    return message;
}

template <typename T>
bool takes(const po::value_semantic* v) {
    return dynamic_cast<const po::typed_value<T>*>(v) ||
           dynamic_cast<const po::typed_value<std::vector<T>>*>(v);
}

// Boost reads "-5" into an unsigned option as 2^32-5 (lexical_cast wraps): -p -5 looked
// for process 4294967291. The first such value, or "" when none.
std::string negativeUnsigned(const po::parsed_options& parsed) {
    for (const auto& opt : parsed.options) {
        const po::option_description* d =
            opt.string_key.empty() ? nullptr
                                   : parsed.description->find_nothrow(opt.string_key, false);
        if (!d)
            continue;
        const po::value_semantic* v = d->semantic().get();
        if (!takes<unsigned char>(v) && !takes<unsigned short>(v) && !takes<unsigned>(v) &&
            !takes<unsigned long>(v) && !takes<unsigned long long>(v))
            continue;
        // A process id starts at 1 (-p 0 is refused): "0 or more" would contradict that.
        const bool pid = v->name() == "PID";
        for (const auto& value : opt.value)
            if (value.find_first_not_of(" \t") != std::string::npos &&
                value[value.find_first_not_of(" \t")] == '-')
                return fmt::format("the argument ('{}') for option '--{}' is invalid: it takes {}",
                                   value, d->long_name(),
                                   pid ? "a process id (1 or more)" : "a number of 0 or more");
    }
    return {};
}

}  // namespace

std::optional<UsageError> emptyOutputError(const po::variables_map& vm, const char* option,
                                           const char* name, const char* without) {
    if (!vm.count(option) || !vm[option].as<std::string>().empty())
        return std::nullopt;
    return UsageError{fmt::format("-o '': give {} (leave -o out to {})", name, without)};
}

Parsed<bool> parseCommandLine(const std::vector<std::string>& args,
                              const po::options_description& desc,
                              const po::positional_options_description& pos,
                              po::variables_map& vm) {
    try {
        // Options may not be abbreviated: a typo should fail, not match another option.
        const int style =
            po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
        const po::parsed_options parsed =
            po::command_line_parser(args).options(desc).positional(pos).style(style).run();
        po::store(parsed, vm);
        if (vm.count("help"))
            return true;
        if (std::string negative = negativeUnsigned(parsed); !negative.empty())
            return UsageError{withShortNames(negative, desc)};
        po::notify(vm);
    } catch (const po::validation_error& e) {
        // Not a number at all ("-p abc"): the same words as a negative one.
        std::string text = e.what();
        std::string name = e.get_option_name();
        name.erase(0, name.find_first_not_of('-'));
        const po::option_description* d = desc.find_nothrow(name, false);
        if (e.kind() == po::validation_error::invalid_option_value && d &&
            d->semantic()->name() == "PID")
            text += ": it takes a process id (1 or more)";
        return UsageError{withShortNames(text, desc)};
    } catch (const po::error& e) {
        return UsageError{withShortNames(e.what(), desc)};
    }
    return false;
}

Parsed<Positionals> parsePositionals(const std::vector<std::string>& args,
                                     po::options_description& desc, const char* name,
                                     const char* what, po::variables_map& vm) {
    Positionals p;
    desc.add_options()(name, po::value<std::vector<std::string>>(&p.values), what);
    po::positional_options_description pos;
    pos.add(name, -1);
    auto r = parseCommandLine(args, desc, pos, vm);
    if (!r)
        return std::move(r).error();
    p.help = *r;
    return p;
}

Parsed<std::optional<std::string>> parseOnePositional(const std::vector<std::string>& args,
                                                      po::options_description& desc,
                                                      const char* name, const char* what,
                                                      const std::string& count_error,
                                                      po::variables_map& vm) {
    auto p = parsePositionals(args, desc, name, what, vm);
    if (!p)
        return std::move(p).error();
    if (p->help)
        return std::optional<std::string>();
    if (p->values.size() != 1)
        return UsageError{count_error};
    return std::optional<std::string>(std::move(p->values[0]));
}

void addSymbolSourceOptions(po::options_description& desc, std::string* kallsyms,
                            std::string* blacklist) {
    // clang-format off
    desc.add_options()
        ("kallsyms", po::value<std::string>(kallsyms)->value_name("FILE")
             ->default_value("/proc/kallsyms"), "symbol table to read")
        ("blacklist", po::value<std::string>(blacklist)->value_name("FILE")
             ->default_value("/sys/kernel/debug/kprobes/blacklist"),
         "kprobes blacklist to read (\"\" for none)");
    // clang-format on
}

int usageError(Io& io, const char* command, const UsageError& e) {
    io.err << fmt::format("probectl {}: {}\nTry 'probectl {} --help'.\n", command, e.message,
                          command);
    return kExitUsage;
}

int runtimeError(Io& io, const char* command, const Error& e) {
    // One rule whichever layer finds the mistake: the command line's are usage errors.
    if (e.usage)
        return usageError(io, command, UsageError{e.describe()});
    if (e.message == fmt::format("cannot write {}", kStandardOutput))
        io.out_error_told = true;
    io.err << fmt::format("probectl {}: {}\n", command, e.describe());
    return kExitRuntime;
}

Error privilegeError(const Error& e, const char* command, bool ptrace_ok) {
    // Only the module's refusal of an unprivileged caller (its text names both
    // capabilities), not a file's EACCES, nor a CAP_PERFMON caller's of another's probe
    // ("... needs CAP_SYS_ADMIN"), which says itself what is missing.
    if (e.usage || (e.err != EPERM && e.err != EACCES) ||
        e.message.find("CAP_SYS_ADMIN or CAP_PERFMON") == std::string::npos)
        return e;
    return makeError(
        e.err, fmt::format("{} with probectl.ko needs root (CAP_SYS_ADMIN or CAP_PERFMON): run it "
                           "with sudo{}",
                           command,
                           ptrace_ok ? ", or add --backend=ptrace, which traces your own processes "
                                       "without privileges (uprobe, uretprobe, usdt and syscall "
                                       "specs)"
                                     : ""));
}

Parsed<std::uint32_t> parseProbeId(const std::string& s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
        return UsageError{fmt::format("'{}' is not a probe id (a number from 'probectl list')", s)};
    return v;
}

Error probeIdError(Error e) {
    if (e.err == ENOENT)
        e.message += "; 'probectl list' shows the probes";
    return e;
}

std::optional<UsageError> maxactiveError(const std::vector<ProbeSpec>& specs,
                                         std::string_view backend) {
    if (backend == "ptrace")
        return UsageError{kNoMaxactiveWithPtrace};
    for (const auto& s : specs)
        if (kindInfo(s.kind).maxactive)
            return std::nullopt;
    return UsageError{
        "--maxactive sizes the table of calls in flight of kretprobe: and syscall: probes, "
        "and no spec given is one: drop --maxactive"};
}

Parsed<ProbeSpec> parseSpecArgument(const std::string& text, bool command_allowed) {
    auto spec = parseProbeSpec(text);
    if (spec)
        return std::move(*spec);
    if (std::string hint = notASpecHint(text, command_allowed); !hint.empty())
        return UsageError{hint};
    std::string message = "bad probe spec\n" + spec.error().render();
    if (std::string hint = shellQuotingHint(text, spec.error().message); !hint.empty())
        message += "\nnote: " + hint;
    return UsageError{message};
}

Parsed<std::optional<ProbeSpec>> parseOneSpec(const char* command,
                                              const std::vector<std::string>& args,
                                              po::options_description& desc,
                                              po::variables_map& vm) {
    auto arg = parseOnePositional(args, desc, "spec", "probe spec",
                                  fmt::format("{} takes exactly one probe spec", command), vm);
    if (!arg)
        return std::move(arg).error();
    if (!*arg)
        return std::optional<ProbeSpec>();
    auto spec = parseSpecArgument(**arg);
    if (!spec)
        return std::move(spec).error();
    return std::optional<ProbeSpec>(std::move(*spec));
}

}  // namespace probectl::cli
