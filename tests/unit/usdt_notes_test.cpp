// .note.stapsdt of the USDT fixture against readelf -n: sites, base adjustment, semaphores.
#include <algorithm>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probectl/elf_resolver.hpp"
#include "readelf_util.hpp"

using namespace probectl;
using namespace probectl::test;

TEST(UsdtNotes, MatchReadelf) {
    auto elf = ElfResolver::open(FX_USDT_PATH);
    ASSERT_TRUE(elf) << elf.error().message;
    auto notes = readelfStapsdt(FX_USDT_PATH);
    auto loads = readelfLoads(FX_USDT_PATH);
    const auto base_now = readelfSectionAddr(FX_USDT_PATH, ".stapsdt.base");
    ASSERT_TRUE(base_now);
    ASSERT_EQ(elf->usdtProbes().size(), notes.size());
    ASSERT_EQ(notes.size(), 2u) << "fx:plain and fx:sem";
    bool saw_sem = false, saw_plain = false;
    for (std::size_t i = 0; i < notes.size(); ++i) {
        const auto& want = notes[i];
        const auto& got = elf->usdtProbes()[i];
        SCOPED_TRACE(want.provider + ":" + want.name);
        EXPECT_EQ(got.provider, want.provider);
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.args, want.args);
        EXPECT_EQ(got.base, want.base);
        // pc moves with .stapsdt.base (zero difference unless the file was prelinked).
        const std::uint64_t pc = want.location + (*base_now - want.base);
        EXPECT_EQ(got.pc, pc);
        EXPECT_EQ(got.file_offset, expectedOffset(loads, pc).value());
        EXPECT_TRUE(got.args_error.empty()) << got.args_error;
        EXPECT_FALSE(got.decoded.empty());
        if (want.semaphore) {
            saw_sem = true;
            EXPECT_EQ(got.semaphore, want.semaphore);
            // The semaphore lives in the writable data segment, whose p_vaddr and p_offset
            // differ: the ref_ctr_offset is not the address.
            EXPECT_EQ(got.semaphore_offset, expectedOffset(loads, want.semaphore).value());
            const LoadSegment* seg = elf->segmentForAddress(got.semaphore);
            ASSERT_TRUE(seg);
            EXPECT_TRUE(seg->writable());
            EXPECT_NE(got.semaphore_offset, got.semaphore);
        } else {
            saw_plain = true;
            EXPECT_EQ(got.semaphore, 0u);
            EXPECT_EQ(got.semaphore_offset, 0u);
        }
    }
    EXPECT_TRUE(saw_sem);
    EXPECT_TRUE(saw_plain);
}

TEST(UsdtNotes, ConstantArgumentDecoded) {
    auto elf = ElfResolver::open(FX_USDT_PATH);
    ASSERT_TRUE(elf);
    for (const auto& p : elf->usdtProbes()) {
        if (p.name != "plain")
            continue;
        ASSERT_EQ(p.decoded.size(), 2u);
        EXPECT_EQ(p.decoded[1].kind, UsdtArg::Kind::Constant);
        EXPECT_EQ(p.decoded[1].value, 5);
        EXPECT_EQ(p.decoded[0].size, 4u);
        EXPECT_TRUE(p.decoded[0].is_signed);
    }
}

TEST(UsdtNotes, NoNotesNoProbes) {
    auto elf = ElfResolver::open(FX_PIE_PATH);
    ASSERT_TRUE(elf);
    EXPECT_TRUE(elf->usdtProbes().empty());
}

// Whether an earlier writable PT_LOAD maps the semaphore's file page, from readelf: lld
// (without -z separate-loadable-segments) starts the data segment in RELRO's last page.
TEST(UsdtNotes, SemaphorePageSharedWithAnEarlierWritableSegment) {
    std::vector<std::pair<std::string, bool>> files = {{FX_USDT_PATH, false}};
    if (std::string(FX_USDT_LLD_PATH).empty())
        GTEST_SKIP() << "clang or lld not found when configured";
    files.emplace_back(FX_USDT_LLD_PATH, true);
    for (const auto& [path, want] : files) {
        SCOPED_TRACE(path);
        auto elf = ElfResolver::open(path);
        ASSERT_TRUE(elf) << elf.error().message;
        const auto loads = readelfLoads(path);
        bool saw_sem = false;
        for (const auto& n : readelfStapsdt(path)) {
            if (!n.semaphore)
                continue;
            saw_sem = true;
            const std::uint64_t off = expectedOffset(loads, n.semaphore).value();
            bool shared = false;
            for (const auto& l : loads) {
                if (n.semaphore >= l.vaddr && n.semaphore - l.vaddr < l.filesz)
                    break;  // its own segment: only earlier ones count
                shared = shared ||
                         (l.flags.find('W') != std::string::npos && off / 4096 >= l.offset / 4096 &&
                          off < (l.offset + l.filesz + 4095) / 4096 * 4096);
            }
            EXPECT_EQ(shared, want);
            for (const auto& p : elf->usdtProbes()) {
                if (p.semaphore == n.semaphore) {
                    EXPECT_EQ(p.semaphore_page_shared, want) << p.provider << ":" << p.name;
                }
            }
        }
        EXPECT_TRUE(saw_sem);
    }
}

namespace {

// readelf -Ws's value of a defined symbol `name` (0 when none).
std::uint64_t readelfSymbolValue(const std::string& file, const std::string& name) {
    for (const auto& s : readelfSymbols(file))
        if (s.name == name && s.ndx != "UND")
            return s.value;
    return 0;
}

}  // namespace

// The operands gcc -O2 writes for array elements and globals (usdt_operands.c): each symbol
// resolves to readelf's address plus its addend, counted from the probe site when there is
// no base or it is %rip (PIE, non-PIE, shared library alike), absolute beside another base
// (non-PIE only). The notes must keep holding these forms, or the tests on both backends
// that read them would stop covering them.
TEST(UsdtNotes, SymbolOperandsResolve) {
    struct Want {
        const char* path;
        bool index_with_base = false, ip_symbol = false, indexed_symbol = false,
             based_symbol = false;
    };
    const Want files[] = {{FX_USDT_OPS_PATH, true, true, false, false},
                          {FX_USDT_OPS_NOPIE_PATH, true, true, true, true},
                          {FX_USDT_OPS_LIB_PATH, true, true, false, false}};
    for (const auto& want : files) {
        SCOPED_TRACE(want.path);
        auto elf = ElfResolver::open(want.path);
        ASSERT_TRUE(elf) << elf.error().message;
        Want saw{want.path};
        std::size_t probes = 0;
        for (const auto& p : elf->usdtProbes()) {
            if (p.provider != "uo")
                continue;
            probes++;
            SCOPED_TRACE(p.name + ": " + p.args);
            ASSERT_TRUE(p.args_error.empty()) << p.args_error;
            for (const auto& a : p.decoded) {
                SCOPED_TRACE(a.text);
                if (!a.index.empty() && !a.reg.empty())
                    saw.index_with_base = true;
                if (a.symbol.empty())
                    continue;
                const std::uint64_t sym = readelfSymbolValue(want.path, a.symbol);
                ASSERT_NE(sym, 0u);
                EXPECT_EQ(a.symbol_address, sym + a.symbol_addend);
                if (a.reg.empty() || a.reg == "rip") {
                    EXPECT_TRUE(a.ip_relative);
                    EXPECT_EQ(a.offset, static_cast<std::int64_t>(a.symbol_address - p.pc));
                    saw.ip_symbol |= a.reg == "rip";
                    saw.indexed_symbol |= !a.index.empty();
                } else {
                    EXPECT_FALSE(a.ip_relative);
                    EXPECT_EQ(elf->type(), ElfResolver::Type::Executable);
                    EXPECT_EQ(a.offset, static_cast<std::int64_t>(a.symbol_address));
                    saw.based_symbol = true;
                }
            }
        }
        EXPECT_EQ(probes, 3u) << "uo:elem, uo:cellb, uo:exact";
        EXPECT_TRUE(saw.index_with_base) << "no (%base,%index,scale) operand";
        EXPECT_TRUE(saw.ip_symbol) << "no SYMBOL(%rip) operand";
        EXPECT_EQ(saw.indexed_symbol, want.indexed_symbol) << "SYMBOL(,%index,scale)";
        EXPECT_EQ(saw.based_symbol, want.based_symbol) << "SYMBOL(%base,%index)";
    }
}

// Stripped to .dynsym, the file has no symbol for its hidden globals: a probe with one
// says which symbol and why; the probes without one keep working.
TEST(UsdtNotes, SymbolNotInTheSymbolTable) {
    auto elf = ElfResolver::open(FX_USDT_OPS_STRIPPED_PATH);
    ASSERT_TRUE(elf) << elf.error().message;
    bool saw_elem = false, saw_cellb = false;
    for (const auto& p : elf->usdtProbes()) {
        if (p.name == "elem") {
            saw_elem = true;
            EXPECT_TRUE(p.decoded.empty());
            EXPECT_THAT(p.args_error, testing::HasSubstr("symbol 'glob' is not in"));
            EXPECT_THAT(p.args_error, testing::HasSubstr("-4@glob(%rip)"));
            EXPECT_THAT(p.args_error, testing::HasSubstr("stripped"));
            EXPECT_THAT(p.args_error, testing::HasSubstr("argument 3"));
        } else if (p.name == "cellb") {
            saw_cellb = true;
            EXPECT_TRUE(p.args_error.empty()) << p.args_error;
            EXPECT_EQ(p.decoded.size(), 1u);
        }
    }
    EXPECT_TRUE(saw_elem);
    EXPECT_TRUE(saw_cellb);
}

// An operand's symbol that two objects are named (a static of that name in each of two
// files): the probe says so with both addresses, and is not probed; an operand of the same
// file whose symbol names one object resolves.
TEST(UsdtNotes, SymbolOfTwoObjectsIsRefused) {
    const std::string path = FX_USDT_DUPSYM_PATH;
    auto elf = ElfResolver::open(path);
    ASSERT_TRUE(elf) << elf.error().message;
    std::vector<std::uint64_t> dupvars;
    for (const auto& s : readelfSymbols(path))
        if (s.name == "dupvar")
            dupvars.push_back(s.value);
    ASSERT_EQ(dupvars.size(), 2u);
    std::sort(dupvars.begin(), dupvars.end());  // the symbols' order, by address
    bool saw_dup = false, saw_one = false;
    for (const auto& p : elf->usdtProbes()) {
        if (p.name == "dupsym") {
            saw_dup = true;
            EXPECT_TRUE(p.decoded.empty());
            EXPECT_EQ(p.args_error,
                      fmt::format("argument 1: USDT argument '-4@dupvar(%rip)': symbol 'dupvar' "
                                  "names 2 objects in {} ({:#x} in usdt_dupsym_a.c, {:#x} in "
                                  "usdt_dupsym_b.c): the operand could mean any of them",
                                  path, dupvars[0], dupvars[1]));
        } else if (p.name == "onesym") {
            saw_one = true;
            ASSERT_TRUE(p.args_error.empty()) << p.args_error;
            ASSERT_EQ(p.decoded.size(), 1u);
            EXPECT_EQ(p.decoded[0].symbol_address, readelfSymbolValue(path, "onevar"));
            EXPECT_TRUE(p.decoded[0].ip_relative);
        }
    }
    EXPECT_TRUE(saw_dup);
    EXPECT_TRUE(saw_one);
}
