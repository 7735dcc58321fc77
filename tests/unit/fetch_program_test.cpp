#include "probectl/fetch_program.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace probectl;
using ::testing::HasSubstr;

namespace {

std::vector<std::string> compile(std::string_view text, FetchOptions popts = {},
                                 FetchCompileOptions copts = {}) {
    auto a = parseFetchArg(text, 1, popts);
    EXPECT_TRUE(a.ok()) << text << ": " << (a ? "" : a.error().render());
    if (!a)
        return {};
    auto p = compileFetchArg(*a, copts);
    EXPECT_TRUE(p.ok()) << text << ": " << (p ? "" : p.error().message);
    if (!p)
        return {};
    std::vector<std::string> out;
    for (const auto& i : p->insns)
        out.push_back(toString(i));
    return out;
}

using V = std::vector<std::string>;

FetchInsn op(FetchOpcode o, std::uint8_t size, std::uint16_t flags = 0, std::int32_t off = 0,
             std::uint32_t operand = 0) {
    return FetchInsn{static_cast<std::uint8_t>(o), size, flags, off, operand};
}

std::string invalid(std::vector<FetchInsn> p) {
    auto r = validateFetchProgram(p);
    EXPECT_FALSE(r.ok());
    return r ? "" : r.error().message;
}

}  // namespace

TEST(FetchProgram, Leaves) {
    EXPECT_EQ(compile("$arg1"), (V{"load.arg 1", "store.int s8"}));
    EXPECT_EQ(compile("$arg2:u8"), (V{"load.arg 2", "store.int s1"}));
    EXPECT_EQ(compile("%di:s32"), (V{"load.reg di s8", "store.int s4"}));
    EXPECT_EQ(compile("%edi"), (V{"load.reg di s4", "store.int s4"}));
    EXPECT_EQ(compile("$stack2"), (V{"load.stack 2", "store.int s8"}));
    EXPECT_EQ(compile("$pid"), (V{"load.pid", "store.int s4"}));
    EXPECT_EQ(compile("$tid:u64"), (V{"load.tid", "store.int s8"}));
    EXPECT_EQ(compile("$uid"), (V{"load.uid", "store.int s4"}));
    EXPECT_EQ(compile("$cpu"), (V{"load.cpu", "store.int s4"}));
    EXPECT_EQ(compile("$comm"), (V{"store.comm 16"}));
    EXPECT_EQ(compile("\\0x123456789"), (V{"load.imm 0x123456789", "store.int s8"}));
    FetchOptions r;
    r.is_return = true;
    r.at_function_entry = false;
    EXPECT_EQ(compile("$retval:s32", r), (V{"load.retval", "store.int s4"}));
}

TEST(FetchProgram, DereferenceReadsTheTypeWidthLast) {
    EXPECT_EQ(compile("+0x10(+8($arg1)):u16"),
              (V{"load.arg 1", "deref s8 +0x8", "deref s2 +0x10", "store.int s2"}));
    EXPECT_EQ(compile("-8(+u0(%si)):s32"),
              (V{"load.reg si s8", "deref.u s8 +0x0", "deref s4 -0x8", "store.int s4"}));
}

TEST(FetchProgram, StringsReadAtTheOutermostAddress) {
    EXPECT_EQ(compile("+0($arg2):string"), (V{"load.arg 2", "store.str +0x0 max 256"}));
    EXPECT_EQ(compile("+8(+0($arg1)):string"),
              (V{"load.arg 1", "deref s8 +0x0", "store.str +0x8 max 256"}));
    EXPECT_EQ(compile("$arg2:ustring"), (V{"load.arg 2", "store.str.u +0x0 max 256"}));
    EXPECT_EQ(compile("+u4($arg2):string"), (V{"load.arg 2", "store.str.u +0x4 max 256"}));
    FetchCompileOptions c;
    c.max_string = 4096;
    EXPECT_EQ(compile("$arg1:ustring", {}, c), (V{"load.arg 1", "store.str.u +0x0 max 4096"}));
}

TEST(FetchProgram, Arrays) {
    EXPECT_EQ(compile("+8($arg1):x8[16]"), (V{"load.arg 1", "store.array s1 +0x8 n 16"}));
    EXPECT_EQ(compile("+u0(+0($arg1)):u32[4]"),
              (V{"load.arg 1", "deref s8 +0x0", "store.array.u s4 +0x0 n 4"}));
}

TEST(FetchProgram, MaxBytesAndEncoding) {
    auto a = parseFetchArg("+8($arg1):u32[4]");
    ASSERT_TRUE(a.ok());
    auto p = compileFetchArg(*a);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->max_bytes, 16u);
    ASSERT_EQ(p->insns.size(), 2u);
    EXPECT_EQ(p->insns[1], op(FetchOpcode::StoreArray, 4, 0, 8, 4));
    EXPECT_EQ(p->insns[0].op, 1u);  // wire values are fixed: LoadArg = 1
}

TEST(FetchProgram, DeepestAndLongestFitTheBounds) {
    std::string s = "$arg1";
    for (std::size_t i = 0; i < kFetchMaxDepth; ++i)
        s = "+0(" + s + ")";
    EXPECT_EQ(compile(s + ":string").size(), kFetchMaxDepth + 1);
    EXPECT_EQ(compile(s).size(), kFetchMaxDepth + 2);
    EXPECT_LE(kFetchMaxDepth + 2, kFetchMaxInsns);
}

TEST(FetchProgram, CompileRejectsBadOptions) {
    auto a = parseFetchArg("$arg1:string");
    ASSERT_TRUE(a.ok());
    FetchCompileOptions c;
    c.max_string = 1;
    EXPECT_THAT(compileFetchArg(*a, c).error().message, HasSubstr("outside 2..4096"));
    c.max_string = 4097;
    EXPECT_FALSE(compileFetchArg(*a, c).ok());
    EXPECT_FALSE(compileFetchArg(FetchArg{}).ok());

    auto list = parseFetchArgs("a=$arg1 b=+0($arg2):ustring $comm");
    ASSERT_TRUE(list.ok());
    auto progs = compileFetchArgs(*list);
    ASSERT_TRUE(progs.ok());
    EXPECT_EQ(progs->size(), 3u);
}

TEST(FetchProgram, ValidatorRejectsCraftedPrograms) {
    using O = FetchOpcode;
    EXPECT_THAT(invalid({}), HasSubstr("empty"));
    EXPECT_THAT(invalid(std::vector<FetchInsn>(17, op(O::LoadPid, 4))),
                HasSubstr("17 instructions, max 16"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1)}), HasSubstr("does not end with a store"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 0), op(O::StoreInt, 8)}),
                HasSubstr("insn 0: argument 0 is outside 1..6"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 7), op(O::StoreInt, 8)}),
                HasSubstr("outside 1..6"));
    EXPECT_THAT(invalid({op(O::LoadReg, 8, 0, 0, 21), op(O::StoreInt, 8)}),
                HasSubstr("register 21"));
    EXPECT_THAT(invalid({op(O::LoadStack, 8, 0, 0, 600), op(O::StoreInt, 8)}),
                HasSubstr("stack slot 600"));
    EXPECT_THAT(invalid({op(O::LoadArg, 3, 0, 0, 1), op(O::StoreInt, 8)}),
                HasSubstr("load size 3"));
    EXPECT_THAT(invalid({op(O::LoadPid, 8), op(O::StoreInt, 8)}), HasSubstr("load size 8"));
    EXPECT_THAT(invalid({op(O::StoreInt, 8)}), HasSubstr("needs a loaded value"));
    EXPECT_THAT(invalid({op(O::Deref, 8), op(O::StoreInt, 8)}), HasSubstr("needs a loaded"));
    EXPECT_THAT(invalid({op(O::LoadPid, 4), op(O::LoadPid, 4), op(O::StoreInt, 4)}),
                HasSubstr("insn 1: a load must be the first"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::Deref, 3), op(O::StoreInt, 8)}),
                HasSubstr("insn 1: dereference size 3"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::StoreInt, 8), op(O::StoreInt, 8)}),
                HasSubstr("insn 1: a store must be the last"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::StoreInt, 16)}),
                HasSubstr("store size 16"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::StoreString, 0, 0, 0, 8192)}),
                HasSubstr("string bound 8192"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::StoreArray, 1, 0, 0, 65)}),
                HasSubstr("array count 65"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 0, 0, 1), op(O::StoreComm, 0, 0, 0, 16)}),
                HasSubstr("comm is stored alone"));
    EXPECT_THAT(invalid({op(O::StoreComm, 0, 0, 0, 4096)}), HasSubstr("comm store operand"));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, 8, 0, 1), op(O::StoreInt, 8)}),
                HasSubstr("unknown flags 0x8"));
    // load-addr: two registers of pt_regs (the base also none), a scale, no offset.
    EXPECT_TRUE(validateFetchProgram(
        std::vector<FetchInsn>{op(O::LoadAddr, 8, 0, 0, fetchAddrOperand(kFetchAddrNoBase, 10)),
                               op(O::Deref, 8), op(O::StoreInt, 8)}));
    EXPECT_TRUE(validateFetchProgram(std::vector<FetchInsn>{
        op(O::LoadAddr, 1, 0, 0, fetchAddrOperand(16, 20)), op(O::StoreInt, 8)}));
    EXPECT_THAT(invalid({op(O::LoadAddr, 8, 0, 0, fetchAddrOperand(21, 10)), op(O::StoreInt, 8)}),
                HasSubstr("address registers 21 and 10"));
    EXPECT_THAT(invalid({op(O::LoadAddr, 8, 0, 0, fetchAddrOperand(1, 21)), op(O::StoreInt, 8)}),
                HasSubstr("address registers 1 and 21"));
    EXPECT_THAT(invalid({op(O::LoadAddr, 3, 0, 0, fetchAddrOperand(1, 2)), op(O::StoreInt, 8)}),
                HasSubstr("load size 3"));
    EXPECT_THAT(invalid({op(O::LoadAddr, 8, 0, 8, fetchAddrOperand(1, 2)), op(O::StoreInt, 8)}),
                HasSubstr("no offset"));
    EXPECT_THAT(invalid({op(O::LoadAddr, 8, 0, 0, 1u << 16), op(O::StoreInt, 8)}),
                HasSubstr("only two registers"));
    // The function-entry flag belongs to $ustack alone.
    EXPECT_THAT(invalid({op(O::LoadArg, 8, kFetchFlagFuncEntry, 0, 1), op(O::StoreInt, 8)}),
                HasSubstr("a load takes no flags"));
    EXPECT_TRUE(validateFetchProgram(std::vector<FetchInsn>{
        op(O::LoadUstack, 4, kFetchFlagFuncEntry, 0, 64), op(O::StoreInt, 4)}));
    // The errno flag belongs to $retval alone.
    EXPECT_THAT(invalid({op(O::LoadArg, 8, kFetchFlagErrno, 0, 1), op(O::StoreInt, 8)}),
                HasSubstr("a load takes no flags"));
    const std::vector<FetchInsn> errno_load{op(O::LoadRetval, 8, kFetchFlagErrno),
                                            op(O::StoreInt, 8)};
    EXPECT_TRUE(validateFetchProgram(errno_load));
    EXPECT_THAT(invalid({op(O::LoadArg, 8, kFetchFlagUser, 0, 1), op(O::StoreInt, 8)}),
                HasSubstr("a load takes no flags"));
    EXPECT_THAT(invalid({FetchInsn{99, 8, 0, 0, 0}}), HasSubstr("unknown opcode 99"));
    std::vector<FetchInsn> deep{op(O::LoadArg, 8, 0, 0, 1)};
    for (int i = 0; i < 9; ++i)
        deep.push_back(op(O::Deref, 8));
    deep.push_back(op(O::StoreInt, 8));
    EXPECT_THAT(invalid(deep), HasSubstr("insn 9: more than 8 dereferences"));
}
