#include "probectl/fetched_value.hpp"

#include <gtest/gtest.h>

using namespace probectl;

namespace {

FetchedValue value(std::string name, FetchType t, std::uint64_t raw) {
    FetchedValue v;
    v.name = std::move(name);
    v.type = t;
    v.raw = raw;
    return v;
}

}  // namespace

TEST(FetchedValue, IntegersByType) {
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::U32, 42)), "42");
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::S32, 0xffffff9c)), "-100");
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::S8, 0x80)), "-128");
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::S64, ~0ull)), "-1");
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::X64, 0xffffffff81000000)),
              "0xffffffff81000000");
    EXPECT_EQ(formatFetchedValue(value("a", FetchType::X8, 0)), "0x0");
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
    EXPECT_EQ(formatFetchedValues({value("fd", FetchType::S32, 3), p}), "fd=3 fn=<fault>");
    EXPECT_EQ(formatFetchedValues({}), "");
}
