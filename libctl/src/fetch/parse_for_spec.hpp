// The fetch-argument and predicate parsers with what the public FetchOptions and
// PredicateOptions do not carry (kept as they are: their layout is the library's ABI, and an
// embedder's PredicateOptions{true} compiles warning-free).
#pragma once

#include <string_view>
#include <vector>

#include "probectl/fetch_spec.hpp"
#include "probectl/predicate.hpp"

namespace probectl::detail {

// parseFetchArgs for a syscall: probe of `never_returns` (exit, exit_group; "" for any other
// probe): its $retval is refused as that call's, which never returns, not as a probe that is
// no return probe.
Result<std::vector<FetchArg>, SpecError> parseFetchArgsOf(std::string_view input, std::size_t begin,
                                                          const FetchOptions& opts,
                                                          std::string_view never_returns);

// parsePredicate likewise.
Result<PredicateNodePtr, SpecError> parsePredicateOf(std::string_view input,
                                                     const std::vector<FetchArg>& args,
                                                     std::size_t begin,
                                                     const PredicateOptions& opts,
                                                     std::string_view never_returns);

}  // namespace probectl::detail
