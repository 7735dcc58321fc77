// Small libdw helpers shared by the DWARF readers of this folder: a DIE's string attribute,
// the unit that holds an address.
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

// The CU whose code holds `addr`: .debug_aranges when it answers; compilers may omit it,
// so then each CU's ranges.
inline bool dwarfUnitOf(Dwarf* dw, Dwarf_Addr addr, Dwarf_Die* cu) {
    if (dwarf_addrdie(dw, addr, cu))
        return true;
    Dwarf_CU* unit = nullptr;
    Dwarf_Die sub;
    Dwarf_Half version = 0;
    uint8_t type = 0;
    while (dwarf_get_units(dw, unit, &unit, &version, &type, cu, &sub) == 0)
        if (dwarf_haspc(cu, addr) > 0)
            return true;
    return false;
}

}  // namespace probectl
