// UserResolveCache for a glob's many names: each file is read once for the command (its
// symbols, its DWARF, its exception use), and what comes out is what reading it anew for
// every name gave. ElfResolver::functionsNamed answers from an index as a scan of the table
// did.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "elf/elf_handle.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/expand.hpp"
#include "probectl/user_target.hpp"

using namespace probectl;

namespace {

ProbeSpec spec(const std::string& text) {
    auto s = parseProbeSpec(text);
    EXPECT_TRUE(s) << text;
    return s ? *s : ProbeSpec{};
}

// A fixture copied to a path of its own, so that the opens counted are this test's.
std::string copyOf(const std::string& fixture, const std::string& name) {
    const std::string path = ::testing::TempDir() + name;
    std::filesystem::copy_file(fixture, path, std::filesystem::copy_options::overwrite_existing);
    return path;
}

// Every name of the glob, each resolved: with the cache given, as attaching does.
std::size_t resolveEveryName(const std::string& glob,
                             const std::shared_ptr<UserResolveCache>& cache) {
    SpecExpander x(0, nullptr, cache);
    auto names = x.expand(spec(glob));
    EXPECT_TRUE(names) << names.error().message;
    if (!names)
        return 0;
    UserResolveOptions ro;
    ro.cache = cache;
    for (const ProbeSpec& s : names->specs)
        EXPECT_TRUE(resolveUserSpecAll(s, ro)) << s.text;
    return names->specs.size();
}

std::string describe(const Result<std::vector<UserTarget>>& r) {
    if (!r)
        return "error " + std::to_string(r.error().err) + ": " + r.error().message;
    std::string s;
    for (const UserTarget& t : *r)
        s += t.path + " " + std::to_string(t.file_offset) + " " + std::to_string(t.vaddr) + " " +
             std::to_string(t.ref_ctr_offset) + " " + t.symbol + "+" +
             std::to_string(t.symbol_offset) + " [" + t.inlined_from + " " + t.call_site +
             "] exceptions: " + t.exception_use + "\nnote: " + t.note + "\nhow: " + t.how + "\n";
    return s;
}

}  // namespace

// Each name a glob matched read its file again to be resolved (about 0.1 s for libc with its
// debug file, whose DWARF was decompressed anew each time): `count 'uprobe:libc:str*'` took
// 13 s to start. With one cache a file is opened once, whatever is read of it afterwards.
TEST(UserResolveCache, AGlobOfManyNamesReadsItsFileOnce) {
    const std::string path = copyOf(FX_INLINE_CXX_PATH, "resolve-cache-once");
    ASSERT_EQ(elfOpensOf(path), 0u);
    auto cache = std::make_shared<UserResolveCache>();
    const std::size_t names = resolveEveryName("uprobe:" + path + ":'*'", cache);
    EXPECT_GE(names, 5u);
    // A return probe reads whether the file unwinds exceptions: from the same handle.
    EXPECT_EQ(resolveEveryName("uretprobe:" + path + ":'*'", cache), names);
    EXPECT_EQ(elfOpensOf(path), 1u) << names << " names";

    // libc, and its debug file (its .symtab and DWARF) where one is installed.
    auto libc = findUserFile("libc");
    ASSERT_TRUE(libc) << libc.error().message;
    auto elf = ElfResolver::open(libc->path);
    ASSERT_TRUE(elf);
    const std::size_t libc_before = elfOpensOf(libc->path);
    const std::size_t debug_before = elfOpensOf(elf->debugFile());
    EXPECT_GE(resolveEveryName("uprobe:libc:str*", std::make_shared<UserResolveCache>()), 20u);
    EXPECT_EQ(elfOpensOf(libc->path) - libc_before, 1u);
    if (!elf->debugFile().empty()) {
        EXPECT_EQ(elfOpensOf(elf->debugFile()) - debug_before, 1u) << elf->debugFile();
    }
}

// The names, refusals and resolutions of a glob with the cache are those of reading the file
// anew for each (the way without a cache), over libc and the test programs.
TEST(UserResolveCache, AGlobResolvesAsWithoutIt) {
    const std::vector<std::string> globs = {
        "uprobe:libc:str*",
        "uretprobe:libc:mem*",
        std::string("uprobe:") + FX_INLINE_CXX_PATH + ":'*'",
        std::string("uretprobe:") + FX_INLINE_PATH + ":'*'",
        std::string("uprobe:") + FX_INLINE_PATH + ":'*' $arg1",
        std::string("uprobe:") + FX_DUP_PATH + ":'*'",
        std::string("uprobe:") + FX_CXX_PATH + ":'*'",
        std::string("uprobe:") + FX_STRIPPED_PATH + ":'*'",
    };
    auto cache = std::make_shared<UserResolveCache>();
    for (const std::string& glob : globs) {
        SCOPED_TRACE(glob);
        auto kept = SpecExpander(0, nullptr, cache).expand(spec(glob));
        auto anew = SpecExpander(0, nullptr).expand(spec(glob));
        ASSERT_TRUE(kept) << kept.error().message;
        ASSERT_TRUE(anew) << anew.error().message;
        ASSERT_EQ(kept->specs.size(), anew->specs.size());
        ASSERT_EQ(kept->skipped.size(), anew->skipped.size());
        for (std::size_t i = 0; i < kept->skipped.size(); ++i) {
            EXPECT_EQ(kept->skipped[i].name, anew->skipped[i].name);
            EXPECT_EQ(kept->skipped[i].reason, anew->skipped[i].reason);
            EXPECT_EQ(kept->skipped[i].detail, anew->skipped[i].detail);
        }
        UserResolveOptions ro;
        ro.cache = cache;
        for (std::size_t i = 0; i < kept->specs.size(); ++i) {
            EXPECT_EQ(kept->specs[i].str(), anew->specs[i].str());
            EXPECT_EQ(describe(resolveUserSpecAll(kept->specs[i], ro)),
                      describe(resolveUserSpecAll(anew->specs[i])))
                << kept->specs[i].text;
        }
    }
}

namespace {

// functionsNamed as it was: a scan of every symbol.
std::vector<const ElfSymbol*> scanNamed(const ElfResolver& elf, std::string_view name) {
    std::string_view base = name;
    std::string_view want_version;
    bool want_hidden = false;
    if (auto at = name.find('@'); at != std::string_view::npos && at > 0) {
        base = name.substr(0, at);
        want_hidden = !name.substr(at).starts_with("@@");
        want_version = name.substr(at + (want_hidden ? 1 : 2));
    }
    const bool has_params = hasParameterList(base);
    const std::string want = normalizeCxxName(base);
    const std::string_view key = cxxNameKey(want);
    std::vector<const ElfSymbol*> out;
    for (const auto& s : elf.symbols()) {
        if (!s.isFunction())
            continue;
        bool match = s.name == base || s.demangled == base;
        if (!match && s.demangled != s.name && s.demangled.find(key) != std::string::npos)
            match = cxxNameMatches(s.demangled, want, has_params);
        if (!match)
            continue;
        if (want_version.empty() ? s.hidden_version
                                 : (s.version != want_version || s.hidden_version != want_hidden))
            continue;
        if (std::none_of(out.begin(), out.end(),
                         [&](const ElfSymbol* o) { return o->value == s.value; }))
            out.push_back(&s);
    }
    return out;
}

}  // namespace

// functionsNamed was a scan of the table, once per name a glob matched (and again to tell a
// duplicate): quadratic in the names. Its index answers every spelling of every function's
// name (C, mangled, demangled with and without return type and parameters, versioned, a
// builtin type's word, a bare identifier) as the scan does, in C and C++ files.
TEST(ElfResolverIndex, FunctionsNamedFindsWhatAScanOfTheTableFinds) {
    std::vector<std::string> files = {FX_CXX_PATH, FX_INLINE_CXX_PATH, FX_DUP_PATH,
                                      FX_STRIPPED_PATH};
    for (const char* lib : {"libc", "libstdc++"})
        if (auto f = findUserFile(lib))
            files.push_back(f->path);
    for (const std::string& file : files) {
        SCOPED_TRACE(file);
        auto elf = ElfResolver::open(file);
        ASSERT_TRUE(elf) << elf.error().message;
        std::vector<std::string> names = {"int", "long",       "unsigned long",
                                          "",    "operator()", "(anonymous namespace)::f",
                                          "::",  "main"};
        // Every symbol of a small file; a sample of a library's thousands (the scan is slow).
        std::size_t functions = 0;
        for (const ElfSymbol& s : elf->symbols())
            functions += s.isFunction();
        const std::size_t step = std::max<std::size_t>(1, functions / 600);
        std::size_t n = 0;
        for (const ElfSymbol& s : elf->symbols()) {
            if (!s.isFunction() || n++ % step != 0)
                continue;
            const std::string plain = withoutReturnType(s.demangled);
            for (const std::string& x :
                 {s.name, s.demangled, s.displayName(), plain, withoutParameters(plain),
                  withoutParameters(s.demangled), normalizeCxxName(plain),
                  std::string(cxxNameKey(normalizeCxxName(plain))), s.name + "@" + s.version})
                names.push_back(x);
        }
        for (const std::string& name : names)
            EXPECT_EQ(elf->functionsNamed(name), scanNamed(*elf, name)) << name;
    }
}
