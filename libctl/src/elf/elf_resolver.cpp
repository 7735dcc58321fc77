// ElfResolver::open: reads segments, symbols (with GNU versions) and USDT notes with libelf,
// then lets go of the file.
#include "probectl/elf_resolver.hpp"

#include <elfutils/libdwelf.h>
#include <fmt/format.h>
#include <gelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <map>
#include <optional>
#include <tuple>

#include "elf/debug_link.hpp"
#include "elf/elf_handle.hpp"
#include "elf/elf_read.hpp"
#include "elf/usdt_notes.hpp"

namespace probectl {

bool LoadSegment::executable() const {
    return (flags & PF_X) != 0;
}
bool LoadSegment::writable() const {
    return (flags & PF_W) != 0;
}

std::string_view toString(SymbolTable t) {
    switch (t) {
        case SymbolTable::Symtab:
            return ".symtab";
        case SymbolTable::DebugSymtab:
            return "debug .symtab";
        case SymbolTable::Dynsym:
            return ".dynsym";
    }
    return "?";
}

std::string_view toString(ElfResolver::Type t) {
    return t == ElfResolver::Type::Executable ? "ET_EXEC" : "ET_DYN";
}

bool ElfSymbol::isFunction() const {
    return type == STT_FUNC || type == STT_GNU_IFUNC;
}
bool ElfSymbol::isIfunc() const {
    return type == STT_GNU_IFUNC;
}
std::string ElfSymbol::displayName() const {
    if (version.empty())
        return demangled;
    return fmt::format("{}{}{}", demangled, hidden_version ? "@" : "@@", version);
}
bool ElfSymbol::contains(std::uint64_t addr) const {
    return size == 0 ? addr == value : addr >= value && addr - value < size;
}

// Reads one file into an ElfResolver; a class so the helpers share the handle.
class ElfReader {
  public:
    ElfReader(ElfResolver& out, Elf* elf) : out_(out), elf_(elf) {}

    Result<void> header() {
        GElf_Ehdr eh;
        if (!gelf_getehdr(elf_, &eh))
            return makeError(ENOEXEC,
                             fmt::format("{}: no ELF header: {}", out_.path_, elf_errmsg(-1)));
        if (eh.e_type == ET_EXEC)
            out_.type_ = ElfResolver::Type::Executable;
        else if (eh.e_type == ET_DYN)
            out_.type_ = ElfResolver::Type::SharedObject;
        else
            return makeError(ENOEXEC, fmt::format("{}: ELF type {} is neither an executable "
                                                  "(ET_EXEC) nor a PIE/shared object (ET_DYN)",
                                                  out_.path_, eh.e_type));
        // USDT notes hold raw addresses in the file's byte order; this host reads its own.
        const bool host_le = std::endian::native == std::endian::little;
        if ((eh.e_ident[EI_DATA] == ELFDATA2LSB) != host_le)
            return makeError(ENOEXEC,
                             fmt::format("{}: byte order differs from this machine's", out_.path_));
        return {};
    }

    Result<void> segments() {
        std::size_t n = 0;
        if (elf_getphdrnum(elf_, &n) != 0)
            return makeError(ENOEXEC,
                             fmt::format("{}: no program headers: {}", out_.path_, elf_errmsg(-1)));
        for (std::size_t i = 0; i < n; ++i) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf_, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD)
                continue;
            out_.segments_.push_back(
                LoadSegment{ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags, i});
        }
        if (out_.segments_.empty())
            return makeError(ENOEXEC, fmt::format("{}: no PT_LOAD segment (nothing is mapped "
                                                  "from this file)",
                                                  out_.path_));
        return {};
    }

    void buildId() {
        const void* id = nullptr;
        const ssize_t len = dwelf_elf_gnu_build_id(elf_, &id);
        const auto* bytes = static_cast<const unsigned char*>(id);
        for (ssize_t i = 0; i < len; ++i)
            out_.build_id_ += fmt::format("{:02x}", bytes[i]);
    }

    // Symbols of every table of type `sh_type` in `elf` (the main file or its debug file).
    void readTable(Elf* elf, GElf_Word sh_type, SymbolTable table) {
        for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || sh.sh_entsize == 0)
                continue;
            Elf_Data* data = elf_getdata(scn, nullptr);
            if (!data)
                continue;
            const Versions versions = sh_type == SHT_DYNSYM ? readVersions(elf) : Versions{};
            const std::size_t count = sh.sh_size / sh.sh_entsize;
            std::string file;
            for (std::size_t i = 1; i < count; ++i) {
                GElf_Sym sym;
                if (!gelf_getsym(data, static_cast<int>(i), &sym))
                    continue;
                const char* raw = elf_strptr(elf, sh.sh_link, sym.st_name);
                const unsigned char type = GELF_ST_TYPE(sym.st_info);
                if (type == STT_FILE) {
                    file = raw ? raw : "";
                    continue;
                }
                if (!raw || !*raw || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
                    continue;
                if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
                    continue;
                ElfSymbol s;
                s.bind = GELF_ST_BIND(sym.st_info);
                s.type = type;
                s.value = sym.st_value;
                s.size = sym.st_size;
                s.table = table;
                if (s.bind == STB_LOCAL)
                    s.file = file;
                splitVersion(raw, s);
                if (i < versions.index.size())
                    applyVersion(versions, versions.index[i], s);
                s.demangled = demangle(s.name);
                s.section = sectionNameAt(sym.st_shndx);
                add(std::move(s));
            }
        }
    }

    void symbols(const ElfOpenOptions& options) {
        std::string no_debug = "no debug file";
        if (findSectionOfType(elf_, SHT_SYMTAB)) {
            readTable(elf_, SHT_SYMTAB, SymbolTable::Symtab);
            out_.symbol_source_ = ".symtab";
        } else if (auto debug = findDebugFile(elf_, out_.path_, options.root, out_.build_id_,
                                              options.debug_dir);
                   !debug.path.empty()) {
            auto h = ElfHandle::open(debug.path);
            if (h && findSectionOfType(h->get(), SHT_SYMTAB)) {
                readTable(h->get(), SHT_SYMTAB, SymbolTable::DebugSymtab);
                out_.debug_file_ = debug.path;
                out_.symbol_source_ = ".symtab of " + debug.path;
                if (keep_debug_)
                    keep_debug_->emplace(std::move(*h));
            } else {
                no_debug = debug.path + " has no .symtab";
            }
        } else {
            no_debug = debug.note;
        }
        // .dynsym adds version information (and, for a stripped file, is all there is).
        readTable(elf_, SHT_DYNSYM, SymbolTable::Dynsym);
        if (out_.symbol_source_.empty())
            out_.symbol_source_ = fmt::format(".dynsym (stripped: no .symtab, {})", no_debug);
        for (auto& [key, s] : merged_)
            out_.symbols_.push_back(std::move(s));
        std::sort(out_.symbols_.begin(), out_.symbols_.end(),
                  [](const ElfSymbol& a, const ElfSymbol& b) {
                      // Globals first so that functionAt names an address by its public name.
                      return std::tuple(a.value, a.bind == STB_LOCAL, a.name) <
                             std::tuple(b.value, b.bind == STB_LOCAL, b.name);
                  });
    }

    Result<void> usdt() {
        auto probes = readUsdtNotes(elf_, out_);
        if (!probes)
            return std::move(probes).error();
        out_.usdt_ = std::move(*probes);
        return {};
    }

    static Result<ElfResolver> read(Elf* elf, const std::string& path,
                                    const ElfOpenOptions& options,
                                    std::optional<ElfHandle>* keep_debug) {
        ElfResolver out;
        out.path_ = path;
        ElfReader r(out, elf);
        r.keep_debug_ = keep_debug;
        if (auto e = r.header(); !e)
            return e.error();
        if (auto e = r.segments(); !e)
            return e.error();
        r.buildId();
        r.symbols(options);
        if (auto e = r.usdt(); !e)
            return e.error();
        return out;
    }

  private:
    // Version index -> (name, from .gnu.version_d). Index 0 is local, 1 global unversioned.
    struct Versions {
        std::vector<GElf_Versym> index;
        std::map<unsigned, std::string> names;
    };

    static Elf_Scn* findSectionOfType(Elf* elf, GElf_Word type) {
        for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
                return scn;
        }
        return nullptr;
    }

    // GNU symbol versioning (LSB Core, "Symbol Versioning"): .gnu.version holds one
    // Elf_Versym per .dynsym entry; bit 15 marks a hidden (non-default) version; the low
    // bits index the definitions in .gnu.version_d.
    static Versions readVersions(Elf* elf) {
        Versions v;
        Elf_Scn* versym = findSectionOfType(elf, SHT_GNU_versym);
        Elf_Scn* verdef = findSectionOfType(elf, SHT_GNU_verdef);
        if (!versym || !verdef)
            return v;
        if (Elf_Data* d = elf_getdata(versym, nullptr)) {
            GElf_Versym vs;
            for (int i = 0; gelf_getversym(d, i, &vs); ++i)
                v.index.push_back(vs);
        }
        GElf_Shdr sh;
        Elf_Data* d = elf_getdata(verdef, nullptr);
        if (!d || !gelf_getshdr(verdef, &sh))
            return v;
        int off = 0;
        for (GElf_Word n = 0; n < sh.sh_info; ++n) {
            GElf_Verdef def;
            GElf_Verdaux aux;
            if (!gelf_getverdef(d, off, &def) || !gelf_getverdaux(d, off + def.vd_aux, &aux))
                break;
            if (const char* name = elf_strptr(elf, sh.sh_link, aux.vda_name))
                v.names[def.vd_ndx] = name;
            if (def.vd_next == 0)
                break;
            off += static_cast<int>(def.vd_next);
        }
        return v;
    }

    static void applyVersion(const Versions& v, GElf_Versym vs, ElfSymbol& s) {
        auto it = v.names.find(vs & 0x7fff);
        // Index 1 (the file's own name as base version) carries no version for users.
        if (it == v.names.end() || (vs & 0x7fff) <= 1)
            return;
        s.version = it->second;
        s.hidden_version = (vs & 0x8000) != 0;
    }

    // .symtab spells versions into the name ("memcpy@@GLIBC_2.14", "memcpy@GLIBC_2.2.5").
    static void splitVersion(std::string_view raw, ElfSymbol& s) {
        const auto at = raw.find('@');
        if (at == std::string_view::npos || at == 0) {
            s.name = std::string(raw);
            return;
        }
        s.name = std::string(raw.substr(0, at));
        const bool dflt = raw.substr(at).starts_with("@@");
        s.version = std::string(raw.substr(at + (dflt ? 2 : 1)));
        s.hidden_version = !dflt;
    }

    std::string sectionNameAt(std::size_t shndx) {
        if (auto it = section_names_.find(shndx); it != section_names_.end())
            return it->second;
        Elf_Scn* scn = elf_getscn(elf_, shndx);
        return section_names_[shndx] = scn ? sectionName(elf_, scn) : std::string();
    }

    // One entry per (address, name, version): .symtab and .dynsym list the same function
    // twice, and .symtab can hold an alias as local "memcpy" and global "memcpy@@V".
    void add(ElfSymbol s) {
        auto key = std::tuple(s.value, s.name, s.hidden_version ? s.version : std::string());
        auto [it, inserted] = merged_.try_emplace(key, s);
        if (inserted)
            return;
        ElfSymbol& have = it->second;
        if (have.version.empty() && !s.version.empty()) {
            have.version = s.version;
            have.hidden_version = s.hidden_version;
        }
        if (have.bind == STB_LOCAL && s.bind != STB_LOCAL) {
            have.bind = s.bind;
            have.file.clear();
        }
        if (have.size == 0)
            have.size = s.size;
    }

    ElfResolver& out_;
    Elf* elf_;
    std::optional<ElfHandle>* keep_debug_ = nullptr;  // where the debug file's handle stays
    std::map<std::tuple<std::uint64_t, std::string, std::string>, ElfSymbol> merged_;
    std::map<std::size_t, std::string> section_names_;
};

Result<ElfResolver> ElfResolver::open(const std::string& path, const ElfOpenOptions& options) {
    auto h = ElfHandle::open(path);
    if (!h)
        return std::move(h).error();
    return ElfReader::read(h->get(), path, options, nullptr);
}

Result<ElfResolver> readElfResolver(const ElfHandle& h, const std::string& path,
                                    const ElfOpenOptions& options,
                                    std::optional<ElfHandle>& debug) {
    return ElfReader::read(h.get(), path, options, &debug);
}

}  // namespace probectl
