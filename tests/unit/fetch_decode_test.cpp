// Fetched bytes back to typed values, and USDT argument specs to fetch programs.
#include <gtest/gtest.h>

#include "probectl/fetch_decode.hpp"
#include "uapi/probectl.h"

using namespace probectl;

namespace {

FetchArg arg(const char* name, FetchType t, std::uint32_t array_len = 0) {
    FetchArg a;
    a.name = name;
    a.type = t;
    a.array_len = array_len;
    return a;
}

std::uint8_t opByte(FetchOpcode o) {
    return static_cast<std::uint8_t>(o);
}

}  // namespace

TEST(DecodeFetchedValue, IntegersStringsArraysAndFaults) {
    const std::uint8_t le[] = {0xfe, 0xff, 0xff, 0xff};
    auto v = decodeFetchedValue(arg("fd", FetchType::S32), le, 0);
    EXPECT_EQ(v.name, "fd");
    EXPECT_EQ(fetchedSigned(v.type, v.raw), -2);
    EXPECT_EQ(formatFetchedValue(v), "-2");

    const std::uint8_t str[] = {'/', 'e', 't', 'c', 0};
    v = decodeFetchedValue(arg("p", FetchType::Ustring), str, PROBECTL_FETCH_V_TRUNCATED);
    EXPECT_EQ(v.str, "/etc");
    EXPECT_TRUE(v.truncated);

    const std::uint8_t arr[] = {1, 0, 2, 0, 3, 0};
    v = decodeFetchedValue(arg("a", FetchType::U16, 3), arr, 0);
    EXPECT_EQ(v.array, (std::vector<std::uint64_t>{1, 2, 3}));

    v = decodeFetchedValue(arg("bad", FetchType::String), {}, PROBECTL_FETCH_V_FAULT);
    EXPECT_TRUE(v.faulted);
    EXPECT_EQ(formatFetchedValue(v), "<fault>");

    // Fewer bytes than the type needs: a fault, never a made-up value.
    v = decodeFetchedValue(arg("short", FetchType::U64), le, 0);
    EXPECT_TRUE(v.faulted);
}

// An array that ran into an unreadable page: the kernel keeps its whole elements before the
// page and says truncated; they are shown, followed by "...". Short without that flag, or
// not one element, is still a fault.
TEST(DecodeFetchedValue, ArrayCutAtAnUnreadablePageKeepsItsElements) {
    const std::uint8_t arr[] = {1, 0, 2, 0};
    auto v = decodeFetchedValue(arg("a", FetchType::U16, 8), arr, PROBECTL_FETCH_V_TRUNCATED);
    EXPECT_FALSE(v.faulted);
    EXPECT_TRUE(v.truncated);
    EXPECT_EQ(v.array, (std::vector<std::uint64_t>{1, 2}));
    EXPECT_EQ(formatFetchedValue(v), "{1,2,...}");

    v = decodeFetchedValue(arg("a", FetchType::U16, 8), arr, 0);
    EXPECT_TRUE(v.faulted);
    v = decodeFetchedValue(arg("a", FetchType::U16, 8), std::span<const std::uint8_t>(arr, 1),
                           PROBECTL_FETCH_V_TRUNCATED);
    EXPECT_TRUE(v.faulted);
}

// "-8@%rax -4@-8(%rbp) 4@$5": register, memory (user read at base + displacement), constant.
TEST(UsdtFetch, RegisterMemoryAndConstantArguments) {
    std::vector<UsdtArg> in(3);
    in[0].kind = UsdtArg::Kind::Register;
    in[0].size = 8;
    in[0].is_signed = true;
    in[0].reg = "rax";
    in[1].kind = UsdtArg::Kind::Memory;
    in[1].size = 4;
    in[1].is_signed = true;
    in[1].reg = "rbp";
    in[1].offset = -8;
    in[2].kind = UsdtArg::Kind::Constant;
    in[2].size = 4;
    in[2].value = 5;
    auto r = usdtFetch(in);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->args.size(), 3u);
    EXPECT_EQ(r->args[0].name, "arg1");
    EXPECT_EQ(r->args[0].type, FetchType::S64);
    EXPECT_EQ(r->args[1].type, FetchType::S32);
    EXPECT_EQ(r->args[2].type, FetchType::U32);
    const std::vector<FetchInsn> want = {
        {opByte(FetchOpcode::LoadReg), 8, 0, 0, static_cast<std::uint32_t>(X86Reg::Ax)},
        {opByte(FetchOpcode::StoreInt), 8, 0, 0, 0},
        {opByte(FetchOpcode::LoadReg), 8, 0, 0, static_cast<std::uint32_t>(X86Reg::Bp)},
        {opByte(FetchOpcode::Deref), 4, kFetchFlagUser, -8, 0},
        {opByte(FetchOpcode::StoreInt), 4, 0, 0, 0},
        {opByte(FetchOpcode::LoadImm), 8, 0, 0, 5},
        {opByte(FetchOpcode::StoreInt), 4, 0, 0, 0},
    };
    EXPECT_EQ(r->insns, want);
    // Each argument's program is one the kernel accepts.
    EXPECT_TRUE(validateFetchProgram(std::span(r->insns).first(2)));
    EXPECT_TRUE(validateFetchProgram(std::span(r->insns).subspan(2, 3)));
    EXPECT_TRUE(validateFetchProgram(std::span(r->insns).subspan(5, 2)));
}

TEST(UsdtFetch, RegisterThePtRegsDoNotHoldIsRefused) {
    std::vector<UsdtArg> in(1);
    in[0].reg = "xmm0";
    in[0].text = "8@%xmm0";
    auto r = usdtFetch(in);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("8@%xmm0"), std::string::npos) << r.error().message;
}

// "8@(%r9,%rax,8) -4@16(%rbx,%rcx,4) 8@(,%rax,8)": the address is load-addr (base + index
// * scale), the displacement the dereference's; no base is kFetchAddrNoBase.
TEST(UsdtFetch, IndexRegistersLoadTheAddress) {
    std::vector<UsdtArg> in;
    for (const char* text : {"8@(%r9,%rax,8)", "-4@16(%rbx,%rcx,4)", "8@(,%rax,8)"}) {
        auto a = parseUsdtArg(text);
        ASSERT_TRUE(a) << a.error().message;
        in.push_back(*a);
    }
    auto r = usdtFetch(in);
    ASSERT_TRUE(r) << r.error().message;
    auto reg = [](X86Reg x) { return static_cast<std::uint8_t>(x); };
    const std::vector<FetchInsn> want = {
        {opByte(FetchOpcode::LoadAddr), 8, 0, 0,
         fetchAddrOperand(reg(X86Reg::R9), reg(X86Reg::Ax))},
        {opByte(FetchOpcode::Deref), 8, kFetchFlagUser, 0, 0},
        {opByte(FetchOpcode::StoreInt), 8, 0, 0, 0},
        {opByte(FetchOpcode::LoadAddr), 4, 0, 0,
         fetchAddrOperand(reg(X86Reg::Bx), reg(X86Reg::Cx))},
        {opByte(FetchOpcode::Deref), 4, kFetchFlagUser, 16, 0},
        {opByte(FetchOpcode::StoreInt), 4, 0, 0, 0},
        {opByte(FetchOpcode::LoadAddr), 8, 0, 0,
         fetchAddrOperand(kFetchAddrNoBase, reg(X86Reg::Ax))},
        {opByte(FetchOpcode::Deref), 8, kFetchFlagUser, 0, 0},
        {opByte(FetchOpcode::StoreInt), 8, 0, 0, 0},
    };
    EXPECT_EQ(r->insns, want);
    for (std::size_t i = 0; i < 3; i++)
        EXPECT_TRUE(validateFetchProgram(std::span(r->insns).subspan(3 * i, 3))) << i;
    EXPECT_EQ(toString(r->insns[0]), "load.addr r9+ax*8");
    EXPECT_EQ(toString(r->insns[6]), "load.addr 0+ax*8");
}

// A resolved symbol counts from the probe site (ip) whatever the base as written: none, or
// %rip; with another base (non-PIE) its address is the displacement.
TEST(UsdtFetch, SymbolsCountFromTheProbeSite) {
    auto glob = parseUsdtArg("-4@glob+4(%rip)");
    auto table = parseUsdtArg("8@table-8(,%rbp,8)");
    auto shorts = parseUsdtArg("-2@shorts(%rbx,%rbx)");
    ASSERT_TRUE(glob && table && shorts);
    // What ElfResolver sets (UsdtNotes.SymbolOperandsResolve checks it does).
    glob->symbol_address = 0x4014;
    glob->ip_relative = true;
    glob->offset = 0x4014 - 0x1200;
    table->symbol_address = 0x4038;
    table->ip_relative = true;
    table->offset = 0x4038 - 0x1200;
    shorts->symbol_address = 0x404060;
    shorts->offset = 0x404060;
    auto r = usdtFetch({*glob, *table, *shorts});
    ASSERT_TRUE(r) << r.error().message;
    auto reg = [](X86Reg x) { return static_cast<std::uint8_t>(x); };
    const std::vector<FetchInsn> want = {
        {opByte(FetchOpcode::LoadReg), 8, 0, 0, reg(X86Reg::Ip)},
        {opByte(FetchOpcode::Deref), 4, kFetchFlagUser, 0x4014 - 0x1200, 0},
        {opByte(FetchOpcode::StoreInt), 4, 0, 0, 0},
        {opByte(FetchOpcode::LoadAddr), 8, 0, 0,
         fetchAddrOperand(reg(X86Reg::Ip), reg(X86Reg::Bp))},
        {opByte(FetchOpcode::Deref), 8, kFetchFlagUser, 0x4038 - 0x1200, 0},
        {opByte(FetchOpcode::StoreInt), 8, 0, 0, 0},
        {opByte(FetchOpcode::LoadAddr), 1, 0, 0,
         fetchAddrOperand(reg(X86Reg::Bx), reg(X86Reg::Bx))},
        {opByte(FetchOpcode::Deref), 2, kFetchFlagUser, 0x404060, 0},
        {opByte(FetchOpcode::StoreInt), 2, 0, 0, 0},
    };
    EXPECT_EQ(r->insns, want);
}

TEST(UsdtFetch, UnresolvedSymbolIsRefused) {
    auto a = parseUsdtArg("4@glob(%rip)");
    ASSERT_TRUE(a);
    auto r = usdtFetch({*a});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("symbol 'glob'"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("4@glob(%rip)"), std::string::npos) << r.error().message;
}
