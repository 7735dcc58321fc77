#include "probectl/probe_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec_parse.hpp"

using namespace probectl;
using namespace probectl::test;
using ::testing::HasSubstr;

namespace {}  // namespace

TEST(ProbeSpec, KprobeSymbol) {
    auto s = goodSpec("kprobe:do_sys_openat2");
    EXPECT_EQ(s.kind, SpecKind::Kprobe);
    EXPECT_EQ(s.symbol, "do_sys_openat2");
    EXPECT_EQ(s.offset, 0u);
    EXPECT_FALSE(s.has_addr);
    EXPECT_EQ(s.text, "kprobe:do_sys_openat2");
    EXPECT_EQ(s.str(), "kprobe:do_sys_openat2");
}

TEST(ProbeSpec, KprobeOffsetDecimalAndHex) {
    EXPECT_EQ(goodSpec("kprobe:vfs_read+16").offset, 16u);
    EXPECT_EQ(goodSpec("kprobe:vfs_read+0x10").offset, 16u);
    EXPECT_EQ(goodSpec("kprobe:vfs_read+0X1f").offset, 31u);
    EXPECT_EQ(goodSpec("kprobe:vfs_read+0").offset, 0u);
    EXPECT_EQ(goodSpec("kprobe:vfs_read+4294967295").offset, 4294967295u);
    EXPECT_EQ(goodSpec("kprobe:vfs_read+16").str(), "kprobe:vfs_read+0x10");
}

TEST(ProbeSpec, CompilerSuffixedSymbols) {
    EXPECT_EQ(goodSpec("kprobe:foo.isra.0").symbol, "foo.isra.0");
    EXPECT_EQ(goodSpec("kretprobe:bar.cold").symbol, "bar.cold");
    EXPECT_EQ(goodSpec("kprobe:_x$y").symbol, "_x$y");
}

TEST(ProbeSpec, Address) {
    auto s = goodSpec("kprobe:0xffffffff81001000");
    EXPECT_TRUE(s.has_addr);
    EXPECT_EQ(s.addr, 0xffffffff81001000ull);
    EXPECT_TRUE(s.symbol.empty());
    EXPECT_EQ(s.str(), "kprobe:0xffffffff81001000");
    EXPECT_TRUE(goodSpec("kretprobe:0xFFFFFFFF81001000").has_addr);
}

TEST(ProbeSpec, KretprobeAndSyscall) {
    auto r = goodSpec("kretprobe:do_sys_openat2");
    EXPECT_EQ(r.kind, SpecKind::Kretprobe);
    auto s = goodSpec("syscall:openat");
    EXPECT_EQ(s.kind, SpecKind::Syscall);
    EXPECT_EQ(s.symbol, "openat");
    EXPECT_EQ(s.str(), "syscall:openat");
}

TEST(ProbeSpec, FtraceShorthands) {
    EXPECT_EQ(goodSpec("p:vfs_read").kind, SpecKind::Kprobe);
    EXPECT_EQ(goodSpec("r:vfs_read").kind, SpecKind::Kretprobe);
}

namespace {

struct BadSpecCase {
    const char* text;
    std::size_t column;
    const char* message_part;
};

// Readable test names in ctest: the spec text, not the struct's bytes.
void PrintTo(const BadSpecCase& c, std::ostream* os) {
    *os << '"' << c.text << '"';
}

class ProbeSpecErrors : public ::testing::TestWithParam<BadSpecCase> {};

}  // namespace

TEST_P(ProbeSpecErrors, PointAtTheColumn) {
    const BadSpecCase& c = GetParam();
    SpecError e = badSpec(c.text);
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_THAT(e.message, HasSubstr(c.message_part)) << c.text;
    EXPECT_EQ(e.input, c.text);
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, ProbeSpecErrors,
    ::testing::Values(
        BadSpecCase{"", 1, "empty probe spec"}, BadSpecCase{"kprobe", 1, "expected TYPE:LOCATION"},
        // Only blanks ("$SPEC " with SPEC unset) is as empty as "".
        BadSpecCase{"   ", 1, "empty probe spec (only blanks)"},
        BadSpecCase{"\t", 1, "empty probe spec (only blanks)"},
        BadSpecCase{":foo", 1, "expected TYPE:LOCATION"},
        BadSpecCase{"foo:bar", 1, "unknown probe type 'foo'"},
        BadSpecCase{"tracepoint:", 12, "expected the tracepoint's SUBSYS"},
        BadSpecCase{"tracepoint:sched", 17, "expected ':' and the EVENT"},
        BadSpecCase{"tracepoint:sched:", 18, "expected the tracepoint's EVENT"},
        BadSpecCase{"tracepoint:sched:sched-switch", 23, "unexpected '-' in the tracepoint name"},
        BadSpecCase{"tracepoint:sched:sched_switch x=%di", 33, "no probed registers"},
        BadSpecCase{"tracepoint:sched:sched_switch x=$stack2", 33, "no probed stack"},
        BadSpecCase{"tracepoint:sched:sched_switch x=$retval", 33, "return probes"},
        BadSpecCase{"tracepoint:sched:sched_switch x=args.", 38, "parameter name after 'args.'"},
        BadSpecCase{"tracepoint:sched:sched_switch x=args.prev->", 44, "member name after '->'"},
        BadSpecCase{"tracepoint:sched:sched_switch x=args.prev.pid", 42, "with '->'"},
        BadSpecCase{"kprobe:foo x=args.prev", 14, "tracepoint: probes only"},
        BadSpecCase{"kprobe:", 8, "expected a symbol or 0xADDRESS after 'kprobe:'"},
        BadSpecCase{"syscall:", 9, "expected a syscall name"},
        BadSpecCase{"kprobe:1abc", 8, "got '1'"}, BadSpecCase{"kprobe:-foo", 8, "got '-'"},
        BadSpecCase{"kprobe:foo+", 12, "expected an offset"},
        // "+-5" once said "decimal digits" though 0x hex is taken too, and no sign is.
        BadSpecCase{"kprobe:foo+-5", 12,
                    "expected the offset as unsigned decimal digits or 0x hex, got '-'"},
        BadSpecCase{"uprobe:/bin/ls:main+-5", 21,
                    "expected the offset as unsigned decimal digits or 0x hex, got '-'"},
        BadSpecCase{"kprobe:foo+bar", 12,
                    "expected the offset as unsigned decimal digits or 0x hex, got 'b'"},
        BadSpecCase{"kprobe:foo+12k", 14, "invalid digit 'k'"},
        BadSpecCase{"kprobe:foo+0x", 14, "expected hex digits"},
        BadSpecCase{"kprobe:foo+0x1g", 15, "invalid digit 'g'"},
        BadSpecCase{"kprobe:foo+4294967296", 12, "out of range (0..4294967295)"},
        BadSpecCase{"kprobe:0x", 10, "expected hex digits"},
        BadSpecCase{"kprobe:0x0", 8, "address 0"},
        BadSpecCase{"kprobe:0xfffffffffffffffff", 8, "out of range"},
        BadSpecCase{"kprobe:0x1000+4", 14, "an address takes no +OFFSET"},
        BadSpecCase{"kretprobe:foo+4", 14, "no +OFFSET"},
        BadSpecCase{"syscall:openat+4", 15, "syscall: takes no +OFFSET"},
        BadSpecCase{"syscall:0x10", 9, "not an address"},
        BadSpecCase{"syscall:sys_openat", 9, "syscall:openat"},
        BadSpecCase{"kprobe:foo+4 x=$arg1", 16, "only available at a function entry"},
        BadSpecCase{"kprobe:foo:bar", 11, "unexpected ':'"},
        BadSpecCase{"kprobe:do_sys_openat2 +4", 25, "expected '(' after the offset"},
        BadSpecCase{"kprobe:foo\tx=%dj", 15, ""}, BadSpecCase{"kprobe:foo x=$retval", 14, ""},
        BadSpecCase{"kprobe:foo=1", 11, "unexpected '='"},
        BadSpecCase{"kprobe:do_sys_openat2+99999999999999999999999", 23,
                    "offset 99999999999999999999999 is out of range"},
        BadSpecCase{"kprobe:0x1fffffffffffffffff", 8,
                    "address 0x1fffffffffffffffff is out of range"}));

// Fetch arguments after the location (kprobe_events language, fetch_spec.hpp): kept in
// order, in str(), and checked against what the probe kind allows.
TEST(ProbeSpec, FetchArgumentsFollowTheLocation) {
    auto r = parseProbeSpec("kprobe:do_sys_openat2 dfd=$arg1:s32  path=+0($arg2):ustring ");
    ASSERT_TRUE(r.ok()) << r.error().render();
    ASSERT_EQ(r->fetch_args.size(), 2u);
    EXPECT_EQ(r->fetch_args[0].name, "dfd");
    EXPECT_EQ(r->fetch_args[1].type, FetchType::Ustring);
    EXPECT_EQ(r->locationStr(), "kprobe:do_sys_openat2");
    auto again = parseProbeSpec(r->str());
    ASSERT_TRUE(again.ok()) << r->str();
    EXPECT_EQ(again->str(), r->str());

    auto ret = parseProbeSpec("uretprobe:libc:malloc size=$arg1:u64 ptr=$retval");
    ASSERT_TRUE(ret.ok()) << ret.error().render();
    EXPECT_EQ(ret->fetch_args.size(), 2u) << "entry arguments are saved for return probes";

    auto trailing = parseProbeSpec("kprobe:foo+4 ");
    ASSERT_TRUE(trailing.ok());
    EXPECT_TRUE(trailing->fetch_args.empty());
}

// A syscall returns a signed long (-errno on failure): its $retval defaults to s64, shown
// in decimal; a function's type is not known from the spec, so x64 unless written.
TEST(ProbeSpec, SyscallRetvalIsSignedByDefault) {
    auto sys = parseProbeSpec("syscall:openat r=$retval");
    ASSERT_TRUE(sys.ok()) << sys.error().render();
    EXPECT_EQ(sys->fetch_args.at(0).type, FetchType::S64);
    auto typed = parseProbeSpec("syscall:openat r=$retval:x32");
    ASSERT_TRUE(typed.ok());
    EXPECT_EQ(typed->fetch_args.at(0).type, FetchType::X32) << "a written type wins";
    auto fn = parseProbeSpec("kretprobe:vfs_read r=$retval");
    ASSERT_TRUE(fn.ok());
    EXPECT_EQ(fn->fetch_args.at(0).type, FetchType::X64);
}

TEST(ProbeSpec, RenderDrawsACaretUnderTheColumn) {
    SpecError e = badSpec("kprobe:foo+bar");
    EXPECT_EQ(
        e.render(),
        "error: expected the offset as unsigned decimal digits or 0x hex, got 'b' (column 12)\n"
        "  kprobe:foo+bar\n"
        "             ^");
    Error err = toError(e);
    EXPECT_EQ(err.err, EINVAL);
    EXPECT_THAT(err.message, HasSubstr("^"));
}

// The caret counted bytes: after "é" (two bytes) it stood one column right of the fault.
TEST(ProbeSpec, RenderCountsCharactersNotBytes) {
    SpecError e{"unexpected 'x'", 15, "kprobe:\xc3\xa9t\xe2\x82\xac+x"};
    EXPECT_EQ(e.render(),
              "error: unexpected 'x' (column 12)\n"
              "  kprobe:\xc3\xa9t\xe2\x82\xac+x\n"
              "             ^");
    SpecError end{"unexpected end", 10, "kprobe:\xc3\xa9"};
    EXPECT_THAT(end.render(), ::testing::EndsWith("\n  kprobe:\xc3\xa9\n          ^"));
}

TEST(ProbeSpec, RenderAtEndOfInput) {
    SpecError e = badSpec("kprobe:");
    EXPECT_THAT(e.render(), ::testing::EndsWith("\n  kprobe:\n         ^"));
}

// ---- user-space forms (uprobe, uretprobe, usdt) ----

TEST(ProbeSpec, UprobeSymbolAndOffset) {
    auto s = goodSpec("uprobe:/bin/bash:readline");
    EXPECT_EQ(s.kind, SpecKind::Uprobe);
    EXPECT_TRUE(isUserSpace(s.kind));
    EXPECT_EQ(s.path, "/bin/bash");
    EXPECT_EQ(s.symbol, "readline");
    EXPECT_FALSE(s.has_addr);
    EXPECT_EQ(s.user_addr, UserAddrKind::None);
    EXPECT_EQ(s.str(), "uprobe:/bin/bash:readline");
    auto o = goodSpec("uprobe:libc:malloc+0x10");
    EXPECT_EQ(o.path, "libc");
    EXPECT_EQ(o.offset, 16u);
    EXPECT_EQ(o.str(), "uprobe:libc:malloc+0x10");
    auto r = goodSpec("uretprobe:libc.so.6:malloc");
    EXPECT_EQ(r.kind, SpecKind::Uretprobe);
    EXPECT_EQ(goodSpec("uprobe:libc:memcpy@GLIBC_2.2.5").symbol, "memcpy@GLIBC_2.2.5");
    EXPECT_EQ(goodSpec("uprobe:./a.out:main").path, "./a.out");
}

TEST(ProbeSpec, UprobeAddressKinds) {
    auto f = goodSpec("uprobe:/bin/x:0x1139");
    EXPECT_TRUE(f.has_addr);
    EXPECT_EQ(f.addr, 0x1139u);
    EXPECT_EQ(f.user_addr, UserAddrKind::FileOffset);
    EXPECT_FALSE(f.user_addr_marked);
    EXPECT_EQ(f.str(), "uprobe:/bin/x:0x1139");
    auto off = goodSpec("uprobe:/bin/x:off=0x1139");
    EXPECT_EQ(off.user_addr, UserAddrKind::FileOffset);
    EXPECT_TRUE(off.user_addr_marked);
    EXPECT_EQ(off.str(), "uprobe:/bin/x:off=0x1139");
    EXPECT_EQ(goodSpec("uprobe:/bin/x:off=4409").addr, 4409u);
    auto elf = goodSpec("uprobe:/bin/x:elf=0x401139");
    EXPECT_EQ(elf.user_addr, UserAddrKind::ElfAddress);
    EXPECT_EQ(elf.str(), "uprobe:/bin/x:elf=0x401139");
    auto va = goodSpec("uretprobe:/bin/x:va=0x7f0000001139");
    EXPECT_EQ(va.user_addr, UserAddrKind::ProcessAddress);
    EXPECT_EQ(va.addr, 0x7f0000001139u);
    EXPECT_EQ(va.str(), "uretprobe:/bin/x:va=0x7f0000001139");
}

TEST(ProbeSpec, UprobeQuoting) {
    auto s = goodSpec("uprobe:/bin/x:'ns::f(int)'");
    EXPECT_EQ(s.symbol, "ns::f(int)");
    EXPECT_EQ(s.str(), "uprobe:/bin/x:'ns::f(int)'");
    auto d = goodSpec("uprobe:/bin/x:\"ns::S::m(int) const\"+4");
    EXPECT_EQ(d.symbol, "ns::S::m(int) const");
    EXPECT_EQ(d.offset, 4u);
    auto p = goodSpec("uprobe:\"/opt/a:b/prog\":main");
    EXPECT_EQ(p.path, "/opt/a:b/prog");
    EXPECT_EQ(p.str(), "uprobe:'/opt/a:b/prog':main");
    EXPECT_EQ(goodSpec("uprobe:'/x y/z':'f'").path, "/x y/z");
    // str() round-trips through the parser.
    for (const char* t : {"uprobe:/bin/x:'ns::f(int)'+0x4", "uprobe:'/a:b':main",
                          "usdt:/bin/x:prov:name", "uretprobe:libc:va=0x10"})
        EXPECT_EQ(goodSpec(goodSpec(t).str()).str(), goodSpec(t).str()) << t;
}

TEST(ProbeSpec, Usdt) {
    auto s = goodSpec("usdt:/usr/bin/python3:python:function__entry");
    EXPECT_EQ(s.kind, SpecKind::Usdt);
    EXPECT_EQ(s.path, "/usr/bin/python3");
    EXPECT_EQ(s.provider, "python");
    EXPECT_EQ(s.usdt_name, "function__entry");
    EXPECT_EQ(s.str(), "usdt:/usr/bin/python3:python:function__entry");
    auto n = goodSpec("usdt:libc:setjmp");
    EXPECT_TRUE(n.provider.empty());
    EXPECT_EQ(n.usdt_name, "setjmp");
    EXPECT_EQ(n.str(), "usdt:libc:setjmp");
}

// A PATH holding ':' ends at it unless quoted: the error says so, with the quoted spec (it
// said only "unexpected '/' after the location").
INSTANTIATE_TEST_SUITE_P(
    UserPathColon, ProbeSpecErrors,
    ::testing::Values(BadSpecCase{"uprobe:/tmp/d:c/app:tick", 16,
                                  "holds ':' must be quoted: \"uprobe:'/tmp/d:c/app':tick\""},
                      BadSpecCase{"uretprobe:/a:b/c/x:f n=$retval", 15,
                                  "quoted: \"uretprobe:'/a:b/c/x':f\""}));

INSTANTIATE_TEST_SUITE_P(
    UserGrammar, ProbeSpecErrors,
    ::testing::Values(BadSpecCase{"uprobe:", 8, "expected PATH"},
                      BadSpecCase{"uprobe::main", 8, "empty PATH"},
                      BadSpecCase{"uprobe:/bin/x", 14, "expected ':' and a symbol"},
                      BadSpecCase{"uprobe:/bin/x:", 15, "expected a symbol, 0xFILEOFFSET"},
                      BadSpecCase{"uprobe:/bin/x:ns::f", 17,
                                  "quote C++ names, e.g. \"uprobe:/bin/x:'ns::f(int)'\""},
                      BadSpecCase{"uprobe:/bin/x:f(int)", 16, "quote C++ names"},
                      BadSpecCase{"uprobe:/bin/x:'ns::f", 15, "unterminated single quote"},
                      BadSpecCase{"uprobe:/bin/x:''", 15, "empty symbol"},
                      BadSpecCase{"uprobe:'/bin/x:main", 8, "unterminated single quote in PATH"},
                      BadSpecCase{"uprobe:/bin/x:main+", 20, "expected an offset"},
                      BadSpecCase{"uprobe:/bin/x:0x", 17, "expected hex digits"},
                      BadSpecCase{"uprobe:/bin/x:0x10+4", 19, "an address takes no +OFFSET"},
                      BadSpecCase{"uprobe:/bin/x:va=", 18, "expected a number after 'va='"},
                      BadSpecCase{"uprobe:/bin/x:va=0", 18, "address 0"},
                      BadSpecCase{"uprobe:/bin/x:addr=0x10", 15, "unknown address marker 'addr='"},
                      BadSpecCase{"uprobe:/bin/x:1abc", 15, "got '1'"},
                      BadSpecCase{"uretprobe:/bin/x:main+4", 22, "takes no +OFFSET"},
                      BadSpecCase{"uprobe:/bin x:main", 12, "unexpected space in PATH"},
                      BadSpecCase{"uprobe:/bin/x:main extra", 20, "expected a fetch source"},
                      BadSpecCase{"usdt:/bin/x:p:n a=$arg1", 17, "usdt probes take no fetch"},
                      BadSpecCase{"uprobe:/bin/x:'f'junk", 18, "unexpected 'j'"},
                      BadSpecCase{"usdt:/bin/x", 12, "expected ':' and PROVIDER:NAME"},
                      BadSpecCase{"usdt:/bin/x:", 13, "expected PROVIDER:NAME or NAME after ':'"},
                      BadSpecCase{"usdt:/bin/x:prov:", 18, "expected the probe NAME"},
                      BadSpecCase{"usdt:/bin/x:prov:-x", 18, "expected a USDT probe name"},
                      BadSpecCase{"usdt:/bin/x:a:b:c", 16, "unexpected ':'"},
                      BadSpecCase{"nope:/bin/x:main", 1,
                                  "expected kprobe, kretprobe, syscall, uprobe"}));

TEST(ProbeSpec, TracepointSubsystemAndEvent) {
    auto s = goodSpec("tracepoint:sched:sched_process_fork");
    EXPECT_EQ(s.kind, SpecKind::Tracepoint);
    EXPECT_EQ(s.subsystem, "sched");
    EXPECT_EQ(s.symbol, "sched_process_fork");
    EXPECT_EQ(s.str(), "tracepoint:sched:sched_process_fork");
    EXPECT_FALSE(isUserSpace(s.kind));
    // t: as in bpftrace; `*` leaves the subsystem unchecked (tracepoints without an event).
    EXPECT_EQ(goodSpec("t:sched:sched_switch").str(), "tracepoint:sched:sched_switch");
    auto any = goodSpec("tracepoint:*:pelt_cfs_tp");
    EXPECT_EQ(any.subsystem, "*");
    EXPECT_EQ(any.str(), "tracepoint:*:pelt_cfs_tp");
}

TEST(ProbeSpec, TracepointFetchArguments) {
    auto s = goodSpec(
        "tracepoint:sched:sched_process_fork pid=args.child->pid:s32 "
        "raw=$arg2 name=+0($arg1):string f=+8(args.parent->mm)");
    ASSERT_EQ(s.fetch_args.size(), 4u);
    const FetchSource& f = *s.fetch_args[0].source;
    EXPECT_EQ(f.kind, FetchSource::Kind::Field);
    EXPECT_EQ(f.path, (std::vector<std::string>{"child", "pid"}));
    EXPECT_EQ(f.column, 41u);
    EXPECT_TRUE(s.fetch_args[0].type_given);
    EXPECT_EQ(s.fetch_args[0].str(), "pid=args.child->pid:s32");
    EXPECT_EQ(s.fetch_args[1].source->kind, FetchSource::Kind::Arg);
    EXPECT_EQ(s.fetch_args[3].source->inner->kind, FetchSource::Kind::Field);
    EXPECT_EQ(s.fetch_args[3].str(), "f=+8(args.parent->mm):x64");
    // Parses back to itself.
    auto again = goodSpec(s.str());
    EXPECT_EQ(again.str(), s.str());
}

// specLocation: the location the parser reads, quote-aware, for the names of text lines and
// exported events; parsing it alone gives the same location as parsing the whole spec.
TEST(ProbeSpec, LocationEndsAtTheFirstSpaceOutsideQuotes) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"kprobe:do_sys_openat2 dfd=$arg1:s32", "kprobe:do_sys_openat2"},
        {"uprobe:./cv:'A::get(int) const' k=$arg2:s32", "uprobe:./cv:'A::get(int) const'"},
        {"uprobe:\"/opt/my app/cv\":main if $pid == 1", "uprobe:\"/opt/my app/cv\":main"},
        {"uprobe:'/a b':\"ns::f(char const&)\"+0x4\tx=%di:u64",
         "uprobe:'/a b':\"ns::f(char const&)\"+0x4"},
        // a quote inside a bare PATH is a character of it, not the start of a field
        {"uprobe:/tmp/it's/x:main k=$arg1", "uprobe:/tmp/it's/x:main"},
        {"usdt:'/opt/my app/x':prov:tick", "usdt:'/opt/my app/x':prov:tick"},
        {"syscall:openat", "syscall:openat"},
    };
    for (const auto& [text, location] : cases) {
        EXPECT_EQ(specLocation(text), location) << text;
        auto whole = parseProbeSpec(text);
        auto alone = parseProbeSpec(specLocation(text));
        ASSERT_TRUE(whole.ok()) << text << ": " << whole.error().message;
        ASSERT_TRUE(alone.ok()) << text << ": " << alone.error().message;
        EXPECT_EQ(alone->locationStr(), whole->locationStr()) << text;
    }
    EXPECT_EQ(specLocation(""), "");
    EXPECT_EQ(specLocation("uprobe:'/unterminated x"), "uprobe:'/unterminated x");
}
