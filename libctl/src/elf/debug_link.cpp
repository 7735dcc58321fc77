// Debug-file lookup by build-id and .gnu_debuglink (debug_link.hpp).
#include "elf/debug_link.hpp"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <optional>
#include <vector>

namespace probectl {

namespace {

bool isFile(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The CRC-32 .gnu_debuglink records: zlib's crc32 of the whole file.
std::optional<std::uint32_t> fileCrc(const std::string& p) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    uLong crc = crc32(0L, Z_NULL, 0);
    std::vector<unsigned char> buf(1 << 16);
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0)
        crc = crc32(crc, buf.data(), static_cast<uInt>(n));
    ::close(fd);
    if (n < 0)
        return std::nullopt;
    return static_cast<std::uint32_t>(crc);
}

}  // namespace

DebugFileSearch findDebugFile(Elf* elf, const std::string& path, const std::string& root,
                              const std::string& build_id, const std::string& debug_dir) {
    DebugFileSearch out;
    if (debug_dir.empty()) {
        out.note = "no debug file";
        return out;
    }
    if (build_id.size() >= 3) {
        std::string p = fmt::format("{}/.build-id/{}/{}.debug", debug_dir, build_id.substr(0, 2),
                                    build_id.substr(2));
        if (isFile(p)) {
            out.path = std::move(p);
            return out;
        }
    }
    GElf_Word want = 0;
    const char* link = dwelf_elf_gnu_debuglink(elf, &want);
    if (!link || !*link) {
        out.note = "no debug file";
        return out;
    }
    const std::string dir = path.substr(0, path.rfind('/') + 1);  // with its '/'
    const std::string inside = dir.substr(root.size());           // as the process sees it
    const std::vector<std::string> candidates = {dir + link, dir + ".debug/" + link,
                                                 debug_dir + inside + link};
    std::vector<std::string> refused;
    for (const auto& c : candidates) {
        if (c == path || !isFile(c))
            continue;
        const auto crc = fileCrc(c);
        if (crc && *crc == want) {
            out.path = c;
            return out;
        }
        refused.push_back(crc ? fmt::format("{} has CRC {:#010x}", c, *crc)
                              : fmt::format("{} cannot be read", c));
    }
    out.note = refused.empty() ? fmt::format(".gnu_debuglink names '{}', which is not in {}", link,
                                             fmt::join(candidates, ", "))
                               : fmt::format(
                                     ".gnu_debuglink names '{}' with CRC {:#010x}, but {} (not the "
                                     "debug file of this build)",
                                     link, want, fmt::join(refused, "; "));
    return out;
}

}  // namespace probectl
