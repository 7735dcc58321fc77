// Small libdw helpers shared by the DWARF readers of this folder: a DIE's string attribute,
// the unit that holds an address, which DIEs can hold code.
#pragma once

#include <dwarf.h>
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

// Tags whose children can hold code (inlined calls, call sites); types and variables cannot.
inline bool dwarfMayHoldCode(int tag) {
    switch (tag) {
        case DW_TAG_compile_unit:
        case DW_TAG_partial_unit:
        case DW_TAG_namespace:
        case DW_TAG_subprogram:
        case DW_TAG_lexical_block:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
            return true;
        default:
            return false;
    }
}

}  // namespace probectl
