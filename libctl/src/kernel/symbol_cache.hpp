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
// (size, bounds, checksum) is ignored: the caller reads /proc/kallsyms instead.
//
// Where: $PROBECTL_SYMBOL_CACHE if set (a directory; empty turns the cache off), else
// /run/probectl for root (a tmpfs: gone at reboot), else $XDG_CACHE_HOME/probectl, else
// $HOME/.cache/probectl. The file is kallsyms.cache in it; removing it is always safe.
#pragma once

#include <cstddef>
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

// Entries that change without a module load (BPF programs "[bpf]", ftrace trampolines and
// kprobe instruction pages "[__builtin__*]"): never cached.
bool isDynamic(const KernelSymbol& s);

// Writes `table`'s symbols (less the dynamic ones) under `key` to DIR/kallsyms.cache atomically (a
// temporary file renamed over it), creating DIR (mode 0700) if needed. False when anything fails
// (the directory is not the uid's own or is group/other-writable, no space, ...): a cache is
// optional.
bool writeSymbolCache(const std::string& dir, std::string_view key, const KernelSymbols& table);

}  // namespace probectl::detail
