// Appending forms of formatFetchedValue (fetched_value.hpp) and straceQuote
// (strace_format.hpp) for the per-event path: a reused string costs no allocation once it
// has grown. The number forms write what fmt's {:>N}, {:0N} and {:#x} write, without
// parsing a format per call (most of a text line's cost when they did).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "probectl/fetched_value.hpp"

namespace probectl {

// v in decimal, right-aligned in `width` columns padded with `fill` (' ' or '0'). Out: a
// std::string or fmt::memory_buffer.
template <typename Out>
void appendDecimal(Out& out, std::uint64_t v, std::size_t width = 0, char fill = ' ') {
    const fmt::format_int digits(v);
    for (std::size_t i = digits.size(); i < width; ++i)
        out.push_back(fill);
    out.append(digits.data(), digits.data() + digits.size());
}

// v with a '-' if negative (fmt's {}).
template <typename Out>
void appendSigned(Out& out, std::int64_t v) {
    const fmt::format_int digits(v);
    out.append(digits.data(), digits.data() + digits.size());
}

// v as 0x followed by lowercase hex digits, no leading zeros (fmt's {:#x}).
template <typename Out>
void appendHex(Out& out, std::uint64_t v) {
    char buf[18];
    char* p = buf + sizeof(buf);
    do {
        *--p = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *--p = 'x';
    *--p = '0';
    out.append(p, buf + sizeof(buf));
}

void appendFetchedValue(std::string& out, const FetchedValue& v);
void appendStraceQuote(std::string& out, std::string_view bytes, std::size_t limit,
                       bool truncated = false);

// A name from the traced system (a comm, a recording's probe spec) in a text column: as it is
// when it is UTF-8 without control characters, else quoted with strace's escapes. Raw, a
// newline split the event's line and an escape sequence reached the terminal.
bool isShownAsIs(std::string_view bytes);
void appendShownName(std::string& out, std::string_view bytes);

}  // namespace probectl
