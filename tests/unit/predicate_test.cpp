#include "probectl/predicate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace probectl;
using ::testing::HasSubstr;

namespace {

// fd:s32 path:ustring flags:x32 n:u8 big:u64 buf:u8[4]
const std::vector<FetchArg>& args() {
    static const std::vector<FetchArg> a = [] {
        auto r = parseFetchArgs(
            "fd=$arg1:s32 path=$arg2:ustring flags=$arg3:x32 n=$arg4:u8 big=$arg5:u64 "
            "buf=+0($arg6):u8[4]");
        EXPECT_TRUE(r.ok());
        return *r;
    }();
    return a;
}

std::string goodPredicate(std::string_view text) {
    auto r = parsePredicate(text, args());
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    return r ? (*r)->str() : "";
}

SpecError badPredicate(std::string_view text) {
    auto r = parsePredicate(text, args());
    EXPECT_FALSE(r.ok()) << text << " parsed as " << (r ? (*r)->str() : "");
    return r ? SpecError{} : r.error();
}

FilterProgram compiledPredicate(std::string_view text) {
    auto r = parsePredicate(text, args());
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    if (!r)
        return {};
    auto p = compilePredicate(**r);
    EXPECT_TRUE(p.ok()) << text << ": " << (p ? "" : p.error().message);
    if (!p)
        return {};
    const std::vector<bool> kinds{false, true, false, false, false, false};
    bool is_string[6];
    for (std::size_t i = 0; i < 6; ++i)
        is_string[i] = kinds[i];
    auto v = validatePredicateProgram(*p, is_string);
    EXPECT_TRUE(v.ok()) << text << ": " << (v ? "" : v.error().message);
    return *p;
}

PredicateValues values(std::int32_t fd, std::string path, std::uint32_t flags = 0) {
    PredicateValues v;
    v.ints = {static_cast<std::uint32_t>(fd), 0, flags, 7, 1ull << 40, 0};
    v.strs = {"", std::move(path), "", "", "", ""};
    v.faulted = std::vector<bool>(6, false);
    v.pid = 100;
    v.tid = 101;
    v.uid = 1000;
    v.cpu = 1;
    v.comm = "bash";
    return v;
}

bool eval(std::string_view text, const PredicateValues& v) {
    return evalPredicate(compiledPredicate(text), v);
}

}  // namespace

TEST(FilterExpr, ParsesAndPrintsCanonically) {
    EXPECT_EQ(goodPredicate("fd == 3"), "(fd == 3)");
    EXPECT_EQ(goodPredicate("fd==-1"), "(fd == -1)");
    EXPECT_EQ(goodPredicate("flags & 0x80000"), "(flags & 0x80000)");
    EXPECT_EQ(goodPredicate("n"), "(n != 0x0)");
    EXPECT_EQ(goodPredicate("3 < fd"), "(fd > 3)");
    EXPECT_EQ(goodPredicate("path == \"/etc/passwd\""), "(path == \"/etc/passwd\")");
    EXPECT_EQ(goodPredicate("path == \"/etc/*\""), "(path ~ \"/etc/*\")");
    EXPECT_EQ(goodPredicate("path != \"*.so\""), "(path !~ \"*.so\")");
    EXPECT_EQ(goodPredicate("$comm ~ \"ba?h\""), "($comm ~ \"ba?h\")");
    // At the 15-byte bound a comm can still match (globs count * as nothing, [..] as one).
    EXPECT_EQ(goodPredicate("$comm == \"averyveryverylo\""), "($comm == \"averyveryverylo\")");
    EXPECT_EQ(goodPredicate("$comm ~ \"averyveryverylo*\""), "($comm ~ \"averyveryverylo*\")");
    EXPECT_EQ(goodPredicate("$comm ~ \"[a-z]23456789012345\""),
              "($comm ~ \"[a-z]23456789012345\")");
    EXPECT_EQ(goodPredicate("$pid == 42 && $uid != 0"), "(($pid == 0x2a) && ($uid != 0x0))");
    // && binds tighter than ||, ! tighter than both.
    EXPECT_EQ(goodPredicate("fd == 1 || fd == 2 && !n"),
              "((fd == 1) || ((fd == 2) && !(n != 0x0)))");
    EXPECT_EQ(goodPredicate("(fd == 1 || fd == 2) && n"),
              "(((fd == 1) || (fd == 2)) && (n != 0x0))");
    EXPECT_EQ(goodPredicate("path == \"a\\\"b\\\\c\\n\\x41\""), "(path == \"a\\\"b\\\\c\\nA\")");
    EXPECT_EQ(goodPredicate("big == 0xffffffffffffffff"), "(big == 0xffffffffffffffff)");
    EXPECT_EQ(goodPredicate("fd >= -2147483648"), "(fd >= -2147483648)");
}

namespace {

struct BadPredicateCase {
    std::string text;
    std::size_t column;
    std::string message;
};

}  // namespace

TEST(FilterExpr, ErrorsPointAtTheFault) {
    const std::vector<BadPredicateCase> cases = {
        {"", 1, "empty filter"},
        {"fd = 3", 4, "compare with '=='"},
        {"fd == 3 | n", 9, "did you mean '||'"},
        {"nope == 1", 1, "unknown field 'nope' (fetched: fd, path, flags, n, big, buf)"},
        {"$gid == 1", 1, "unknown variable '$gid'"},
        {"fd == \"x\"", 7, "'fd' is an integer"},
        {"path == 3", 9, "'path' is a string"},
        {"path < \"a\"", 6, "strings compare with == != ~ !~, not '<'"},
        {"$comm & 1", 7, "strings compare with == != ~ !~, not '&'"},
        {"fd ~ \"x\"", 4, "'~' and '!~' match strings"},
        {"n == 256", 6, "256 is out of range for u8 'n' (max 255)"},
        {"n == -1", 6, "-1 is negative but 'n' is u8"},
        {"fd == 2147483648", 7, "out of range for s32 'fd' (max 2147483647)"},
        {"fd == -2147483649", 7, "out of range for s32"},
        {"fd & -1", 6, "a mask is unsigned"},
        {"$pid == 4294967296", 9, "out of range for u32"},
        {"big == 18446744073709551616", 8, "integer 18446744073709551616 is out of range"},
        {"fd == 12ab", 9, "invalid digit 'a'"},
        {"fd == 0x", 9, "expected hex digits"},
        {"buf == 1", 1, "'buf' is an array"},
        {"fd == n", 7, "two fields cannot be compared"},
        {"1 == 2", 1, "neither side is a field"},
        {"$comm == cat", 10, "'cat' is no field: string literals need double quotes, \"cat\""},
        {"cat != $comm", 1, "string literals need double quotes"},
        // A comm has at most 15 bytes: a longer literal or glob would silently match nothing.
        {"$comm == \"averyveryverylongname\"", 10,
         "the $comm literal 'averyveryverylongname' can never match: a task's comm is at most "
         "15 bytes (the kernel keeps the first 15 of a longer name, e.g. 'averyveryverylo')"},
        {"$comm != \"averyveryverylongnam*\"", 10, "can never match"},
        {"$comm ~ \"[a-z]234567890123456\"", 9, "can never match"},
        {"$retval < 0", 1, "$retval is only available in return probes"},
        {"$pid:s32 == 1", 1, "only $retval takes a type, not $pid"},
        {"3", 1, "a literal alone is not a test"},
        {"fd 3", 4, "expected an operator"},
        {"fd ==", 6, "expected a value after '==', got the end of the predicate"},
        {"fd == 1 &&", 11, "expected a field, a number or a string, got the end"},
        {"(fd == 1", 9, "expected ')' to close the '(' at column 1"},
        {"fd == 1)", 8, "unbalanced ')'"},
        {"fd == 1 n", 9, "unexpected 'n': expected && or ||"},
        {"path == \"abc", 9, "unterminated string"},
        {"path == \"a\\qb\"", 11, "unknown escape '\\q'"},
        {"path == \"\\x4\"", 10, "\\x takes two hex digits"},
        {"path == \"\\x00\"", 10, "cannot contain \\x00"},
        {"path ~ \"[abc\"", 8, "bad glob"},
        {"\"x\" ~ path", 5, "takes the field on its left"},
        {"fd == 1 # x", 9, "unexpected '#'"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        SpecError e = badPredicate(c.text);
        EXPECT_THAT(e.message, HasSubstr(c.message));
        EXPECT_EQ(e.column, c.column) << e.render();
    }
}

TEST(FilterExpr, NoFetchedArgumentsSaysSo) {
    auto r = parsePredicate("fd == 1", {});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("this probe fetches no arguments"));
}

TEST(FilterExpr, ColumnsCountFromTheWholeInput) {
    const std::string spec = "syscall:openat fd=$arg1:s32 if fd == x";
    auto fa = parseFetchArgs(spec.substr(0, 27), 14);
    ASSERT_TRUE(fa.ok());
    auto r = parsePredicate(spec, *fa, 31);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().column, 38u);
    EXPECT_EQ(r.error().input, spec);
}

TEST(FilterExpr, NestingIsBounded) {
    std::string s = "fd == 1";
    for (int i = 0; i < 16; ++i)
        s = "(" + s + ")";
    goodPredicate(s);
    SpecError e = badPredicate("(" + s + ")");
    EXPECT_THAT(e.message, HasSubstr("deeper than 16"));
    EXPECT_EQ(e.column, 17u);
    EXPECT_THAT(badPredicate(std::string(17, '!') + "n").message, HasSubstr("deeper than 16"));
}

TEST(FilterExpr, CompilesToPostfix) {
    auto p = compiledPredicate("fd == 3 && (path ~ \"/etc/*\" || !n)");
    ASSERT_EQ(p.insns.size(), 6u);
    EXPECT_EQ(p.insns[0].op, static_cast<std::uint8_t>(PredicateOpcode::Test));
    EXPECT_EQ(p.insns[0].cmp, static_cast<std::uint8_t>(PredicateCmp::Eq));
    EXPECT_EQ(p.insns[0].flags, kFilterFlagSigned);
    EXPECT_EQ(p.insns[0].width, 4u);
    EXPECT_EQ(p.insns[0].value, 3u);
    EXPECT_EQ(p.insns[1].flags, kFilterFlagString);
    EXPECT_EQ(p.insns[1].arg_index, 1u);
    EXPECT_EQ(p.insns[1].value, 0u);
    EXPECT_EQ(p.strings, std::vector<std::string>{"/etc/*"});
    EXPECT_EQ(p.insns[2].arg_index, 3u);
    EXPECT_EQ(p.insns[3].op, static_cast<std::uint8_t>(PredicateOpcode::Not));
    EXPECT_EQ(p.insns[4].op, static_cast<std::uint8_t>(PredicateOpcode::Or));
    EXPECT_EQ(p.insns[5].op, static_cast<std::uint8_t>(PredicateOpcode::And));

    auto c = compiledPredicate("$comm == \"sh\"");
    EXPECT_EQ(c.insns[0].field_kind, static_cast<std::uint8_t>(PredicateFieldKind::Comm));
}

TEST(FilterExpr, CompileLimits) {
    // Left-deep chains stay at depth 2 however long.
    std::string chain = "n";
    for (int i = 0; i < 15; ++i)
        chain += " && n";
    EXPECT_EQ(compiledPredicate(chain).insns.size(), 31u);
    auto r = parsePredicate(chain + " && n", args());
    ASSERT_TRUE(r.ok());
    EXPECT_THAT(compilePredicate(**r).error().message, HasSubstr("more than 32 instructions"));

    // Right-nested parentheses grow the stack.
    std::string right = "n";
    for (int i = 0; i < 8; ++i)
        right = "n && (" + right + ")";
    auto d = parsePredicate(right, args());
    ASSERT_TRUE(d.ok());
    EXPECT_THAT(compilePredicate(**d).error().message, HasSubstr("stack deeper than 8"));

    std::string strs = "path == \"0\"";
    for (int i = 1; i < 9; ++i)
        strs += " || path == \"" + std::to_string(i) + "\"";
    auto s = parsePredicate(strs, args());
    ASSERT_TRUE(s.ok());
    EXPECT_THAT(compilePredicate(**s).error().message, HasSubstr("more than 8 strings"));
}

TEST(FilterExpr, EvaluatesLikeC) {
    EXPECT_TRUE(eval("fd == 3", values(3, "/x")));
    EXPECT_FALSE(eval("fd == 3", values(4, "/x")));
    EXPECT_TRUE(eval("fd < 0", values(-1, "/x")));  // signed
    EXPECT_TRUE(eval("fd == -1", values(-1, "/x")));
    EXPECT_FALSE(eval("flags > 0x7fffffff", values(0, "/x", 1)));
    EXPECT_TRUE(eval("flags > 0x7fffffff", values(0, "/x", 0x80000000u)));  // unsigned
    EXPECT_TRUE(eval("flags & 0x80000", values(0, "/x", 0x80002)));
    EXPECT_FALSE(eval("flags & 0x80000", values(0, "/x", 2)));
    EXPECT_TRUE(eval("path == \"/etc/passwd\"", values(0, "/etc/passwd")));
    EXPECT_FALSE(eval("path == \"/etc/passw\"", values(0, "/etc/passwd")));
    EXPECT_TRUE(eval("path == \"/etc/*\"", values(0, "/etc/passwd")));
    EXPECT_TRUE(eval("path !~ \"/usr/*\"", values(0, "/etc/passwd")));
    EXPECT_TRUE(eval("$comm == \"bash\" && $pid == 100 && $tid == 101", values(0, "")));
    EXPECT_TRUE(eval("$uid == 1000 && $cpu == 1", values(0, "")));
    EXPECT_TRUE(eval("!(fd == 1 || fd == 2)", values(3, "")));
    EXPECT_TRUE(eval("n == 7 && big == 0x10000000000", values(0, "")));
}

TEST(FilterExpr, FaultedFieldsMatchNothing) {
    auto v = values(3, "/etc/passwd");
    v.faulted[1] = true;
    EXPECT_FALSE(eval("path == \"/etc/passwd\"", v));
    EXPECT_FALSE(eval("path != \"/etc/passwd\"", v));
    EXPECT_TRUE(eval("!(path == \"x\")", v));
    EXPECT_TRUE(eval("fd == 3", v));
}

TEST(FilterExpr, ValidatorRejectsCraftedPrograms) {
    auto test = [](std::uint8_t cmp, std::uint8_t kind, std::uint8_t flags, std::uint16_t arg,
                   std::uint16_t width, std::uint64_t value) {
        return FilterInsn{
            static_cast<std::uint8_t>(PredicateOpcode::Test), cmp, kind, flags, arg, width, value};
    };
    auto op = [](PredicateOpcode o) { return FilterInsn{static_cast<std::uint8_t>(o)}; };
    const bool kinds[2] = {false, true};
    auto why = [&](FilterProgram p) {
        auto r = validatePredicateProgram(p, kinds);
        EXPECT_FALSE(r.ok());
        return r ? std::string() : r.error().message;
    };
    const auto ok = test(0, 0, 0, 0, 4, 1);
    EXPECT_TRUE(validatePredicateProgram(FilterProgram{{ok}, {}}, kinds).ok());
    EXPECT_THAT(why({}), HasSubstr("0 instructions"));
    EXPECT_THAT(why({{ok, ok}, {}}), HasSubstr("leaves 2 values"));
    EXPECT_THAT(why({{op(PredicateOpcode::And)}, {}}), HasSubstr("insn 0: stack underflow"));
    EXPECT_THAT(why({{op(PredicateOpcode::Not)}, {}}), HasSubstr("stack underflow"));
    EXPECT_THAT(why({{ok, op(PredicateOpcode::Or)}, {}}), HasSubstr("insn 1: stack underflow"));
    EXPECT_THAT(why({{FilterInsn{9}}, {}}), HasSubstr("unknown opcode 9"));
    EXPECT_THAT(why({{test(9, 0, 0, 0, 4, 1)}, {}}), HasSubstr("unknown comparison 9"));
    EXPECT_THAT(why({{test(0, 9, 0, 0, 4, 1)}, {}}), HasSubstr("unknown field kind 9"));
    EXPECT_THAT(why({{test(0, 0, 4, 0, 4, 1)}, {}}), HasSubstr("unknown flags 0x4"));
    EXPECT_THAT(why({{test(0, 0, 0, 2, 4, 1)}, {}}), HasSubstr("argument 2 does not exist"));
    EXPECT_THAT(why({{test(0, 0, 0, 0, 3, 1)}, {}}), HasSubstr("width 3"));
    EXPECT_THAT(why({{test(0, 0, 0, 1, 0, 0)}, {"x"}}),
                HasSubstr("integer comparison on a string field"));
    EXPECT_THAT(why({{test(0, 0, kFilterFlagString, 0, 0, 0)}, {"x"}}),
                HasSubstr("string comparison on an integer field"));
    EXPECT_THAT(why({{test(0, 5, kFilterFlagString, 0, 0, 1)}, {"x"}}),
                HasSubstr("string 1 does not exist"));
    EXPECT_THAT(why({{test(2, 5, kFilterFlagString, 0, 0, 0)}, {"x"}}),
                HasSubstr("strings compare with"));
    EXPECT_THAT(why({{test(6, 0, 0, 0, 4, 0)}, {}}), HasSubstr("glob comparison on an integer"));
    FilterProgram deep;
    for (int i = 0; i < 9; ++i)
        deep.insns.push_back(ok);
    EXPECT_THAT(why(deep), HasSubstr("insn 8: stack deeper than 8"));
}

TEST(FilterExpr, ArbitraryInputGivesColumnsInRange) {
    const std::string alphabet = "fdpathn$comm &|!=<>~()\"\\x0123-9 buf";
    std::uint32_t seed = 99;
    auto rnd = [&] {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) & 0x7fff;
    };
    for (int n = 0; n < 5000; ++n) {
        std::string s;
        const std::size_t len = rnd() % 24;
        for (std::size_t i = 0; i < len; ++i)
            s += alphabet[rnd() % alphabet.size()];
        auto r = parsePredicate(s, args());
        if (r.ok()) {
            // Whatever parses also compiles or fails with a limit message, never crashes.
            auto p = compilePredicate(**r);
            if (p.ok()) {
                const bool is_string[6] = {false, true, false, false, false, false};
                EXPECT_TRUE(validatePredicateProgram(*p, is_string).ok()) << s;
            }
        } else {
            EXPECT_GE(r.error().column, 1u) << s;
            EXPECT_LE(r.error().column, s.size() + 1) << s;
        }
    }
}

// $retval:s32: the low 32 bits, signed (an int function's return); a type the width cannot
// hold, or a string type, is refused naming the types.
TEST(FilterEval, RetvalTakesAnIntegerType) {
    auto r = parsePredicate("$retval:s32 < -2", args(), 0, PredicateOptions{true});
    ASSERT_TRUE(r.ok()) << r.error().render();
    EXPECT_EQ((*r)->width, 4u);
    auto p = compilePredicate(**r);
    ASSERT_TRUE(p.ok());
    PredicateValues v = values(3, "/x");
    v.retval = 0xfffffffdu;  // an int's -3, upper half zero
    EXPECT_TRUE(evalPredicate(*p, v));
    v.retval = 0xfffffffeu;
    EXPECT_FALSE(evalPredicate(*p, v));
    auto bad = parsePredicate("$retval:string == 1", args(), 0, PredicateOptions{true});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().render().find("the type is one of u8 u16 u32 u64 s8"), std::string::npos)
        << bad.error().render();
    // x32 is the hex spelling of u32 in fetch arguments: accepted as unsigned
    auto hex = parsePredicate("$retval:x32 == 0xfffffffe", args(), 0, PredicateOptions{true});
    ASSERT_TRUE(hex.ok()) << hex.error().render();
    EXPECT_EQ((*hex)->width, 4u);
    EXPECT_FALSE((*hex)->is_signed);
    auto hp = compilePredicate(**hex);
    ASSERT_TRUE(hp.ok());
    v.retval = 0x1fffffffeu;  // upper bits ignored
    EXPECT_TRUE(evalPredicate(*hp, v));
    auto range = parsePredicate("$retval:u8 > 300", args(), 0, PredicateOptions{true});
    ASSERT_FALSE(range.ok());
    EXPECT_NE(range.error().render().find("out of range for u8"), std::string::npos)
        << range.error().render();
}

// $retval in a return probe: signed 64-bit, evaluated on the return value.
TEST(FilterEval, RetvalIsSigned64) {
    auto r = parsePredicate("$retval < 0 && $retval != -4", args(), 0, PredicateOptions{true});
    ASSERT_TRUE(r.ok()) << r.error().render();
    auto p = compilePredicate(**r);
    ASSERT_TRUE(p.ok());
    bool is_string[6] = {false, true, false, false, false, false};
    EXPECT_TRUE(validatePredicateProgram(*p, is_string).ok());
    PredicateValues v = values(3, "/x");
    v.retval = static_cast<std::uint64_t>(-2);
    EXPECT_TRUE(evalPredicate(*p, v));
    v.retval = static_cast<std::uint64_t>(-4);
    EXPECT_FALSE(evalPredicate(*p, v));
    v.retval = 5;
    EXPECT_FALSE(evalPredicate(*p, v));
    EXPECT_EQ((*r)->lhs->field, PredicateFieldKind::Retval);
}
