// resolveUserSpec end to end on the fixtures: file offsets equal readelf's, and every
// ambiguity is refused with the way out.
#include "probectl/user_target.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "readelf_util.hpp"

using namespace probectl;
using namespace probectl::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

Result<UserTarget> resolve(const std::string& text, const UserResolveOptions& o = {}) {
    auto spec = parseProbeSpec(text);
    if (!spec) {
        ADD_FAILURE() << spec.error().render();
        return makeError(EINVAL, "bad spec");
    }
    return resolveUserSpec(*spec, o);
}

UserTarget goodTarget(const std::string& text, const UserResolveOptions& o = {}) {
    auto r = resolve(text, o);
    if (!r)
        ADD_FAILURE() << text << ": " << r.error().message;
    return r ? *r : UserTarget{};
}

Error badTarget(const std::string& text, int err, const UserResolveOptions& o = {}) {
    auto r = resolve(text, o);
    EXPECT_FALSE(r) << text << " resolved";
    if (r)
        return {};
    EXPECT_EQ(r.error().err, err) << r.error().message;
    EXPECT_THAT(r.error().message, HasSubstr(text)) << "starts with the spec";
    return r.error();
}

// readelf's value of `name` in `file`, and the file offset readelf's PT_LOADs give it.
std::pair<std::uint64_t, std::uint64_t> readelfFunction(const std::string& file,
                                                        const std::string& name) {
    for (const auto& s : readelfSymbols(file))
        if (s.name == name && (s.type == "FUNC" || s.type == "IFUNC"))
            return {s.value, expectedOffset(readelfLoads(file), s.value).value()};
    ADD_FAILURE() << name << " not in readelf -Ws " << file;
    return {0, 0};
}

}  // namespace

extern "C" __attribute__((noinline, used)) int probectl_user_target_marker(int x) {
    return x + 42;
}

// A signature of no function whose name has overloads: the error lists them.
TEST(UserTarget, SignatureOfNoOverloadListsTheOverloads) {
    const std::string path = FX_CXX_PATH;
    const std::string text = "uprobe:" + path + ":'fx::g(int)'";
    const Error e = badTarget(text, ENOENT);
    EXPECT_EQ(e.message, text + ": no function 'fx::g(int)' in " + path +
                             " (symbols from .symtab); the functions named 'fx::g' take other "
                             "parameters: fx::g(char*), fx::g(char const*)");
}

TEST(UserTarget, SymbolOffsetsMatchReadelfInEveryLayout) {
    for (const auto& fx : allFixtures()) {
        const std::string name = fx.name;
        if (name == "libfxlib.so" || name == "fx_libuser" || name == "fx_dup" || name == "fx_cxx" ||
            name == "fx_usdt")
            continue;
        SCOPED_TRACE(name);
        auto [value, off] = readelfFunction(fx.path, "fx_work");
        auto t = goodTarget("uprobe:" + fx.path + ":fx_work");
        EXPECT_EQ(t.file_offset, off);
        EXPECT_EQ(t.vaddr, value);
        EXPECT_EQ(t.symbol, "fx_work");
        EXPECT_EQ(t.path, fx.path);
        EXPECT_FALSE(t.is_return);
        EXPECT_EQ(t.ref_ctr_offset, 0u);
        EXPECT_THAT(t.how, HasSubstr("PT_LOAD"));
        auto r = goodTarget("uretprobe:" + fx.path + ":fx_work");
        EXPECT_TRUE(r.is_return);
        EXPECT_EQ(r.file_offset, off);
        // +1 is inside the first instruction (every layout's is longer than a byte); the
        // refusal names the second, which resolves.
        const std::string why = badTarget("uprobe:" + fx.path + ":fx_work+1", EILSEQ).message;
        const std::string lead = "boundaries are fx_work+0x0, fx_work+";
        ASSERT_NE(why.find(lead), std::string::npos) << why;
        const std::uint64_t second =
            std::stoull(why.substr(why.find(lead) + lead.size()), nullptr, 16);
        auto plus = goodTarget(fmt::format("uprobe:{}:fx_work+{:#x}", fx.path, second));
        EXPECT_EQ(plus.file_offset, off + second);
        EXPECT_EQ(plus.symbol_offset, second);
    }
}

// A stripped file's missing function once ended at the symbol source: the message names
// the address forms of a uprobe spec that reach it anyway.
TEST(UserTarget, StrippedFileSuggestsTheAddressForms) {
    auto r = resolve(fmt::format("uprobe:{}:fx_helper_not_exported", FX_STRIPPED_PATH));
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("the file is stripped"));
    EXPECT_THAT(r.error().message,
                HasSubstr(fmt::format("uprobe:{}:elf=0xADDR (an ELF address)", FX_STRIPPED_PATH)));
    EXPECT_THAT(r.error().message,
                HasSubstr(fmt::format("uprobe:{}:off=0xN (a file offset)", FX_STRIPPED_PATH)));
    // An unstripped file's miss has no such advice.
    auto pie = resolve(fmt::format("uprobe:{}:fx_helper_not_exported", FX_PIE_PATH));
    ASSERT_FALSE(pie);
    EXPECT_THAT(pie.error().message, Not(HasSubstr("stripped")));
}

TEST(UserTarget, SharedLibraryFunction) {
    auto [value, off] = readelfFunction(FXLIB_PATH, "fx_lib_add");
    auto t = goodTarget(std::string("uprobe:") + FXLIB_PATH + ":fx_lib_add");
    EXPECT_EQ(t.file_offset, off);
    EXPECT_EQ(t.vaddr, value);
}

TEST(UserTarget, AddressForms) {
    const std::string p = FX_PIE_PATH;
    auto [value, off] = readelfFunction(p, "fx_work");
    auto byOff = goodTarget(fmt::format("uprobe:{}:{:#x}", p, off));
    EXPECT_EQ(byOff.file_offset, off);
    EXPECT_EQ(byOff.symbol, "fx_work");
    EXPECT_EQ(byOff.vaddr, value);
    auto marked = goodTarget(fmt::format("uprobe:{}:off={:#x}", p, off));
    EXPECT_EQ(marked.file_offset, off);
    auto byElf = goodTarget(fmt::format("uprobe:{}:elf={:#x}", p, value + 4));
    EXPECT_EQ(byElf.file_offset, off + 4);
    EXPECT_EQ(byElf.symbol_offset, 4u);
    EXPECT_THAT(badTarget(fmt::format("uprobe:{}:elf={:#x}", p, value + 2), EILSEQ).message,
                HasSubstr("fx_work+0x0, fx_work+0x4"));
    // For the non-PIE binary the ELF address is also the runtime address, and it differs
    // from the file offset.
    const std::string np = FX_NOPIE_PATH;
    auto [nv, noff] = readelfFunction(np, "fx_work");
    EXPECT_NE(nv, noff);
    EXPECT_EQ(goodTarget(fmt::format("uprobe:{}:elf={:#x}", np, nv)).file_offset, noff);
}

TEST(UserTarget, AddressErrors) {
    const std::string p = FX_PIE_PATH;
    // The ELF header is at file offset 0: mapped, but not code.
    EXPECT_THAT(badTarget("uprobe:" + p + ":0x0", EINVAL).message, HasSubstr("non-executable"));
    EXPECT_THAT(badTarget("uprobe:" + p + ":0x7fffffff", EINVAL).message, HasSubstr("no PT_LOAD"));
    // An elf= address is named once, not as "ELF address N (ELF address N)".
    const std::string elf0 = badTarget("uprobe:" + p + ":elf=0x40", EINVAL).message;
    EXPECT_THAT(elf0, HasSubstr("non-executable"));
    EXPECT_THAT(elf0, ::testing::Not(HasSubstr("(ELF address"))) << elf0;
    EXPECT_THAT(badTarget("uprobe:" + p + ":va=0x1000", EINVAL).message, HasSubstr("-p PID"));
    UserResolveOptions self;
    self.pid = ::getpid();
    EXPECT_THAT(badTarget("uprobe:" + p + ":0x1000", EINVAL, self).message,
                HasSubstr("ambiguous: write off=0x1000 for a file offset or va=0x1000"));
    auto [value, off] = readelfFunction(p, "fx_work");
    EXPECT_THAT(badTarget(fmt::format("uretprobe:{}:elf={:#x}", p, value + 4), EINVAL).message,
                HasSubstr("must be at a function's entry"));
    std::uint64_t size = 0;
    for (const auto& s : readelfSymbols(p))
        if (s.name == "fx_work")
            size = s.size;
    EXPECT_THAT(
        badTarget(fmt::format("uprobe:{}:fx_work+{:#x}", p, size), EINVAL).message,
        HasSubstr(fmt::format("offset {:#x} is beyond 'fx_work' ({} bytes long)", size, size)));
}

TEST(UserTarget, ProcessAddressInThisProcess) {
    char exe[PATH_MAX];
    ASSERT_NE(::realpath("/proc/self/exe", exe), nullptr);
    UserResolveOptions o;
    o.pid = ::getpid();
    const auto addr = reinterpret_cast<std::uintptr_t>(&probectl_user_target_marker);
    auto t = goodTarget(fmt::format("uprobe:{}:va={:#x}", exe, addr), o);
    auto [value, off] = readelfFunction(exe, "probectl_user_target_marker");
    EXPECT_EQ(t.file_offset, off);
    EXPECT_EQ(t.vaddr, value);
    EXPECT_EQ(t.symbol, "probectl_user_target_marker");
    EXPECT_THAT(t.how, HasSubstr("maps"));
    // Same process, same mount namespace: the plain path, no /proc/PID/root detour.
    EXPECT_EQ(t.path, exe);
    // The address is not in the named file.
    EXPECT_THAT(badTarget(fmt::format("uprobe:{}:va={:#x}", FX_PIE_PATH, addr), EINVAL, o).message,
                HasSubstr("not in"));
}

TEST(UserTarget, LibraryNameWithAndWithoutPid) {
    auto t = goodTarget("uprobe:libc:malloc");
    EXPECT_THAT(t.path, HasSubstr("libc.so.6"));
    EXPECT_THAT(t.how, HasSubstr("ld.so.cache"));
    UserResolveOptions o;
    o.pid = ::getpid();
    auto p = goodTarget("uprobe:libc:malloc", o);
    EXPECT_EQ(p.file_offset, t.file_offset);
    EXPECT_THAT(p.how, HasSubstr("mapped by pid"));
    // Another mount namespace cannot be made here; /proc/PID/root of a process sharing ours
    // must not be used as a prefix.
    EXPECT_EQ(p.path.rfind("/proc/", 0), std::string::npos);
}

TEST(UserTarget, DuplicatesRefusedWithCandidates) {
    const std::string p = FX_DUP_PATH;
    auto e = badTarget("uprobe:" + p + ":helper", ENOTUNIQ);
    EXPECT_THAT(e.message, HasSubstr("2 functions"));
    EXPECT_THAT(e.message, HasSubstr("dup_a.c"));
    EXPECT_THAT(e.message, HasSubstr("dup_b.c"));
    // Each candidate comes with a spec that selects it, and that spec resolves.
    std::size_t found = 0;
    for (const auto& rs : readelfSymbols(p)) {
        if (rs.name != "helper")
            continue;
        const auto off = expectedOffset(readelfLoads(p), rs.value).value();
        const std::string pick = fmt::format("uprobe:{}:off={:#x}", p, off);
        EXPECT_THAT(e.message, HasSubstr(pick));
        EXPECT_EQ(goodTarget(pick).symbol, "helper");
        ++found;
    }
    EXPECT_EQ(found, 2u);
}

TEST(UserTarget, CxxByMangledAndDemangledName) {
    const std::string p = FX_CXX_PATH;
    auto [value, off] = readelfFunction(p, "_ZN2fx5twiceEi");
    auto a = goodTarget("uprobe:" + p + ":'fx::twice(int)'");
    auto b = goodTarget("uprobe:" + p + ":_ZN2fx5twiceEi");
    EXPECT_EQ(a.file_offset, off);
    EXPECT_EQ(b.file_offset, off);
    EXPECT_EQ(a.symbol, "fx::twice(int)");
    EXPECT_EQ(b.symbol, "fx::twice(int)") << "printed demangled";
    auto e = badTarget("uprobe:" + p + ":'fx::twice'", ENOTUNIQ);
    EXPECT_THAT(e.message, HasSubstr("fx::twice(int)"));
    EXPECT_THAT(e.message, HasSubstr("fx::twice(double)"));
    EXPECT_EQ(goodTarget("uprobe:" + p + ":'fx::Counter::add'").symbol,
              "fx::Counter::add(long) const");
}

// A C++ function that exists only as a clone: its demangled names (as the mangled one always
// did) are refused with the clone and the spec that probes it; they were refused as unknown,
// with the clone only as a "similar" name.
TEST(UserTarget, CxxFunctionOnlyClonedNamesItsClones) {
    const std::string p = FX_CLONE_CXX_PATH;
    for (const std::string name : {"_ZNK2fx1K1mEi", "'fx::K::m'", "'fx::K::m(int) const'"}) {
        SCOPED_TRACE(name);
        auto e = badTarget("uprobe:" + p + ":" + name, ENOENT);
        EXPECT_THAT(e.message, HasSubstr("only compiler clones of it"));
        EXPECT_THAT(e.message, HasSubstr(":'fx::K::m(int) const [clone .isra.0]'"));
    }
    EXPECT_EQ(goodTarget("uprobe:" + p + ":'fx::K::m(int) const [clone .isra.0]'").symbol,
              "fx::K::m(int) const [clone .isra.0]");
    auto other = badTarget("uprobe:" + p + ":'fx::K::n'", ENOENT);
    EXPECT_THAT(other.message, Not(HasSubstr("only compiler clones")));
}

// A '*' of a C++ signature is a pointer when the file has a function of that name: the spec
// was refused as a glob ("expand it first").
TEST(UserTarget, CxxSignatureWithAPointerIsNoGlob) {
    const std::string p = FX_CXX_PATH;
    auto [mv, moff] = readelfFunction(p, "_ZN2fx1gEPc");
    auto [cv, coff] = readelfFunction(p, "_ZN2fx1gEPKc");
    const auto m = goodTarget("uprobe:" + p + ":'fx::g(char*)'");
    EXPECT_EQ(m.file_offset, moff);
    EXPECT_EQ(m.symbol, "fx::g(char*)");
    for (const char* written : {"fx::g(const char*)", "fx::g(char const*)"}) {
        const auto c = goodTarget("uprobe:" + p + ":'" + written + "'");
        EXPECT_EQ(c.file_offset, coff) << written;
        EXPECT_EQ(c.symbol, "fx::g(char const*)") << written;
    }
}

// uprobe:BIN:'sum<int>' finds the function template "int sum<int>(int, int)": its demangled
// name carries the return type, and the lookup never matched it.
TEST(UserTarget, CxxTemplateFunctionByName) {
    const std::string p = FX_CXX_PATH;
    auto [value, off] = readelfFunction(p, "_Z3sumIiET_S0_S0_");
    EXPECT_EQ(goodTarget("uprobe:" + p + ":'sum<int>'").file_offset, off);
    EXPECT_EQ(goodTarget("uprobe:" + p + ":'sum<int>(int, int)'").file_offset, off);
    EXPECT_EQ(goodTarget("uprobe:" + p + ":'sum<int>'").symbol, "int sum<int>(int, int)");
    EXPECT_EQ(goodTarget("uprobe:" + p + ":sum").symbol, "sum(int, int)");
}

TEST(UserTarget, IfuncRefusedWithImplementations) {
    auto e = badTarget(std::string("uprobe:") + FX_PIE_PATH + ":fx_ifunc", EINVAL);
    EXPECT_THAT(e.message, HasSubstr("IFUNC"));
    EXPECT_THAT(e.message, HasSubstr(std::string("uprobe:") + FX_PIE_PATH + ":fx_ifunc_generic"));
    EXPECT_THAT(e.message, HasSubstr(std::string("uprobe:") + FX_PIE_PATH + ":fx_ifunc_fast"));
    EXPECT_TRUE(goodTarget(std::string("uprobe:") + FX_PIE_PATH + ":fx_ifunc_generic").file_offset);
}

TEST(UserTarget, GlibcIfuncs) {
    auto m = badTarget("uprobe:libc:memcpy", EINVAL);
    EXPECT_THAT(m.message, HasSubstr("IFUNC"));
    auto s = badTarget("uprobe:libc:strlen", EINVAL);
    if (m.message.find("No implementations") != std::string::npos)
        GTEST_SKIP() << "libc debug symbols (libc6-dbg) not installed: " << m.message;
    EXPECT_THAT(m.message, HasSubstr("uprobe:libc:__memcpy_avx_unaligned"));
    EXPECT_THAT(s.message, HasSubstr("uprobe:libc:__strlen_avx2"));
    EXPECT_THAT(s.message, HasSubstr("uprobe:libc:__strlen_sse2"));
    auto impl = goodTarget("uprobe:libc:__strlen_sse2");
    EXPECT_EQ(impl.symbol, "__strlen_sse2");
    // The old memcpy ABI is reachable by its version.
    EXPECT_EQ(goodTarget("uprobe:libc:memcpy@GLIBC_2.2.5").symbol, "memcpy@GLIBC_2.2.5");
}

TEST(UserTarget, NotFoundSuggests) {
    auto e = badTarget(std::string("uprobe:") + FX_PIE_PATH + ":fx_wrok", ENOENT);
    EXPECT_THAT(e.message, HasSubstr("similar: fx_work"));
    badTarget("uprobe:/nonexistent/file:main", ENOENT);
    badTarget("uprobe:libprobectl-nonexistent:main", ENOENT);
}

TEST(UserTarget, UsdtWithAndWithoutSemaphore) {
    const std::string p = FX_USDT_PATH;
    auto notes = readelfStapsdt(p);
    auto loads = readelfLoads(p);
    for (const auto& n : notes) {
        SCOPED_TRACE(n.name);
        auto t = goodTarget("usdt:" + p + ":" + n.provider + ":" + n.name);
        auto short_form = goodTarget("usdt:" + p + ":" + n.name);
        EXPECT_EQ(short_form.file_offset, t.file_offset);
        EXPECT_EQ(t.file_offset, expectedOffset(loads, n.location).value());
        EXPECT_EQ(t.ref_ctr_offset, n.semaphore ? expectedOffset(loads, n.semaphore).value() : 0u);
        EXPECT_EQ(t.usdt_provider, "fx");
        EXPECT_EQ(t.kind, SpecKind::Usdt);
        EXPECT_FALSE(t.usdt_args.empty());
        EXPECT_THAT(t.how, HasSubstr("semaphore"));
    }
    auto e = badTarget("usdt:" + p + ":fx:nope", ENOENT);
    EXPECT_THAT(e.message, HasSubstr("fx:plain"));
    badTarget("usdt:" + std::string(FX_PIE_PATH) + ":fx:plain", ENOENT);
}

// Without capstone an offset inside a function cannot be checked: it is refused, naming the
// library, rather than armed unchecked. Offset 0 needs no decoder. In a fresh process (the
// death-test child), where capstone was not loaded yet.
TEST(UserTargetDeathTest, OffsetsAreRefusedWithoutTheDecoder) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string path = allFixtures().front().path;
    EXPECT_EXIT(
        {
            ::setenv("PROBECTL_CAPSTONE_LIBRARY", "/nonexistent/libcapstone.so.4", 1);
            if (!resolve("uprobe:" + path + ":fx_work"))
                _exit(3);
            auto r = resolve("uprobe:" + path + ":fx_work+1");
            if (r)
                _exit(4);
            fprintf(stderr, "[%d] %s\n", r.error().err, r.error().describe().c_str());
            _exit(1);
        },
        ::testing::ExitedWithCode(1),
        "\\[" + std::to_string(ELIBACC) +
            "\\] uprobe:.*:fx_work\\+1: checking instruction boundaries needs the capstone "
            "disassembler library, /nonexistent/libcapstone.so.4");
}
