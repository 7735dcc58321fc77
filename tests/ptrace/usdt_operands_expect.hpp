// What `usdt_operands N` (tests/integration/workloads/usdt_operands.c) passes its USDT
// probes, for the tests that trace it on either backend (tests/ptrace, tests/integration):
// the arguments of each hit of uo:elem, uo:cellb and uo:exact, as trace prints them.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace probectl::uofx {

// One hit's arguments arg1..argN for loop index i (0-based), from the workload's comment.
inline std::vector<std::int64_t> args(const std::string& probe, std::int64_t i) {
    if (probe == "elem")
        return {3 * i + 1, 100 + i, 7 + 3 * (i + 1), -13 - 2 * (i + 1), -(i + 2)};
    if (probe == "cellb")
        return {-5 * i - 1};
    if (probe == "exact")
        return {1000 + i, -(i + 4) * (i + 4)};
    return {};
}

// "arg1=1 arg2=100 ..." of hit i, as a trace line ends.
inline std::string argsText(const std::string& probe, std::int64_t i) {
    std::string s;
    const auto a = args(probe, i);
    for (std::size_t k = 0; k < a.size(); k++)
        s += fmt::format("{}arg{}={}", k ? " " : "", k + 1, a[k]);
    return s;
}

// Lines of `text` that end with `tail` (a trace line ends with its last argument).
inline std::size_t countLinesEnding(const std::string& text, const std::string& tail) {
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.ends_with(tail))
            ++n;
    return n;
}

// The keys of `count --by argK` over n hits, with their counts.
inline std::map<std::int64_t, unsigned> argCounts(const std::string& probe, unsigned k, int n) {
    std::map<std::int64_t, unsigned> m;
    for (int i = 0; i < n; i++)
        m[args(probe, i).at(k - 1)]++;
    return m;
}

// A `count --by argK` table ("ARGK  COUNT" then "KEY  N" rows) read back into key -> count;
// lines that are not two integers are left out.
inline std::map<std::int64_t, unsigned> parseCountTable(const std::string& table) {
    std::map<std::int64_t, unsigned> m;
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
        std::istringstream row(line);
        std::int64_t key = 0;
        unsigned count = 0;
        std::string rest;
        if (row >> key >> count && !(row >> rest))
            m[key] += count;
    }
    return m;
}

}  // namespace probectl::uofx
