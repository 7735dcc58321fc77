// C++ names: the C++ runtime's demangler (Itanium C++ ABI, section 5.1 "Mangling"), and
// the short form users type without a parameter list.
#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

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
