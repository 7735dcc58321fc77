// Predicates written in probe specs (`... if EXPR`): where the predicate starts, column-accurate
// errors against the spec's fetch arguments, and the wire encoding the kernel receives
// (struct probectl_filter_insn + PROBE_FILTER_STRINGS).
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probectl/predicate.hpp"
#include "probectl/probe_spec.hpp"
#include "spec_parse.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using namespace probectl::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

FilterProgram compiledSpec(const ProbeSpec& s) {
    auto node = parsePredicate(s.text, s.fetch_args, s.predicate_begin);
    EXPECT_TRUE(node.ok());
    auto prog = compilePredicate(**node);
    EXPECT_TRUE(prog.ok());
    return prog.ok() ? *prog : FilterProgram{};
}

}  // namespace

TEST(SpecFilter, PredicateAfterFetchArguments) {
    const char* text =
        R"(syscall:openat path=+0($arg2):ustring flags=$arg3:x32 if path ~ "/etc/*")";
    ProbeSpec s = goodSpec(text);
    ASSERT_EQ(s.fetch_args.size(), 2u);
    EXPECT_EQ(s.predicate, R"(path ~ "/etc/*")");
    EXPECT_EQ(s.predicate_begin, std::string_view(text).find("path ~"));
    EXPECT_EQ(s.str(),
              R"(syscall:openat path=+0($arg2):ustring flags=$arg3:x32 if path ~ "/etc/*")");
}

TEST(SpecFilter, PredicateWithoutFetchArgumentsUsesSpecials) {
    ProbeSpec s = goodSpec(R"(kprobe:vfs_read if $comm == "ls" && $pid != 1)");
    EXPECT_TRUE(s.fetch_args.empty());
    FilterProgram p = compiledSpec(s);
    ASSERT_EQ(p.insns.size(), 3u);
    EXPECT_EQ(p.insns[0].field_kind, PROBECTL_FILTER_FIELD_COMM);
    EXPECT_EQ(p.insns[0].flags, PROBECTL_FILTER_F_STRING);
    EXPECT_EQ(p.insns[1].field_kind, PROBECTL_FILTER_FIELD_PID);
    EXPECT_EQ(p.insns[1].width, 4);
    EXPECT_EQ(p.insns[2].op, PROBECTL_FILTER_AND);
    EXPECT_EQ(p.strings, std::vector<std::string>{"ls"});
}

// $retval needs no fetch argument in a probe that returns: an s64 test of the return value;
// elsewhere it is refused, in the predicate as in a fetch argument.
TEST(SpecFilter, RetvalInEveryReturnProbe) {
    for (const char* text :
         {"kretprobe:do_sys_openat2 if $retval < 0", "uretprobe:libc:malloc if $retval == 0",
          "syscall:openat if $retval < 0",
          "syscall:openat fd=$retval:s32 p=+0($arg2):ustring if $retval < 0"}) {
        ProbeSpec s = goodSpec(text);
        ASSERT_TRUE(firesAtReturn(s)) << text;
        auto node = parsePredicate(s.text, s.fetch_args, s.predicate_begin,
                                   PredicateOptions{firesAtReturn(s)});
        ASSERT_TRUE(node.ok()) << text;
        auto prog = compilePredicate(**node);
        ASSERT_TRUE(prog.ok()) << text;
        const FilterInsn& in = prog->insns.back();
        EXPECT_EQ(in.field_kind, PROBECTL_FILTER_FIELD_RETVAL) << text;
        EXPECT_EQ(in.width, 8) << text;
        EXPECT_EQ(in.flags, PROBECTL_FILTER_F_SIGNED) << text;
    }
    for (const char* text :
         {"kprobe:do_sys_openat2 if $retval < 0", "uprobe:libc:malloc if $retval == 0",
          "kprobe:do_sys_openat2 r=$retval"}) {
        SpecError e = badSpec(text);
        EXPECT_THAT(e.message, HasSubstr("$retval is only available in return probes")) << text;
        EXPECT_EQ(e.column, std::string_view(text).find("$retval") + 1) << text;
    }
}

// exit and exit_group are syscall: probes, which have $retval, but never return: their
// $retval was refused as "only available in return probes (kretprobe:, uretprobe:,
// syscall:)", which named syscall: among the kinds that have it (seen failing). The refusal
// names the call, says why and what to probe instead, in a fetch argument as in a predicate.
TEST(SpecFilter, RetvalOfACallThatNeverReturns) {
    for (const char* text :
         {"syscall:exit_group r=$retval", "syscall:exit r=$retval:s32",
          "syscall:exit_group if $retval != 0", "syscall:exit s=$arg1 if $retval == 0"}) {
        SpecError e = badSpec(text);
        const std::string name =
            std::string_view(text).starts_with("syscall:exit_group") ? "exit_group" : "exit";
        EXPECT_THAT(e.message, Not(HasSubstr("only available in return probes"))) << text;
        EXPECT_THAT(e.message,
                    HasSubstr(name + " never returns (the task ends in it), so it has no "
                                     "$retval: fetch its entry arguments instead (the exit "
                                     "status is $arg1"))
            << text;
        EXPECT_THAT(e.message, HasSubstr("tracepoint:sched:sched_process_exit")) << text;
        EXPECT_EQ(e.column, std::string_view(text).find("$retval") + 1) << text;
    }
    // Its entry arguments are fine.
    goodSpec("syscall:exit_group status=$arg1:s32 if status != 0");
}

// USDT arguments come from the probe's note, so the predicate is kept as text and
// type-checked once the probe is resolved (Session::add).
TEST(SpecFilter, UsdtPredicateIsDeferred) {
    ProbeSpec s = goodSpec("usdt:/bin/app:pc:tick if arg1 >= 2");
    EXPECT_EQ(s.predicate, "arg1 >= 2");
    EXPECT_TRUE(s.fetch_args.empty());
    EXPECT_EQ(badSpec("usdt:/bin/app:pc:tick n=$arg1 if n > 1").column, 23u)
        << "usdt still takes no fetch arguments";
}

// A fetch argument may be named "if2" or contain "if": only the word `if` starts a predicate.
TEST(SpecFilter, OnlyTheWordIf) {
    ProbeSpec s = goodSpec("kprobe:vfs_read if2=$arg1 if if2 == 3");
    ASSERT_EQ(s.fetch_args.size(), 1u);
    EXPECT_EQ(s.fetch_args[0].name, "if2");
    EXPECT_EQ(s.predicate, "if2 == 3");
}

namespace {

struct FilterBad {
    const char* text;
    std::size_t column;
    const char* message_part;
};

void PrintTo(const FilterBad& c, std::ostream* os) {
    *os << '"' << c.text << '"';
}

class SpecFilterErrors : public ::testing::TestWithParam<FilterBad> {};

}  // namespace

TEST_P(SpecFilterErrors, PointAtTheColumn) {
    const FilterBad& c = GetParam();
    SpecError e = badSpec(c.text);
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_THAT(e.message, HasSubstr(c.message_part)) << c.text;
    EXPECT_EQ(e.input, c.text) << "the caret line shows the whole spec";
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, SpecFilterErrors,
    ::testing::Values(
        FilterBad{"kprobe:vfs_read n=$arg1 if", 25, "expected a predicate after 'if'"},
        FilterBad{"kprobe:vfs_read n=$arg1 if   ", 25, "expected a predicate after 'if'"},
        FilterBad{"kprobe:vfs_read n=$arg1 if m == 1", 28, "unknown field 'm'"},
        FilterBad{"kprobe:vfs_read n=$arg1:u8 if n == 256", 36, "u8"},
        FilterBad{R"(kprobe:vfs_read n=$arg1 if n == "x")", 33, "compare it with a number"},
        FilterBad{R"(kprobe:vfs_read s=+0($arg1):string if s < "x")", 41, "string"},
        FilterBad{"kprobe:vfs_read n=$arg1 if (n == 1", 35, "close the '(' at column 28"},
        FilterBad{"kprobe:vfs_read if $nope == 1", 20, "$nope"},
        FilterBad{"kretprobe:vfs_read r=$retval if r == 1 &&", 42, ""},
        FilterBad{"kprobe:vfs_read a=+0($arg1):u8[4] if a == 1", 38, "is an array"},
        FilterBad{"kprobe:vfs_read a=$arg1:u8[4] if a == 1", 25, "must be a dereference"}));

// The bytes libctl sends are the uapi struct, field for field.
TEST(SpecFilter, WireLayoutIsTheUapiStruct) {
    ProbeSpec s = goodSpec("kprobe:vfs_read n=$arg3:s32 if n < -1");
    FilterProgram p = compiledSpec(s);
    ASSERT_EQ(p.insns.size(), 1u);
    probectl_filter_insn w{};
    static_assert(sizeof(w) == sizeof(FilterInsn));
    std::memcpy(&w, &p.insns[0], sizeof(w));
    EXPECT_EQ(w.op, PROBECTL_FILTER_TEST);
    EXPECT_EQ(w.cmp, PROBECTL_FILTER_LT);
    EXPECT_EQ(w.field, PROBECTL_FILTER_FIELD_ARG);
    EXPECT_EQ(w.flags, PROBECTL_FILTER_F_SIGNED);
    EXPECT_EQ(w.arg, 0);
    EXPECT_EQ(w.width, 4) << "the fetch type's size: the kernel checks it against the STORE";
    EXPECT_EQ(static_cast<std::int64_t>(w.value), -1);
}

TEST(SpecFilter, StringsBlobIsNulSeparated) {
    ProbeSpec s = goodSpec(R"(kprobe:vfs_read if $comm ~ "ba*" || $comm == "ls")");
    auto blob = encodeFilterStrings(compiledSpec(s));
    ASSERT_TRUE(blob.ok());
    EXPECT_EQ(*blob, std::string("ba*\0ls\0", 7));
    FilterProgram nul;
    nul.strings = {std::string("a\0b", 3)};
    auto r = encodeFilterStrings(nul);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("NUL"));
}
