// The scanner shared by the spec, fetch-argument and predicate grammars, and the three
// parsers agreeing on a bad number.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fetch/scanner.hpp"
#include "probectl/predicate.hpp"
#include "probectl/probe_spec.hpp"

using namespace probectl;

namespace {

struct Scan : Scanner {
    using Scanner::Scanner;
    std::size_t at() const { return pos_; }
};

const NumberRange kU64{UINT64_MAX};
const NumberRange kS64{UINT64_MAX, std::uint64_t{1} << 63};

}  // namespace

TEST(Scanner, DecimalHexAndNegative) {
    Scan a("1234 x");
    auto n = a.number("offset", kU64);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->magnitude, 1234u);
    EXPECT_EQ(n->text, "1234");
    EXPECT_EQ(a.at(), 4u);

    Scan h("0XfF)");
    n = h.number("offset", kU64);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->magnitude, 0xffu);
    EXPECT_EQ(h.at(), 4u);

    Scan neg("-0x10");
    n = neg.number("integer", kS64);
    ASSERT_TRUE(n.ok());
    EXPECT_TRUE(n->negative);
    EXPECT_EQ(n->bits(), static_cast<std::uint64_t>(-16));
    EXPECT_EQ(n->text, "-0x10");

    Scan min("-9223372036854775808");
    n = min.number("integer", kS64);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(static_cast<std::int64_t>(n->bits()), INT64_MIN);

    Scan max("18446744073709551615");
    EXPECT_TRUE(max.number("integer", kU64).ok());
}

TEST(Scanner, ErrorsAndTheirColumns) {
    auto err = [](std::string_view in, NumberRange r, std::size_t begin = 0) {
        Scan s(in, begin);
        auto n = s.number("offset", r);
        EXPECT_FALSE(n.ok()) << in;
        return n.ok() ? SpecError{} : n.error();
    };
    SpecError e = err("0x", kU64);
    EXPECT_EQ(e.message, "expected hex digits for the offset");
    EXPECT_EQ(e.column, 3u);
    e = err("0xg", kU64);
    EXPECT_EQ(e.message, "expected hex digits for the offset, got 'g'");
    EXPECT_EQ(e.column, 3u);
    e = err("x+12k", kU64, 2);
    EXPECT_EQ(e.message, "invalid digit 'k' in decimal offset");
    EXPECT_EQ(e.column, 5u);
    EXPECT_EQ(e.input, "x+12k");
    e = err("0x1_", kU64);
    EXPECT_EQ(e.message, "invalid digit '_' in hex offset");
    e = err("18446744073709551616", kU64);
    EXPECT_EQ(e.message, "offset 18446744073709551616 is out of range (0..18446744073709551615)");
    EXPECT_EQ(e.column, 1u);
    e = err("+0x100", NumberRange{0xff});
    EXPECT_EQ(e.message, "expected the offset as unsigned decimal digits or 0x hex, got '+'");
    e = err("a 0x100", NumberRange{0xff}, 2);
    EXPECT_EQ(e.message, "offset 0x100 is out of range (0..0xff)");
    EXPECT_EQ(e.column, 3u);
    // A range from 1 says so, above it and below it.
    e = err("7", NumberRange{.max = 6, .min = 1});
    EXPECT_EQ(e.message, "offset 7 is out of range (1..6)");
    e = err("0", NumberRange{.max = 6, .min = 1});
    EXPECT_EQ(e.message, "offset 0 is out of range (1..6)");
    EXPECT_EQ(e.column, 1u);
    e = err("-9223372036854775809", kS64);
    EXPECT_EQ(e.message,
              "offset -9223372036854775809 is out of range "
              "(-9223372036854775808..18446744073709551615)");
    // No '-' where the grammar has no negative numbers.
    e = err("-1", kU64);
    EXPECT_EQ(e.message, "expected the offset as unsigned decimal digits or 0x hex, got '-'");
}

TEST(Scanner, SignReadByTheGrammar) {
    Scan f("-u0x80000001(", 2);
    auto n = f.number("offset", NumberRange{INT32_MAX, std::uint64_t{1} << 31}, 0);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().message, "offset -0x80000001 is out of range (-0x80000000..0x7fffffff)");
    EXPECT_EQ(n.error().column, 1u);
    Scan g("-u8(", 2);
    n = g.number("offset", NumberRange{INT32_MAX, std::uint64_t{1} << 31}, 0);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(static_cast<std::int64_t>(n->bits()), -8);
}

// The same bad number gets the same words from the location, fetch and predicate parsers.
// A character beyond ASCII is quoted whole, with its code point (its first byte alone, half
// a character, was printed); a byte that starts no UTF-8 character is named as a byte.
TEST(Scanner, NonAsciiIsQuotedWhole) {
    auto specError = [](const std::string& text) {
        auto r = parseProbeSpec(text);
        EXPECT_FALSE(r.ok()) << text;
        return r.ok() ? std::string() : r.error().message;
    };
    EXPECT_EQ(specError("syscall:getppid\u00e9"),
              "unexpected '\u00e9' (U+00E9) after the location");
    // A no-break space pasted where a space was meant.
    EXPECT_EQ(specError("kprobe:f\u00a0x=$arg1"),
              "unexpected '\u00a0' (U+00A0) after the location");
    EXPECT_EQ(specError("kprobe:f if \u20ac == 1"),
              "unexpected '\u20ac' (U+20AC) in the predicate");
    EXPECT_EQ(specError("kprobe:f x=$arg1\U0001F600"),
              "unexpected '\U0001F600' (U+1F600) after the fetch source");
    EXPECT_EQ(specError("kprobe:f\xff"), "unexpected byte 0xff after the location");
    EXPECT_EQ(specError("kprobe:f\xc3"), "unexpected byte 0xc3 after the location") << "cut short";
    EXPECT_EQ(specError("kprobe:f\x01"), "unexpected byte 0x01 after the location");
}

TEST(Scanner, ThreeParsersOneMessage) {
    auto specError = [](const std::string& text) {
        auto r = parseProbeSpec(text);
        EXPECT_FALSE(r.ok()) << text;
        return r.ok() ? std::string() : r.error().message;
    };
    // A glued letter.
    EXPECT_EQ(specError("kprobe:f+12k"), "invalid digit 'k' in decimal offset");
    EXPECT_EQ(specError("kprobe:f x=+12k($arg1)"), "invalid digit 'k' in decimal offset");
    EXPECT_EQ(specError("kprobe:f if $pid == 12k"), "invalid digit 'k' in decimal integer");
    // Hex without digits.
    EXPECT_EQ(specError("kprobe:f+0xg"), "expected hex digits for the offset, got 'g'");
    EXPECT_EQ(specError("kprobe:f x=+0xg($arg1)"), "expected hex digits for the offset, got 'g'");
    EXPECT_EQ(specError("kprobe:f if $pid == 0xg"), "expected hex digits for the integer, got 'g'");
    // Too large for 64 bits: the same range words, at the number's first column.
    const std::string big = "0x10000000000000000";
    auto loc = parseProbeSpec("kprobe:" + big);
    ASSERT_FALSE(loc.ok());
    EXPECT_EQ(loc.error().message, "address " + big + " is out of range (0..0xffffffffffffffff)");
    EXPECT_EQ(loc.error().column, 8u);
    auto fetch = parseProbeSpec("kprobe:f x=\\" + big);
    ASSERT_FALSE(fetch.ok());
    EXPECT_EQ(fetch.error().message,
              "immediate " + big + " is out of range (-0x8000000000000000..0xffffffffffffffff)");
    EXPECT_EQ(fetch.error().column, 13u);
    auto pred = parseProbeSpec("kprobe:f if $pid == " + big);
    ASSERT_FALSE(pred.ok());
    EXPECT_EQ(pred.error().message,
              "integer " + big + " is out of range (-0x8000000000000000..0xffffffffffffffff)");
    EXPECT_EQ(pred.error().column, 21u);
}
