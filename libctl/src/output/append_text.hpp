// Appending forms of formatFetchedValue (fetched_value.hpp) and straceQuote
// (strace_format.hpp) for the per-event path: a reused string costs no allocation once it
// has grown.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "probectl/fetched_value.hpp"

namespace probectl {

void appendFetchedValue(std::string& out, const FetchedValue& v);
void appendStraceQuote(std::string& out, std::string_view bytes, std::size_t limit,
                       bool truncated = false);

}  // namespace probectl
