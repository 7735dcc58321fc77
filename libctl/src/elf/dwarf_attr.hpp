// A DIE's string attribute as libdw reads it, shared by the DWARF readers of this folder.
#pragma once

#include <elfutils/libdw.h>

#include <string_view>

namespace probectl {

// The attribute `at` of `die`, followed through DW_AT_abstract_origin and
// DW_AT_specification (dwarf_attr_integrate); empty when absent or not a string.
inline std::string_view dwarfString(Dwarf_Die* die, unsigned int at) {
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, at, &a))
        return {};
    const char* s = dwarf_formstring(&a);
    return s ? std::string_view(s) : std::string_view();
}

}  // namespace probectl
