// Independent expectations for the ELF tests: readelf and objdump (binutils) run on the
// fixture at test time, its text parsed here, and file offsets computed from its program headers.
// Nothing is hard-coded, so a different toolchain cannot leave a stale number behind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace probectl::test {

// Every fixture the build made, with what the tests need to know of it.
struct Fixture {
    const char* name;
    std::string path;
};
// fx_nopie, fx_nopie_moved, fx_pie, fx_stripped, libfxlib.so, fx_libuser, fx_dup, fx_cxx,
// fx_usdt, and fx_lld when clang and lld were found.
std::vector<Fixture> allFixtures();
// FX_LLD_PATH ("" when clang/lld were missing at configure time).
std::string lldFixture();

// Output of a shell command (stdout); fails the test when it exits non-zero.
std::string run(const std::string& command);

struct ReadelfSymbol {
    std::uint64_t value = 0;
    std::uint64_t size = 0;
    std::string type;  // "FUNC", "IFUNC", "OBJECT", ...
    std::string bind;  // "LOCAL", "GLOBAL", "WEAK"
    std::string ndx;   // "UND", "ABS", "15"
    std::string name;  // as readelf prints it, "memcpy@@GLIBC_2.14" included
};
// readelf -Ws FILE (both .symtab and .dynsym).
std::vector<ReadelfSymbol> readelfSymbols(const std::string& file);

struct ReadelfLoad {
    std::uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
    std::string flags;  // "R E", "RW "
};
// The PT_LOAD lines of readelf -lW FILE.
std::vector<ReadelfLoad> readelfLoads(const std::string& file);
// vaddr - p_vaddr + p_offset of the readelf PT_LOAD holding vaddr; nullopt when none does.
std::optional<std::uint64_t> expectedOffset(const std::vector<ReadelfLoad>& loads,
                                            std::uint64_t vaddr);

struct ReadelfStapsdt {
    std::string provider, name, args;
    std::uint64_t location = 0, base = 0, semaphore = 0;
};
// The stapsdt notes of readelf -n FILE.
std::vector<ReadelfStapsdt> readelfStapsdt(const std::string& file);
// sh_addr of a section from readelf -SW, nullopt when absent.
std::optional<std::uint64_t> readelfSectionAddr(const std::string& file, const std::string& name);

// A call or jump to a named function (objdump -d): where it is and where the next
// instruction starts (a call's return address).
struct ObjdumpBranch {
    std::uint64_t at = 0, next = 0;
    std::string mnemonic;  // "call", "jmp"
    std::string target;    // the symbol objdump names, "leaf"
};
// The calls and jumps to named functions in the function `fn` of `file`.
std::vector<ObjdumpBranch> objdumpBranches(const std::string& file, const std::string& fn);
// The 1-based number of the first line of `file` that contains `text`; 0 when none does.
unsigned sourceLineOf(const std::string& file, const std::string& text);

}  // namespace probectl::test
