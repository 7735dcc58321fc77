#include "elf/source_lines.hpp"

#include "elf/dwarf_attr.hpp"

#include <dwarf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace probectl {

namespace {

// Relative to the CU's compilation directory when under it, else absolute; never "..".
std::string shortPath(Dwarf_Die* cu, std::string_view path) {
    const std::filesystem::path dir(dwarfString(cu, DW_AT_comp_dir));
    std::filesystem::path p(path);
    if (p.is_relative() && !dir.empty())
        p = dir / p;
    p = p.lexically_normal();
    if (!dir.empty()) {
        const std::filesystem::path rel = p.lexically_relative(dir.lexically_normal());
        if (!rel.empty() && *rel.begin() != "..")
            return rel.string();
    }
    return p.string();
}

// DW_AT_call_file (an index into the CU's file table) and DW_AT_call_line of an inlined call.
void callSite(Dwarf_Die* cu, Dwarf_Die* inl, std::string& file, unsigned& line) {
    file.clear();
    line = 0;
    Dwarf_Attribute a;
    Dwarf_Word v = 0;
    Dwarf_Files* files = nullptr;
    size_t n = 0;
    if (dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 &&
        dwarf_getsrcfiles(cu, &files, &n) == 0 && v < n)
        if (const char* f = dwarf_filesrc(files, v, nullptr, nullptr))
            file = shortPath(cu, f);
    if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0)
        line = static_cast<unsigned>(v);
}

}  // namespace

std::unique_ptr<SourceLines> SourceLines::open(const std::string& dwarf_path) {
    const int fd = ::open(dwarf_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return nullptr;
    Dwarf* dw = dwarf_begin(fd, DWARF_C_READ);
    if (!dw) {
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<SourceLines>(new SourceLines(fd, dw));
}

SourceLines::~SourceLines() {
    dwarf_end(dw_);
    ::close(fd_);
}

const std::vector<SourceFrame>& SourceLines::at(std::uint64_t addr) {
    if (auto it = seen_.find(addr); it != seen_.end())
        return it->second;
    std::vector<SourceFrame>& out = seen_[addr];
    Dwarf_Die cu;
    if (!dwarfUnitOf(dw_, addr, &cu))
        return out;
    SourceFrame here;
    if (Dwarf_Line* l = dwarf_getsrc_die(&cu, addr)) {
        int line = 0;
        if (const char* f = dwarf_linesrc(l, nullptr, nullptr))
            here.file = shortPath(&cu, f);
        if (dwarf_lineno(l, &line) == 0 && line > 0)
            here.line = static_cast<unsigned>(line);
    }
    // dwarf_getscopes follows the innermost inlined call to its abstract origin, so past it
    // come the origin's own scopes, not the calls it was inlined into. The physical nesting
    // of that innermost scope (dwarf_getscopes_die) holds every inlined call, innermost
    // first, up to the concrete subprogram.
    Dwarf_Die* found = nullptr;
    const int nfound = dwarf_getscopes(&cu, addr, &found);
    Dwarf_Die* scopes = nullptr;
    const int n = nfound > 0 ? dwarf_getscopes_die(&found[0], &scopes) : 0;
    std::free(found);
    for (int i = 0; i < n; i++) {
        const int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram)
            break;
        if (tag != DW_TAG_inlined_subroutine)
            continue;
        here.inlined = std::string(dwarfString(&scopes[i], DW_AT_name));
        if (here.inlined.empty())
            here.inlined = "[inlined]";
        out.push_back(here);
        here.inlined.clear();
        callSite(&cu, &scopes[i], here.file, here.line);
    }
    std::free(scopes);
    out.push_back(std::move(here));
    return out;
}

}  // namespace probectl
