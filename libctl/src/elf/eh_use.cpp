// Exception use of an ELF file, from its sections and symbol tables (eh_use.hpp).
#include "elf/eh_use.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gelf.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "elf/elf_handle.hpp"

namespace probectl {

namespace {

// What C++ code that throws or catches refers to (or libstdc++ and libgcc_s define). Not
// .gcc_except_table or _Unwind_Resume alone: C built with -fexceptions has those (glibc
// does, for thread cancellation), and a uretprobe on malloc must stay possible.
constexpr std::array<std::string_view, 4> kUnwindSymbols = {
    "__cxa_throw", "__cxa_rethrow", "__gxx_personality_v0", "_Unwind_RaiseException"};

void symbolsUsed(Elf* elf, Elf_Scn* scn, std::vector<std::string_view>& found) {
    GElf_Shdr sh;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!gelf_getshdr(scn, &sh) || !data || !sh.sh_entsize)
        return;
    for (std::size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym))
            continue;
        const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name)
            continue;
        std::string_view n(name);
        n = n.substr(0, n.find('@'));
        for (std::string_view want : kUnwindSymbols)
            if (n == want && std::find(found.begin(), found.end(), want) == found.end())
                found.push_back(want);
    }
}

}  // namespace

std::string exceptionUse(const std::string& path) {
    auto h = ElfHandle::open(path);
    if (!h)
        return {};
    return exceptionUse(h->get());
}

std::string exceptionUse(Elf* elf) {
    std::vector<std::string_view> found;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
            symbolsUsed(elf, scn, found);
    }
    if (found.empty())
        return {};
    return fmt::format("it uses {}", fmt::join(found, ", "));
}

}  // namespace probectl
