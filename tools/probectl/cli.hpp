// Shared pieces of the probectl CLI: exit codes, the usage-error type, the command table
// and the Boost.Program_options plumbing every subcommand uses.
#pragma once

#include <boost/program_options.hpp>

#include <charconv>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "probectl/result.hpp"

namespace probectl::cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitRuntime = 1,  // the system said no: kernel, files, symbols
    kExitUsage = 2,    // the command line is wrong
};

// A command-line mistake: printed with a pointer to `probectl CMD --help`, exit code 2.
struct UsageError {
    std::string message;
};

template <class T>
using Parsed = Result<T, UsageError>;

// trace --kstack and count --by kstack on --backend=ptrace: why not, and what to use.
inline constexpr const char* kNoKernelStacksWithPtrace =
    "the ptrace backend cannot take kernel stacks: it stops the traced process in user "
    "space and reads only its registers and memory, never the kernel's stack; drop "
    "--backend=ptrace (probectl.ko walks the kernel stack at each hit)";

// trace --maxactive on --backend=ptrace: why not, and what to do.
inline constexpr const char* kNoMaxactiveWithPtrace =
    "--maxactive sizes a kretprobe's table of calls in flight in the kernel: the ptrace "
    "backend has no kretprobes (it sets a breakpoint at each return address itself, with "
    "no such table); drop --maxactive, or use --backend=kernel";

// Where a command writes: stdout/stderr in main(), string streams in tests.
struct Io {
    std::ostream& out;
    std::ostream& err;
    // `err` is a terminal: long work may show its progress there (a line rewritten in place).
    bool err_is_tty = false;
    bool out_is_tty = false;  // `out` is a terminal
    // runtimeError() has said "cannot write standard output": main() does not say it again.
    bool out_error_told = false;
};

// What errors call the streams ("cannot write standard output").
inline constexpr const char* kStandardOutput = "standard output";
inline constexpr const char* kStandardError = "standard error";

// One subcommand: one file each, listed in commands.cpp.
struct Command {
    const char* name;
    const char* summary;  // one line for `probectl --help`
    // Full help: usage line, explanation and examples (options are appended).
    const char* help;
    // Builds the command's option description (for --help and parsing).
    boost::program_options::options_description (*options)();
    int (*run)(const std::vector<std::string>& args, Io& io);
};

const std::vector<Command>& commands();
const Command* findCommand(const std::string& name);

// Prints `probectl CMD --help` text: help, then the options.
void printHelp(const Command& cmd, std::ostream& os);
// Prints the top-level help: commands with summaries and examples.
void printMainHelp(std::ostream& os);

// Runs Boost.Program_options over `args` with `desc` and `pos`; turns its exceptions into a
// UsageError. Returns whether --help was requested.
Parsed<bool> parseCommandLine(const std::vector<std::string>& args,
                              const boost::program_options::options_description& desc,
                              const boost::program_options::positional_options_description& pos,
                              boost::program_options::variables_map& vm);

// The positional arguments of a command line, or help = true when --help was given.
struct Positionals {
    bool help = false;
    std::vector<std::string> values;
};

// parseCommandLine for OPTIONS (`desc`) plus any number of positional arguments, collected
// under the hidden option `name` (`what` describes it).
Parsed<Positionals> parsePositionals(const std::vector<std::string>& args,
                                     boost::program_options::options_description& desc,
                                     const char* name, const char* what,
                                     boost::program_options::variables_map& vm);

// parsePositionals for exactly one positional argument: the argument, or nullopt when --help
// was given. Any other number of arguments is the UsageError `count_error`.
Parsed<std::optional<std::string>> parseOnePositional(
    const std::vector<std::string>& args, boost::program_options::options_description& desc,
    const char* name, const char* what, const std::string& count_error,
    boost::program_options::variables_map& vm);

// Adds --kallsyms FILE and --blacklist FILE, where resolve and symbols read symbols from.
void addSymbolSourceOptions(boost::program_options::options_description& desc,
                            std::string* kallsyms, std::string* blacklist);

// Every command's -o: given as '' it is a usage error, so that an empty name never stands
// for the default silently (an unset shell variable, -o "$OUT"). `option` is the long name
// in the command's options ("output"); `name` what -o takes ("a file name"); `without`
// what leaving -o out does ("write to standard output"). nullopt when -o is absent or not
// empty.
std::optional<UsageError> emptyOutputError(const boost::program_options::variables_map& vm,
                                           const char* option = "output",
                                           const char* name = "a file name",
                                           const char* without = "write to standard output");

// Reports a usage error ("probectl CMD: message\nTry 'probectl CMD --help'.") and returns 2.
int usageError(Io& io, const char* command, const UsageError& e);

// What a command does with its parsed options first: a usage error is reported (2), --help
// prints the command's help (0); nullopt when the command goes on.
template <class O>
std::optional<int> parsedExit(Io& io, const char* command, const Parsed<O>& o) {
    if (!o)
        return usageError(io, command, o.error());
    if (o->help) {
        printHelp(*findCommand(command), io.out);
        return kExitOk;
    }
    return std::nullopt;
}

// Reports a runtime error ("probectl CMD: message (strerror)") and returns 1; an Error
// marked `usage` is reported as usageError() (2).
int runtimeError(Io& io, const char* command, const Error& e);

// `e` as said to a user without the privileges probectl.ko asks for (EPERM, EACCES): what
// is needed and what works without it (sudo; with `ptrace_ok`, --backend=ptrace), instead
// of the step that failed. Any other error is returned as it is.
Error privilegeError(const Error& e, const char* command, bool ptrace_ok);

// Parses a probe id ("12"), UsageError otherwise.
Parsed<std::uint32_t> parseProbeId(const std::string& s);
// The module's refusal of a probe id `e` (enable, disable, remove): an id it does not have
// (ENOENT) gets where to find the ones it has.
Error probeIdError(Error e);

// An unsigned option whose accepted values are lo..hi. Any other value (negative, past
// the range, past the type, not a number) is refused with that range and `note`, as
// "--NAME must be LO..HI NOTE; got 'VALUE'", so the message states what is accepted.
template <class T>
class BoundedValue : public boost::program_options::typed_value<T> {
  public:
    BoundedValue(T* store, std::string name, T lo, T hi, std::string note)
        : boost::program_options::typed_value<T>(store),
          name_(std::move(name)),
          lo_(lo),
          hi_(hi),
          note_(std::move(note)) {}

    void xparse(boost::any& value, const std::vector<std::string>& tokens) const override {
        const std::string text = tokens.empty() ? std::string() : tokens.front();
        unsigned long long n = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, n);
        if (text.empty() || ec != std::errc() || at != end || n < lo_ || n > hi_)
            throw boost::program_options::error(
                "--" + name_ + " must be " + std::to_string(lo_) + ".." + std::to_string(hi_) +
                (note_.empty() ? "" : " " + note_) + "; got '" + text + "'");
        value = boost::any(static_cast<T>(n));
    }

  private:
    std::string name_;
    T lo_, hi_;
    std::string note_;
};

template <class T>
BoundedValue<T>* bounded(T* store, std::string name, T lo, T hi, std::string note = {}) {
    return new BoundedValue<T>(store, std::move(name), lo, hi, std::move(note));
}

}  // namespace probectl::cli
