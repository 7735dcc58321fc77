// USDT arguments gcc writes as array elements with an index register ("(%rbx,%r13,8)",
// "table(,%r14,8)", "shorts(%rbx,%rbx)", and "(,%rax,8)", "16(%rbx,%rcx,4)" written out)
// and as globals by symbol ("glob(%rip)", "4+pair(%rip)"): usdt_operands.c built PIE,
// non-PIE and as a shared library. The kernel reads them with load-addr (base + index *
// scale) and from the probe site's ip; every hit's arguments must be the values the
// program computed, on the module and on the ptrace backend alike. Before, these
// operands made the whole probe unusable ("index registers are not supported").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "itest_util.hpp"
#include "probectl/elf_resolver.hpp"
#include "usdt_operands_expect.hpp"

namespace {

using probectl::uofx::argCounts;
using probectl::uofx::argsText;
using probectl::uofx::countLinesEnding;
using probectl::uofx::parseCountTable;

constexpr int kN = 8;
const char* const kProbes[] = {"elem", "cellb", "exact"};

struct Target {
    std::string file;     // the file with the probes
    std::string command;  // what runs them
};

std::vector<Target> targets() {
    return {{itest::workload("usdt_operands"), itest::workload("usdt_operands")},
            {itest::workload("usdt_operands_nopie"), itest::workload("usdt_operands_nopie")},
            {itest::workload("libusdt_operands.so"), itest::workload("usdt_operands_lib")}};
}

// The notes still hold the forms this file is about (gcc could change its mind).
TEST(UsdtOperands, TheNotesHoldIndexAndSymbolOperands) {
    for (const auto& t : targets()) {
        auto elf = probectl::ElfResolver::open(t.file);
        ASSERT_TRUE(elf) << itest::why(elf);
        bool indexed = false, ip_symbol = false;
        for (const auto& p : elf->usdtProbes()) {
            EXPECT_TRUE(p.args_error.empty()) << t.file << " " << p.name << ": " << p.args_error;
            for (const auto& a : p.decoded) {
                indexed |= !a.index.empty() && !a.reg.empty();
                ip_symbol |= !a.symbol.empty() && a.reg == "rip";
            }
        }
        EXPECT_TRUE(indexed) << t.file << ": no (%base,%index,scale) operand";
        EXPECT_TRUE(ip_symbol) << t.file << ": no SYMBOL(%rip) operand";
    }
}

// count --by argK on the module: exactly the values the program passed.
TEST(UsdtOperands, CountByEachArgumentOnTheModule) {
    for (const auto& t : targets()) {
        for (const char* probe : kProbes) {
            const unsigned nargs = probectl::uofx::args(probe, 0).size();
            for (unsigned k = 1; k <= nargs; k++) {
                const std::string cmd = "probectl count usdt:" + t.file + ":uo:" + probe +
                                        " --by arg" + std::to_string(k) + " -- " + t.command + " " +
                                        std::to_string(kN);
                auto r = itest::sh(itest::tablesOnly(cmd) + " 2>&1");
                EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out;
                EXPECT_EQ(parseCountTable(r.out), argCounts(probe, k, kN)) << cmd << "\n" << r.out;
            }
        }
    }
}

// trace's lines, every argument of every hit, the same on both backends.
TEST(UsdtOperands, TraceLinesOnBothBackends) {
    for (const std::string backend : {"kernel", "ptrace"}) {
        for (const auto& t : targets()) {
            std::string cmd = "probectl trace --backend=" + backend;
            for (const char* probe : kProbes)
                cmd += " usdt:" + t.file + ":uo:" + probe;
            cmd += " -- " + t.command + " " + std::to_string(kN) + " 2>&1";
            auto r = itest::sh(cmd);
            EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out;
            EXPECT_EQ(r.out.find("<fault>"), std::string::npos) << cmd << "\n" << r.out;
            for (const char* probe : kProbes)
                for (int i = 0; i < kN; i++)
                    EXPECT_EQ(countLinesEnding(
                                  r.out, std::string("uo:") + probe + "  " + argsText(probe, i)),
                              1u)
                        << cmd << "\n"
                        << probe << " hit " << i << ": want " << argsText(probe, i) << "\n"
                        << r.out;
        }
    }
}

}  // namespace
