// Hints for command-line words that are no probe spec (spec_hints.cpp): shell quoting, a
// forgotten `--`, a syscall's name without `syscall:`.
#pragma once

#include <string>

namespace probectl::cli {

// What `word`, refused as a probe spec, most likely was, as one sentence; "" when nothing
// fits. `command_allowed`: the command takes `-- CMD` (trace), so a command's name gets the
// `--` hint.
std::string notASpecHint(const std::string& word, bool command_allowed);

// For a spec whose parse failed with `message`: the quoting hint when the spec shows what
// an expanded $... leaves ("n=:s64", "+0()", "if  == 3", "a= b="; no '$' left, stopping
// where a value was due); "" otherwise, as for a plain "size=".
std::string shellQuotingHint(const std::string& spec, const std::string& message);

}  // namespace probectl::cli
