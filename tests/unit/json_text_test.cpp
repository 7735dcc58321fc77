// The JSON string encoder: valid UTF-8 kept, invalid bytes U+FFFD, and the NAME_bytes
// member that keeps a string's exact bytes when it is not UTF-8.
#include "output/json_text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace probectl::json;

TEST(JsonText, Utf8Validity) {
    EXPECT_TRUE(isUtf8(""));
    EXPECT_TRUE(isUtf8("plain"));
    EXPECT_TRUE(isUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    EXPECT_FALSE(isUtf8("g\xff"));
    EXPECT_FALSE(isUtf8("g\xfe"));
    EXPECT_FALSE(isUtf8("\xc3"));              // cut short
    EXPECT_FALSE(isUtf8("\xc0\xaf"));          // overlong '/'
    EXPECT_FALSE(isUtf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(isUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

TEST(JsonText, HexBytesAreLowercasePairs) {
    EXPECT_EQ(hexBytes(""), "");
    EXPECT_EQ(hexBytes("g\xff"), "67ff");
    EXPECT_EQ(hexBytes(std::string("\0\x0a\xab", 3)), "000aab");
}

TEST(JsonText, MemberHasItsBytesOnlyWhenNotUtf8) {
    std::string out;
    appendJsonMember(out, "comm", "caf\xc3\xa9");
    EXPECT_EQ(out, "\"comm\":\"caf\xc3\xa9\"");
    out.clear();
    appendJsonMember(out, "comm", "g\xff");
    EXPECT_EQ(out, "\"comm\":\"g\xef\xbf\xbd\",\"comm_bytes\":\"67ff\"");
}

// g\xff and g\xfe read the same as text; their members differ, and parse as JSON.
TEST(JsonText, DistinctBytesStayDistinct) {
    std::string a = "{", b = "{";
    appendJsonMember(a, "comm", "g\xff");
    appendJsonMember(b, "comm", "g\xfe");
    a += '}';
    b += '}';
    const auto ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
    EXPECT_EQ(ja["comm"], jb["comm"]);
    EXPECT_NE(ja, jb);
    EXPECT_EQ(ja["comm_bytes"], "67ff");
    EXPECT_EQ(jb["comm_bytes"], "67fe");
}
