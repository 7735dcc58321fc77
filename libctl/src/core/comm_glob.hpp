// A task's comm holds at most 15 bytes (TASK_COMM_LEN 16, NUL included; the kernel keeps the
// first 15 of a longer name), so a comm filter that needs more can never match: refused
// rather than counting nothing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace probectl::detail {

// The fewest bytes a text matching `glob` has (each * none, each ? or [...] one).
std::size_t globMinLength(std::string_view glob);

// Why no comm can match `glob` ("" when one can); `what` names the filter in the message.
std::string commGlobNeverMatches(std::string_view glob, std::string_view what);

}  // namespace probectl::detail
