// /proc/PID/maps parsing, and the runtime address -> file offset round trip on this test
// process itself.
#include "probectl/proc_maps.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>

#include "probectl/elf_resolver.hpp"

using namespace probectl;
using ::testing::HasSubstr;

// A function of this test binary to find both in its symbol table and in memory.
extern "C" __attribute__((noinline, used)) int probectl_maps_test_marker(int x) {
    return x * 3 + 1;
}

TEST(ProcMaps, ParsesLines) {
    auto m = ProcMaps::parse(
        "55d0c7a00000-55d0c7a22000 r-xp 00002000 fd:01 1311                       /usr/bin/cat\n"
        "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
        "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]\n"
        "7f1000000000-7f1000010000 r-xp 00001000 08:02 42 /tmp/gone (deleted)\n");
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->mappings().size(), 4u);
    const auto& cat = m->mappings()[0];
    EXPECT_EQ(cat.start, 0x55d0c7a00000u);
    EXPECT_EQ(cat.end, 0x55d0c7a22000u);
    EXPECT_EQ(cat.offset, 0x2000u);
    EXPECT_EQ(cat.dev_major, 0xfdu);
    EXPECT_EQ(cat.inode, 1311u);
    EXPECT_EQ(cat.path, "/usr/bin/cat");
    EXPECT_TRUE(cat.isFile());
    EXPECT_TRUE(cat.executable());
    EXPECT_EQ(cat.fileOffset(0x55d0c7a00010), 0x2010u);
    EXPECT_FALSE(m->mappings()[1].isFile());
    EXPECT_EQ(m->mappings()[2].path, "[stack]");
    EXPECT_TRUE(m->mappings()[3].deleted);
    EXPECT_EQ(m->mappings()[3].path, "/tmp/gone");
    EXPECT_EQ(m->containing(0x55d0c7a00000), &m->mappings()[0]);
    EXPECT_EQ(m->containing(0x55d0c7a22000), nullptr);
}

// The file's bytes 0x2000..0x23fff are mapped at 0x1000..0x22fff; the last byte is in, the
// next is not, and an offset far below the mapping's does not wrap around into it.
TEST(ProcMaps, FileOffsetsOfAMapping) {
    auto m = ProcMaps::parse("00001000-00023000 rw-p 00002000 fd:01 1311 /usr/bin/cat\n");
    ASSERT_TRUE(m) << m.error().message;
    const ProcMapping& map = m->mappings()[0];
    EXPECT_TRUE(map.writable());
    EXPECT_FALSE(map.executable());
    EXPECT_TRUE(map.holdsFileOffset(0x2000));
    EXPECT_TRUE(map.holdsFileOffset(0x23fff));
    EXPECT_FALSE(map.holdsFileOffset(0x24000));
    EXPECT_FALSE(map.holdsFileOffset(0x1fff));
    EXPECT_FALSE(map.holdsFileOffset(0));
    EXPECT_EQ(map.address(0x2000), 0x1000u);
    EXPECT_EQ(map.address(0x23fff), 0x22fffu);
    EXPECT_EQ(map.fileOffset(map.address(0x2345)), 0x2345u);
}

TEST(ProcMaps, BadLineNamed) {
    auto m = ProcMaps::parse("00400000-00401000 r-xp 0 fd:01 1 /x\nnot a maps line\n");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().err, EINVAL);
    EXPECT_THAT(m.error().message, HasSubstr("line 2"));
}

TEST(ProcMaps, LibraryNames) {
    EXPECT_TRUE(libraryNameMatches("libc.so.6", "libc"));
    EXPECT_TRUE(libraryNameMatches("libc.so.6", "libc.so"));
    EXPECT_TRUE(libraryNameMatches("libc.so.6", "libc.so.6"));
    EXPECT_TRUE(libraryNameMatches("libc-2.31.so", "libc"));
    EXPECT_FALSE(libraryNameMatches("libcrypt.so.1", "libc"));
    EXPECT_FALSE(libraryNameMatches("libc.so.7", "libc.so.6"));
}

TEST(ProcMaps, NoSuchProcess) {
    auto m = ProcMaps::read(INT_MAX);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().err, ESRCH);
}

// A runtime address of this process -> maps -> file offset -> ELF address must land on
// the function's st_value: the load bias cancels out without being computed.
TEST(ProcMaps, SelfRoundTrip) {
    auto maps = ProcMaps::read(::getpid());
    ASSERT_TRUE(maps) << maps.error().message;
    const auto addr = reinterpret_cast<std::uintptr_t>(&probectl_maps_test_marker);
    const ProcMapping* m = maps->containing(addr);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->executable());
    char exe[PATH_MAX];
    ASSERT_NE(::realpath("/proc/self/exe", exe), nullptr);
    EXPECT_EQ(m->path, exe);
    auto elf = ElfResolver::open(exe);
    ASSERT_TRUE(elf) << elf.error().message;
    auto syms = elf->functionsNamed("probectl_maps_test_marker");
    ASSERT_EQ(syms.size(), 1u);
    auto vaddr = elf->elfAddress(m->fileOffset(addr));
    ASSERT_TRUE(vaddr);
    EXPECT_EQ(*vaddr, syms[0]->value);
    EXPECT_EQ(elf->fileOffset(syms[0]->value).value(), m->fileOffset(addr));
}
