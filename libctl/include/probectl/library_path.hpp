// Finding a shared library by name the way the dynamic linker does (ld.so(8)): the
// ld.so.cache that ldconfig writes, then the trusted default directories. Also the file
// format of that cache, as glibc defines it (sysdeps/generic/dl-cache.h, "new" format
// "glibc-ld.so.cache1.1", the only one glibc >= 2.32 writes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One ld.so.cache entry.
struct LdCacheEntry {
    std::string soname;       // key: "libc.so.6"
    std::string path;         // value: "/lib/x86_64-linux-gnu/libc.so.6"
    std::int32_t flags = 0;   // FLAG_ELF_LIBC6 (3) | architecture (0x0300 = x86-64)
    std::uint64_t hwcap = 0;  // non-zero for glibc-hwcaps subdirectory variants

    bool isX8664() const { return flags == 0x0303; }
};

// Parses the bytes of an ld.so.cache: the new format alone, or after the old "ld.so-1.7.0"
// table (which is skipped). Errors: EINVAL when neither header is found or an entry points
// outside the file.
Result<std::vector<LdCacheEntry>> parseLdCache(std::string_view bytes);

// Directories searched after the cache, in order (x86-64 Debian multiarch first).
const std::vector<std::string>& defaultLibraryDirs();

struct FoundLibrary {
    std::string path;  // inside `root`: "/lib/x86_64-linux-gnu/libc.so.6"
    std::string how;   // "ld.so.cache (/etc/ld.so.cache): libc.so.6 => ..."
};

// Finds library `name` ("libc", "libc.so", "libc.so.6", "libssl.so.3") as seen under
// `root` ("" for this process's root; "/proc/PID/root" for another mount namespace): the
// cache ROOT/etc/ld.so.cache, then defaultLibraryDirs() under ROOT. "libc" and "libc.so"
// match the versioned sonames libc.so.N; when both a versioned soname and the bare .so
// development link exist the versioned one is taken (it is what programs load).
// Errors: ENOENT when nothing matches (listing where it looked); ENOTUNIQ when several
// different sonames match (libfoo.so.1 and libfoo.so.2), listing them.
Result<FoundLibrary> findLibrary(std::string_view name, std::string_view root = "");

}  // namespace probectl
#pragma GCC visibility pop
