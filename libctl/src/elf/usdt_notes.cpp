// .note.stapsdt -> UsdtProbe: the note layout of <sys/sdt.h> (_SDT_NOTE_NAME "stapsdt",
// _SDT_NOTE_TYPE 3), read through libelf's note iterator.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gelf.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <unistd.h>

#include "elf/elf_handle.hpp"
#include "elf/usdt_notes.hpp"

namespace probectl {

namespace {

constexpr unsigned kStapsdtNoteType = 3;

// A NUL-terminated string at desc[*at], advancing *at past its NUL.
bool takeString(const char* desc, std::size_t size, std::size_t* at, std::string* out) {
    if (*at >= size)
        return false;
    const void* nul = std::memchr(desc + *at, '\0', size - *at);
    if (!nul)
        return false;
    const std::size_t len = static_cast<const char*>(nul) - (desc + *at);
    out->assign(desc + *at, len);
    *at += len + 1;
    return true;
}

// Whether a writable PT_LOAD before `seg` maps the file page holding `offset`: the
// mappings are made in program-header order, whole pages at a time.
bool semaphorePageShared(const ElfResolver& file, const LoadSegment& seg, std::uint64_t offset) {
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    for (const LoadSegment& s : file.loadSegments()) {
        if (s.index >= seg.index || !s.writable() || s.filesz == 0)
            continue;
        const std::uint64_t first = s.offset & ~(page - 1);
        const std::uint64_t end = (s.offset + s.filesz + page - 1) & ~(page - 1);
        if (offset >= first && offset < end)
            return true;
    }
    return false;
}

// A file's symbols by name, in table order, indexed on the first lookup: a scan of the
// whole table per symbol operand made a file with many of them slow to open.
class SymbolsByName {
  public:
    explicit SymbolsByName(const ElfResolver& file) : file_(file) {}

    const std::vector<const ElfSymbol*>& named(std::string_view name) {
        if (!built_) {
            for (const ElfSymbol& s : file_.symbols())
                index_[s.name].push_back(&s);
            built_ = true;
        }
        static const std::vector<const ElfSymbol*> none;
        const auto it = index_.find(name);
        return it == index_.end() ? none : it->second;
    }

  private:
    const ElfResolver& file_;
    bool built_ = false;
    // Keys view the names in file_.symbols(), which outlive the index.
    std::unordered_map<std::string_view, std::vector<const ElfSymbol*>> index_;
};

// The symbol of argument `n` (1-based) of probe `p` in the file's symbol table, and the
// displacement that makes its operand's address right whatever the load bias
// (UsdtArg::symbol). The error says why not.
Result<void> resolveSymbol(UsdtArg& a, std::size_t n, const UsdtProbe& p, const ElfResolver& file,
                           SymbolsByName& symbols) {
    auto fail = [&](const std::string& why) {
        return makeError(EINVAL,
                         fmt::format("argument {}: USDT argument '{}': {}", n, a.text, why));
    };
    std::vector<const ElfSymbol*> found;
    for (const ElfSymbol* s : symbols.named(a.symbol))
        if (std::none_of(found.begin(), found.end(),
                         [&](const ElfSymbol* f) { return f->value == s->value; }))
            found.push_back(s);
    if (found.empty())
        return fail(
            fmt::format("symbol '{}' is not in {}'s symbol table ({}); a file with "
                        "its .symtab, or its debug file, is needed",
                        a.symbol, file.path(), file.symbolSource()));
    if (found.size() > 1) {
        std::vector<std::string> where;
        for (const ElfSymbol* f : found)
            where.push_back(
                fmt::format("{:#x}{}", f->value, f->file.empty() ? "" : " in " + f->file));
        return fail(
            fmt::format("symbol '{}' names {} objects in {} ({}): the operand could "
                        "mean any of them",
                        a.symbol, found.size(), file.path(), fmt::join(where, ", ")));
    }
    a.symbol_address = found[0]->value + static_cast<std::uint64_t>(a.symbol_addend);
    std::int64_t disp = 0;
    if (a.reg.empty() || a.reg == "rip") {
        // From the probe site: ELF addresses move with the load bias together.
        disp = static_cast<std::int64_t>(a.symbol_address - p.pc);
        a.ip_relative = true;
    } else if (file.type() == ElfResolver::Type::Executable) {
        disp = static_cast<std::int64_t>(a.symbol_address);
    } else {
        return fail(
            fmt::format("symbol '{}' beside base register %{} in a position-independent "
                        "file (ET_DYN): its load bias cannot be added",
                        a.symbol, a.reg));
    }
    // The kernel's dereference takes a 32-bit displacement, as the instruction itself does.
    if (disp < INT32_MIN || disp > INT32_MAX)
        return fail(fmt::format(
            "symbol '{}' at {:#x} is beyond a 32-bit displacement from {}", a.symbol,
            a.symbol_address,
            a.ip_relative ? fmt::format("the probe site {:#x}", p.pc) : std::string("address 0")));
    a.offset = disp;
    return {};
}

}  // namespace

Result<std::vector<UsdtProbe>> readUsdtNotes(Elf* elf, const ElfResolver& file) {
    std::vector<UsdtProbe> out;
    Elf_Scn* notes = findSection(elf, ".note.stapsdt");
    if (!notes)
        return out;
    // Without .stapsdt.base nothing can have moved the file: no adjustment.
    std::uint64_t base_now = 0;
    bool have_base = false;
    if (Elf_Scn* b = findSection(elf, ".stapsdt.base")) {
        GElf_Shdr sh;
        if (gelf_getshdr(b, &sh)) {
            base_now = sh.sh_addr;
            have_base = true;
        }
    }
    const std::size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
    SymbolsByName symbols(file);
    Elf_Data* data = elf_getdata(notes, nullptr);
    std::size_t off = 0;
    GElf_Nhdr nh;
    std::size_t name_off = 0, desc_off = 0;
    while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char* base = static_cast<const char*>(data->d_buf);
        if (nh.n_type != kStapsdtNoteType || nh.n_namesz != sizeof("stapsdt") ||
            std::memcmp(base + name_off, "stapsdt", sizeof("stapsdt")) != 0)
            continue;
        const char* desc = base + desc_off;
        const std::size_t size = nh.n_descsz;
        auto truncated = [&] {
            return makeError(EINVAL, fmt::format("{}: truncated .note.stapsdt entry at note "
                                                 "offset {:#x}",
                                                 file.path(), desc_off));
        };
        if (size < 3 * addr_size)
            return truncated();
        auto addr = [&](std::size_t i) {
            std::uint64_t v = 0;
            if (addr_size == 8) {
                std::memcpy(&v, desc + i * 8, 8);
            } else {
                std::uint32_t v32 = 0;
                std::memcpy(&v32, desc + i * 4, 4);
                v = v32;
            }
            return v;
        };
        UsdtProbe p;
        p.pc = addr(0);
        p.base = addr(1);
        p.semaphore = addr(2);
        std::size_t at = 3 * addr_size;
        if (!takeString(desc, size, &at, &p.provider) || !takeString(desc, size, &at, &p.name) ||
            !takeString(desc, size, &at, &p.args))
            return truncated();
        if (have_base && p.base != 0) {
            // Unsigned wrap-around gives the right result for a move in either direction.
            p.pc += base_now - p.base;
            if (p.semaphore)
                p.semaphore += base_now - p.base;
        }
        const std::string what = fmt::format("{}: USDT {}:{}", file.path(), p.provider, p.name);
        auto pc_off = file.fileOffset(p.pc);
        if (!pc_off)
            return makeError(EINVAL,
                             fmt::format("{}: probe site: {}", what, pc_off.error().message));
        p.file_offset = *pc_off;
        if (p.semaphore) {
            const LoadSegment* seg = file.segmentForAddress(p.semaphore);
            if (!seg)
                return makeError(EINVAL, fmt::format("{}: semaphore {:#x} is in no file-backed "
                                                     "PT_LOAD segment",
                                                     what, p.semaphore));
            // The kernel writes the counter in every process that maps the file.
            if (!seg->writable())
                return makeError(EINVAL, fmt::format("{}: semaphore {:#x} is in read-only "
                                                     "PT_LOAD[{}]",
                                                     what, p.semaphore, seg->index));
            p.semaphore_offset = p.semaphore - seg->vaddr + seg->offset;
            p.semaphore_page_shared = semaphorePageShared(file, *seg, p.semaphore_offset);
        }
        if (auto a = parseUsdtArgs(p.args))
            p.decoded = std::move(*a);
        else
            p.args_error = a.error().message;
        for (std::size_t i = 0; i < p.decoded.size(); i++) {
            if (p.decoded[i].symbol.empty())
                continue;
            if (auto r = resolveSymbol(p.decoded[i], i + 1, p, file, symbols); !r) {
                p.args_error = r.error().message;
                p.decoded.clear();
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace probectl
