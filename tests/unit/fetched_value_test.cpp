#include "probectl/fetched_value.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace probectl;

namespace {

FetchedValue fetched(std::string name, FetchType t, std::uint64_t raw) {
    FetchedValue v;
    v.name = std::move(name);
    v.type = t;
    v.raw = raw;
    return v;
}

}  // namespace

TEST(FetchedValue, IntegersByType) {
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::U32, 42)), "42");
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::S32, 0xffffff9c)), "-100");
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::S8, 0x80)), "-128");
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::S64, ~0ull)), "-1");
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::X64, 0xffffffff81000000)),
              "0xffffffff81000000");
    EXPECT_EQ(formatFetchedValue(fetched("a", FetchType::X8, 0)), "0x0");
    EXPECT_EQ(fetchedSigned(FetchType::S16, 0x8000), -32768);
}

TEST(FetchedValue, StringsArraysAndFaults) {
    FetchedValue s;
    s.name = "path";
    s.type = FetchType::Ustring;
    s.str = "/etc/pass\"wd\n";
    EXPECT_EQ(formatFetchedValue(s), "\"/etc/pass\\\"wd\\n\"");
    s.truncated = true;
    EXPECT_EQ(formatFetchedValue(s), "\"/etc/pass\\\"wd\\n\"...");
    s.faulted = true;
    EXPECT_EQ(formatFetchedValue(s), "<fault>");

    FetchedValue a;
    a.type = FetchType::X8;
    a.array_len = 3;
    a.array = {1, 0x10, 0xff};
    EXPECT_EQ(formatFetchedValue(a), "{0x1,0x10,0xff}");

    FetchedValue e;
    e.type = FetchType::String;
    EXPECT_EQ(formatFetchedValue(e), "\"\"");  // a real empty string is quoted, not a fault
}

TEST(FetchedValue, NameValueList) {
    FetchedValue p;
    p.name = "fn";
    p.type = FetchType::String;
    p.faulted = true;
    EXPECT_EQ(formatFetchedValues({fetched("fd", FetchType::S32, 3), p}), "fd=3 fn=<fault>");
    EXPECT_EQ(formatFetchedValues({}), "");
}

// The per-event text writes numbers without fmt (append_text.hpp); fmt's own output for the
// same values is the reference.
TEST(FetchedValue, IntegersReadAsFmtPrintsThem) {
    const std::uint64_t raws[] = {0,
                                  1,
                                  9,
                                  10,
                                  0x7f,
                                  0x80,
                                  0xff,
                                  0x8000,
                                  0xffff,
                                  0x80000000,
                                  0xffffffff,
                                  0x7fffffffffffffff,
                                  0x8000000000000000,
                                  0xffffffffffffffff,
                                  0x0123456789abcdef};
    for (std::uint8_t t = 0; t <= static_cast<std::uint8_t>(FetchType::X64); ++t) {
        const auto type = static_cast<FetchType>(t);
        for (std::uint64_t raw : raws) {
            const std::string want = isHexType(type) ? fmt::format("{:#x}", raw)
                                     : isSignedType(type)
                                         ? fmt::format("{}", fetchedSigned(type, raw))
                                         : fmt::format("{}", raw);
            EXPECT_EQ(formatFetchedValue(fetched("v", type, raw)), want)
                << toString(type) << " " << raw;
        }
    }
}
