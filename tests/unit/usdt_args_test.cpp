// USDT argument spec decoding: the forms gcc and clang emit, and the ones refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "probectl/usdt.hpp"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

UsdtArg goodUsdtArg(std::string_view text) {
    auto r = parseUsdtArg(text);
    if (!r)
        ADD_FAILURE() << text << ": " << r.error().message;
    return r ? *r : UsdtArg{};
}

std::string badUsdtArg(std::string_view text) {
    auto r = parseUsdtArg(text);
    EXPECT_FALSE(r) << text << " decoded";
    if (r)
        return {};
    EXPECT_EQ(r.error().err, EINVAL);
    EXPECT_THAT(r.error().message, HasSubstr(std::string(text))) << "names the argument";
    return r.error().message;
}

}  // namespace

TEST(UsdtArgs, Registers) {
    auto a = goodUsdtArg("-4@%edi");
    EXPECT_EQ(a.kind, UsdtArg::Kind::Register);
    EXPECT_EQ(a.size, 4u);
    EXPECT_TRUE(a.is_signed);
    EXPECT_EQ(a.reg, "rdi");
    EXPECT_EQ(a.reg_bits, 32u);
    EXPECT_EQ(a.str(), "s32 %rdi");

    auto b = goodUsdtArg("8@%rax");
    EXPECT_EQ(b.reg, "rax");
    EXPECT_FALSE(b.is_signed);
    EXPECT_EQ(b.size, 8u);
    EXPECT_EQ(b.reg_bits, 64u);

    EXPECT_EQ(goodUsdtArg("2@%si").reg, "rsi");
    EXPECT_EQ(goodUsdtArg("1@%dil").reg, "rdi");
    EXPECT_EQ(goodUsdtArg("1@%al").reg_bits, 8u);
    EXPECT_EQ(goodUsdtArg("-4@%r9d").reg, "r9");
    EXPECT_EQ(goodUsdtArg("2@%r12w").reg, "r12");
    EXPECT_EQ(goodUsdtArg("1@%r15b").reg, "r15");
    EXPECT_EQ(goodUsdtArg("-2@%bp").reg, "rbp");
}

TEST(UsdtArgs, Memory) {
    auto a = goodUsdtArg("8@-8(%rbp)");
    EXPECT_EQ(a.kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a.reg, "rbp");
    EXPECT_EQ(a.offset, -8);
    EXPECT_EQ(a.str(), "u64 -0x8(%rbp)");
    auto b = goodUsdtArg("-2@16(%rsp)");
    EXPECT_EQ(b.offset, 16);
    EXPECT_TRUE(b.is_signed);
    EXPECT_EQ(b.size, 2u);
    EXPECT_EQ(goodUsdtArg("4@(%rdi)").offset, 0);
    EXPECT_EQ(goodUsdtArg("4@0x10(%r8)").offset, 16);
}

TEST(UsdtArgs, Constants) {
    auto a = goodUsdtArg("4@$5");
    EXPECT_EQ(a.kind, UsdtArg::Kind::Constant);
    EXPECT_EQ(a.value, 5);
    EXPECT_EQ(goodUsdtArg("-4@$-3").value, -3);
    EXPECT_EQ(goodUsdtArg("8@$0x10").value, 16);
    EXPECT_EQ(a.str(), "u32 $5");
}

TEST(UsdtArgs, MissingSizeMeansEightBytes) {
    auto a = goodUsdtArg("%rdi");
    EXPECT_EQ(a.size, 8u);
    EXPECT_FALSE(a.is_signed);
}

TEST(UsdtArgs, Refused) {
    EXPECT_THAT(badUsdtArg("8@(%rax,%rbx,8)"), HasSubstr("index registers"));
    EXPECT_THAT(badUsdtArg("8@-8(%rbp,%rcx,4)"), HasSubstr("index registers"));
    EXPECT_THAT(badUsdtArg("8@counter(%rip)"), HasSubstr("symbol-relative"));
    EXPECT_THAT(badUsdtArg("1@%ah"), HasSubstr("high-byte"));
    EXPECT_THAT(badUsdtArg("4@%xmm0"), HasSubstr("unknown x86-64 register %xmm0"));
    EXPECT_THAT(badUsdtArg("3@%eax"), HasSubstr("size '3'"));
    EXPECT_THAT(badUsdtArg("16@%rax"), HasSubstr("size '16'"));
    EXPECT_THAT(badUsdtArg("4@$sym"), HasSubstr("not a number"));
    EXPECT_THAT(badUsdtArg("4@"), HasSubstr("no operand"));
    EXPECT_THAT(badUsdtArg("4@rax"), HasSubstr("expected"));
    EXPECT_THAT(badUsdtArg("8@-8(%ebp)"), HasSubstr("not a 64-bit register"));
}

TEST(UsdtArgs, ListNamesTheFailingArgument) {
    auto ok = parseUsdtArgs("-4@%edi  8@-8(%rbp) 4@$5");
    ASSERT_TRUE(ok);
    ASSERT_EQ(ok->size(), 3u);
    EXPECT_EQ((*ok)[2].value, 5);
    auto none = parseUsdtArgs("");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
    auto r = parseUsdtArgs("-4@%edi 8@(%rax,%rbx,8)");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("argument 2"));
    EXPECT_THAT(r.error().message, HasSubstr("8@(%rax,%rbx,8)"));
}
