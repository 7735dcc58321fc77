// DWARF walk for inlined_copies.hpp, through elfutils' libdw.
#include "elf/inlined_copies.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "elf/dwarf_attr.hpp"
#include "elf/elf_handle.hpp"
#include "probectl/elf_resolver.hpp"

namespace probectl {

namespace {

struct Want {
    std::string_view name;
    const std::vector<std::string>& linkages;
    bool has_params = hasParameterList(name);
    // The name in normalizeCxxName's spelling, and the identifier every match contains.
    std::string normalized = normalizeCxxName(name);
    std::string_view key = cxxNameKey(normalized);
};

// Whether the subprogram called `qualified` with its scopes, with DW_AT_linkage_name
// `linkage` and DW_AT_name `plain_name`, is the wanted function.
bool namedAs(std::string_view qualified, std::string_view linkage, std::string_view plain_name,
             const Want& w) {
    if (qualified == w.name)
        return true;
    if (linkage.empty())
        return false;
    if (linkage == w.name ||
        std::find(w.linkages.begin(), w.linkages.end(), linkage) != w.linkages.end())
        return true;
    // Demangling every declaration of a large C++ file is slow: a name that does not hold
    // DWARF's (up to its template arguments, which DWARF spells its own way) cannot match.
    const std::string_view stem = plain_name.substr(0, plain_name.find('<'));
    if (!stem.empty() && w.name.find(stem) == std::string_view::npos)
        return false;
    // The forms ElfResolver::functionsNamed accepts of a demangled ELF name.
    const std::string d = demangle(linkage);
    if (d == w.name)
        return true;
    if (d.find(w.key) == std::string::npos)
        return false;
    return cxxNameMatches(d, w.normalized, w.has_params);
}

// Whether the subprogram `die`, called `qualified` with its scopes, is the wanted function.
bool named(Dwarf_Die* die, std::string_view qualified, const Want& w) {
    return namedAs(qualified, dwarfString(die, DW_AT_linkage_name), dwarfString(die, DW_AT_name),
                   w);
}

// The subprogram an inlined copy is of: its DW_AT_abstract_origin.
bool originOf(Dwarf_Die* die, Dwarf_Die* origin) {
    Dwarf_Attribute a;
    return dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, origin);
}

// Whether `d`, or a DIE it completes or is an instance of, is in `matched`.
bool chainMatched(Dwarf_Die d, const std::set<Dwarf_Off>& matched) {
    for (int depth = 0; depth < 4; ++depth) {
        if (matched.count(dwarf_dieoffset(&d)))
            return true;
        Dwarf_Attribute a;
        if (!(dwarf_attr(&d, DW_AT_specification, &a) ||
              dwarf_attr(&d, DW_AT_abstract_origin, &a)) ||
            !dwarf_formref_die(&a, &d))
            break;
    }
    return false;
}

// Whether the inlined copy `die` is of a wanted function: its origin, or the declaration
// the origin completes (DW_AT_specification), was matched among the scopes' subprograms
// (`matched`, DIE offsets). An origin not seen there (a unit shared by dwz) matches by its
// linkage name, or by its plain name when it has none (C).
bool inlinedOf(Dwarf_Die* die, const std::set<Dwarf_Off>& matched, const Want& w) {
    Dwarf_Die origin;
    if (!originOf(die, &origin))
        return false;
    if (chainMatched(origin, matched))
        return true;
    const std::string_view linkage = dwarfString(&origin, DW_AT_linkage_name);
    return named(&origin, linkage.empty() ? dwarfString(&origin, DW_AT_name) : std::string_view(),
                 w);
}

InlinedFunction functionOf(Dwarf_Die* die, const std::map<Dwarf_Off, std::string>& qualified) {
    InlinedFunction f;
    Dwarf_Die origin;
    if (!originOf(die, &origin))
        return f;
    f.linkage = std::string(dwarfString(&origin, DW_AT_linkage_name));
    Dwarf_Die d = origin;
    for (int depth = 0; depth < 4; ++depth) {
        if (auto it = qualified.find(dwarf_dieoffset(&d)); it != qualified.end()) {
            f.qualified = it->second;
            return f;
        }
        Dwarf_Attribute a;
        if (!(dwarf_attr(&d, DW_AT_specification, &a) ||
              dwarf_attr(&d, DW_AT_abstract_origin, &a)) ||
            !dwarf_formref_die(&a, &d))
            break;
    }
    f.qualified = std::string(dwarfString(&origin, DW_AT_name));
    return f;
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

void walk(Dwarf_Die* cu, const std::set<Dwarf_Off>& matched,
          const std::map<Dwarf_Off, std::string>& qualified, const Want& w,
          std::vector<InlinedCopy>& out, std::vector<InlinedFunction>& functions) {
    std::vector<Dwarf_Die> todo{*cu};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        std::uint64_t entry = 0;
        if (dwarf_tag(&die) == DW_TAG_inlined_subroutine && inlinedOf(&die, matched, w) &&
            entryOf(&die, entry)) {
            out.push_back(copyAt(&die, cu, entry));
            InlinedFunction f = functionOf(&die, qualified);
            if (std::find(functions.begin(), functions.end(), f) == functions.end())
                functions.push_back(std::move(f));
        }
        Dwarf_Die child;
        if (!dwarfMayHoldCode(dwarf_tag(&die)) || dwarf_child(&die, &child) != 0)
            continue;
        do {
            if (dwarfMayHoldCode(dwarf_tag(&child)))
                todo.push_back(child);
        } while (dwarf_siblingof(&child, &child) == 0);
    }
}

// What of a unit every search reads: the subprograms of its top level and of its namespaces
// and classes, with their qualified names; the abstract ones (DW_AT_inline: inlined
// somewhere); whether it imports or is a unit shared by others (dwz, LTO), where an origin
// may be elsewhere. Only these scopes are read: a deep walk of every function body is what
// makes a large file's DWARF slow.
struct ScopeFunction {
    Dwarf_Off offset = 0;
    std::string qualified;
    std::string_view linkage;  // strings of the DWARF's own sections: valid while it is open
    std::string_view plain_name;
};
struct UnitScopes {
    Dwarf_Die cu;
    bool shared = false;
    std::vector<ScopeFunction> functions;
    std::vector<Dwarf_Die> abstract;
};

UnitScopes readScopes(Dwarf_Die* cu) {
    UnitScopes u{*cu, dwarf_tag(cu) == DW_TAG_partial_unit, {}, {}};
    std::vector<std::pair<Dwarf_Die, std::string>> todo{{*cu, ""}};
    while (!todo.empty()) {
        auto [die, scope] = todo.back();
        todo.pop_back();
        Dwarf_Die child;
        if (dwarf_child(&die, &child) != 0)
            continue;
        do {
            const int tag = dwarf_tag(&child);
            const std::string_view n = dwarfString(&child, DW_AT_name);
            switch (tag) {
                case DW_TAG_imported_unit:
                    u.shared = true;
                    break;
                case DW_TAG_subprogram: {
                    if (dwarf_hasattr(&child, DW_AT_inline))
                        u.abstract.push_back(child);
                    // A definition completing a declaration (DW_AT_specification), or an
                    // instance of an abstract one, takes that one's scope, found where it is.
                    if (dwarf_hasattr(&child, DW_AT_specification) ||
                        dwarf_hasattr(&child, DW_AT_abstract_origin))
                        break;
                    u.functions.push_back({dwarf_dieoffset(&child), scope + std::string(n),
                                           dwarfString(&child, DW_AT_linkage_name), n});
                    break;
                }
                case DW_TAG_namespace:
                case DW_TAG_class_type:
                case DW_TAG_structure_type:
                case DW_TAG_union_type:
                    // c++filt's spelling of an unnamed namespace.
                    todo.emplace_back(child, scope +
                                                 (n.empty() ? std::string("(anonymous namespace)")
                                                            : std::string(n)) +
                                                 "::");
                    break;
                default:
                    break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    return u;
}

// The unit's scope subprograms that are the wanted function (into `matched`, with their
// qualified names into `qualified`), and whether the unit can hold inlined copies of it: it
// has such a subprogram (GCC and clang put the abstract instance in each CU that inlines
// it), or it is shared (UnitScopes).
bool mayInline(const UnitScopes& u, const Want& w, std::set<Dwarf_Off>& matched,
               std::map<Dwarf_Off, std::string>& qualified) {
    for (const ScopeFunction& f : u.functions)
        if (namedAs(f.qualified, f.linkage, f.plain_name, w)) {
            matched.insert(f.offset);
            qualified.emplace(f.offset, f.qualified);
        }
    return u.shared || std::any_of(u.abstract.begin(), u.abstract.end(),
                                   [&](const Dwarf_Die& d) { return chainMatched(d, matched); });
}

}  // namespace

struct InlinedCopyFinder::Units {
    std::vector<UnitScopes> units;
};

InlinedCopyFinder::InlinedCopyFinder(Elf* elf, std::string source)
    : dw_(dwarf_begin_elf(elf, DWARF_C_READ, nullptr)),
      source_(std::move(source)),
      units_(std::make_unique<Units>()) {
    if (!dw_)
        return;
    Dwarf_CU* cu = nullptr;
    Dwarf_Die cudie, subdie;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    while (dwarf_get_units(dw_, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0)
        units_->units.push_back(readScopes(&cudie));
}

InlinedCopyFinder::~InlinedCopyFinder() {
    if (dw_)
        dwarf_end(dw_);
}

InlinedSearch InlinedCopyFinder::find(std::string_view name,
                                      const std::vector<std::string>& linkage_names) const {
    InlinedSearch s;
    s.source = source_;
    if (dw_) {
        const Want w{name, linkage_names};
        // Every unit's scopes first: an origin may be in a unit that comes later (dwz).
        std::set<Dwarf_Off> matched;
        std::map<Dwarf_Off, std::string> qualified;
        std::vector<Dwarf_Die> units;
        for (const UnitScopes& u : units_->units) {
            s.has_dwarf = true;
            if (mayInline(u, w, matched, qualified))
                units.push_back(u.cu);
        }
        for (Dwarf_Die& u : units)
            walk(&u, matched, qualified, w, s.copies, s.functions);
    }
    std::sort(s.copies.begin(), s.copies.end(),
              [](const InlinedCopy& a, const InlinedCopy& b) { return a.entry < b.entry; });
    s.copies.erase(
        std::unique(s.copies.begin(), s.copies.end(),
                    [](const InlinedCopy& a, const InlinedCopy& b) { return a.entry == b.entry; }),
        s.copies.end());
    return s;
}

InlinedSearch findInlinedCopies(const std::string& dwarf_path, std::string_view name,
                                const std::vector<std::string>& linkage_names) {
    auto h = ElfHandle::open(dwarf_path);
    if (!h) {
        InlinedSearch s;
        s.source = dwarf_path;
        return s;
    }
    return InlinedCopyFinder(h->get(), dwarf_path).find(name, linkage_names);
}

}  // namespace probectl
