// Instruction decoding (insn_boundary.hpp) and how capstone gets into the process: with
// dlopen on the first decode only, and a clear error when the library is missing.
#include <elf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "probectl/insn_boundary.hpp"

namespace {

// push rbp; mov rbp, rsp; ret
const std::vector<std::uint8_t> kCode = {0x55, 0x48, 0x89, 0xe5, 0xc3};

bool capstoneMapped() {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
        if (line.find("libcapstone") != std::string::npos)
            return true;
    return false;
}

}  // namespace

TEST(InsnDecode, DecodesX86_64) {
    auto insns = probectl::decodeInstructions(EM_X86_64, kCode);
    ASSERT_TRUE(insns.ok()) << insns.error().describe();
    ASSERT_EQ(insns->size(), 3u);
    EXPECT_EQ(insns->at(0).text, "push rbp");
    EXPECT_EQ(insns->at(1).offset, 1u);
    EXPECT_EQ(insns->at(1).size, 3u);
    EXPECT_EQ(insns->at(2).offset, 4u);
    auto inside = probectl::checkInstructionBoundary(*insns, "f", 2);
    ASSERT_FALSE(inside.ok());
    EXPECT_EQ(inside.error().err, EILSEQ);
}

// Each runs in a fresh process (the death-test child re-executes this binary), where no
// decode has happened yet.
TEST(InsnDecodeDeathTest, CapstoneIsLoadedOnTheFirstDecodeOnly) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            if (capstoneMapped())
                _exit(2);  // linked in: every command pays for its relocations
            auto insns = probectl::decodeInstructions(EM_X86_64, kCode);
            _exit(insns.ok() && insns->size() == 3 && capstoneMapped() ? 0 : 3);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST(InsnDecodeDeathTest, AMissingCapstoneIsAClearError) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::setenv("PROBECTL_CAPSTONE_LIBRARY", "/nonexistent/libcapstone.so.4", 1);
            auto insns = probectl::decodeInstructions(EM_X86_64, kCode);
            if (insns.ok())
                _exit(4);
            fprintf(stderr, "[%s]\n", insns.error().describe().c_str());
            _exit(insns.error().err == ELIBACC ? 1 : 5);
        },
        ::testing::ExitedWithCode(1),
        "\\[checking instruction boundaries needs the capstone disassembler library, "
        "/nonexistent/libcapstone.so.4 \\(Debian package libcapstone[0-9]+\\), which could "
        "not be loaded \\(/nonexistent/libcapstone.so.4: cannot open shared object file: No "
        "such file or directory\\)\\]");
}
