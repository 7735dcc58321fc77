// The shared scanner: number syntax, range and error wording for every spec grammar.
#include "fetch/scanner.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace probectl {

bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isIdentChar(char c) {
    return isIdentStart(c) || (c >= '0' && c <= '9');
}

int hexDigit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::string Scanner::quotedAt(std::size_t index) const {
    const auto lead = static_cast<unsigned char>(s_[index]);
    if (lead >= 0x20 && lead < 0x7f)
        return fmt::format("'{}'", s_[index]);
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes 10xxxxxx.
    const std::size_t len = (lead & 0xe0) == 0xc0   ? 2
                            : (lead & 0xf0) == 0xe0 ? 3
                            : (lead & 0xf8) == 0xf0 ? 4
                                                    : 0;
    std::uint32_t cp = len == 2 ? lead & 0x1f : len == 3 ? lead & 0x0f : lead & 0x07;
    bool whole = len > 0 && index + len <= std::min(end_, s_.size());
    for (std::size_t k = 1; whole && k < len; ++k) {
        const auto b = static_cast<unsigned char>(s_[index + k]);
        whole = (b & 0xc0) == 0x80;
        cp = cp << 6 | (b & 0x3f);
    }
    if (whole && cp >= 0xa0 && cp <= 0x10ffff)
        return fmt::format("'{}' (U+{:04X})", s_.substr(index, len), cp);
    if (whole)  // a C1 control character, or an overlong form
        return fmt::format("U+{:04X}", cp);
    return fmt::format("byte 0x{:02x}", lead);
}

Scanner::Scanner(std::string_view input, std::size_t begin, std::size_t end)
    : s_(input), pos_(begin), end_(std::min(end, input.size())) {}

bool Scanner::atHexPrefix() const {
    return pos_ + 1 < end_ && s_[pos_] == '0' && (s_[pos_ + 1] == 'x' || s_[pos_ + 1] == 'X');
}

bool Scanner::atNumber() const {
    const std::size_t d = pos_ < end_ && s_[pos_] == '-' ? pos_ + 1 : pos_;
    return d < end_ && s_[d] >= '0' && s_[d] <= '9';
}

SpecError Scanner::fail(std::size_t index, std::string message) const {
    return SpecError{std::move(message), index + 1, std::string(s_)};
}

Result<ScannedNumber, SpecError> Scanner::number(std::string_view what, NumberRange range,
                                                 std::optional<std::size_t> sign_at) {
    ScannedNumber n;
    n.begin = sign_at.value_or(pos_);
    n.negative = sign_at && s_[*sign_at] == '-';
    if (sign_at)
        n.text = s_[*sign_at];
    if (!sign_at && range.neg_max > 0 && !atEnd() && peek() == '-') {
        n.negative = true;
        n.text = "-";
        ++pos_;
    }
    const bool hex = atHexPrefix();
    const unsigned base = hex ? 16 : 10;
    const char* const digits_name = hex ? "hex" : "decimal";
    const std::size_t number_start = pos_;
    const std::size_t digits = hex ? pos_ + 2 : pos_;
    pos_ = digits;
    bool overflow = false;
    while (!atEnd()) {
        const int d = hex ? hexDigit(peek()) : (peek() >= '0' && peek() <= '9' ? peek() - '0' : -1);
        if (d < 0)
            break;
        if (n.magnitude > (UINT64_MAX - static_cast<unsigned>(d)) / base)
            overflow = true;
        n.magnitude = n.magnitude * base + static_cast<unsigned>(d);
        ++pos_;
    }
    if (pos_ == digits && hex)
        return fail(pos_, fmt::format("expected hex digits for the {}{}", what,
                                      atEnd() ? "" : fmt::format(", got {}", peekQuoted())));
    // Say what the grammar takes here: both bases, and whether a sign is allowed at all.
    if (pos_ == digits)
        return fail(pos_, fmt::format("expected the {} as {}decimal digits or 0x hex{}", what,
                                      range.neg_max > 0 || sign_at ? "" : "unsigned ",
                                      atEnd() ? "" : fmt::format(", got {}", peekQuoted())));
    if (!atEnd() && isIdentChar(peek()))
        return fail(pos_,
                    fmt::format("invalid digit {} in {} {}", peekQuoted(), digits_name, what));
    n.text += s_.substr(number_start, pos_ - number_start);
    const std::uint64_t limit = n.negative ? range.neg_max : range.max;
    const bool below = !n.negative && !range.neg_max && n.magnitude < range.min;
    if (overflow || below || n.magnitude > limit || (n.negative && range.neg_max == 0)) {
        const auto bound = [&](std::uint64_t v) {
            return hex ? fmt::format("{:#x}", v) : fmt::format("{}", v);
        };
        const std::string low = range.neg_max ? "-" + bound(range.neg_max)
                                : range.min   ? bound(range.min)
                                              : "0";
        return fail(n.begin, fmt::format("{} {} is out of range ({}..{})", what, n.text, low,
                                         bound(range.max)));
    }
    return n;
}

}  // namespace probectl
