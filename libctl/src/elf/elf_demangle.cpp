// C++ names: the C++ runtime's demangler (Itanium C++ ABI, section 5.1 "Mangling"), and
// the short form users type without a parameter list.
#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "probectl/elf_resolver.hpp"
#include "probectl/glob.hpp"

namespace probectl {

std::string demangle(std::string_view name) {
    if (!name.starts_with("_Z"))
        return std::string(name);
    int status = 0;
    const std::string copy(name);
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : copy;
}

std::string withoutParameters(std::string_view d) {
    // Trailing cv/ref qualifiers of member functions follow the parameter list.
    for (std::string_view q : {" const", " volatile", " &&", " &"})
        while (d.ends_with(q))
            d.remove_suffix(q.size());
    if (!d.ends_with(')'))
        return std::string(d);
    // Walk back to the '(' that opens the final parameter list; parameters may contain
    // parentheses of their own (function pointer types).
    int depth = 0;
    for (std::size_t i = d.size(); i-- > 0;) {
        if (d[i] == ')')
            ++depth;
        else if (d[i] == '(' && --depth == 0)
            return std::string(d.substr(0, i));
    }
    return std::string(d);
}

namespace {

bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The length of the operator's symbol after "operator" at `at` ("<" of "operator< <int>",
// "()" of "operator()<int>"), 0 when none: its brackets do not nest.
std::size_t operatorSymbolLength(std::string_view s, std::size_t at) {
    static constexpr std::string_view kSymbols[] = {
        "()", "[]", "->*", "->", "<=>", "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=",
        "&&", "||", "++",  "--", "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "+",
        "-",  "*",  "/",   "%",  "^",   "&",   "|",   "~",  "!",  "=",  "<",  ">",  ","};
    for (std::string_view sym : kSymbols)
        if (s.substr(at).starts_with(sym))
            return sym.size();
    return 0;
}

}  // namespace

std::string withoutReturnType(std::string_view d) {
    // A clone's suffix follows the parameters: "int f<int>(int) [clone .isra.0]".
    std::string_view tail;
    if (const auto c = d.find(" [clone "); c != std::string_view::npos) {
        tail = d.substr(c);
        d = d.substr(0, c);
    }
    const std::string name = withoutParameters(d);
    const std::string_view rest = d.substr(name.size());
    // Only a function template's name carries its return type (Itanium C++ ABI 5.1.5.3), and
    // that name ends with its template arguments, perhaps followed by ABI tags
    // ("f<int>[abi:cxx11]").
    std::string_view n = name;
    while (n.ends_with(']')) {
        const auto tag = n.rfind("[abi:");
        if (tag == std::string_view::npos)
            break;
        n = n.substr(0, tag);
    }
    if (!n.ends_with('>'))
        return std::string(d) + std::string(tail);
    // The name starts after the last space outside brackets: "std::vector<int, std::
    // allocator<int> > make<int>", "(anonymous namespace)::f<int>" and "{lambda(int)#1}" keep
    // theirs. An operator's symbol is no bracket ("bool operator< <int>").
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (name.compare(i, 8, "operator") == 0 && (i == 0 || !isIdentifierChar(name[i - 1])) &&
            (i + 8 == name.size() || !isIdentifierChar(name[i + 8]))) {
            const std::size_t sym = operatorSymbolLength(name, i + 8);
            if (sym == 0)
                break;  // operator new, a conversion operator: the rest is the name
            i += 8 + sym - 1;
            if (i + 1 < name.size() && name[i + 1] == ' ')
                ++i;  // "operator< <int>": the space is the name's
            continue;
        }
        if (c == '<' || c == '(' || c == '[' || c == '{')
            ++depth;
        else if (c == '>' || c == ')' || c == ']' || c == '}')
            --depth;
        else if (c == ' ' && depth == 0)
            start = i + 1;
    }
    return name.substr(start) + std::string(rest) + std::string(tail);
}

namespace {

bool isWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool isCv(std::string_view t) {
    return t == "const" || t == "volatile";
}

// Tokens of a C++ name: words (identifiers, numbers), "::", and single punctuation.
std::vector<std::string_view> cxxTokens(std::string_view s) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < s.size();) {
        if (std::isspace(static_cast<unsigned char>(s[i]))) {
            ++i;
        } else if (isWordChar(s[i])) {
            std::size_t j = i;
            while (j < s.size() && isWordChar(s[j]))
                ++j;
            out.push_back(s.substr(i, j - i));
            i = j;
        } else if (s.substr(i).starts_with("::")) {
            out.push_back(s.substr(i, 2));
            i += 2;
        } else {
            out.push_back(s.substr(i, 1));
            ++i;
        }
    }
    return out;
}

bool isIntegerWord(std::string_view t) {
    return t == "signed" || t == "unsigned" || t == "short" || t == "long" || t == "int" ||
           t == "char" || t == "double";
}

// The demangler's spelling of a builtin type written with the words `w` in any order
// ("long unsigned int" -> "unsigned long", "unsigned" -> "unsigned int"; signed char stays
// apart from char), "" when they name no type ("short char").
std::string_view builtinTypeSpelling(std::span<const std::string_view> w) {
    int sign = 0, unsign = 0, shorts = 0, longs = 0, ints = 0, chars = 0, doubles = 0;
    for (std::string_view x : w) {
        sign += x == "signed";
        unsign += x == "unsigned";
        shorts += x == "short";
        longs += x == "long";
        ints += x == "int";
        chars += x == "char";
        doubles += x == "double";
    }
    if (sign + unsign > 1 || ints > 1 || chars > 1 || doubles > 1 || shorts > 1 || longs > 2)
        return {};
    if (chars)
        return shorts || longs || ints || doubles ? std::string_view()
               : sign                             ? "signed char"
               : unsign                           ? "unsigned char"
                                                  : "char";
    if (doubles)
        return sign || unsign || shorts || ints || longs > 1 ? std::string_view()
               : longs                                       ? "long double"
                                                             : "double";
    if (shorts)
        return longs ? std::string_view() : unsign ? "unsigned short" : "short";
    if (longs == 2)
        return unsign ? "unsigned long long" : "long long";
    if (longs == 1)
        return unsign ? "unsigned long" : "long";
    return unsign ? "unsigned int" : "int";
}

}  // namespace

bool hasParameterList(std::string_view name) {
    for (std::size_t i = name.find('('); i != std::string_view::npos; i = name.find('(', i + 1)) {
        // The "()" of "operator()" is the operator's name.
        std::string_view before = name.substr(0, i);
        while (!before.empty() && before.back() == ' ')
            before.remove_suffix(1);
        const std::size_t close = name.find_first_not_of(' ', i + 1);
        if (before.ends_with("operator") &&
            (before.size() == 8 || !isIdentifierChar(before[before.size() - 9])) &&
            close != std::string_view::npos && name[close] == ')') {
            i = close;
            continue;
        }
        return true;
    }
    return false;
}

std::string normalizeCxxName(std::string_view name) {
    std::vector<std::string_view> t = cxxTokens(name);
    // A builtin type in the demangler's words ("unsigned" -> "unsigned int", "long int" ->
    // "long"), one token.
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (!isIntegerWord(t[i]))
            continue;
        std::size_t j = i;
        while (j < t.size() && isIntegerWord(t[j]))
            ++j;
        const std::string_view type =
            builtinTypeSpelling(std::span<const std::string_view>(t.data() + i, j - i));
        if (type.empty()) {
            i = j - 1;
            continue;
        }
        t[i] = type;
        t.erase(t.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                t.begin() + static_cast<std::ptrdiff_t>(j));
    }
    // "const T" -> "T const" where a type starts (the name's start, after '(' ',' '<'): the
    // demangler writes every cv-qualifier after what it qualifies ("char const*").
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (!(i == 0 || t[i - 1] == "(" || t[i - 1] == "," || t[i - 1] == "<") || !isCv(t[i]))
            continue;
        std::size_t j = i;
        while (j < t.size() && isCv(t[j]))
            ++j;
        // The type's words, scopes and template arguments, up to its declarator (* & [ ( )
        // or the end of the parameter).
        std::size_t k = j;
        while (k < t.size()) {
            if (t[k] == "<") {
                int depth = 0;
                for (; k < t.size(); ++k) {
                    if (t[k] == "<")
                        ++depth;
                    else if (t[k] == ">" && --depth == 0)
                        break;
                }
                if (k < t.size())
                    ++k;
            } else if (t[k] == "::" || (isWordChar(t[k][0]) && !isCv(t[k]))) {
                ++k;
            } else {
                break;
            }
        }
        if (k == j)
            continue;
        std::rotate(t.begin() + i, t.begin() + j, t.begin() + k);
    }
    // One spelling of the blanks: one space between two words ("unsigned long",
    // "char const"), none elsewhere ("char const*", "f(int,long)", "vector<pair<int,int>>").
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (i > 0 && isWordChar(t[i - 1].back()) && isWordChar(t[i][0]))
            out += ' ';
        out += t[i];
    }
    return out;
}

bool cxxNameMatches(std::string_view demangled, std::string_view want, bool has_params) {
    if (normalizeCxxName(demangled) == want)
        return true;
    const std::string plain = withoutReturnType(demangled);
    if (normalizeCxxName(plain) == want)
        return true;
    return !has_params && (normalizeCxxName(withoutParameters(demangled)) == want ||
                           normalizeCxxName(withoutParameters(plain)) == want);
}

std::string_view cxxNameKey(std::string_view normalized) {
    const std::string_view head = normalized.substr(0, normalized.find_first_of("(<"));
    std::size_t start = head.size();
    while (start > 0 && (isWordChar(head[start - 1]) || head[start - 1] == ':'))
        --start;
    return head.substr(start);
}

bool ElfSymbol::matchesGlob(std::string_view glob) const {
    if (globMatch(glob, name))
        return true;
    if (demangled == name)
        return false;
    const std::string plain = withoutReturnType(demangled);
    return globMatch(glob, demangled) || globMatch(glob, plain) ||
           globMatch(glob, withoutParameters(plain));
}

}  // namespace probectl
