// Library lookup as the dynamic linker does it, checked against the libc this very test
// process has mapped (the dynamic linker's own answer).
#include "probectl/library_path.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "probectl/proc_maps.hpp"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

// The inode of the libc the dynamic linker loaded into this process.
std::uint64_t mappedLibcInode() {
    auto maps = ProcMaps::read(::getpid());
    EXPECT_TRUE(maps);
    auto files = maps ? maps->filesNamed("libc") : std::vector<std::string>{};
    EXPECT_EQ(files.size(), 1u);
    struct stat st {};
    if (!files.empty()) {
        EXPECT_EQ(::stat(files[0].c_str(), &st), 0);
    }
    return st.st_ino;
}

}  // namespace

TEST(LibraryPath, LibcByEveryName) {
    const std::uint64_t want = mappedLibcInode();
    for (const char* name : {"libc", "libc.so", "libc.so.6"}) {
        SCOPED_TRACE(name);
        auto lib = findLibrary(name);
        ASSERT_TRUE(lib) << lib.error().message;
        struct stat st {};
        ASSERT_EQ(::stat(lib->path.c_str(), &st), 0) << lib->path;
        EXPECT_EQ(st.st_ino, want) << lib->path;
        EXPECT_THAT(lib->how, HasSubstr("ld.so.cache"));
        EXPECT_THAT(lib->path, HasSubstr("libc.so.6"));
    }
}

TEST(LibraryPath, NotFound) {
    auto lib = findLibrary("libprobectl-no-such-library");
    ASSERT_FALSE(lib);
    EXPECT_EQ(lib.error().err, ENOENT);
    EXPECT_THAT(lib.error().message, HasSubstr("libprobectl-no-such-library"));
    EXPECT_THAT(lib.error().message, HasSubstr("full path"));
}

TEST(LibraryPath, CacheFileParses) {
    std::ifstream in("/etc/ld.so.cache", std::ios::binary);
    if (!in)
        GTEST_SKIP() << "no /etc/ld.so.cache";
    std::ostringstream ss;
    ss << in.rdbuf();
    auto e = parseLdCache(ss.str());
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_FALSE(e->empty());
    bool libc = false;
    for (const auto& x : *e)
        libc = libc || (x.soname == "libc.so.6" && x.isX8664());
    EXPECT_TRUE(libc);
}

TEST(LibraryPath, CacheGarbageRefused) {
    auto e = parseLdCache("not a cache at all, just some bytes of text........");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().err, EINVAL);
    std::string truncated = "glibc-ld.so.cache1.1";
    truncated += std::string(28, '\0');
    truncated[20] = 100;  // 100 entries that are not there
    auto t = parseLdCache(truncated);
    ASSERT_FALSE(t);
    EXPECT_THAT(t.error().message, HasSubstr("do not fit"));
}
