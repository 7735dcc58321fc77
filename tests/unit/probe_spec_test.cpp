#include "probectl/probe_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace probectl;
using ::testing::HasSubstr;

namespace {

ProbeSpec good(std::string_view text) {
    auto r = parseProbeSpec(text);
    EXPECT_TRUE(r.ok()) << text << ": " << (r ? "" : r.error().render());
    return r ? *r : ProbeSpec{};
}

SpecError bad(std::string_view text) {
    auto r = parseProbeSpec(text);
    EXPECT_FALSE(r.ok()) << text << " parsed";
    return r ? SpecError{} : r.error();
}

}  // namespace

TEST(ProbeSpec, KprobeSymbol) {
    auto s = good("kprobe:do_sys_openat2");
    EXPECT_EQ(s.kind, SpecKind::Kprobe);
    EXPECT_EQ(s.symbol, "do_sys_openat2");
    EXPECT_EQ(s.offset, 0u);
    EXPECT_FALSE(s.has_addr);
    EXPECT_EQ(s.text, "kprobe:do_sys_openat2");
    EXPECT_EQ(s.str(), "kprobe:do_sys_openat2");
}

TEST(ProbeSpec, KprobeOffsetDecimalAndHex) {
    EXPECT_EQ(good("kprobe:vfs_read+16").offset, 16u);
    EXPECT_EQ(good("kprobe:vfs_read+0x10").offset, 16u);
    EXPECT_EQ(good("kprobe:vfs_read+0X1f").offset, 31u);
    EXPECT_EQ(good("kprobe:vfs_read+0").offset, 0u);
    EXPECT_EQ(good("kprobe:vfs_read+4294967295").offset, 4294967295u);
    EXPECT_EQ(good("kprobe:vfs_read+16").str(), "kprobe:vfs_read+0x10");
}

TEST(ProbeSpec, CompilerSuffixedSymbols) {
    EXPECT_EQ(good("kprobe:foo.isra.0").symbol, "foo.isra.0");
    EXPECT_EQ(good("kretprobe:bar.cold").symbol, "bar.cold");
    EXPECT_EQ(good("kprobe:_x$y").symbol, "_x$y");
}

TEST(ProbeSpec, Address) {
    auto s = good("kprobe:0xffffffff81001000");
    EXPECT_TRUE(s.has_addr);
    EXPECT_EQ(s.addr, 0xffffffff81001000ull);
    EXPECT_TRUE(s.symbol.empty());
    EXPECT_EQ(s.str(), "kprobe:0xffffffff81001000");
    EXPECT_TRUE(good("kretprobe:0xFFFFFFFF81001000").has_addr);
}

TEST(ProbeSpec, KretprobeAndSyscall) {
    auto r = good("kretprobe:do_sys_openat2");
    EXPECT_EQ(r.kind, SpecKind::Kretprobe);
    auto s = good("syscall:openat");
    EXPECT_EQ(s.kind, SpecKind::Syscall);
    EXPECT_EQ(s.symbol, "openat");
    EXPECT_EQ(s.str(), "syscall:openat");
}

TEST(ProbeSpec, FtraceShorthands) {
    EXPECT_EQ(good("p:vfs_read").kind, SpecKind::Kprobe);
    EXPECT_EQ(good("r:vfs_read").kind, SpecKind::Kretprobe);
}

struct BadCase {
    const char* text;
    std::size_t column;
    const char* message_part;
};

// Readable test names in ctest: the spec text, not the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* os) {
    *os << '"' << c.text << '"';
}

class ProbeSpecErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ProbeSpecErrors, PointAtTheColumn) {
    const BadCase& c = GetParam();
    SpecError e = bad(c.text);
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_THAT(e.message, HasSubstr(c.message_part)) << c.text;
    EXPECT_EQ(e.input, c.text);
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, ProbeSpecErrors,
    ::testing::Values(
        BadCase{"", 1, "empty probe spec"}, BadCase{"kprobe", 1, "expected TYPE:LOCATION"},
        BadCase{":foo", 1, "expected TYPE:LOCATION"},
        BadCase{"foo:bar", 1, "unknown probe type 'foo'"},
        BadCase{"uprobe:/bin/ls:main", 1, "not supported"},
        BadCase{"kprobe:", 8, "expected a symbol or 0xADDRESS after 'kprobe:'"},
        BadCase{"syscall:", 9, "expected a syscall name"}, BadCase{"kprobe:1abc", 8, "got '1'"},
        BadCase{"kprobe:-foo", 8, "got '-'"}, BadCase{"kprobe:foo+", 12, "expected an offset"},
        BadCase{"kprobe:foo+bar", 12, "expected decimal digits, got 'b'"},
        BadCase{"kprobe:foo+12k", 14, "invalid digit 'k'"},
        BadCase{"kprobe:foo+0x", 14, "expected hex digits"},
        BadCase{"kprobe:foo+0x1g", 15, "invalid digit 'g'"},
        BadCase{"kprobe:foo+4294967296", 12, "too large"},
        BadCase{"kprobe:0x", 10, "expected hex digits"}, BadCase{"kprobe:0x0", 8, "address 0"},
        BadCase{"kprobe:0xfffffffffffffffff", 8, "too large"},
        BadCase{"kprobe:0x1000+4", 14, "an address takes no +OFFSET"},
        BadCase{"kretprobe:foo+4", 14, "no +OFFSET"},
        BadCase{"syscall:openat+4", 15, "syscall: takes no +OFFSET"},
        BadCase{"syscall:0x10", 9, "not an address"},
        BadCase{"syscall:sys_openat", 9, "syscall:openat"},
        BadCase{"kprobe:foo bar=$arg1", 11, "fetch arguments"},
        BadCase{"kprobe:foo:bar", 11, "unexpected ':'"},
        BadCase{"kprobe:foo+4 ", 13, "unexpected space after the location"},
        BadCase{"kprobe:do_sys_openat2 ", 22, "unexpected space after the location"},
        BadCase{"kprobe:do_sys_openat2 +4", 22, "unexpected space after the location"},
        BadCase{"kprobe:foo\tx=%di", 11, "fetch arguments"},
        BadCase{"kprobe:foo=1", 11, "unexpected '='"},
        BadCase{"kprobe:do_sys_openat2+99999999999999999999999", 23,
                "offset 99999999999999999999999 is too large"},
        BadCase{"kprobe:0x1fffffffffffffffff", 8, "address 0x1fffffffffffffffff is too large"}));

TEST(ProbeSpec, RenderDrawsACaretUnderTheColumn) {
    SpecError e = bad("kprobe:foo+bar");
    EXPECT_EQ(e.render(),
              "error: expected decimal digits, got 'b' (column 12)\n"
              "  kprobe:foo+bar\n"
              "             ^");
    Error err = toError(e);
    EXPECT_EQ(err.err, EINVAL);
    EXPECT_THAT(err.message, HasSubstr("^"));
}

TEST(ProbeSpec, RenderAtEndOfInput) {
    SpecError e = bad("kprobe:");
    EXPECT_THAT(e.render(), ::testing::EndsWith("\n  kprobe:\n         ^"));
}
