// Library name -> file, the dynamic linker's way (ld.so(8): cache, then default dirs).
#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "probectl/library_path.hpp"
#include "probectl/proc_maps.hpp"

namespace probectl {

const std::vector<std::string>& defaultLibraryDirs() {
    static const std::vector<std::string> dirs = {"/lib/x86_64-linux-gnu",
                                                  "/usr/lib/x86_64-linux-gnu",
                                                  "/lib64",
                                                  "/usr/lib64",
                                                  "/lib",
                                                  "/usr/lib"};
    return dirs;
}

namespace {

bool isFile(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Of the matching sonames, keep versioned ones (libc.so.6) over the bare development link
// (libc.so) when both exist: programs load the former.
template <class T, class Name>
void preferVersioned(std::vector<T>& v, Name name) {
    const bool any_versioned = std::any_of(v.begin(), v.end(), [&](const T& x) {
        return std::string_view(name(x)).find(".so.") != std::string_view::npos;
    });
    if (any_versioned)
        std::erase_if(v, [&](const T& x) {
            return std::string_view(name(x)).find(".so.") == std::string_view::npos;
        });
}

Result<FoundLibrary> fromCache(std::string_view name, const std::string& root) {
    const std::string file = root + "/etc/ld.so.cache";
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(ENOENT, fmt::format("{}: not readable", file));
    std::ostringstream ss;
    ss << in.rdbuf();
    auto entries = parseLdCache(ss.str());
    if (!entries)
        return makeError(entries.error().err, fmt::format("{}: {}", file, entries.error().message));
    std::vector<LdCacheEntry> hits;
    for (auto& e : *entries)
        if (e.isX8664() && libraryNameMatches(e.soname, name))
            hits.push_back(e);
    preferVersioned(hits, [](const LdCacheEntry& e) { return e.soname; });
    // glibc-hwcaps variants (hwcap != 0) are CPU-specific copies; the base entry is the one
    // every CPU can load.
    if (std::any_of(hits.begin(), hits.end(), [](auto& e) { return e.hwcap == 0; }))
        std::erase_if(hits, [](auto& e) { return e.hwcap != 0; });
    std::vector<std::string> sonames;
    for (auto& h : hits)
        if (std::find(sonames.begin(), sonames.end(), h.soname) == sonames.end())
            sonames.push_back(h.soname);
    if (sonames.size() > 1)
        return makeError(ENOTUNIQ, fmt::format("library '{}' is ambiguous in {}: {} (name one "
                                               "of them)",
                                               name, file, fmt::join(sonames, ", ")));
    if (hits.empty())
        return makeError(ENOENT, fmt::format("not in {}", file));
    return FoundLibrary{hits[0].path, fmt::format("ld.so.cache ({}): {} => {}", file,
                                                  hits[0].soname, hits[0].path)};
}

Result<FoundLibrary> fromDirs(std::string_view name, const std::string& root) {
    for (const auto& dir : defaultLibraryDirs()) {
        DIR* d = ::opendir((root + dir).c_str());
        if (!d)
            continue;
        std::vector<std::string> hits;
        while (const dirent* e = ::readdir(d))
            if (libraryNameMatches(e->d_name, name) && isFile(root + dir + "/" + e->d_name))
                hits.push_back(e->d_name);
        ::closedir(d);
        preferVersioned(hits, [](const std::string& s) { return s; });
        std::sort(hits.begin(), hits.end());
        if (hits.size() > 1)
            return makeError(ENOTUNIQ, fmt::format("library '{}' is ambiguous in {}: {} (name "
                                                   "one of them)",
                                                   name, root + dir, fmt::join(hits, ", ")));
        if (hits.size() == 1)
            return FoundLibrary{dir + "/" + hits[0],
                                fmt::format("default directory {}", root + dir)};
    }
    return makeError(ENOENT, "not in the default directories");
}

}  // namespace

Result<FoundLibrary> findLibrary(std::string_view name, std::string_view root_in) {
    const std::string root(root_in);
    auto c = fromCache(name, root);
    if (c || c.error().err == ENOTUNIQ)
        return c;
    auto d = fromDirs(name, root);
    if (d || d.error().err == ENOTUNIQ)
        return d;
    return makeError(ENOENT, fmt::format("library '{}' not found: {}; {} ({}); give a full "
                                         "path instead",
                                         name, c.error().message, d.error().message,
                                         fmt::join(defaultLibraryDirs(), " ")));
}

}  // namespace probectl
