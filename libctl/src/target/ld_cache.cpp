// ld.so.cache reader. Layout (glibc sysdeps/generic/dl-cache.h):
//   struct cache_file_new {               // 48 bytes
//     char magic[17];  "glibc-ld.so.cache"
//     char version[3]; "1.1"
//     uint32_t nlibs; uint32_t len_strings; uint8_t flags; uint8_t pad[3];
//     uint32_t extension_offset; uint32_t unused[3];
//   };
//   struct file_entry_new {               // 24 bytes, nlibs of them
//     int32_t flags; uint32_t key; uint32_t value; uint32_t osversion; uint64_t hwcap;
//   };
// key and value are string offsets from the start of cache_file_new. An older combined
// file starts with "ld.so-1.7.0" (struct cache_file: magic[11], uint32_t nlibs, then 12-byte
// entries) and has the new header after it, 8-byte aligned.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "probectl/library_path.hpp"

namespace probectl {

namespace {

constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::size_t kNewHeader = 48;
constexpr std::size_t kNewEntry = 24;

template <class T>
T load(std::string_view b, std::size_t at) {
    T v{};
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}

}  // namespace

Result<std::vector<LdCacheEntry>> parseLdCache(std::string_view b) {
    std::size_t start = 0;
    if (b.starts_with(kOldMagic)) {
        if (b.size() < 16)
            return makeError(EINVAL, "ld.so.cache: truncated old-format header");
        const auto n_old = load<std::uint32_t>(b, 12);
        start = (16 + std::size_t{n_old} * 12 + 7) & ~std::size_t{7};
    }
    if (b.size() < start + kNewHeader || b.substr(start, kNewMagic.size()) != kNewMagic)
        return makeError(EINVAL,
                         "ld.so.cache: no \"glibc-ld.so.cache1.1\" header (unknown "
                         "format)");
    const std::string_view c = b.substr(start);
    const auto nlibs = load<std::uint32_t>(c, 20);
    if (c.size() < kNewHeader + std::size_t{nlibs} * kNewEntry)
        return makeError(EINVAL, fmt::format("ld.so.cache: {} entries do not fit the file", nlibs));
    auto str = [&](std::uint32_t off, std::string* out) {
        if (off >= c.size())
            return false;
        const void* nul = std::memchr(c.data() + off, '\0', c.size() - off);
        if (!nul)
            return false;
        out->assign(c.data() + off, static_cast<const char*>(nul) - (c.data() + off));
        return true;
    };
    std::vector<LdCacheEntry> out;
    out.reserve(nlibs);
    for (std::uint32_t i = 0; i < nlibs; ++i) {
        const std::size_t e = kNewHeader + std::size_t{i} * kNewEntry;
        LdCacheEntry en;
        en.flags = load<std::int32_t>(c, e);
        en.hwcap = load<std::uint64_t>(c, e + 16);
        if (!str(load<std::uint32_t>(c, e + 4), &en.soname) ||
            !str(load<std::uint32_t>(c, e + 8), &en.path))
            return makeError(EINVAL,
                             fmt::format("ld.so.cache: entry {} points outside the file", i));
        out.push_back(std::move(en));
    }
    return out;
}

}  // namespace probectl
