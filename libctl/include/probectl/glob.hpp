// String matching shared by every name lookup (kernel symbols, ELF functions,
// tracepoints, predicates): shell globs and edit distance for suggestions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Shell-glob match (fnmatch without flags): * ? [abc] [a-z] [!x].
bool globMatch(std::string_view glob, std::string_view text);
// Why `glob` is not a valid pattern ("" when it is): an unterminated '[' bracket.
std::string globError(std::string_view glob);
// Levenshtein distance.
std::size_t editDistance(std::string_view a, std::string_view b);

}  // namespace probectl
#pragma GCC visibility pop
