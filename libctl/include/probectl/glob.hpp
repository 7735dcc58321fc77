// String matching shared by every name lookup (kernel symbols, ELF functions,
// tracepoints, predicates): shell globs and edit distance for suggestions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Shell-glob match (fnmatch without flags): * ? [abc] [a-z] [!x].
bool globMatch(std::string_view glob, std::string_view text);
// Why `glob` is not a valid pattern ("" when it is): an unterminated '[' bracket.
std::string globError(std::string_view glob);
// Levenshtein distance.
std::size_t editDistance(std::string_view a, std::string_view b);
// Did-you-mean for a mistyped name: the candidates holding `word` first, then those within
// max(2, |word|/3) edits, closest first; at most `max`, duplicates once. Shared by the
// kernel and ptrace backends so that one typo gets one answer.
std::vector<std::string> nearNames(std::string_view word,
                                   const std::vector<std::string_view>& candidates,
                                   std::size_t max = 5);
// "; did you mean: a, b?" for nearNames(), or "" when there is none.
std::string didYouMean(const std::vector<std::string>& names);

}  // namespace probectl
#pragma GCC visibility pop
