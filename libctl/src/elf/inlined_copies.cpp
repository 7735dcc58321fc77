// DWARF walk for inlined_copies.hpp, through elfutils' libdw.
#include "elf/inlined_copies.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "elf/dwarf_attr.hpp"
#include "probectl/elf_resolver.hpp"

namespace probectl {

namespace {

bool named(Dwarf_Die* die, std::string_view name) {
    if (dwarfString(die, DW_AT_name) == name)
        return true;
    const std::string_view linkage = dwarfString(die, DW_AT_linkage_name);
    if (linkage.empty())
        return false;
    return linkage == name || withoutParameters(demangle(linkage)) == name;
}

// The copy's entry: DW_AT_entry_pc when it lies within the copy's span (GCC may put it in
// an empty range, where the first instruction of the copy's own work is; a constant form is
// an offset from the base in DWARF 5, which older libdw reads as an address), else the
// lowest range start.
bool entryOf(Dwarf_Die* die, std::uint64_t& entry) {
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> ranges;
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;)
        ranges.emplace_back(start, end);
    if (ranges.empty())
        return false;
    const Dwarf_Addr lo = std::min_element(ranges.begin(), ranges.end())->first;
    Dwarf_Addr hi = 0;
    for (const auto& r : ranges)
        hi = std::max(hi, r.second);
    Dwarf_Addr pc = 0;
    entry = dwarf_entrypc(die, &pc) == 0 && pc >= lo && pc < hi ? pc : lo;
    return true;
}

InlinedCopy copyAt(Dwarf_Die* die, Dwarf_Die* cu, std::uint64_t entry) {
    InlinedCopy c;
    c.entry = entry;
    Dwarf_Attribute a;
    Dwarf_Word w = 0;
    if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
        c.call_line = static_cast<unsigned>(w);
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && w < nfiles)
        if (const char* f = dwarf_filesrc(files, w, nullptr, nullptr))
            c.call_file = f;
    return c;
}

void walk(Dwarf_Die* cu, std::string_view name, std::vector<InlinedCopy>& out) {
    std::vector<Dwarf_Die> todo{*cu};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        std::uint64_t entry = 0;
        if (dwarf_tag(&die) == DW_TAG_inlined_subroutine && named(&die, name) &&
            entryOf(&die, entry))
            out.push_back(copyAt(&die, cu, entry));
        Dwarf_Die child;
        if (!dwarfMayHoldCode(dwarf_tag(&die)) || dwarf_child(&die, &child) != 0)
            continue;
        do {
            if (dwarfMayHoldCode(dwarf_tag(&child)))
                todo.push_back(child);
        } while (dwarf_siblingof(&child, &child) == 0);
    }
}

// Whether the CU can hold inlined copies of `name`: it has the function's abstract instance
// (a subprogram with DW_AT_inline, GCC and clang put it in each CU that inlines it), or it
// imports or is a unit shared by others (dwz, LTO), where the origin may be elsewhere. Only
// top-level entries and their namespaces and classes are read: a deep walk of every
// function body is what makes a large file's DWARF slow.
bool mayInline(Dwarf_Die* cu, std::string_view name) {
    if (dwarf_tag(cu) == DW_TAG_partial_unit)
        return true;
    std::vector<Dwarf_Die> todo{*cu};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        Dwarf_Die child;
        if (dwarf_child(&die, &child) != 0)
            continue;
        do {
            switch (dwarf_tag(&child)) {
                case DW_TAG_imported_unit:
                    return true;
                case DW_TAG_subprogram:
                    if (dwarf_hasattr(&child, DW_AT_inline) && named(&child, name))
                        return true;
                    break;
                case DW_TAG_namespace:
                case DW_TAG_class_type:
                case DW_TAG_structure_type:
                case DW_TAG_union_type:
                    todo.push_back(child);
                    break;
                default:
                    break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    return false;
}

}  // namespace

InlinedSearch findInlinedCopies(const std::string& dwarf_path, std::string_view name) {
    InlinedSearch s;
    s.source = dwarf_path;
    const int fd = ::open(dwarf_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s;
    Dwarf* dw = dwarf_begin(fd, DWARF_C_READ);
    if (dw) {
        Dwarf_CU* cu = nullptr;
        Dwarf_Die cudie, subdie;
        Dwarf_Half version = 0;
        uint8_t unit_type = 0;
        while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
            s.has_dwarf = true;
            if (mayInline(&cudie, name))
                walk(&cudie, name, s.copies);
        }
        dwarf_end(dw);
    }
    ::close(fd);
    std::sort(s.copies.begin(), s.copies.end(),
              [](const InlinedCopy& a, const InlinedCopy& b) { return a.entry < b.entry; });
    s.copies.erase(
        std::unique(s.copies.begin(), s.copies.end(),
                    [](const InlinedCopy& a, const InlinedCopy& b) { return a.entry == b.entry; }),
        s.copies.end());
    return s;
}

}  // namespace probectl
