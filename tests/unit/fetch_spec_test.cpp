#include "probectl/fetch_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace probectl;
using ::testing::HasSubstr;
using K = FetchSource::Kind;

namespace {

FetchArg goodFetch(std::string_view text, FetchOptions opts = {}) {
    auto r = parseFetchArg(text, 1, opts);
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    return r ? *r : FetchArg{};
}

SpecError badFetch(std::string_view text, FetchOptions opts = {}) {
    auto r = parseFetchArg(text, 1, opts);
    EXPECT_FALSE(r.ok()) << text << " parsed as " << (r ? r->str() : "");
    return r ? SpecError{} : r.error();
}

FetchOptions ret() {
    FetchOptions o;
    o.is_return = true;
    o.at_function_entry = false;
    return o;
}

}  // namespace

TEST(FetchSpec, ArgDefaultsToX64AndAutoName) {
    auto a = goodFetch("$arg1");
    EXPECT_EQ(a.name, "arg1");
    EXPECT_TRUE(a.auto_named);
    EXPECT_EQ(a.source->kind, K::Arg);
    EXPECT_EQ(a.source->index, 1u);
    EXPECT_EQ(a.type, FetchType::X64);
    EXPECT_FALSE(a.type_given);
    EXPECT_EQ(a.str(), "arg1=$arg1:x64");
}

TEST(FetchSpec, NamedTypedArguments) {
    auto a = goodFetch("flags=$arg3:x32");
    EXPECT_EQ(a.name, "flags");
    EXPECT_FALSE(a.auto_named);
    EXPECT_EQ(a.type, FetchType::X32);
    EXPECT_EQ(goodFetch("n=$arg6:s64").type, FetchType::S64);
    EXPECT_EQ(goodFetch("_x1=$arg2:u8").type, FetchType::U8);
}

TEST(FetchSpec, EveryType) {
    for (auto [t, want] :
         std::vector<std::pair<std::string, FetchType>>{{"u8", FetchType::U8},
                                                        {"u16", FetchType::U16},
                                                        {"u32", FetchType::U32},
                                                        {"u64", FetchType::U64},
                                                        {"s8", FetchType::S8},
                                                        {"s16", FetchType::S16},
                                                        {"s32", FetchType::S32},
                                                        {"s64", FetchType::S64},
                                                        {"x8", FetchType::X8},
                                                        {"x16", FetchType::X16},
                                                        {"x32", FetchType::X32},
                                                        {"x64", FetchType::X64},
                                                        {"string", FetchType::String},
                                                        {"ustring", FetchType::Ustring}}) {
        auto a = goodFetch("+0($arg1):" + t);
        EXPECT_EQ(a.type, want) << t;
        EXPECT_EQ(toString(a.type), t);
    }
}

TEST(FetchSpec, Specials) {
    EXPECT_EQ(goodFetch("$comm").type, FetchType::String);
    EXPECT_EQ(goodFetch("c=$comm:string").source->kind, K::Comm);
    EXPECT_EQ(goodFetch("$pid").type, FetchType::U32);
    EXPECT_EQ(goodFetch("$tid").source->kind, K::Tid);
    EXPECT_EQ(goodFetch("$uid:x32").type, FetchType::X32);
    EXPECT_EQ(goodFetch("$cpu").source->kind, K::Cpu);
    EXPECT_EQ(goodFetch("$stack0").source->kind, K::Stack);
    EXPECT_EQ(goodFetch("$stack3").source->index, 3u);
    EXPECT_EQ(goodFetch("$retval", ret()).source->kind, K::Retval);
}

TEST(FetchSpec, Registers) {
    auto a = goodFetch("%di");
    EXPECT_EQ(a.source->kind, K::Reg);
    EXPECT_EQ(a.source->index, static_cast<std::uint32_t>(X86Reg::Di));
    EXPECT_EQ(goodFetch("%rdi").source->index, static_cast<std::uint32_t>(X86Reg::Di));
    EXPECT_EQ(goodFetch("%r15").source->index, 0u);
    EXPECT_EQ(goodFetch("%orig_ax").source->index, static_cast<std::uint32_t>(X86Reg::OrigAx));
    EXPECT_EQ(goodFetch("%ss").source->index, 20u);
    auto e = goodFetch("%eax");
    EXPECT_TRUE(e.source->reg32);
    EXPECT_EQ(e.type, FetchType::X32);
    EXPECT_EQ(e.str(), "arg1=%eax:x32");
    EXPECT_TRUE(goodFetch("%r9d").source->reg32);
    EXPECT_EQ(goodFetch("%rip").str(), "arg1=%ip:x64");
}

TEST(FetchSpec, DereferenceNestsAndPrintsCanonically) {
    auto a = goodFetch("x=+0x10(-8(+u0($arg1))):u32");
    const FetchSource& s = *a.source;
    EXPECT_EQ(s.kind, K::Deref);
    EXPECT_EQ(s.offset, 16);
    EXPECT_FALSE(s.user);
    EXPECT_EQ(s.inner->offset, -8);
    EXPECT_TRUE(s.inner->inner->user);
    EXPECT_EQ(s.inner->inner->inner->kind, K::Arg);
    EXPECT_EQ(s.depth(), 3u);
    EXPECT_EQ(a.str(), "x=+0x10(-8(+u0($arg1))):u32");
    EXPECT_TRUE(a.readsUserMemory());
    EXPECT_FALSE(goodFetch("+8(%si)").readsUserMemory());
}

TEST(FetchSpec, StringsOnPointers) {
    auto a = goodFetch("path=+0($arg2):string");
    EXPECT_EQ(a.type, FetchType::String);
    EXPECT_EQ(goodFetch("path=$arg2:ustring").type, FetchType::Ustring);
    EXPECT_TRUE(goodFetch("$arg2:ustring").readsUserMemory());
    EXPECT_EQ(goodFetch("%si:string").source->kind, K::Reg);
    EXPECT_EQ(goodFetch("$stack1:string").source->kind, K::Stack);
}

TEST(FetchSpec, Arrays) {
    auto a = goodFetch("b=+8($arg1):x8[16]");
    EXPECT_EQ(a.array_len, 16u);
    EXPECT_EQ(a.str(), "b=+8($arg1):x8[16]");
    EXPECT_EQ(goodFetch("+0(%di):u64[64]").array_len, 64u);
}

TEST(FetchSpec, Immediates) {
    EXPECT_EQ(goodFetch("\\42").source->imm, 42u);
    EXPECT_EQ(goodFetch("\\0xff").source->imm, 255u);
    EXPECT_EQ(goodFetch("\\-1").source->imm, ~0ull);
    EXPECT_EQ(goodFetch("\\-1:s64").str(), "arg1=\\0xffffffffffffffff:s64");
}

TEST(FetchSpec, ListNamesByPosition) {
    auto r = parseFetchArgs("kprobe:do_sys_openat2 $arg1  fn=+0($arg2):ustring\t$arg3:x32", 21);
    ASSERT_TRUE(r.ok()) << r.error().render();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[0].name, "arg1");
    EXPECT_EQ((*r)[0].column, 23u);
    EXPECT_EQ((*r)[1].name, "fn");
    EXPECT_EQ((*r)[2].name, "arg3");
    EXPECT_TRUE(parseFetchArgs("").ok());
    EXPECT_TRUE(parseFetchArgs("   ")->empty());
}

// Errors: each checks the message and that the column points at the fault.
namespace {

struct BadFetchCase {
    std::string text;
    std::size_t column;
    std::string message;
};

}  // namespace

TEST(FetchSpec, ErrorsPointAtTheFault) {
    const std::vector<BadFetchCase> cases = {
        {"", 1, "expected a fetch source"},
        {"x=", 3, "expected a fetch source after 'x='"},
        {"$arg0", 5, "counts from 1"},
        // The range stated is the one the grammar takes: $arg0 is refused.
        {"$arg7", 5, "argument number 7 is out of range (1..6)"},
        {"$arg00", 5, "argument number 00 is out of range (1..6)"},
        {"$kstack0", 8, "kernel stack depth 0 is out of range (1.."},
        {"$arg", 5, "expected the argument number"},
        {"$args", 1, "unknown variable '$args'"},
        {"$foo", 1, "unknown variable '$foo'"},
        {"$retval", 1, "only available in return probes"},
        {"$stack512", 7, "stack slot 512 is out of range"},
        {"%xyz", 2, "unknown x86-64 register '%xyz'"},
        {"+8$arg1", 3, "expected '('"},
        {"+8($arg1", 9, "expected ')' to close the '(' at column 3"},
        {"+0x($arg1)", 4, "expected hex digits"},
        {"+12k($arg1)", 4, "invalid digit 'k'"},
        {"+4294967296($arg1)", 1, "offset +4294967296 is out of range (-2147483648..2147483647)"},
        {"-2147483649($arg1)", 1, "offset -2147483649 is out of range"},
        {"+0($comm)", 4, "$comm cannot be dereferenced"},
        {"$arg1:", 7, "expected a TYPE"},
        {"$arg1:u128", 7, "unknown type 'u128'"},
        {"$arg1:int", 7, "unknown type 'int'"},
        {"$comm:u32", 7, "$comm is always a string"},
        {"$comm:string[2]", 7, "$comm cannot be an array"},
        {"$pid:string", 6, "needs an address"},
        {"%eax:string", 6, "needs an address"},
        {"\\5:ustring", 4, "needs an address"},
        {"$arg1:u8[4]", 7, "its source must be a dereference"},
        {"+0($arg1):string[2]", 11, "arrays of strings"},
        {"+0($arg1):u8[0]", 14, "array length 0 is out of range (1..64)"},
        {"+0($arg1):u8[65]", 14, "array length 65 is out of range (1..64)"},
        {"+0($arg1):u8[100000]", 14, "array length 100000 is out of range (1..64)"},
        {"+0($arg1):u8[4", 15, "expected ']'"},
        {"$arg1)", 6, "unexpected ')'"},
        {"$arg1:u8,", 9, "unexpected ','"},
        {"1x=$arg1", 1, "starts with a letter"},
        {"a b", 2, "unexpected space"},
        {"@sym", 1, "expected a fetch source"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        SpecError e = badFetch(c.text);
        EXPECT_THAT(e.message, HasSubstr(c.message));
        EXPECT_EQ(e.column, c.column) << e.render();
    }
}

TEST(FetchSpec, ArgNeedsFunctionEntry) {
    FetchOptions mid;
    mid.at_function_entry = false;
    EXPECT_THAT(badFetch("$arg1", mid).message, HasSubstr("only available at a function entry"));
    EXPECT_THAT(badFetch("x=+0($arg2)", ret()).message,
                HasSubstr("not available in a return probe"));
    EXPECT_EQ(badFetch("x=+0($arg2)", ret()).column, 6u);
}

TEST(FetchSpec, DepthLimit) {
    std::string s = "$arg1";
    for (std::size_t i = 0; i < kFetchMaxDepth; ++i)
        s = "+0(" + s + ")";
    EXPECT_EQ(goodFetch(s).source->depth(), kFetchMaxDepth);
    SpecError e = badFetch("+0(" + s + ")");
    EXPECT_THAT(e.message, HasSubstr("deeper than 8"));
    EXPECT_EQ(e.column, 4u + 3u * (kFetchMaxDepth - 1));
}

TEST(FetchSpec, ListErrorsCarryTheWholeInput) {
    const std::string spec = "kprobe:vfs_read a=$arg1 a=$arg2";
    auto r = parseFetchArgs(spec, 15);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("duplicate argument name 'a' (first at column 17)"));
    EXPECT_EQ(r.error().column, 25u);
    EXPECT_EQ(r.error().input, spec);
    EXPECT_THAT(r.error().render(), HasSubstr("\n  " + spec + "\n" + std::string(26, ' ') + "^"));

    // An auto name clashing with a written one is a duplicate too.
    EXPECT_FALSE(parseFetchArgs("arg2=$arg1 $arg2").ok());

    // s_bytes beside a string s: JSON would hold "s_bytes" twice when s is not UTF-8.
    for (const char* clash :
         {"s=+0($arg1):string s_bytes=$arg2", "s_bytes=$arg2 s=+0($arg1):ustring"}) {
        SCOPED_TRACE(clash);
        auto c = parseFetchArgs(clash);
        ASSERT_FALSE(c.ok());
        EXPECT_THAT(c.error().message,
                    HasSubstr("argument name 's_bytes' clashes with the JSON field 's_bytes' that "
                              "carries the bytes of string 's'"));
    }
    EXPECT_TRUE(parseFetchArgs("n=$arg1 n_bytes=$arg2").ok()) << "an integer has no _bytes field";

    std::string many;
    for (std::size_t i = 0; i <= kFetchMaxArgs; ++i)
        many += " $pid";
    auto m = parseFetchArgs(many);
    ASSERT_FALSE(m.ok());
    EXPECT_THAT(m.error().message, HasSubstr("too many fetch arguments (max 16)"));
    EXPECT_EQ(m.error().column, 2u + 5u * kFetchMaxArgs);
}

// Arbitrary input never crashes the parser, and every error points inside the input (or just
// past its end).
TEST(FetchSpec, ArbitraryInputGivesColumnsInRange) {
    const std::string alphabet = "$%+-u()0x19:[]=a_\\ \targstckrtvlomdpiu8s6x";
    std::uint32_t seed = 12345;
    auto rnd = [&] {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) & 0x7fff;
    };
    for (int n = 0; n < 5000; ++n) {
        std::string s;
        const std::size_t len = rnd() % 24;
        for (std::size_t i = 0; i < len; ++i)
            s += alphabet[rnd() % alphabet.size()];
        auto r = parseFetchArgs(s);
        if (!r.ok()) {
            EXPECT_GE(r.error().column, 1u) << s;
            EXPECT_LE(r.error().column, s.size() + 1) << s;
            EXPECT_FALSE(r.error().message.empty()) << s;
        }
    }
}
