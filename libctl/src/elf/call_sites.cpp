// Call-site reading for call_sites.hpp, through libdw.
#include "elf/call_sites.hpp"

#include <dwarf.h>

#include <algorithm>
#include <cstdlib>

#include "elf/dwarf_attr.hpp"

namespace probectl {

namespace {

// Deeper chains of tail calls are not followed: the answer is then a gap, not a chain.
constexpr int kMaxTailDepth = 8;

bool isCallSite(int tag) {
    return tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site;
}

bool hasCode(Dwarf_Die* die) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    return dwarf_ranges(die, 0, &base, &start, &end) > 0;
}

bool refAttr(Dwarf_Die* die, unsigned int at, Dwarf_Die* out) {
    Dwarf_Attribute a;
    return dwarf_attr(die, at, &a) && dwarf_formref_die(&a, out);
}

// The DIE a function's DIEs all lead to: concrete instances name their abstract one
// (DW_AT_abstract_origin), definitions their declaration (DW_AT_specification).
const void* identity(Dwarf_Die die) {
    for (int i = 0; i < 8; i++) {
        Dwarf_Die next;
        if (!refAttr(&die, DW_AT_abstract_origin, &next) &&
            !refAttr(&die, DW_AT_specification, &next))
            break;
        die = next;
    }
    return die.addr;
}

std::string_view linkageName(Dwarf_Die* die) {
    std::string_view n = dwarfString(die, DW_AT_linkage_name);
    return n.empty() ? dwarfString(die, DW_AT_MIPS_linkage_name) : n;
}

std::string functionName(Dwarf_Die* die) {
    std::string_view n = dwarfString(die, DW_AT_name);
    if (n.empty())
        n = linkageName(die);
    return n.empty() ? std::string("[unnamed]") : std::string(n);
}

// A call site's return address: DW_AT_call_return_pc (DWARF 5), DW_AT_low_pc (GNU).
bool returnPc(Dwarf_Die* site, std::uint64_t& ret) {
    Dwarf_Attribute a;
    Dwarf_Addr v = 0;
    if ((dwarf_attr(site, DW_AT_call_return_pc, &a) || dwarf_attr(site, DW_AT_low_pc, &a)) &&
        dwarf_formaddr(&a, &v) == 0) {
        ret = v;
        return true;
    }
    return false;
}

bool isTailCall(Dwarf_Die* site) {
    return dwarf_hasattr(site, DW_AT_call_tail_call) || dwarf_hasattr(site, DW_AT_GNU_tail_call);
}

// Visits the call sites under `root`, not those of functions nested in it.
template <typename F>
void eachCallSite(Dwarf_Die root, F&& visit) {
    std::vector<Dwarf_Die> todo{root};
    while (!todo.empty()) {
        Dwarf_Die die = todo.back();
        todo.pop_back();
        Dwarf_Die child;
        if (dwarf_child(&die, &child) != 0)
            continue;
        do {
            const int tag = dwarf_tag(&child);
            if (isCallSite(tag))
                visit(child);
            else if (dwarfMayHoldCode(tag) &&
                     !(tag == DW_TAG_subprogram && dwarf_tag(&root) == DW_TAG_subprogram))
                todo.push_back(child);
        } while (dwarf_siblingof(&child, &child) == 0);
    }
}

}  // namespace

struct CallSites::Walk {
    const InnerFrame& inner;
    const Dwarf_Die* inner_def;
    std::vector<const void*> on_path;  // identities of the functions being followed
    std::vector<TailCallFrame> path;
    std::vector<TailCallFrame> found;
    int ways = 0;
    bool unknown = false;  // some way may lead on that DWARF here cannot follow
};

CallSites::CallSites(Dwarf* dw, EntryOf entry_of) : dw_(dw), entry_of_(std::move(entry_of)) {}

CallSites::Unit* CallSites::unitAt(std::uint64_t addr) {
    Dwarf_Die cu;
    if (!dwarfUnitOf(dw_, addr, &cu))
        return nullptr;
    auto [it, fresh] = units_.try_emplace(dwarf_dieoffset(&cu));
    if (fresh)
        eachCallSite(cu, [&](Dwarf_Die site) {
            Site s;
            if (isTailCall(&site) || !returnPc(&site, s.ret))
                return;
            if (!refAttr(&site, DW_AT_call_origin, &s.origin) &&
                !refAttr(&site, DW_AT_abstract_origin, &s.origin))
                s.origin = Dwarf_Die{};
            it->second.calls.emplace(s.ret, s);
        });
    return &it->second;
}

// The function whose code holds `addr`: the innermost concrete subprogram of the scopes
// physically around it (not an inlined call's abstract origin).
std::optional<Dwarf_Die> CallSites::subprogramAt(std::uint64_t addr) {
    Dwarf_Die cu;
    if (!dwarfUnitOf(dw_, addr, &cu))
        return std::nullopt;
    Dwarf_Die* found = nullptr;
    const int nfound = dwarf_getscopes(&cu, addr, &found);
    Dwarf_Die* scopes = nullptr;
    const int n = nfound > 0 ? dwarf_getscopes_die(&found[0], &scopes) : 0;
    std::free(found);
    std::optional<Dwarf_Die> out;
    for (int i = 0; i < n && !out; i++)
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
            out = scopes[i];
    std::free(scopes);
    return out;
}

// The DIE with the code of the function `origin` names: itself when it has code; else
// (a declaration, an abstract instance) the function of this file's symbol of that name.
std::optional<Dwarf_Die> CallSites::definitionOf(Dwarf_Die origin) {
    if (hasCode(&origin))
        return origin;
    std::string_view name = linkageName(&origin);
    if (name.empty())
        name = dwarfString(&origin, DW_AT_name);
    if (name.empty())
        return std::nullopt;
    const auto entry = entry_of_(name);
    if (!entry)
        return std::nullopt;
    auto def = subprogramAt(*entry);
    if (!def)
        return std::nullopt;
    // The symbol's function must be the one named: same DIE, or same name in another CU.
    if (identity(*def) != identity(origin) &&
        (linkageName(&*def) != linkageName(&origin) ||
         dwarfString(&*def, DW_AT_name) != dwarfString(&origin, DW_AT_name)))
        return std::nullopt;
    return def;
}

std::vector<CallSites::Site> CallSites::tailCallsOf(Dwarf_Die def) {
    std::vector<Site> out;
    eachCallSite(def, [&](Dwarf_Die site) {
        Site s;
        if (!isTailCall(&site))
            return;
        // The jump's own address (DW_AT_call_pc, clang), else inside it, before the address
        // it would return to (gcc).
        Dwarf_Attribute a;
        Dwarf_Addr pc = 0;
        if (dwarf_attr(&site, DW_AT_call_pc, &a) && dwarf_formaddr(&a, &pc) == 0)
            s.ret = pc;
        else if (returnPc(&site, s.ret) && s.ret > 0)
            s.ret--;
        else
            return;
        if (!refAttr(&site, DW_AT_call_origin, &s.origin) &&
            !refAttr(&site, DW_AT_abstract_origin, &s.origin))
            s.origin = Dwarf_Die{};
        out.push_back(s);
    });
    return out;
}

// Whether `fn` is the inner frame's function: the same DIE, or its symbol's name (a clone
// "f.constprop.0" or a part "f.cold" is still f; another file's function is known only by
// its name).
bool CallSites::isInner(Dwarf_Die fn, const InnerFrame& inner, const Dwarf_Die* inner_def) {
    if (inner_def && identity(*inner_def) == identity(fn))
        return true;
    const std::string_view symbol =
        std::string_view(inner.symbol).substr(0, inner.symbol.find('.'));
    if (symbol.empty())
        return false;
    const std::string_view linkage = linkageName(&fn);
    return linkage.empty() ? dwarfString(&fn, DW_AT_name) == symbol : linkage == symbol;
}

void CallSites::search(Walk& w, Dwarf_Die def, int depth) {
    if (depth >= kMaxTailDepth) {
        w.unknown = true;
        return;
    }
    for (Site& s : tailCallsOf(def)) {
        if (w.ways > 1 || w.unknown)
            return;
        w.path.push_back({functionName(&def), s.ret});
        std::optional<Dwarf_Die> next;
        if (!s.origin.addr) {
            w.unknown = true;  // through a pointer: to anything
        } else if (isInner(s.origin, w.inner, w.inner_def)) {
            w.ways++;
            w.found = w.path;
        } else if ((next = definitionOf(s.origin))) {
            const void* id = identity(*next);
            if (std::find(w.on_path.begin(), w.on_path.end(), id) != w.on_path.end()) {
                w.unknown = true;  // a loop of tail calls: how often it went round is not kept
            } else {
                w.on_path.push_back(id);
                search(w, *next, depth + 1);
                w.on_path.pop_back();
            }
        } else {
            w.unknown = true;  // its code is in another file, whose tail calls are not read here
        }
        w.path.pop_back();
    }
}

const TailGap& CallSites::between(std::uint64_t ret, const InnerFrame& inner) {
    auto [it, fresh] = seen_.try_emplace({ret, inner.same_file, inner.addr, inner.symbol});
    TailGap& g = it->second;
    if (!fresh)
        return g;
    Unit* unit = ret ? unitAt(ret - 1) : nullptr;
    if (!unit)
        return g;
    auto site = unit->calls.find(ret);
    if (site == unit->calls.end() || !site->second.origin.addr)
        return g;
    const Dwarf_Die origin = site->second.origin;
    const auto inner_def = inner.same_file ? subprogramAt(inner.addr) : std::nullopt;
    const Dwarf_Die* inner_die = inner_def ? &*inner_def : nullptr;
    if (isInner(origin, inner, inner_die))
        return g;
    auto def = definitionOf(origin);
    if (!def || isInner(*def, inner, inner_die))
        return g;
    g.gone = true;
    g.callee = functionName(&*def);
    Walk w{inner, inner_die, {identity(*def)}, {}, {}, 0, false};
    search(w, *def, 0);
    if (w.ways == 1 && !w.unknown)
        g.chain = std::move(w.found);
    return g;
}

}  // namespace probectl
