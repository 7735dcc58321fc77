// Where a function was inlined: the DW_TAG_inlined_subroutine entries of the file's DWARF
// (DWARF 5, section 3.3.8.2) whose abstract origin has the function's name. A uprobe on
// the out-of-line copy never sees these calls; perf probe and SystemTap probe each copy.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
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

// A function whose copies were found: two of these are two functions of one name.
struct InlinedFunction {
    std::string linkage;    // DW_AT_linkage_name (the ELF symbol's name), "" for C
    std::string qualified;  // DWARF's name with its namespaces and classes ("a::h")
    bool operator==(const InlinedFunction&) const = default;
};

struct InlinedSearch {
    bool has_dwarf = false;                  // the file read has .debug_info
    std::string source;                      // that file, for explanations
    std::vector<InlinedCopy> copies;         // by entry address, one per address
    std::vector<InlinedFunction> functions;  // whose copies those are, each once
};

// The inlined copies of `name` in the DWARF of `dwarf_path` (the file itself, or its
// separate debug file). A function matches by its qualified DWARF name ("ns::g<double>",
// DW_AT_name within its namespaces and classes), by DW_AT_linkage_name, by the demangled
// linkage name as the ELF symbol table's C++ names match (with or without return type and
// parameters), or when its linkage name is one of `linkage_names` (the mangled names of the
// ELF symbols `name` matched, so that DWARF's "tw<long int>" is the ELF's "tw<long>").
// A bare name does not match a function in a namespace, as for ELF symbols. Unreadable or
// absent DWARF gives has_dwarf false and no copies.
InlinedSearch findInlinedCopies(const std::string& dwarf_path, std::string_view name,
                                const std::vector<std::string>& linkage_names = {});

// findInlinedCopies of one file's DWARF for many names (a glob's): the DWARF is read (its
// sections decompressed, every unit's scopes and their subprograms' names) once, not per
// name.
// One thread at a time.
class InlinedCopyFinder {
  public:
    // `elf`: the file with the DWARF, which the caller keeps open longer than the finder;
    // `source`: its path, for explanations.
    InlinedCopyFinder(Elf* elf, std::string source);
    ~InlinedCopyFinder();
    InlinedCopyFinder(const InlinedCopyFinder&) = delete;
    InlinedCopyFinder& operator=(const InlinedCopyFinder&) = delete;

    InlinedSearch find(std::string_view name,
                       const std::vector<std::string>& linkage_names = {}) const;

  private:
    struct Units;  // the scopes of every unit, read once
    Dwarf* dw_ = nullptr;
    std::string source_;
    std::unique_ptr<Units> units_;
};

}  // namespace probectl
