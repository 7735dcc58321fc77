#include "readme_examples.hpp"

#include <cctype>
#include <regex>
#include <stdexcept>

namespace readme {
namespace {

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos)
            break;
        text.remove_prefix(nl + 1);
    }
    return lines;
}

// Runs of blanks become one space, ends trimmed: column widths follow the values.
std::string squeeze(std::string_view s) {
    std::string out;
    bool blank = false;
    for (char c : s) {
        if (c == ' ' || c == '\t' || c == '\r') {
            blank = !out.empty();
            continue;
        }
        if (blank)
            out += ' ';
        blank = false;
        out += c;
    }
    return out;
}

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> w;
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find(' ', i);
        if (j == std::string::npos)
            j = s.size();
        if (j > i)
            w.push_back(s.substr(i, j - i));
        i = j + 1;
    }
    return w;
}

bool allDigits(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return false;
    return true;
}

bool isWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

void escapeTo(std::string& re, char c) {
    if (std::string_view("\\^$.|?*+()[]{}/").find(c) != std::string_view::npos)
        re += '\\';
    re += c;
}

// One word of a shown line: `...` and the values of the header's list become patterns,
// everything else stands for itself.
std::string wordRegex(const std::string& w) {
    std::string re;
    size_t i = 0;
    while (i < w.size()) {
        if (w.compare(i, 3, "...") == 0) {
            re += ".*";
            i += 3;
            continue;
        }
        const bool boundary = i == 0 || !isWordChar(w[i - 1]);
        if (boundary && std::isdigit(static_cast<unsigned char>(w[i]))) {
            size_t j = i;
            if (w.compare(i, 2, "0x") == 0) {
                j = i + 2;
                while (j < w.size() && std::isxdigit(static_cast<unsigned char>(w[j])))
                    ++j;
                if (j - i - 2 >= 8 && (j == w.size() || !isWordChar(w[j]))) {
                    re += "0x[0-9a-f]+";
                    i = j;
                    continue;
                }
                j = i;
            }
            while (j < w.size() && std::isdigit(static_cast<unsigned char>(w[j])))
                ++j;
            bool fraction = false;
            if (j + 1 < w.size() && w[j] == '.' &&
                std::isdigit(static_cast<unsigned char>(w[j + 1]))) {
                fraction = true;
                ++j;
                while (j < w.size() && std::isdigit(static_cast<unsigned char>(w[j])))
                    ++j;
            }
            size_t unit = 0;
            for (std::string_view u : {"ns", "us", "ms", "s"}) {
                if (w.compare(j, u.size(), u) == 0 &&
                    (j + u.size() == w.size() || !isWordChar(w[j + u.size()]))) {
                    unit = u.size();
                    break;
                }
            }
            if (unit != 0) {
                re += "[0-9]+(\\.[0-9]+)?(ns|us|ms|s)";
                i = j + unit;
                continue;
            }
            if (fraction && (j == w.size() || !isWordChar(w[j]))) {
                re += "[0-9]+(\\.[0-9]+)?";
                i = j;
                continue;
            }
            // A plain integer (a count, an offset) must be the same.
            for (; i < j; ++i)
                re += w[i];
            continue;
        }
        escapeTo(re, w[i]);
        ++i;
    }
    return re;
}

// A word whose leading digits are any number (a pid or tid), the rest as written.
std::string anyLeadingNumber(const std::string& w) {
    size_t j = 0;
    while (j < w.size() && std::isdigit(static_cast<unsigned char>(w[j])))
        ++j;
    return "[0-9]+" + wordRegex(w.substr(j));
}

bool isCpuColumn(const std::string& w) {
    return w.size() == 5 && w.front() == '[' && w.back() == ']' && allDigits(w.substr(1, 3));
}

bool isTimeColumn(const std::string& w) {
    size_t dot = w.find('.');
    return dot != std::string::npos && allDigits(w.substr(0, dot)) && allDigits(w.substr(dot + 1));
}

bool startsSyscallCall(const std::string& w) {
    size_t paren = w.find('(');
    if (paren == std::string::npos || paren == 0)
        return false;
    for (size_t i = 0; i < paren; ++i)
        if (!isWordChar(w[i]))
            return false;
    return true;
}

}  // namespace

std::string lineRegex(std::string_view shown) {
    const std::vector<std::string> w = words(squeeze(shown));
    std::vector<std::string> piece(w.size());
    for (size_t i = 0; i < w.size(); ++i)
        piece[i] = wordRegex(w[i]);
    // Event lines: TIME [CPU] COMM TID ...
    if (w.size() >= 4 && isTimeColumn(w[0]) && isCpuColumn(w[1]) && allDigits(w[3])) {
        piece[1] = "\\[[0-9]+\\]";
        piece[3] = "[0-9]+";
    }
    // `trace -f --syscalls` lines: TID syscall(...), TID +++ exited with N +++
    if (w.size() >= 2 && allDigits(w[0]) && (startsSyscallCall(w[1]) || w[1] == "+++"))
        piece[0] = "[0-9]+";
    for (size_t i = 0; i + 1 < w.size(); ++i) {
        if ((w[i] == "pid" || w[i] == "(pid") && !w[i + 1].empty() &&
            std::isdigit(static_cast<unsigned char>(w[i + 1][0])))
            piece[i + 1] = anyLeadingNumber(w[i + 1]);
    }
    // A word that is only `...` may stand for no words at all, spaces included.
    std::string re;
    for (size_t i = 0; i < w.size(); ++i) {
        if (w[i] == "...") {
            re += i == 0 ? "(.* )?" : "( .*)?";
            continue;
        }
        // After a leading `...` its own group holds the space.
        if (i > 0 && !(i == 1 && w[0] == "..."))
            re += ' ';
        re += piece[i];
    }
    return re;
}

bool lineMatches(std::string_view shown, std::string_view actual) {
    return std::regex_match(squeeze(actual), std::regex(lineRegex(shown)));
}

std::string mismatch(const std::vector<std::string>& shown, std::string_view actual) {
    std::vector<std::string> out;
    for (std::string_view l : splitLines(actual))
        out.push_back(squeeze(l));
    size_t at = 0;
    for (const std::string& s : shown) {
        const std::string line = squeeze(s);
        if (line.empty() || line == "...")
            continue;
        const std::regex re(lineRegex(line));
        size_t found = at;
        while (found < out.size() && !std::regex_match(out[found], re))
            ++found;
        if (found < out.size()) {
            at = found + 1;
            continue;
        }
        for (size_t i = 0; i < at; ++i)
            if (std::regex_match(out[i], re))
                return "shown line out of order (it matches output line " + std::to_string(i + 1) +
                       ", before the previous shown line's): " + line;
        return "shown line matches no output line: " + line;
    }
    return "";
}

std::vector<Example> extract(std::string_view markdown) {
    std::vector<Example> examples;
    std::string section;
    const std::vector<std::string_view> lines = splitLines(markdown);
    const std::regex exitComment(R"((^|\s)#\s*exit\s+([0-9]+)\s*$)");
    auto fail = [](int line, const std::string& what) {
        throw std::runtime_error("README line " + std::to_string(line) + ": " + what);
    };
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string_view l = lines[i];
        if (l.substr(0, 3) == "## ") {
            section = std::string(l.substr(3));
            continue;
        }
        if (l.substr(0, 3) != "```")
            continue;
        const std::vector<std::string> info = words(squeeze(l.substr(3)));
        bool marked = false;
        for (const std::string& w : info)
            marked |= w == "vm-checked";
        const size_t open = i;
        // Skips to the closing fence; unmarked blocks are not looked into.
        size_t close = open + 1;
        while (close < lines.size() && lines[close].substr(0, 3) != "```")
            ++close;
        if (!marked) {
            i = close;
            continue;
        }
        const int openLine = static_cast<int>(open) + 1;
        if (close == lines.size())
            fail(openLine, "a vm-checked block without its closing fence");
        Example ex;
        ex.section = section;
        ex.line = openLine;
        for (size_t k = 1; k < info.size(); ++k) {
            if (info[k] == "vm-checked")
                continue;
            if (info[k].compare(0, 5, "copy=") == 0 && info[k].size() > 6 && info[k][5] == '/') {
                ex.copies.push_back(info[k].substr(5));
                continue;
            }
            if (info[k].compare(0, 6, "needs=") == 0 && info[k].size() > 7 && info[k][6] == '/') {
                ex.needs.push_back(info[k].substr(6));
                continue;
            }
            fail(openLine, "unknown option '" + info[k] +
                               "' (vm-checked blocks take copy=/PATH and needs=/PATH)");
        }
        for (size_t k = open + 1; k < close; ++k) {
            std::string_view b = lines[k];
            const int n = static_cast<int>(k) + 1;
            if (b.substr(0, 2) == "$ ") {
                Command c;
                c.line = n;
                c.text = std::string(b.substr(2));
                std::string_view last = b;
                while (!last.empty() && last.back() == '\\' && k + 1 < close) {
                    last = lines[++k];
                    c.text += "\n" + std::string(last);
                }
                std::match_results<std::string_view::const_iterator> m;
                if (std::regex_search(last.begin(), last.end(), m, exitComment))
                    c.exit_status = std::stoi(m[2].str());
                ex.commands.push_back(std::move(c));
                continue;
            }
            if (squeeze(b).empty())
                continue;
            if (ex.commands.empty())
                fail(n, "output before the first `$ ` command of a vm-checked block");
            ex.commands.back().shown.emplace_back(b);
        }
        if (ex.commands.empty())
            fail(openLine, "a vm-checked block without a `$ ` command");
        examples.push_back(std::move(ex));
        i = close;
    }
    return examples;
}

}  // namespace readme
