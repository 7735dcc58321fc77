// Hints for command-line words that are no probe spec (spec_hints.cpp): shell quoting, a
// forgotten `--`, a syscall's name without `syscall:`; and what to probe instead of a spec
// an option cannot take.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "probectl/probe_spec.hpp"

namespace probectl::cli {

// What `word`, refused as a probe spec, most likely was, as one sentence; "" when nothing
// fits. `command_allowed`: the command takes `-- CMD` (trace), so a command's name gets the
// `--` hint.
std::string notASpecHint(const std::string& word, bool command_allowed);

// For a spec whose parse failed with `message`: the quoting hint when the spec shows what
// an expanded $... leaves ("n=:s64", "+0()", "if  == 3", "a= b="; no '$' left, stopping
// where a value was due); "" otherwise, as for a plain "size=".
std::string shellQuotingHint(const std::string& spec, const std::string& message);

// With no probe spec given: when `value`, given to `option` (--ustack, whose UNWINDER is
// optional), is a probe spec, says that the option took it; "" otherwise.
std::string specTakenAsValueHint(std::string_view option, const std::string& value);

// The refusal of `option` (--ustack, --ustack=dwarf) for syscall: spec `spec`, naming what
// `backend` can probe instead with a user stack: the kernel's syscall wrapper (a kprobe),
// or on the ptrace backend, which has no kprobes, libc's wrapper (a uprobe).
std::string syscallUserStackRefusal(std::string_view option, std::string_view spec,
                                    std::string_view syscall, std::string_view backend);

// `command` (add, resolve) takes one probe: the refusal of a glob `spec`, naming the command
// that lists its matches and `instead` (what to do then); nullopt when `spec` is no glob (a
// C++ signature with a `*` that names a function of its file is one).
std::optional<std::string> globRefusal(const ProbeSpec& spec, std::string_view command,
                                       std::string_view instead);

}  // namespace probectl::cli
