// ElfResolver on the fixtures the build compiled: every number is checked against readelf.
#include "probectl/elf_resolver.hpp"

#include <gelf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "probectl/library_path.hpp"
#include "readelf_util.hpp"

using namespace probectl;
using namespace probectl::test;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

namespace {

ElfResolver openOk(const std::string& path) {
    auto r = ElfResolver::open(path);
    if (!r)
        ADD_FAILURE() << path << ": " << r.error().message;
    return std::move(r).value();
}

std::string baseName(const std::string& readelf_name) {
    return readelf_name.substr(0, readelf_name.find('@'));
}

const ElfSymbol* one(const ElfResolver& elf, std::string_view name) {
    auto v = elf.functionsNamed(name);
    EXPECT_EQ(v.size(), 1u) << name;
    return v.size() == 1 ? v[0] : nullptr;
}

std::vector<std::string> names(const std::vector<const ElfSymbol*>& v) {
    std::vector<std::string> out;
    for (auto* s : v)
        out.push_back(s->name);
    return out;
}

}  // namespace

TEST(ElfResolver, SegmentsMatchReadelf) {
    for (const auto& fx : allFixtures()) {
        SCOPED_TRACE(fx.name);
        auto elf = openOk(fx.path);
        auto loads = readelfLoads(fx.path);
        ASSERT_EQ(elf.loadSegments().size(), loads.size());
        for (std::size_t i = 0; i < loads.size(); ++i) {
            EXPECT_EQ(elf.loadSegments()[i].vaddr, loads[i].vaddr);
            EXPECT_EQ(elf.loadSegments()[i].offset, loads[i].offset);
            EXPECT_EQ(elf.loadSegments()[i].filesz, loads[i].filesz);
            EXPECT_EQ(elf.loadSegments()[i].memsz, loads[i].memsz);
            EXPECT_EQ(elf.loadSegments()[i].executable(),
                      loads[i].flags.find('E') != std::string::npos);
        }
    }
}

// The core promise: file offset = st_value - p_vaddr + p_offset, for every function of
// every layout (ET_EXEC at two bases, PIE, shared library, stripped, lld).
TEST(ElfResolver, EveryFunctionOffsetMatchesReadelf) {
    for (const auto& fx : allFixtures()) {
        SCOPED_TRACE(fx.name);
        auto elf = openOk(fx.path);
        auto loads = readelfLoads(fx.path);
        std::size_t checked = 0;
        for (const auto& rs : readelfSymbols(fx.path)) {
            if ((rs.type != "FUNC" && rs.type != "IFUNC") || rs.ndx == "UND" || rs.ndx == "ABS")
                continue;
            const std::string name = baseName(rs.name);
            auto it = std::find_if(
                elf.symbols().begin(), elf.symbols().end(),
                [&](const ElfSymbol& s) { return s.name == name && s.value == rs.value; });
            ASSERT_NE(it, elf.symbols().end()) << rs.name;
            EXPECT_EQ(it->size, rs.size) << rs.name;
            EXPECT_EQ(it->isIfunc(), rs.type == "IFUNC") << rs.name;
            auto want = expectedOffset(loads, rs.value);
            ASSERT_TRUE(want) << rs.name;
            auto got = elf.fileOffset(rs.value);
            ASSERT_TRUE(got) << got.error().message;
            EXPECT_EQ(*got, *want) << rs.name;
            auto back = elf.elfAddress(*got);
            ASSERT_TRUE(back);
            EXPECT_EQ(*back, rs.value);
            ++checked;
        }
        EXPECT_GT(checked, 0u);
    }
}

TEST(ElfResolver, TypesAndBases) {
    auto nopie = openOk(FX_NOPIE_PATH);
    auto moved = openOk(FX_NOPIE_MOVED_PATH);
    auto pie = openOk(FX_PIE_PATH);
    auto lib = openOk(FXLIB_PATH);
    EXPECT_EQ(nopie.type(), ElfResolver::Type::Executable);
    EXPECT_EQ(moved.type(), ElfResolver::Type::Executable);
    EXPECT_EQ(pie.type(), ElfResolver::Type::SharedObject);
    EXPECT_EQ(lib.type(), ElfResolver::Type::SharedObject);
    // Same code at another base: different addresses, and the offsets still follow readelf.
    const ElfSymbol* a = one(nopie, "fx_work");
    const ElfSymbol* b = one(moved, "fx_work");
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->value, b->value);
    EXPECT_EQ(nopie.fileOffset(a->value).value(),
              expectedOffset(readelfLoads(FX_NOPIE_PATH), a->value).value());
    EXPECT_EQ(moved.fileOffset(b->value).value(),
              expectedOffset(readelfLoads(FX_NOPIE_MOVED_PATH), b->value).value());
    EXPECT_FALSE(nopie.buildId().empty());
}

TEST(ElfResolver, LldLayoutHasVaddrNotEqualOffset) {
    if (lldFixture().empty())
        GTEST_SKIP() << "clang/lld not found at configure time";
    auto elf = openOk(lldFixture());
    bool shifted = false;
    for (const auto& s : elf.loadSegments())
        shifted = shifted || (s.executable() && s.vaddr != s.offset);
    EXPECT_TRUE(shifted) << "lld's executable segment should have p_vaddr != p_offset";
    const ElfSymbol* w = one(elf, "fx_work");
    ASSERT_TRUE(w);
    EXPECT_EQ(elf.fileOffset(w->value).value(),
              expectedOffset(readelfLoads(lldFixture()), w->value).value());
    EXPECT_NE(elf.fileOffset(w->value).value(), w->value);
}

TEST(ElfResolver, StrippedFallsBackToDynsym) {
    auto elf = openOk(FX_STRIPPED_PATH);
    EXPECT_THAT(elf.symbolSource(), HasSubstr(".dynsym"));
    EXPECT_TRUE(elf.debugFile().empty());
    const ElfSymbol* w = one(elf, "fx_work");
    ASSERT_TRUE(w);
    EXPECT_EQ(w->table, SymbolTable::Dynsym);
    EXPECT_GT(w->size, 0u);
    for (const auto& s : elf.symbols())
        EXPECT_NE(s.bind, STB_LOCAL) << s.name << ": .dynsym of an executable has no locals";
    // The unstripped twin has the same function at the same place.
    auto pie = openOk(FX_PIE_PATH);
    EXPECT_EQ(pie.symbolSource(), ".symtab");
}

TEST(ElfResolver, DuplicateLocalsAreAllReturnedWithTheirFiles) {
    auto elf = openOk(FX_DUP_PATH);
    auto v = elf.functionsNamed("helper");
    ASSERT_EQ(v.size(), 2u);
    EXPECT_NE(v[0]->value, v[1]->value);
    std::vector<std::string> files = {v[0]->file, v[1]->file};
    EXPECT_THAT(files, Contains("dup_a.c"));
    EXPECT_THAT(files, Contains("dup_b.c"));
    EXPECT_EQ(v[0]->section, ".text");
    EXPECT_EQ(v[0]->bind, STB_LOCAL);
}

TEST(ElfResolver, CxxNamesMangledAndDemangled) {
    auto elf = openOk(FX_CXX_PATH);
    const ElfSymbol* i = one(elf, "fx::twice(int)");
    ASSERT_TRUE(i);
    EXPECT_EQ(i->name, "_ZN2fx5twiceEi");
    EXPECT_EQ(i->demangled, "fx::twice(int)");
    EXPECT_EQ(one(elf, "_ZN2fx5twiceEi"), i);
    EXPECT_EQ(elf.functionsNamed("fx::twice").size(), 2u) << "two overloads";
    const ElfSymbol* d = one(elf, "fx::twice(double)");
    ASSERT_TRUE(d);
    EXPECT_NE(d->value, i->value);
    const ElfSymbol* add = one(elf, "fx::Counter::add");
    ASSERT_TRUE(add);
    EXPECT_EQ(add->demangled, "fx::Counter::add(long) const");
    EXPECT_TRUE(one(elf, "fx::only"));
    EXPECT_TRUE(elf.functionsNamed("twice").empty()) << "no match on a partial name";
}

// One spelling of a C++ name: blanks only between two words, cv-qualifiers after the type
// they qualify, as the demangler writes them.
TEST(ElfResolver, NormalizeCxxName) {
    EXPECT_EQ(normalizeCxxName("ns::g(const char *)"), "ns::g(char const*)");
    EXPECT_EQ(normalizeCxxName("ns::g(char const*)"), "ns::g(char const*)");
    EXPECT_EQ(normalizeCxxName("f(const char* const, int &)"), "f(char const*const,int&)");
    EXPECT_EQ(normalizeCxxName("f(const std::vector<const char*> &)"),
              "f(std::vector<char const*>const&)");
    EXPECT_EQ(normalizeCxxName("f(std::vector<char const*, std::allocator<char const*> > const&)"),
              "f(std::vector<char const*,std::allocator<char const*>>const&)");
    EXPECT_EQ(normalizeCxxName("f(const unsigned long *)"), "f(unsigned long const*)");
    EXPECT_EQ(normalizeCxxName("A::get(int) const"), "A::get(int)const");
    EXPECT_EQ(normalizeCxxName("(anonymous namespace)::f(int)"), "(anonymous namespace)::f(int)");
    EXPECT_EQ(normalizeCxxName("main"), "main");
    EXPECT_EQ(cxxNameKey("ns::g(char const*)"), "ns::g");
    EXPECT_EQ(cxxNameKey("char const*sum<char const*>(char const*)"), "sum");
    EXPECT_EQ(cxxNameKey("(anonymous namespace)::f(int)"), "");
}

// Overloads that differ in a pointer's const: each signature names its own function, in the
// demangler's spelling ("fx::g(char const*)") and as people write it ("fx::g(const char *)").
// "fx::g(const char*)" found nothing.
TEST(ElfResolver, CxxPointerOverloadsBySignature) {
    auto elf = openOk(FX_CXX_PATH);
    const ElfSymbol* m = one(elf, "fx::g(char*)");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->name, "_ZN2fx1gEPc");
    const ElfSymbol* c = one(elf, "fx::g(char const*)");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->name, "_ZN2fx1gEPKc");
    for (const char* written :
         {"fx::g(const char*)", "fx::g(const char *)", "fx::g( const  char* )",
          "fx::g(char const *)", "fx :: g(const char*)"})
        EXPECT_EQ(one(elf, written), c) << written;
    EXPECT_EQ(one(elf, "fx::g(char *)"), m);
    EXPECT_EQ(elf.functionsNamed("fx::g").size(), 2u) << "two overloads";
    EXPECT_EQ(one(elf, "sum<long>(long,long)"), one(elf, "sum<long>")) << "blanks after ','";
}

// The spellings of one builtin integer type are one type, in the demangler's spelling
// ("unsigned" is "unsigned int", "long unsigned int" is "unsigned long"); signed char is
// not char. "fx::t(unsigned)" found nothing.
TEST(ElfResolver, NormalizeCxxNameBuiltinTypes) {
    const std::pair<const char*, const char*> same[] = {
        {"f(unsigned)", "f(unsigned int)"},
        {"f(unsigned int)", "f(unsigned int)"},
        {"f(int unsigned)", "f(unsigned int)"},
        {"f(signed)", "f(int)"},
        {"f(signed int)", "f(int)"},
        {"f(long int)", "f(long)"},
        {"f(signed long)", "f(long)"},
        {"f(short int)", "f(short)"},
        {"f(unsigned short int)", "f(unsigned short)"},
        {"f(long unsigned int)", "f(unsigned long)"},
        {"f(unsigned long int)", "f(unsigned long)"},
        {"f(long long int)", "f(long long)"},
        {"f(long int long)", "f(long long)"},
        {"f(unsigned long long int)", "f(unsigned long long)"},
        {"f(long double)", "f(long double)"},
        {"f(char signed)", "f(signed char)"},
        {"f(unsigned char)", "f(unsigned char)"},
        {"f(const unsigned *)", "f(unsigned int const*)"},
        {"f(unsigned const*)", "f(unsigned int const*)"},
        {"f(std::vector<unsigned>&)", "f(std::vector<unsigned int>&)"},
        {"A::operator unsigned()", "A::operator unsigned int()"},
        {"f(char const*)", "f(char const*)"},
        {"f(const char *)", "f(char const*)"},
        {"f(long_name, int_t)", "f(long_name,int_t)"},
    };
    for (const auto& [written, want] : same)
        EXPECT_EQ(normalizeCxxName(written), want) << written;
    EXPECT_NE(normalizeCxxName("f(signed char)"), normalizeCxxName("f(char)"));
    EXPECT_NE(normalizeCxxName("f(unsigned char)"), normalizeCxxName("f(char)"));
    EXPECT_NE(normalizeCxxName("f(long)"), normalizeCxxName("f(long long)"));
}

// Each spelling of an integer type finds the overload of that type, and only it.
TEST(ElfResolver, CxxOverloadsByIntegerTypeSpellings) {
    auto elf = openOk(FX_CXX_PATH);
    const std::pair<const char*, const char*> cases[] = {
        {"fx::t(unsigned)", "_ZN2fx1tEj"},      {"fx::t(unsigned int)", "_ZN2fx1tEj"},
        {"fx::t(long int)", "_ZN2fx1tEl"},      {"fx::t(long)", "_ZN2fx1tEl"},
        {"fx::t(short int)", "_ZN2fx1tEs"},     {"fx::t(long unsigned int)", "_ZN2fx1tEm"},
        {"fx::t(unsigned long)", "_ZN2fx1tEm"}, {"fx::t(long long int)", "_ZN2fx1tEx"},
        {"fx::t(signed char)", "_ZN2fx1tEa"},   {"fx::t(char)", "_ZN2fx1tEc"},
    };
    for (const auto& [written, symbol] : cases) {
        const ElfSymbol* s = one(elf, written);
        ASSERT_TRUE(s) << written;
        EXPECT_EQ(s->name, symbol) << written;
    }
    EXPECT_EQ(elf.functionsNamed("fx::t").size(), 7u) << "seven overloads";
}

// Operators are found by their names, with the parameters and without, whatever brackets
// their symbol has: "operator()" is no parameter list, "operator[]" no glob, "operator<" not
// "operator<<". "fx::Vec::operator()" found nothing.
TEST(ElfResolver, CxxOperatorsByName) {
    auto elf = openOk(FX_CXX_PATH);
    const std::pair<const char*, const char*> cases[] = {
        {"fx::Vec::operator[](unsigned long)", "_ZN2fx3VecixEm"},
        {"fx::Vec::operator[](unsigned long) const", "_ZNK2fx3VecixEm"},
        {"fx::Vec::operator[](unsigned long int)const", "_ZNK2fx3VecixEm"},
        {"fx::Vec::operator()(int) const", "_ZNK2fx3VecclEi"},
        {"fx::Vec::operator()", "_ZNK2fx3VecclEi"},
        {"fx::Vec::operator ()", "_ZNK2fx3VecclEi"},
        {"fx::Vec::operator<(const fx::Vec&) const", "_ZNK2fx3VecltERKS0_"},
        {"fx::Vec::operator<", "_ZNK2fx3VecltERKS0_"},
        {"fx::Vec::operator<<", "_ZN2fx3VeclsEl"},
        {"fx::Vec::operator<<(long)", "_ZN2fx3VeclsEl"},
        {"fx::Vec::operator->*", "_ZNK2fx3VecpmEl"},
        {"fx::Vec::operator->*(long) const", "_ZNK2fx3VecpmEl"},
        {"fx::Vec::operator new[]", "_ZN2fx3VecnaEm"},
        {"fx::Vec::operator new[](unsigned long)", "_ZN2fx3VecnaEm"},
        {"fx::Vec::operator new [](unsigned long)", "_ZN2fx3VecnaEm"},
        {"fx::Vec::operator delete[](void*)", "_ZN2fx3VecdaEPv"},
    };
    for (const auto& [written, symbol] : cases) {
        const ElfSymbol* s = one(elf, written);
        ASSERT_TRUE(s) << written;
        EXPECT_EQ(s->name, symbol) << written;
    }
    EXPECT_EQ(elf.functionsNamed("fx::Vec::operator[]").size(), 2u) << "const and not";
}

// A function template's demangled name carries its return type ("int sum<int>(int, int)"):
// it is found, as a plain function is, by its name with or without the parameters. Neither
// "sum<int>" nor a glob found it.
TEST(ElfResolver, CxxTemplateFunctionsByNameAndGlob) {
    auto elf = openOk(FX_CXX_PATH);
    const ElfSymbol* i = one(elf, "sum<int>");
    ASSERT_TRUE(i);
    EXPECT_EQ(i->demangled, "int sum<int>(int, int)");
    EXPECT_EQ(one(elf, "sum<int>(int, int)"), i);
    EXPECT_EQ(one(elf, "int sum<int>(int, int)"), i);
    EXPECT_EQ(one(elf, i->name), i);
    const ElfSymbol* l = one(elf, "sum<long>");
    ASSERT_TRUE(l);
    EXPECT_NE(l->value, i->value);
    const ElfSymbol* plain = one(elf, "sum");
    ASSERT_TRUE(plain) << "the plain sum(int, int) alone: sum<int> is another name";
    EXPECT_EQ(plain->demangled, "sum(int, int)");

    std::vector<std::string> matched;
    for (const ElfSymbol& s : elf.symbols())
        if (s.isFunction() && s.matchesGlob("sum*"))
            matched.push_back(s.demangled);
    EXPECT_THAT(matched, UnorderedElementsAre("int sum<int>(int, int)",
                                              "long sum<long>(long, long)", "sum(int, int)"));
    EXPECT_TRUE(i->matchesGlob("sum<int>"));
    EXPECT_TRUE(i->matchesGlob("sum<*>(int, int)"));
    EXPECT_TRUE(i->matchesGlob("_Z3sum*"));
    EXPECT_FALSE(l->matchesGlob("sum<int>*"));
    EXPECT_TRUE(one(elf, "fx::twice(int)")->matchesGlob("fx::tw*")) << "plain C++ names too";
}

TEST(ElfResolver, WithoutReturnType) {
    EXPECT_EQ(withoutReturnType("int sum<int>(int, int)"), "sum<int>(int, int)");
    EXPECT_EQ(withoutReturnType("std::vector<int, std::allocator<int> > ns::make<int>(int)"),
              "ns::make<int>(int)");
    EXPECT_EQ(withoutReturnType("unsigned long ns::S::get<long>() const"),
              "ns::S::get<long>() const");
    EXPECT_EQ(withoutReturnType("int (anonymous namespace)::f<int>(int)"),
              "(anonymous namespace)::f<int>(int)");
    EXPECT_EQ(withoutReturnType("bool operator< <int>(X<int> const&, X<int> const&)"),
              "operator< <int>(X<int> const&, X<int> const&)");
    EXPECT_EQ(withoutReturnType("void S::operator()<int>(int)"), "S::operator()<int>(int)");
    EXPECT_EQ(withoutReturnType("int f<int>(int) [clone .isra.0]"), "f<int>(int) [clone .isra.0]");
    EXPECT_EQ(withoutReturnType("std::string g<int>[abi:cxx11](int)"), "g<int>[abi:cxx11](int)");
    // Names without a return type are left as they are.
    for (const char* d : {"ns::f(int)", "sum(int, int)", "main", "S::operator new(unsigned long)",
                          "S::operator std::vector<int, std::allocator<int> >()",
                          "ns::A<int>::m(int) const", "non-virtual thunk to D::f()"})
        EXPECT_EQ(withoutReturnType(d), d);
}

TEST(ElfResolver, FunctionAtNamesAddressesInside) {
    auto elf = openOk(FX_PIE_PATH);
    const ElfSymbol* w = one(elf, "fx_work");
    ASSERT_TRUE(w);
    EXPECT_EQ(elf.functionAt(w->value), w);
    EXPECT_EQ(elf.functionAt(w->value + w->size - 1), w);
    const ElfSymbol* after = elf.functionAt(w->value + w->size);
    EXPECT_TRUE(after == nullptr || after->name != "fx_work");
}

TEST(ElfResolver, FixtureIfuncImplementations) {
    auto elf = openOk(FX_PIE_PATH);
    const ElfSymbol* f = one(elf, "fx_ifunc");
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->isIfunc());
    auto impls = names(elf.ifuncImplementations(*f));
    EXPECT_THAT(impls, Contains("fx_ifunc_generic"));
    EXPECT_THAT(impls, Contains("fx_ifunc_fast"));
    EXPECT_THAT(impls, Not(Contains("fx_ifunc_resolver"))) << "the resolver is not an impl";
}

TEST(ElfResolver, GlibcIfuncsAndVersions) {
    auto lib = findLibrary("libc.so.6");
    ASSERT_TRUE(lib) << lib.error().message;
    auto elf = openOk(lib->path);
    // memcpy@@GLIBC_2.14 is the IFUNC; memcpy@GLIBC_2.2.5 is an old plain version.
    const ElfSymbol* m = one(elf, "memcpy");
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->isIfunc());
    EXPECT_EQ(m->version, "GLIBC_2.14");
    EXPECT_FALSE(m->hidden_version);
    const ElfSymbol* old = one(elf, "memcpy@GLIBC_2.2.5");
    ASSERT_TRUE(old);
    EXPECT_FALSE(old->isIfunc());
    EXPECT_TRUE(old->hidden_version);
    const ElfSymbol* s = one(elf, "strlen");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->isIfunc());
    if (elf.debugFile().empty())
        GTEST_SKIP() << "no debug file for " << lib->path << " (install libc6-dbg)";
    EXPECT_THAT(elf.symbolSource(), HasSubstr(".build-id"));
    auto mi = names(elf.ifuncImplementations(*m));
    EXPECT_THAT(mi, Contains("__memcpy_avx_unaligned"));
    EXPECT_THAT(mi, Contains("__memcpy_sse2_unaligned"));
    for (const auto& n : mi)
        EXPECT_FALSE(n.starts_with("__memcpy_chk")) << n << " belongs to __memcpy_chk";
    auto si = names(elf.ifuncImplementations(*s));
    EXPECT_THAT(si, Contains("__strlen_avx2"));
    EXPECT_THAT(si, Contains("__strlen_sse2"));
}

TEST(ElfResolver, OffsetErrorsNameTheAddress) {
    auto elf = openOk(FX_NOPIE_PATH);
    auto r = elf.fileOffset(0x10);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EINVAL);
    EXPECT_THAT(r.error().message, HasSubstr("0x10"));
    EXPECT_THAT(r.error().message, HasSubstr("no PT_LOAD"));
    // The tail of the data segment is .bss: an address without file bytes.
    const auto& rw = elf.loadSegments().back();
    ASSERT_GT(rw.memsz, rw.filesz);
    auto bss = elf.fileOffset(rw.vaddr + rw.filesz);
    ASSERT_FALSE(bss);
    EXPECT_THAT(bss.error().message, HasSubstr(".bss"));
}

TEST(ElfResolver, OpenErrors) {
    auto missing = ElfResolver::open("/nonexistent/probectl-fixture");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().err, ENOENT);
    EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/probectl-fixture"));
    auto text = ElfResolver::open(PROBECTL_FIXTURES "/kallsyms.txt");
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().err, ENOEXEC);
}

TEST(ElfDemangle, NamesAndParameterLists) {
    EXPECT_EQ(demangle("_ZN2fx5twiceEi"), "fx::twice(int)");
    EXPECT_EQ(demangle("main"), "main");
    EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid");
    EXPECT_EQ(withoutParameters("ns::S::m(int) const"), "ns::S::m");
    EXPECT_EQ(withoutParameters("f(void (*)(int))"), "f");
    EXPECT_EQ(withoutParameters("plain"), "plain");
}
