// Small string-matching helpers for symbol lookup: shell globs and edit distance.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "probectl/glob.hpp"

#include "core/comm_glob.hpp"
#include "uapi/probectl.h"

namespace probectl {

namespace {

// Matches one bracket expression at glob[gi] ('[' already seen at gi) against c.
// Returns the index after ']' or npos when the bracket is unterminated (then '[' is literal).
std::size_t matchBracket(std::string_view glob, std::size_t gi, char c, bool& matched) {
    std::size_t i = gi + 1;
    bool negate = false;
    if (i < glob.size() && (glob[i] == '!' || glob[i] == '^')) {
        negate = true;
        ++i;
    }
    bool hit = false;
    bool first = true;
    while (i < glob.size() && (first || glob[i] != ']')) {
        first = false;
        char lo = glob[i];
        char hi = lo;
        if (i + 2 < glob.size() && glob[i + 1] == '-' && glob[i + 2] != ']') {
            hi = glob[i + 2];
            i += 3;
        } else {
            ++i;
        }
        if (c >= lo && c <= hi)
            hit = true;
    }
    if (i >= glob.size())
        return std::string_view::npos;
    matched = hit != negate;
    return i + 1;
}

}  // namespace

std::string globError(std::string_view glob) {
    for (std::size_t i = 0; i < glob.size();) {
        if (glob[i] != '[') {
            ++i;
            continue;
        }
        bool matched = false;
        const std::size_t next = matchBracket(glob, i, '\0', matched);
        if (next == std::string_view::npos)
            return "invalid glob '" + std::string(glob) + "': unterminated '[' at column " +
                   std::to_string(i + 1) + " (quote it as [[] to match a literal '[')";
        i = next;
    }
    return {};
}

bool globMatch(std::string_view glob, std::string_view text) {
    // Iterative matcher with single-star backtracking: linear enough for kallsyms sizes.
    std::size_t g = 0, t = 0;
    std::size_t star_g = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        if (g < glob.size()) {
            const char gc = glob[g];
            if (gc == '*') {
                star_g = g++;
                star_t = t;
                continue;
            }
            if (gc == '?') {
                ++g;
                ++t;
                continue;
            }
            if (gc == '[') {
                bool matched = false;
                const std::size_t next = matchBracket(glob, g, text[t], matched);
                if (next != std::string_view::npos) {
                    if (matched) {
                        g = next;
                        ++t;
                        continue;
                    }
                } else if (text[t] == '[') {
                    ++g;
                    ++t;
                    continue;
                }
            } else if (gc == text[t]) {
                ++g;
                ++t;
                continue;
            }
        }
        if (star_g == std::string_view::npos)
            return false;
        g = star_g + 1;
        t = ++star_t;
    }
    while (g < glob.size() && glob[g] == '*')
        ++g;
    return g == glob.size();
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::vector<std::string> nearNames(std::string_view word,
                                   const std::vector<std::string_view>& candidates,
                                   std::size_t max) {
    std::vector<std::pair<std::size_t, std::string_view>> near;
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    std::set<std::string_view> seen;
    for (std::string_view n : candidates) {
        if (!seen.insert(n).second)
            continue;
        const bool sub = n.find(word) != std::string_view::npos;
        const std::size_t d = editDistance(word, n);
        if (sub || d <= limit)
            near.emplace_back(sub ? 0 : d, n);
    }
    std::sort(near.begin(), near.end());
    std::vector<std::string> names;
    for (std::size_t i = 0; i < near.size() && i < max; ++i)
        names.emplace_back(near[i].second);
    return names;
}

std::string didYouMean(const std::vector<std::string>& names) {
    return names.empty() ? std::string()
                         : fmt::format("; did you mean: {}?", fmt::join(names, ", "));
}

namespace detail {

std::size_t globMinLength(std::string_view glob) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < glob.size();) {
        if (glob[i] == '*') {
            ++i;
            continue;
        }
        ++n;
        bool matched = false;
        const std::size_t next =
            glob[i] == '[' ? matchBracket(glob, i, '\0', matched) : std::string_view::npos;
        i = next == std::string_view::npos ? i + 1 : next;
    }
    return n;
}

std::string commGlobNeverMatches(std::string_view glob, std::string_view what) {
    constexpr std::size_t max = PROBECTL_COMM_LEN - 1;
    if (globMinLength(glob) <= max)
        return {};
    return fmt::format(
        "{} '{}' can never match: a task's comm is at most {} bytes (the kernel "
        "keeps the first {} of a longer name, e.g. '{}'); give at most {} bytes, "
        "or end the glob with '*'",
        what, glob, max, max, glob.substr(0, max), max);
}

}  // namespace detail
}  // namespace probectl
