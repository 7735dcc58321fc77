// ElfResolver: one user-space ELF file (executable, PIE or shared library) read through
// libelf, with what a uprobe needs from it: function symbols with sizes, the PT_LOAD
// segments that turn ELF addresses into file offsets, and the USDT probes of its
// .note.stapsdt section (usdt.hpp).
//
// Three address spaces meet here; every function says which one it takes:
//  - ELF address:     st_value of a symbol, p_vaddr of a segment, what readelf -s, nm and
//                     objdump print. For ET_EXEC it is also the runtime address; for ET_DYN
//                     (PIE, shared libraries) the runtime address is ELF address + load bias.
//  - file offset:     a byte position in the file; what the kernel's uprobe API takes
//                     (uprobe_register(inode, offset, ...)).
//  - process address: a runtime address in one process (proc_maps.hpp translates those).
// The translation is the ELF gABI's program-header rule: a PT_LOAD segment maps file bytes
// [p_offset, p_offset + p_filesz) to ELF addresses [p_vaddr, p_vaddr + p_filesz), so
//   file offset = address - p_vaddr + p_offset      of the PT_LOAD containing the address.
// No layout is assumed: ET_EXEC at any base, PIE, and lld's layout (p_vaddr != p_offset)
// all follow the same rule.
//
// Symbols come from .symtab; when the file is stripped, from a separate debug file found as
// gdb finds it: by GNU build-id (DEBUG_DIR/.build-id/xx/yyyy.debug, the layout Debian's -dbg
// packages use), else by .gnu_debuglink (FOLDER/NAME, FOLDER/.debug/NAME,
// DEBUG_DIR/FOLDER/NAME, only with the CRC the link records); from .dynsym otherwise, and
// symbolSource() then says why no debug file was used. .dynsym is always merged in
// for GNU symbol versions (memcpy@@GLIBC_2.14 vs the compat memcpy@GLIBC_2.2.5).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"
#include "probectl/usdt.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One PT_LOAD program header (ELF gABI, "Program Header").
struct LoadSegment {
    std::uint64_t vaddr = 0;   // p_vaddr: ELF address of the first byte
    std::uint64_t memsz = 0;   // p_memsz: bytes in memory (>= filesz; the rest is .bss)
    std::uint64_t offset = 0;  // p_offset: file offset of the first byte
    std::uint64_t filesz = 0;  // p_filesz: bytes backed by the file
    std::uint32_t flags = 0;   // p_flags: PF_R | PF_W | PF_X
    std::size_t index = 0;     // index among all program headers (as readelf -l counts)

    bool executable() const;
    bool writable() const;
    // Whether the ELF address lies in the file-backed part [vaddr, vaddr + filesz).
    bool containsAddress(std::uint64_t addr) const {
        return addr >= vaddr && addr - vaddr < filesz;
    }
    // Whether the file offset lies in [offset, offset + filesz).
    bool containsOffset(std::uint64_t off) const { return off >= offset && off - offset < filesz; }
};

// Where a symbol was read from.
enum class SymbolTable {
    Symtab,       // the file's own .symtab
    DebugSymtab,  // .symtab of the separate debug file (ElfResolver::debugFile())
    Dynsym,       // .dynsym (the file is stripped and no debug file was found)
};
std::string_view toString(SymbolTable t);  // ".symtab", "debug .symtab", ".dynsym"

struct ElfSymbol {
    std::string name;       // as in the symbol table, without any @VERSION: "_ZN2ns1fEi"
    std::string demangled;  // C++ names demangled ("ns::f(int)"); otherwise == name
    std::string version;    // GNU symbol version ("GLIBC_2.14"), "" when unversioned
    // name@VERSION rather than the default name@@VERSION: an old ABI kept for binaries linked
    // against it, reachable only by writing the version out.
    bool hidden_version = false;
    std::uint64_t value = 0;  // st_value: ELF address (not a file offset)
    std::uint64_t size = 0;   // st_size in bytes, 0 when the symbol table does not say
    unsigned char type = 0;   // STT_FUNC, STT_GNU_IFUNC or STT_OBJECT
    unsigned char bind = 0;   // STB_LOCAL, STB_GLOBAL, STB_WEAK
    std::string section;      // section name (".text"), "" when unknown
    // Source file of a local symbol: the STT_FILE entry before it in .symtab ("dup_a.c");
    // "" for global symbols and .dynsym.
    std::string file;
    SymbolTable table = SymbolTable::Symtab;

    bool isFunction() const;  // STT_FUNC or STT_GNU_IFUNC
    bool isIfunc() const;     // STT_GNU_IFUNC: the value is a resolver, not the function
    // demangled plus "@@VERSION" / "@VERSION" when versioned.
    std::string displayName() const;
    // Whether the shell glob matches the symbol's name, its demangled name, or that without a
    // function template's return type and with or without its parameters ("sum*" and
    // "sum<int>" match "int sum<int>(int, int)", as "ns::f*" matches "ns::f(int)").
    bool matchesGlob(std::string_view glob) const;
    // Whether the address lies in [value, value + size) (just value when size is 0).
    bool contains(std::uint64_t addr) const;
};

// Where ElfResolver looks for separate debug files; "" never looks.
struct ElfOpenOptions {
    std::string debug_dir = "/usr/lib/debug";
    // The prefix of the file's path and debug_dir that leads into another mount namespace
    // ("/proc/PID/root"), so a debuglink's DEBUG_DIR/FOLDER/ is the process's folder.
    std::string root;
};

class ElfResolver {
  public:
    enum class Type {
        Executable,    // ET_EXEC: fixed addresses
        SharedObject,  // ET_DYN: PIE executable or shared library, loaded at a bias
    };

    // Reads `path` (symbols, segments, USDT notes) and closes it again: the object holds no
    // file descriptor. Errors: errno of open() (ENOENT, EACCES, ...); ENOEXEC when the file is
    // not an ELF executable or shared object (relocatable objects, core files, other
    // machines' byte order), with libelf's reason; EINVAL for a malformed USDT note.
    static Result<ElfResolver> open(const std::string& path, const ElfOpenOptions& options = {});

    const std::string& path() const { return path_; }
    Type type() const { return type_; }
    // GNU build-id as lowercase hex ("" when the file has none).
    const std::string& buildId() const { return build_id_; }
    // Which table the symbols come from, for explanations: ".symtab", ".dynsym (stripped)",
    // ".symtab of /usr/lib/debug/.build-id/93/ac61...debug".
    const std::string& symbolSource() const { return symbol_source_; }
    const std::string& debugFile() const { return debug_file_; }  // "" when none was used

    const std::vector<LoadSegment>& loadSegments() const { return segments_; }
    // Functions (STT_FUNC, STT_GNU_IFUNC) and objects (STT_OBJECT) defined in this file,
    // sorted by value, then globals before locals. Aliases (several names, one address)
    // are separate entries; one name at one address appears once.
    const std::vector<ElfSymbol>& symbols() const { return symbols_; }
    const std::vector<UsdtProbe>& usdtProbes() const { return usdt_; }

    // The PT_LOAD segment whose file-backed part holds the ELF address, or nullptr.
    const LoadSegment* segmentForAddress(std::uint64_t elf_addr) const;
    // ELF address -> file offset. Errors (EINVAL, naming the address and file): the address
    // is in no PT_LOAD segment, or only in its .bss part (no file bytes behind it).
    Result<std::uint64_t> fileOffset(std::uint64_t elf_addr) const;
    // File offset -> ELF address. Errors (EINVAL): the offset is in no PT_LOAD segment.
    Result<std::uint64_t> elfAddress(std::uint64_t file_offset) const;

    // The function whose [value, value + size) holds the ELF address, or nullptr. Prefers
    // global names over local aliases.
    const ElfSymbol* functionAt(std::uint64_t elf_addr) const;
    // Functions named `name`, one per distinct address. `name` may be
    //  - a symbol as in the table (mangled C++ included): "main", "_ZN2ns1fEi";
    //  - a demangled C++ name, with or without its parameter list: "ns::f(int)", "ns::f";
    //    a function template's without its return type too: "sum<int>(int, int)" and
    //    "sum<int>" for "int sum<int>(int, int)";
    //  - name@VERSION or name@@VERSION for one GNU symbol version.
    // Without a version, hidden versions (name@VERSION) are left out. Several results mean
    // the name is ambiguous (local functions of different files, C++ overloads).
    std::vector<const ElfSymbol*> functionsNamed(std::string_view name) const;
    // For a name with a parameter list ("ns::f(double)"): the functions of that name with
    // any parameters (its overloads), read as the demangler spells them, without a
    // template's return type ("ns::f(int)", "ns::f(char const*)"); none for other names.
    std::vector<std::string> overloadsOf(std::string_view signature) const;
    // For an IFUNC symbol: the functions that look like its implementations by glibc's
    // naming convention, __NAME_VARIANT or NAME_VARIANT (__memcpy_avx_unaligned for memcpy),
    // leaving out the resolver itself and other IFUNCs' implementations (__memcpy_chk_*).
    std::vector<const ElfSymbol*> ifuncImplementations(const ElfSymbol& ifunc) const;

  private:
    ElfResolver();
    friend class ElfReader;

    // functionsNamed's index of the function symbols by name, built on its first call.
    struct NameIndex;
    const NameIndex& nameIndex() const;

    std::string path_;
    Type type_ = Type::Executable;
    std::string build_id_;
    std::string symbol_source_;
    std::string debug_file_;
    std::vector<LoadSegment> segments_;
    std::vector<ElfSymbol> symbols_;
    std::vector<UsdtProbe> usdt_;
    // Shared by copies, whose symbols_ are the same.
    std::shared_ptr<NameIndex> names_;
};

std::string_view toString(ElfResolver::Type t);  // "ET_EXEC", "ET_DYN"

// The answer to a C++ signature of no function whose name has overloads (`overloads`, from
// ElfResolver::overloadsOf): "no function 'ns::f(int*)' in FILE; the functions named 'ns::f'
// take other parameters: ns::f(int), ns::f(char const*)". `file` is FILE as the caller
// names it ("/bin/x", or with "(symbols from .symtab)").
std::string noSuchOverloadMessage(std::string_view signature, std::string_view file,
                                  const std::vector<std::string>& overloads);

// Demangles an Itanium C++ ABI name ("_ZN2ns1fEi" -> "ns::f(int)") with the C++ runtime's
// abi::__cxa_demangle; returns `name` unchanged when it is not a mangled name.
std::string demangle(std::string_view name);

// A demangled name without its parameter list and trailing qualifiers:
// "ns::S::m(int) const" -> "ns::S::m"; names without '(' are returned unchanged.
std::string withoutParameters(std::string_view demangled);

// A demangled function name without the return type that a function template's carries:
// "int sum<int>(int, int)" -> "sum<int>(int, int)"; other names are returned unchanged.
std::string withoutReturnType(std::string_view demangled);

// Whether a name has a parameter list: "ns::f(int)" and "S::operator()(int)" have one,
// "ns::f" and "S::operator()" none (the "()" is the operator's name).
bool hasParameterList(std::string_view name);
// A C++ name in one spelling, so that names written differently compare equal: blanks only
// between two words, a type's leading cv-qualifiers after it, and a builtin type in the
// words and order the demangler writes ("ns::f(const char *, std::vector<int> &)" ->
// "ns::f(char const*,std::vector<int>&)", "f(long unsigned int)" -> "f(unsigned long)",
// "f(unsigned)" -> "f(unsigned int)"; signed char is not char).
std::string normalizeCxxName(std::string_view name);
// Whether a demangled name, or a form of it functionsNamed accepts (without a template's
// return type; without the parameters unless `has_params`), is `want` (normalizeCxxName's).
bool cxxNameMatches(std::string_view demangled, std::string_view want, bool has_params);
// The scoped identifier every name cxxNameMatches accepts contains, from a normalized name:
// "ns::f" of "ns::f(char const*)", "sum" of "char const*sum<char const*>" ("" when none).
std::string_view cxxNameKey(std::string_view normalized);

}  // namespace probectl
#pragma GCC visibility pop
