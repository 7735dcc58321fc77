// readelf text parsing for the ELF tests (binutils' output formats as of 2.40).
#include "readelf_util.hpp"

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace probectl::test {

std::vector<Fixture> allFixtures() {
    std::vector<Fixture> f = {
        {"fx_nopie", FX_NOPIE_PATH}, {"fx_nopie_moved", FX_NOPIE_MOVED_PATH},
        {"fx_pie", FX_PIE_PATH},     {"fx_stripped", FX_STRIPPED_PATH},
        {"libfxlib.so", FXLIB_PATH}, {"fx_libuser", FX_LIBUSER_PATH},
        {"fx_dup", FX_DUP_PATH},     {"fx_cxx", FX_CXX_PATH},
        {"fx_usdt", FX_USDT_PATH},
    };
    if (!lldFixture().empty())
        f.push_back({"fx_lld", lldFixture()});
    return f;
}

std::string lldFixture() {
    return FX_LLD_PATH;
}

std::string run(const std::string& command) {
    FILE* p = ::popen(command.c_str(), "r");
    EXPECT_NE(p, nullptr) << command;
    if (!p)
        return {};
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = ::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    const int status = ::pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
    return out;
}

namespace {

std::uint64_t num(const std::string& s, int base) {
    return std::stoull(s, nullptr, base);
}

std::vector<std::string> readelfWords(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;)
        w.push_back(s);
    return w;
}

}  // namespace

std::vector<ReadelfSymbol> readelfSymbols(const std::string& file) {
    std::vector<ReadelfSymbol> out;
    std::istringstream in(run("readelf -Ws '" + file + "' 2>/dev/null"));
    for (std::string line; std::getline(in, line);) {
        //    Num:    Value          Size Type    Bind   Vis      Ndx Name
        auto w = readelfWords(line);
        if (w.size() < 8 || w[0].back() != ':' || w[0] == "Num:")
            continue;
        ReadelfSymbol s;
        s.value = num(w[1], 16);
        // Sizes above 99999 are printed in hex with 0x; base 0 reads both.
        s.size = num(w[2], 0);
        s.type = w[3];
        s.bind = w[4];
        s.ndx = w[6];
        s.name = w[7];
        out.push_back(s);
    }
    return out;
}

std::vector<ReadelfLoad> readelfLoads(const std::string& file) {
    std::vector<ReadelfLoad> out;
    std::istringstream in(run("readelf -lW '" + file + "'"));
    for (std::string line; std::getline(in, line);) {
        // LOAD 0x000000 0x0000000000400000 0x0000000000400000 0x000578 0x000578 R E 0x1000
        auto w = readelfWords(line);
        if (w.size() < 8 || w[0] != "LOAD")
            continue;
        ReadelfLoad l;
        l.offset = num(w[1], 16);
        l.vaddr = num(w[2], 16);
        l.filesz = num(w[4], 16);
        l.memsz = num(w[5], 16);
        for (std::size_t i = 6; i + 1 < w.size(); ++i)
            l.flags += w[i];
        out.push_back(l);
    }
    return out;
}

std::optional<std::uint64_t> expectedOffset(const std::vector<ReadelfLoad>& loads,
                                            std::uint64_t vaddr) {
    for (const auto& l : loads)
        if (vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz)
            return vaddr - l.vaddr + l.offset;
    return std::nullopt;
}

std::vector<ReadelfStapsdt> readelfStapsdt(const std::string& file) {
    std::vector<ReadelfStapsdt> out;
    std::istringstream in(run("readelf -n '" + file + "'"));
    for (std::string line; std::getline(in, line);) {
        auto w = readelfWords(line);
        if (w.empty())
            continue;
        if (w[0] == "stapsdt") {
            out.emplace_back();
        } else if (out.empty()) {
            continue;
        } else if (w[0] == "Provider:" && w.size() > 1) {
            out.back().provider = w[1];
        } else if (w[0] == "Name:" && w.size() > 1) {
            out.back().name = w[1];
        } else if (w[0] == "Location:" && w.size() >= 6) {
            // Location: 0x..., Base: 0x..., Semaphore: 0x...
            out.back().location = num(w[1], 16);
            out.back().base = num(w[3], 16);
            out.back().semaphore = num(w[5], 16);
        } else if (w[0] == "Arguments:") {
            const auto at = line.find("Arguments:") + 10;
            out.back().args = line.substr(line.find_first_not_of(' ', at));
        }
    }
    return out;
}

std::optional<std::uint64_t> readelfSectionAddr(const std::string& file, const std::string& name) {
    std::istringstream in(run("readelf -SW '" + file + "'"));
    for (std::string line; std::getline(in, line);) {
        // [Nr] Name Type Address Off Size ...; "[ 1]" splits into two words.
        const auto close = line.find(']');
        if (close == std::string::npos)
            continue;
        auto w = readelfWords(line.substr(close + 1));
        if (w.size() >= 3 && w[0] == name)
            return num(w[2], 16);
    }
    return std::nullopt;
}

std::vector<ObjdumpBranch> objdumpBranches(const std::string& file, const std::string& fn) {
    std::istringstream in(
        run("objdump -d --insn-width=16 --disassemble=" + fn + " '" + file + "'"));
    // "    12d7:\te8 84 ff ff ff \tcall   1260 <hop>": the bytes give the length.
    const std::regex insn(
        R"(^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(call|jmp)\s+[0-9a-f]+ <([^>+]+)>)");
    std::vector<ObjdumpBranch> out;
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, insn))
            continue;
        const std::uint64_t at = num(m[1], 16);
        out.push_back({at, at + m[2].length() / 3, m[3], m[4]});
    }
    return out;
}

unsigned sourceLineOf(const std::string& file, const std::string& text) {
    std::ifstream in(file);
    unsigned n = 0;
    for (std::string line; std::getline(in, line);)
        if (++n, line.find(text) != std::string::npos)
            return n;
    return 0;
}

}  // namespace probectl::test
