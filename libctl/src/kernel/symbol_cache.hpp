// The kallsyms cache: /proc/kallsyms parsed once and kept in a file, so a kernel spec that
// needs the symbol table does not make the kernel print (about 0.45 s under QEMU TCG) and
// the library parse (0.8 s) 150k-200k lines on every start.
//
// The table only changes at boot (KASLR) and when modules come and go, and what a reader
// sees depends on its credentials (addresses read as 0 without CAP_SYSLOG, or with
// kptr_restrict=2). The key says all of that and is compared whole on every use: the boot
// id, the effective uid and CAP_SYSLOG, kptr_restrict and perf_event_paranoid, and each
// loaded module's /proc/modules line (less its use count and users) with the module's
// GNU build id. A file whose key differs, that is not a regular file of the running uid
// with no group or other write permission, in such a directory, or that does not check out
// (size, bounds, checksums) is ignored: the caller reads /proc/kallsyms instead. The file
// holds a name-sorted index, so a table can be mapped and names found in place
// (MappedSymbolCache) without building ~200k entries.
//
// Where: $PROBECTL_SYMBOL_CACHE if set (a directory; empty turns the cache off), else
// /run/probectl for root (a tmpfs: gone at reboot), else $XDG_CACHE_HOME/probectl, else
// $HOME/.cache/probectl. The file is kallsyms.cache in it; removing it is always safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/kernel_symbols.hpp"

namespace probectl::detail {

// Where the key's facts come from (tests point these at files of their own).
struct SymbolCacheSources {
    std::string boot_id = "/proc/sys/kernel/random/boot_id";
    std::string modules = "/proc/modules";
    std::string sys_module = "/sys/module";  // NAME/notes/.note.gnu.build-id
    std::string kptr_restrict = "/proc/sys/kernel/kptr_restrict";
    std::string perf_event_paranoid = "/proc/sys/kernel/perf_event_paranoid";
};

// The key text for the running kernel, or nullopt when a fact cannot be read (no boot id:
// then nothing tells one boot from the next, and nothing is cached).
std::optional<std::string> symbolCacheKey(const SymbolCacheSources& src = {});

// The cache directory (see above), "" when the cache is off or no place applies.
std::string symbolCacheDir();

// The cache file's name in that directory.
inline constexpr std::string_view kSymbolCacheFile = "kallsyms.cache";

// The symbols stored at `path` under exactly `key` (and the parse's malformed-line count),
// or nullopt for a missing, foreign, unsafe, stale or damaged file.
struct CachedSymbols {
    std::vector<KernelSymbol> symbols;
    std::size_t malformed = 0;
};
std::optional<CachedSymbols> readSymbolCache(const std::string& path, std::string_view key);

// A cache file mapped read-only and answered in place: a name is found by binary search in
// the file's name-sorted index, so a lookup touches a few pages and nothing is built per
// symbol. open() checks what readSymbolCache checks except the body's checksum (see the .cpp);
// every index entry and record read afterwards is bounds-checked, and a damaged one makes the
// call answer nullopt.
class MappedSymbolCache {
  public:
    static std::shared_ptr<const MappedSymbolCache> open(const std::string& path,
                                                         std::string_view key);
    ~MappedSymbolCache();
    MappedSymbolCache(const MappedSymbolCache&) = delete;
    MappedSymbolCache& operator=(const MappedSymbolCache&) = delete;

    std::size_t size() const { return count_; }
    std::size_t malformed() const { return malformed_; }
    // Every stored address read as 0 when the table was written.
    bool addressesHidden() const { return hidden_; }
    // Table positions of the symbols named `name`, in address order (table order among equal
    // addresses); nullopt when the file turns out damaged.
    std::optional<std::vector<std::uint32_t>> find(std::string_view name) const;
    // The symbol at table position `i`, nullopt when out of bounds or damaged.
    std::optional<KernelSymbol> symbol(std::uint32_t i) const;
    // The whole table, after checking the body's checksum too; nullopt when damaged.
    std::optional<CachedSymbols> all() const;

  private:
    MappedSymbolCache() = default;
    std::optional<std::string_view> nameAt(std::uint32_t i) const;
    const char* map_ = nullptr;
    std::size_t size_ = 0;
    std::size_t count_ = 0;
    std::size_t malformed_ = 0;
    bool hidden_ = false;
    std::vector<std::string> modules_;
    const char* records_ = nullptr;
    const char* types_ = nullptr;
    const char* names_ = nullptr;
    std::size_t names_len_ = 0;
    const char* index_ = nullptr;
    const char* body_ = nullptr;  // records to the end: what the body checksum covers
    std::uint64_t body_sum_ = 0;
};

// Entries that change without a module load (BPF programs "[bpf]", ftrace trampolines and
// kprobe instruction pages "[__builtin__*]"): never cached.
bool isDynamic(const KernelSymbol& s);

// Writes `table`'s symbols (less the dynamic ones) under `key` to DIR/kallsyms.cache atomically (a
// temporary file renamed over it), creating DIR (mode 0700) if needed. False when anything fails
// (the directory is not the uid's own or is group/other-writable, no space, ...): a cache is
// optional.
bool writeSymbolCache(const std::string& dir, std::string_view key, const KernelSymbols& table);

}  // namespace probectl::detail
