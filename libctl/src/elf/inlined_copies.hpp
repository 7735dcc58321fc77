// Where a function was inlined: the DW_TAG_inlined_subroutine entries of the file's DWARF
// (DWARF 5, section 3.3.8.2) whose abstract origin has the function's name. A uprobe on
// the out-of-line copy never sees these calls; perf probe and SystemTap probe each copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace probectl {

struct InlinedCopy {
    // ELF address of the copy's entry: DW_AT_entry_pc, else the start of its lowest range.
    std::uint64_t entry = 0;
    std::string call_file;   // where the call was written (DW_AT_call_file), "" if unknown
    unsigned call_line = 0;  // DW_AT_call_line, 0 if unknown
};

struct InlinedSearch {
    bool has_dwarf = false;           // the file read has .debug_info
    std::string source;               // that file, for explanations
    std::vector<InlinedCopy> copies;  // by entry address, one per address
};

// The inlined copies of `name` (DW_AT_name, or DW_AT_linkage_name for C++; a demangled
// name matches without its parameter list) in the DWARF of `dwarf_path`: the file itself, or
// its separate debug file. Unreadable or absent DWARF gives has_dwarf false and no copies.
InlinedSearch findInlinedCopies(const std::string& dwarf_path, std::string_view name);

}  // namespace probectl
