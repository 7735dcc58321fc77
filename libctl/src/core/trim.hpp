// Blank trimming for the kernel's text files (tracefs formats, kallsyms, the blacklist).
#pragma once

#include <string_view>

namespace probectl {

// `s` without leading and trailing spaces, tabs and carriage returns.
inline std::string_view trimBlanks(std::string_view s) {
    constexpr std::string_view kBlanks = " \t\r";
    const std::size_t b = s.find_first_not_of(kBlanks);
    if (b == std::string_view::npos)
        return {};
    return s.substr(b, s.find_last_not_of(kBlanks) - b + 1);
}

}  // namespace probectl
