// The kallsyms cache (kernel/symbol_cache.hpp): its key follows boots, module loads and
// address visibility; a file is used only when it is the uid's own, safe, intact and under
// the same key; a round trip gives back the table the text parse gave.
#include "kernel/symbol_cache.hpp"
#include "fixture_text.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using probectl::test::fixtureText;
using namespace probectl;
using namespace probectl::detail;
namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::string readText(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class SymbolCacheTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root = fs::path(testing::TempDir()) /
               ("symcache-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root);
        fs::create_directories(root);
        src.boot_id = (root / "boot_id").string();
        src.modules = (root / "modules").string();
        src.sys_module = (root / "sys_module").string();
        src.kptr_restrict = (root / "kptr_restrict").string();
        src.perf_event_paranoid = (root / "perf_event_paranoid").string();
        writeText(src.boot_id, "0c6f1d8e-2b6a-4d4e-9a53-1f0e1b2c3d4e\n");
        writeText(src.kptr_restrict, "0\n");
        writeText(src.perf_event_paranoid, "2\n");
        setModules(
            "my_module 16384 0 - Live 0xffffffffc0a01000 (OE)\n"
            "other 20480 1 my_module, Live 0xffffffffc0b00000\n");
        // A note as sysfs shows it: namesz, descsz, type, "GNU\0", the id.
        setBuildId("my_module", std::string("\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00"
                                            "GNU\x00\x01\x02\x03\x04",
                                            20));
        setBuildId("other", std::string("\x05\x06\x07\x08", 4));
        dir = (root / "cache").string();
        auto t = KernelSymbols::fromText(fixtureText("kallsyms.txt"), fixtureText("blacklist.txt"));
        ASSERT_TRUE(t.ok()) << t.error().message;
        table = std::move(*t);
    }
    void TearDown() override { fs::remove_all(root); }

    void setModules(const std::string& text) { writeText(src.modules, text); }
    void setBuildId(const std::string& module, const std::string& bytes) {
        writeText(fs::path(src.sys_module) / module / "notes" / ".note.gnu.build-id", bytes);
    }
    std::string key() {
        auto k = symbolCacheKey(src);
        EXPECT_TRUE(k.has_value());
        return k.value_or("");
    }
    std::string file() const { return dir + "/" + std::string(kSymbolCacheFile); }
    // Writes the fixture's table under the current key; returns the key.
    std::string store() {
        const std::string k = key();
        EXPECT_TRUE(writeSymbolCache(dir, k, table));
        return k;
    }

    fs::path root;
    std::string dir;
    SymbolCacheSources src;
    KernelSymbols table;
};

TEST_F(SymbolCacheTest, RoundTripGivesTheParsedTable) {
    const std::string k = store();
    auto got = readSymbolCache(file(), k);
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->symbols.size(), table.size());
    EXPECT_EQ(got->malformed, table.malformedLines());
    for (std::size_t i = 0; i < table.size(); ++i) {
        const KernelSymbol& a = table.symbols()[i];
        const KernelSymbol& b = got->symbols[i];
        EXPECT_EQ(a.addr, b.addr) << a.name;
        EXPECT_EQ(a.type, b.type) << a.name;
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.module, b.module) << a.name;
    }
    // The rebuilt table answers as the parsed one: lookups, modules, blacklist, resolution.
    KernelSymbols again = KernelSymbols::fromSymbols(std::move(got->symbols),
                                                     fixtureText("blacklist.txt"), got->malformed);
    for (const KernelSymbol& s : table.symbols()) {
        EXPECT_EQ(again.lookup(s.name).size(), table.lookup(s.name).size()) << s.name;
        EXPECT_EQ(again.probeability(s), table.probeability(s)) << s.name;
        auto p = parseProbeSpec("kprobe:" + s.name);
        ASSERT_TRUE(p.ok());
        auto r1 = table.resolve(*p);
        auto r2 = again.resolve(*p);
        ASSERT_EQ(r1.ok(), r2.ok()) << s.name;
        if (r1.ok()) {
            EXPECT_EQ(r1->address, r2->address) << s.name;
            EXPECT_EQ(r1->module, r2->module) << s.name;
        } else {
            EXPECT_EQ(r1.error().message, r2.error().message);
        }
    }
    EXPECT_EQ(again.hasBlacklist(), table.hasBlacklist());
    EXPECT_EQ(again.addressesHidden(), table.addressesHidden());
}

std::string describe(const KernelSymbol* s) {
    return s->name + " " + std::to_string(s->addr) + " " + s->type + " [" + s->module + "]";
}

std::string describe(const Result<Resolution>& r) {
    if (!r)
        return "error " + std::to_string(r.error().err) + ": " + r.error().message;
    return r->request.symbol + " " + std::to_string(r->address) + " " + r->module + " +" +
           std::to_string(r->symbol_offset) + " flags " + std::to_string(r->request.flags);
}

const std::string kFixtureKallsyms = std::string(PROBECTL_FIXTURES) + "/kallsyms.txt";

TEST_F(SymbolCacheTest, MappedIndexAnswersAsTheParsedTable) {
    const std::string k = store();
    auto map = MappedSymbolCache::open(file(), k);
    ASSERT_TRUE(map);
    EXPECT_EQ(map->size(), table.size());
    EXPECT_EQ(map->malformed(), table.malformedLines());
    EXPECT_EQ(map->addressesHidden(), table.addressesHidden());
    // A fresh table for each pass, so the name lookups run before anything builds the whole.
    auto mapped =
        KernelSymbols::fromCacheFile(file(), k, fixtureText("blacklist.txt"), kFixtureKallsyms);
    ASSERT_TRUE(mapped.has_value());
    EXPECT_FALSE(mapped->complete());
    std::vector<std::string> names = {"no_such_symbol", "vfs_raed", ""};
    for (const KernelSymbol& s : table.symbols())
        names.push_back(s.name);
    for (const std::string& name : names) {
        const auto want = table.lookup(name);
        const auto got = mapped->lookup(name);
        ASSERT_EQ(got.size(), want.size()) << name;
        for (std::size_t i = 0; i < want.size(); ++i)
            EXPECT_EQ(describe(got[i]), describe(want[i])) << name;
        const auto at = map->find(name);
        ASSERT_TRUE(at.has_value()) << name;
        EXPECT_EQ(at->size(), want.size()) << name;
        for (const std::string& text : {"kprobe:" + name, "kretprobe:" + name}) {
            auto p = parseProbeSpec(text);
            if (!p)
                continue;
            EXPECT_EQ(describe(mapped->resolve(*p)), describe(table.resolve(*p))) << text;
        }
    }
    // Every address, and what needs the whole table.
    auto again =
        KernelSymbols::fromCacheFile(file(), k, fixtureText("blacklist.txt"), kFixtureKallsyms);
    ASSERT_TRUE(again.has_value());
    for (const KernelSymbol& s : table.symbols()) {
        for (std::uint64_t a : {s.addr, s.addr + 1}) {
            const KernelSymbol* want = table.symbolAt(a);
            const KernelSymbol* got = again->symbolAt(a);
            ASSERT_EQ(got == nullptr, want == nullptr) << s.name;
            if (want) {
                EXPECT_EQ(describe(got), describe(want)) << s.name;
            }
        }
        EXPECT_EQ(again->probeability(s), table.probeability(s)) << s.name;
    }
    EXPECT_EQ(again->size(), table.size());
    EXPECT_EQ(again->match("vfs_*").size(), table.match("vfs_*").size());
    EXPECT_EQ(again->suggest("vfs_raed"), table.suggest("vfs_raed"));
    EXPECT_EQ(again->hasBlacklist(), table.hasBlacklist());
}

TEST_F(SymbolCacheTest, DamagedIndexFallsBackToKallsyms) {
    const std::string k = store();
    const std::string good = readText(file());
    // Every index entry (the file's last 4 bytes per symbol) out of range: the head still
    // checks out, so the damage shows only at a lookup, which answers from the text.
    std::string bad = good;
    std::fill(bad.end() - static_cast<std::ptrdiff_t>(table.size() * 4), bad.end(), '\xff');
    writeText(file(), bad);
    auto map = MappedSymbolCache::open(file(), k);
    ASSERT_TRUE(map);
    EXPECT_FALSE(map->find(table.symbols().front().name).has_value());
    EXPECT_FALSE(map->all().has_value());
    auto mapped =
        KernelSymbols::fromCacheFile(file(), k, fixtureText("blacklist.txt"), kFixtureKallsyms);
    ASSERT_TRUE(mapped.has_value());
    for (const KernelSymbol& s : table.symbols()) {
        const auto want = table.lookup(s.name);
        const auto got = mapped->lookup(s.name);
        ASSERT_EQ(got.size(), want.size()) << s.name;
        for (std::size_t i = 0; i < want.size(); ++i)
            EXPECT_EQ(describe(got[i]), describe(want[i])) << s.name;
    }
    EXPECT_EQ(mapped->size(), table.size());
    // A damaged head: the file is not used at all.
    bad = good;
    bad[20] = static_cast<char>(bad[20] ^ 0x40);
    writeText(file(), bad);
    EXPECT_FALSE(KernelSymbols::fromCacheFile(file(), k, "", kFixtureKallsyms).has_value());
}

TEST_F(SymbolCacheTest, AnotherBootIsStale) {
    const std::string k = store();
    writeText(src.boot_id, "7d1e2f3a-0000-4000-8000-000000000001\n");
    const std::string k2 = key();
    EXPECT_NE(k, k2);
    EXPECT_FALSE(readSymbolCache(file(), k2).has_value());
    EXPECT_TRUE(readSymbolCache(file(), k).has_value());
}

TEST_F(SymbolCacheTest, ModuleLoadedOrUnloadedIsStale) {
    const std::string k = store();
    setModules(
        "my_module 16384 0 - Live 0xffffffffc0a01000 (OE)\n"
        "other 20480 1 my_module, Live 0xffffffffc0b00000\n"
        "fresh 8192 0 - Live 0xffffffffc0c00000\n");
    setBuildId("fresh", "\x0a\x0b");
    EXPECT_FALSE(readSymbolCache(file(), key()).has_value());
    setModules("my_module 16384 0 - Live 0xffffffffc0a01000 (OE)\n");
    EXPECT_FALSE(readSymbolCache(file(), key()).has_value());
    // Back to the list the file was written for: valid again.
    setModules(
        "my_module 16384 0 - Live 0xffffffffc0a01000 (OE)\n"
        "other 20480 1 my_module, Live 0xffffffffc0b00000\n");
    EXPECT_EQ(key(), k);
}

TEST_F(SymbolCacheTest, ModuleRebuiltInPlaceIsStale) {
    const std::string k = store();
    // Same name, size and address: only the build id shows another build was loaded.
    setBuildId("other", std::string("\x05\x06\x07\x09", 4));
    EXPECT_NE(key(), k);
    EXPECT_FALSE(readSymbolCache(file(), key()).has_value());
}

TEST_F(SymbolCacheTest, UseCountsDoNotInvalidate) {
    const std::string k = store();
    setModules(
        "my_module 16384 3 - Live 0xffffffffc0a01000 (OE)\n"
        "other 20480 0 - Live 0xffffffffc0b00000\n");
    EXPECT_EQ(key(), k);
}

TEST_F(SymbolCacheTest, AddressVisibilityIsInTheKey) {
    const std::string k = store();
    writeText(src.kptr_restrict, "2\n");
    EXPECT_NE(key(), k);
    writeText(src.kptr_restrict, "0\n");
    writeText(src.perf_event_paranoid, "1\n");
    EXPECT_NE(key(), k);
}

TEST_F(SymbolCacheTest, NoKeyWhileAModuleChangesOrWithoutFacts) {
    setModules("my_module 16384 0 - Loading 0xffffffffc0a01000 (OE)\n");
    EXPECT_FALSE(symbolCacheKey(src).has_value());
    setModules(
        "my_module 16384 0 - Live 0xffffffffc0a01000 (OE)\n"
        "nobuildid 4096 0 - Live 0xffffffffc0d00000\n");
    EXPECT_FALSE(symbolCacheKey(src).has_value());
    setModules("");
    EXPECT_TRUE(symbolCacheKey(src).has_value());
    fs::remove(src.boot_id);
    EXPECT_FALSE(symbolCacheKey(src).has_value());
}

TEST_F(SymbolCacheTest, DamagedFilesFallBack) {
    const std::string k = store();
    const std::string good = readText(file());
    ASSERT_GT(good.size(), 100u);
    // Truncated anywhere: header, records, names, checksum.
    for (std::size_t cut : {std::size_t{0}, std::size_t{10}, good.size() / 2, good.size() - 1}) {
        writeText(file(), good.substr(0, cut));
        EXPECT_FALSE(readSymbolCache(file(), k).has_value()) << "cut at " << cut;
    }
    // One byte changed in each region.
    for (std::size_t at : {std::size_t{3}, std::size_t{20}, good.size() / 2, good.size() - 20}) {
        std::string bad = good;
        bad[at] = static_cast<char>(bad[at] ^ 0x40);
        writeText(file(), bad);
        EXPECT_FALSE(readSymbolCache(file(), k).has_value()) << "byte " << at;
    }
    writeText(file(), "ffffffff81000000 T not a cache\n");
    EXPECT_FALSE(readSymbolCache(file(), k).has_value());
    // Extra bytes after a whole file.
    writeText(file(), good + "x");
    EXPECT_FALSE(readSymbolCache(file(), k).has_value());
    writeText(file(), good);
    EXPECT_TRUE(readSymbolCache(file(), k).has_value());
}

TEST_F(SymbolCacheTest, UnsafeFilesAreIgnored) {
    const std::string k = store();
    ASSERT_TRUE(readSymbolCache(file(), k).has_value());
    for (mode_t m : {0620, 0602, 0666}) {
        ASSERT_EQ(::chmod(file().c_str(), m), 0);
        EXPECT_FALSE(readSymbolCache(file(), k).has_value()) << std::oct << m;
    }
    ASSERT_EQ(::chmod(file().c_str(), 0600), 0);
    // A directory others may write to: they could have swapped the file.
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    EXPECT_FALSE(readSymbolCache(file(), k).has_value());
    EXPECT_FALSE(writeSymbolCache(dir, k, table));
    ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
    // A symbolic link is not followed.
    const std::string link = dir + "/link.cache";
    ASSERT_EQ(::symlink(file().c_str(), link.c_str()), 0);
    EXPECT_FALSE(readSymbolCache(link, k).has_value());
    // Another uid's file (only root can make one).
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(file().c_str(), 65534, 65534), 0);
        EXPECT_FALSE(readSymbolCache(file(), k).has_value());
    }
}

TEST_F(SymbolCacheTest, RewriteReplacesTheFile) {
    store();
    setModules("");
    const std::string k2 = key();
    ASSERT_TRUE(writeSymbolCache(dir, k2, table));
    EXPECT_TRUE(readSymbolCache(file(), k2).has_value());
    // No temporary file left behind.
    std::size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        (void)e;
        ++entries;
    }
    EXPECT_EQ(entries, 1u);
    struct stat st;
    ASSERT_EQ(::stat(file().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(SymbolCacheDir, EnvironmentChoosesThePlace) {
    const char* old = std::getenv("PROBECTL_SYMBOL_CACHE");
    const std::string saved = old ? old : "";
    ::setenv("PROBECTL_SYMBOL_CACHE", "/some/dir", 1);
    EXPECT_EQ(symbolCacheDir(), "/some/dir");
    ::setenv("PROBECTL_SYMBOL_CACHE", "", 1);
    EXPECT_EQ(symbolCacheDir(), "");
    ::unsetenv("PROBECTL_SYMBOL_CACHE");
    if (::geteuid() == 0)
        EXPECT_EQ(symbolCacheDir(), "/run/probectl");
    else
        EXPECT_NE(symbolCacheDir().find("probectl"), std::string::npos);
    if (old)
        ::setenv("PROBECTL_SYMBOL_CACHE", saved.c_str(), 1);
}

}  // namespace
