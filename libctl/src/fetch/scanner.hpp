// One scanner under the three grammars of a spec's text (location, fetch arguments,
// predicate), so that all three read numbers alike, word their errors alike and count
// SpecError columns from the start of the whole spec.
//
// NUMBER := ['-'] DIGITS | ['-'] '0x' HEXDIGITS
// A '-' belongs to the number only where the grammar allows negative values. A letter,
// digit or '_' glued to a number ("12k", "0x1g") is an invalid digit, not trailing text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probectl/result.hpp"
#include "probectl/spec_error.hpp"

namespace probectl {

bool isIdentStart(char c);  // [A-Za-z_]
bool isIdentChar(char c);   // [A-Za-z0-9_]
int hexDigit(char c);       // 0..15, -1 when not a hex digit

// What a number may be: at most `max`; down to -`neg_max` when neg_max > 0, else at least
// `min` (the range an error states: a count from 1 is not "0..N").
struct NumberRange {
    std::uint64_t max;
    std::uint64_t neg_max = 0;
    std::uint64_t min = 0;
};

struct ScannedNumber {
    std::uint64_t magnitude = 0;
    bool negative = false;
    std::size_t begin = 0;  // index of its first character in the input (its sign, if any)
    std::string text;       // its sign and digits as written
    // The value as 64 bits (two's complement when negative).
    std::uint64_t bits() const { return negative ? ~magnitude + 1 : magnitude; }
};

class Scanner {
  public:
    // `input` is the whole text; this scanner reads [begin, end) of it.
    explicit Scanner(std::string_view input, std::size_t begin = 0,
                     std::size_t end = std::string_view::npos);

    bool atEnd() const { return pos_ >= end_; }
    char peek() const { return s_[pos_]; }
    // The character at pos_ quoted for a message: 'x'; a whole UTF-8 character with its code
    // point, 'é' (U+00E9) (not its first byte alone, half a character); byte 0xNN for one
    // that starts none, or a control character.
    std::string peekQuoted() const { return quotedAt(pos_); }
    std::string quotedAt(std::size_t index) const;
    bool atHexPrefix() const;
    // A digit, or '-' and a digit.
    bool atNumber() const;

    // An error at input index `index` (column index + 1), quoting the whole input.
    SpecError fail(std::size_t index, std::string message) const;

    // The number at pos_, named `what` ("offset", "address") in the messages. `sign_at` is
    // the index of a '+' or '-' the grammar read before pos_ (fetch offsets: "-u8(...)"):
    // the number's sign and start.
    Result<ScannedNumber, SpecError> number(std::string_view what, NumberRange range,
                                            std::optional<std::size_t> sign_at = std::nullopt);

  protected:
    std::string_view s_;
    std::size_t pos_;
    std::size_t end_;
};

}  // namespace probectl
