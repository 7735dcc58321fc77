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

// Array elements: a base, an index register and its scale, each part optional as GNU as
// allows ("(%rcx,%r12)" is scale 1, "(,%rax,8)" has no base).
TEST(UsdtArgs, IndexRegisters) {
    auto a = goodUsdtArg("8@(%r9,%rax,8)");
    EXPECT_EQ(a.kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a.reg, "r9");
    EXPECT_EQ(a.index, "rax");
    EXPECT_EQ(a.scale, 8u);
    EXPECT_EQ(a.offset, 0);
    EXPECT_EQ(a.str(), "u64 (%r9,%rax,8)");
    auto b = goodUsdtArg("-4@16(%rbx,%rcx,4)");
    EXPECT_EQ(b.kind, UsdtArg::Kind::Memory);
    EXPECT_TRUE(b.is_signed);
    EXPECT_EQ(b.size, 4u);
    EXPECT_EQ(b.reg, "rbx");
    EXPECT_EQ(b.index, "rcx");
    EXPECT_EQ(b.scale, 4u);
    EXPECT_EQ(b.offset, 16);
    EXPECT_EQ(b.str(), "s32 0x10(%rbx,%rcx,4)");
    auto c = goodUsdtArg("8@(,%rax,8)");
    EXPECT_EQ(c.kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(c.reg, "");
    EXPECT_EQ(c.index, "rax");
    EXPECT_EQ(c.scale, 8u);
    EXPECT_EQ(c.str(), "u64 (,%rax,8)");
    auto d = goodUsdtArg("-2@(%rcx,%r12)");
    EXPECT_EQ(d.index, "r12");
    EXPECT_EQ(d.scale, 1u);
    EXPECT_EQ(goodUsdtArg("-8@0(%rbp,%r14,8)").offset, 0);
    EXPECT_EQ(goodUsdtArg("-4@-4(%r12,%rbx,8)").offset, -4);
    EXPECT_EQ(goodUsdtArg("-4@-4(%r12,%rbx,8)").str(), "s32 -0x4(%r12,%rbx,8)");
    EXPECT_EQ(goodUsdtArg("8@(%rax,%rbx,2)").symbol, "");
}

// Globals and arrays by symbol: kept by name with the number beside it, for the file's
// symbol table to resolve (UsdtNotes.SymbolOperandsResolve).
TEST(UsdtArgs, SymbolDisplacements) {
    auto a = goodUsdtArg("8@strs-8(,%rax,8)");
    EXPECT_EQ(a.kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a.symbol, "strs");
    EXPECT_EQ(a.symbol_addend, -8);
    EXPECT_EQ(a.reg, "");
    EXPECT_EQ(a.index, "rax");
    EXPECT_EQ(a.scale, 8u);
    EXPECT_EQ(a.symbol_address, 0u) << "not resolved by the parser";
    EXPECT_FALSE(a.ip_relative);
    EXPECT_EQ(a.str(), "u64 strs-0x8(,%rax,8)");
    auto b = goodUsdtArg("4@glob(%rip)");
    EXPECT_EQ(b.symbol, "glob");
    EXPECT_EQ(b.symbol_addend, 0);
    EXPECT_EQ(b.reg, "rip");
    EXPECT_EQ(b.index, "");
    EXPECT_EQ(b.str(), "u32 glob(%rip)");
    for (const char* text : {"-4@glob+4(%rip)", "-4@4+glob(%rip)", "-4@glob+0x4(%rip)"}) {
        auto c = goodUsdtArg(text);
        EXPECT_EQ(c.symbol, "glob") << text;
        EXPECT_EQ(c.symbol_addend, 4) << text;
        EXPECT_EQ(c.str(), "s32 glob+0x4(%rip)") << text;
    }
    EXPECT_EQ(goodUsdtArg("4@counter.0(%rip)").symbol, "counter.0");
    EXPECT_EQ(goodUsdtArg("8@_ZN2ns5tableE+16(%rip)").symbol, "_ZN2ns5tableE");
    auto d = goodUsdtArg("-2@shorts(%rbx,%rbx)");
    EXPECT_EQ(d.symbol, "shorts");
    EXPECT_EQ(d.reg, "rbx");
    EXPECT_EQ(d.index, "rbx");
    EXPECT_EQ(d.scale, 1u);
}

TEST(UsdtArgs, Refused) {
    EXPECT_THAT(badUsdtArg("1@%ah"), HasSubstr("high-byte"));
    EXPECT_THAT(badUsdtArg("4@%xmm0"), HasSubstr("unknown x86-64 register %xmm0"));
    EXPECT_THAT(badUsdtArg("3@%eax"), HasSubstr("size '3'"));
    EXPECT_THAT(badUsdtArg("16@%rax"), HasSubstr("size '16'"));
    EXPECT_THAT(badUsdtArg("4@$sym"), HasSubstr("not a number"));
    EXPECT_THAT(badUsdtArg("4@"), HasSubstr("no operand"));
    EXPECT_THAT(badUsdtArg("4@rax"), HasSubstr("expected"));
    EXPECT_THAT(badUsdtArg("4@glob"), HasSubstr("expected"));
    EXPECT_THAT(badUsdtArg("8@-8(%ebp)"), HasSubstr("base register %ebp is not a 64-bit"));
    EXPECT_THAT(badUsdtArg("8@%fs:0x28"), HasSubstr("segment register %fs:"));
    EXPECT_THAT(badUsdtArg("8@%fs:(%rax)"), HasSubstr("segment register %fs:"));
    EXPECT_THAT(badUsdtArg("8@(%rax,%ecx,4)"), HasSubstr("index register %ecx is not a 64-bit"));
    EXPECT_THAT(badUsdtArg("8@(%eax,%rcx,4)"), HasSubstr("base register %eax is not a 64-bit"));
    EXPECT_THAT(badUsdtArg("8@(%rax,%rcx,3)"), HasSubstr("scale '3' is not 1, 2, 4 or 8"));
    EXPECT_THAT(badUsdtArg("8@(%rax,%rcx,x)"), HasSubstr("scale 'x'"));
    EXPECT_THAT(badUsdtArg("8@(%rax,%rsp,2)"), HasSubstr("%rsp cannot be an index register"));
    EXPECT_THAT(badUsdtArg("8@(,%rip)"), HasSubstr("%rip cannot be an index register"));
    EXPECT_THAT(badUsdtArg("8@glob(%rip,%rax,8)"), HasSubstr("%rip cannot be a base"));
    EXPECT_THAT(badUsdtArg("8@(%rax,%rbx,8,1)"), HasSubstr("more than BASE,INDEX,SCALE"));
    EXPECT_THAT(badUsdtArg("8@()"), HasSubstr("no register"));
    EXPECT_THAT(badUsdtArg("8@(,%xmm1,2)"), HasSubstr("unknown x86-64 register %xmm1"));
    EXPECT_THAT(badUsdtArg("8@sym@GOTPCREL(%rip)"),
                HasSubstr("displacement 'sym@GOTPCREL' is not NUMBER, SYMBOL"));
    EXPECT_THAT(badUsdtArg("8@glob+(%rip)"), HasSubstr("displacement 'glob+'"));
    EXPECT_THAT(badUsdtArg("8@1+2(%rip)"), HasSubstr("displacement '1+2'"));
}

TEST(UsdtArgs, ListNamesTheFailingArgument) {
    auto ok = parseUsdtArgs("-4@%edi  8@-8(%rbp) 4@$5 8@(%rax,%rbx,8)");
    ASSERT_TRUE(ok);
    ASSERT_EQ(ok->size(), 4u);
    EXPECT_EQ((*ok)[2].value, 5);
    EXPECT_EQ((*ok)[3].index, "rbx");
    auto none = parseUsdtArgs("");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
    auto r = parseUsdtArgs("-4@%edi 8@(%rax,%ebx,8)");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("argument 2"));
    EXPECT_THAT(r.error().message, HasSubstr("8@(%rax,%ebx,8)"));
}
