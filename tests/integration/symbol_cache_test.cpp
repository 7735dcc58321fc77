// The kallsyms cache on a real kernel: a table from the cache resolves as /proc/kallsyms
// does, and loading or unloading a module (probectl.ko itself) makes the cache stale, so
// the new module's functions resolve and a gone module's do not.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "itest_util.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/session.hpp"

using namespace probectl;
namespace fs = std::filesystem;

namespace {

// A probectl.ko function only an aggregation read-out calls: a trace session never runs it,
// so a kprobe on it never fires inside the module's own handlers.
constexpr const char* kModuleFunction = "probectl_nl_aggr_get_dumpit";

// Points the cache at a fresh directory for one test, and back after it.
class SymbolCacheVm : public ::testing::Test {
  protected:
    void SetUp() override {
        dir = fs::path(testing::TempDir()) / ("symcache-itest-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        if (const char* v = std::getenv("PROBECTL_SYMBOL_CACHE"))
            saved = v;
        ::setenv("PROBECTL_SYMBOL_CACHE", dir.c_str(), 1);
    }
    void TearDown() override {
        if (saved)
            ::setenv("PROBECTL_SYMBOL_CACHE", saved->c_str(), 1);
        else
            ::unsetenv("PROBECTL_SYMBOL_CACHE");
        fs::remove_all(dir);
    }
    std::string file() const { return (dir / "kallsyms.cache").string(); }
    ino_t inode() const {
        struct stat st;
        return ::stat(file().c_str(), &st) == 0 ? st.st_ino : 0;
    }

    fs::path dir;
    std::optional<std::string> saved;
};

std::string describe(const Result<Resolution>& r) {
    if (!r)
        return "error " + std::to_string(r.error().err) + ": " + r.error().message;
    return r->request.symbol + " " + std::to_string(r->address) + " " + r->module + " +" +
           std::to_string(r->symbol_offset) + " flags " + std::to_string(r->request.flags);
}

TEST_F(SymbolCacheVm, ResolvesAsKallsymsDoes) {
    auto first = KernelSymbols::loadCurrent();  // writes the cache
    ASSERT_TRUE(first.ok()) << first.error().message;
    const ino_t written = inode();
    ASSERT_NE(written, 0u) << "no cache file written at " << file();
    auto cached = KernelSymbols::loadCurrent();  // reads it
    ASSERT_TRUE(cached.ok());
    EXPECT_EQ(inode(), written) << "the second load rewrote the cache instead of using it";
    EXPECT_FALSE(cached->complete());
    auto plain = KernelSymbols::load();
    ASSERT_TRUE(plain.ok());

    // Every name through the cache file's index (a fresh table: nothing has built the
    // whole one) gives the entries /proc/kallsyms has, less the dynamic ones.
    auto indexed = KernelSymbols::loadCurrent();
    ASSERT_TRUE(indexed.ok());
    for (const KernelSymbol& s : plain->symbols()) {
        if (s.module == "bpf" || s.module.starts_with("__builtin__"))
            continue;
        std::vector<const KernelSymbol*> want;
        for (const KernelSymbol* w : plain->lookup(s.name))
            if (w->module != "bpf" && !w->module.starts_with("__builtin__"))
                want.push_back(w);
        const auto got = indexed->lookup(s.name);
        ASSERT_EQ(got.size(), want.size()) << s.name;
        for (std::size_t j = 0; j < want.size(); ++j) {
            ASSERT_EQ(got[j]->addr, want[j]->addr) << s.name;
            ASSERT_EQ(got[j]->module, want[j]->module) << s.name;
        }
    }

    // The same symbols, in the same order, less the ones that change without a module load.
    std::size_t i = 0;
    for (const KernelSymbol& s : plain->symbols()) {
        if (s.module == "bpf" || s.module.starts_with("__builtin__"))
            continue;
        ASSERT_LT(i, cached->size());
        const KernelSymbol& c = cached->symbols()[i++];
        ASSERT_EQ(c.name, s.name);
        ASSERT_EQ(c.addr, s.addr) << s.name;
        ASSERT_EQ(c.type, s.type) << s.name;
        ASSERT_EQ(c.module, s.module) << s.name;
    }
    EXPECT_EQ(i, cached->size());
    EXPECT_EQ(cached->hasBlacklist(), plain->hasBlacklist());
    EXPECT_EQ(cached->addressesHidden(), plain->addressesHidden());

    const auto vfs = plain->lookup("vfs_read");
    ASSERT_EQ(vfs.size(), 1u);
    const std::string specs[] = {
        "kprobe:vfs_read",          "kretprobe:vfs_read",
        "kprobe:vfs_read+4",        "syscall:getppid",
        "kprobe:__x64_sys_getppid", std::string("kprobe:") + kModuleFunction,
        "kprobe:vfs_raed",        // unknown: the same suggestions
        "kprobe:do_int3",         // blacklisted
        "kprobe:jiffies",         // data
        "kprobe:__pfx_vfs_read",  // padding (6.2 and later; unknown before)
    };
    for (const std::string& text : specs) {
        auto spec = parseProbeSpec(text);
        ASSERT_TRUE(spec.ok()) << text;
        EXPECT_EQ(describe(cached->resolve(*spec)), describe(plain->resolve(*spec))) << text;
    }
}

TEST_F(SymbolCacheVm, ModuleUnloadAndLoadMakeTheCacheStale) {
    const char* ko = std::getenv("PROBECTL_KO");
    if (!ko)
        GTEST_SKIP() << "PROBECTL_KO not set (run by tests/vm/suite)";
    auto with = KernelSymbols::loadCurrent();
    ASSERT_TRUE(with.ok());
    ASSERT_EQ(with->lookup(kModuleFunction).size(), 1u);
    ASSERT_NE(inode(), 0u);

    ASSERT_EQ(std::system("rmmod probectl"), 0);
    // Twice: the first finds the old file stale, the second reads the one it wrote.
    for (int round = 0; round < 2; ++round) {
        auto without = KernelSymbols::loadCurrent();
        ASSERT_TRUE(without.ok());
        EXPECT_TRUE(without->lookup(kModuleFunction).empty()) << "round " << round;
        EXPECT_TRUE(without->lookup("vfs_read").size() == 1) << "round " << round;
    }

    const std::string insmod = std::string("insmod ") + ko;
    ASSERT_EQ(std::system(insmod.c_str()), 0);
    auto again = KernelSymbols::loadCurrent();
    ASSERT_TRUE(again.ok());
    const auto now = again->lookup(kModuleFunction);
    ASSERT_EQ(now.size(), 1u) << "the reloaded module's function is missing: stale cache";
    EXPECT_EQ(now[0]->module, "probectl");
    auto plain = KernelSymbols::load();
    ASSERT_TRUE(plain.ok());
    ASSERT_EQ(plain->lookup(kModuleFunction).size(), 1u);
    EXPECT_EQ(now[0]->addr, plain->lookup(kModuleFunction)[0]->addr);

    // A session resolves through the cache too: the kernel accepts the probe it sends.
    auto s = Session::open();
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto id = s->add(std::string("kprobe:") + kModuleFunction);
    EXPECT_TRUE(id.ok()) << id.error().message;
}

}  // namespace
