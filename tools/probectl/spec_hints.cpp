// What a command-line word that is no probe spec most likely was. The usual causes are the
// shell's: a spec split into words because it was not quoted, a $... the shell expanded
// (unquoted or in double quotes), a forgotten `--` before the command to trace, or a
// syscall's name without its `syscall:`.
#include "spec_hints.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "probectl/expand.hpp"
#include "probectl/held_command.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl::cli {

namespace {

constexpr const char* kQuoting = "fetch arguments and `if` go inside the spec's single quotes";
constexpr const char* kExpanded = "$... was expanded by the shell";

// Whether `word` starts with a kind's name or alias and a ':'.
bool hasKindPrefix(std::string_view word) {
    const std::size_t colon = word.find(':');
    return colon != std::string_view::npos && findKind(word.substr(0, colon)) != nullptr;
}

// A word the shell split off a spec: a fetch argument, `if`, an operator, a $variable.
bool looksLikeSpecPart(std::string_view word) {
    static constexpr std::array<std::string_view, 11> kWords = {"if", "==", "!=", "<",  "<=", ">",
                                                                ">=", "~",  "!~", "&&", "||"};
    for (std::string_view w : kWords)
        if (word == w)
            return true;
    return word.find('=') != std::string_view::npos || word.starts_with('$') ||
           word.starts_with('"');
}

}  // namespace

std::string notASpecHint(const std::string& word, bool command_allowed) {
    if (hasKindPrefix(word))
        return {};
    if (looksLikeSpecPart(word)) {
        // "size=" alone: the shell replaced $arg1 (or another $...) with nothing.
        const bool expanded = word.ends_with('=') || word == "if";
        return fmt::format(
            "'{}' is no probe spec: {}{}, e.g. "
            "'uprobe:libc:malloc size=$arg1 if size > 4096'",
            word, kQuoting, expanded ? fmt::format("; {}", kExpanded) : "");
    }
    if (word.find(':') != std::string::npos)
        return {};
    std::string hint;
    if (systemSyscallTable().find(word))
        hint = fmt::format("did you mean syscall:{}?", word);
    if (command_allowed && HeldCommand::findCommand(word))
        hint += fmt::format(
            "{}to trace the command, put it after '--': probectl trace SPEC... "
            "-- {} [ARGS...]",
            hint.empty() ? "" : " Or, ", word);
    if (hint.empty())
        return {};
    return fmt::format("'{}' is no probe spec (TYPE:LOCATION): {}", word, hint);
}

std::string shellQuotingHint(const std::string& spec, const std::string& message) {
    // Only what an emptied $... leaves behind and a hand-written spec does not: a type with
    // no source before it ("n=:s64"), a dereference of nothing ("+0()"), an operator with no
    // left side ("if  == 3"), a name with no source before the next one ("a= b=$arg2").
    // "size=" at the end could be either, so it gets the parse error alone.
    if (spec.find('$') != std::string::npos || !message.starts_with("expected"))
        return {};
    const bool shows = spec.find("=:") != std::string::npos ||
                       spec.find("()") != std::string::npos ||
                       spec.find("  ") != std::string::npos || spec.find("= ") != std::string::npos;
    if (!shows)
        return {};
    return fmt::format("{}; {}", kQuoting, kExpanded);
}

std::string specTakenAsValueHint(std::string_view option, const std::string& value) {
    if (value.empty() || !parseProbeSpec(value))
        return {};
    return fmt::format("\n'{}' went to {} as its value: put the spec before {}, or write {}=...",
                       value, option, option, option);
}

std::string syscallUserStackRefusal(std::string_view option, std::string_view spec,
                                    std::string_view syscall, std::string_view backend) {
    const std::string instead =
        backend == "ptrace"
            ? fmt::format("uprobe:libc:{} instead: libc's wrapper, where libc has one", syscall)
            : fmt::format("kprobe:__x64_sys_{} instead: the kernel's wrapper", syscall);
    return fmt::format("{}: '{}': user stacks of syscall: specs are not supported yet (probe {})",
                       option, spec, instead);
}

std::optional<std::string> globRefusal(const ProbeSpec& spec, std::string_view command,
                                       std::string_view instead) {
    if (!hasGlob(spec))
        return std::nullopt;
    // A uprobe's C++ signature with a pointer ("ns::g(char*)") names one function when the
    // file has a function of that name (SpecExpander reads the file to tell).
    if (isUserSpace(spec.kind)) {
        auto x = SpecExpander().expand(spec);
        if (x.ok() && x->exact)
            return std::nullopt;
    }
    std::string list;
    const SpecKind k = spec.kind;
    if (k == SpecKind::Kprobe || k == SpecKind::Kretprobe)
        list = fmt::format("`probectl symbols '{}'` lists its matches; ", spec.symbol);
    else if (k == SpecKind::Uprobe || k == SpecKind::Uretprobe)
        list =
            fmt::format("`probectl symbols '{}:{}'` lists its matches; ", spec.path, spec.symbol);
    else if (k == SpecKind::Tracepoint)
        list = fmt::format("`probectl symbols 'tracepoint:{}:{}'` lists its matches; ",
                           spec.subsystem, spec.symbol);
    return fmt::format("'{}': {} takes one probe, not a glob: {}{}", spec.text, command, list,
                       instead);
}

}  // namespace probectl::cli
