// C++ names: the C++ runtime's demangler (Itanium C++ ABI, section 5.1 "Mangling"), and
// the short form users type without a parameter list.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "probectl/elf_resolver.hpp"

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

}  // namespace probectl
