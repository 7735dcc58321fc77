// Probed files replaced on disk while traced (file_identity.hpp).
#include "target/file_identity.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

namespace probectl {

std::optional<FileIdentity> identifyFile(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return FileIdentity{path, st.st_dev, st.st_ino};
}

void rememberFile(std::vector<FileIdentity>& files, const std::string& path) {
    if (path.empty() || path.starts_with("/proc/"))
        return;
    if (std::any_of(files.begin(), files.end(), [&](const auto& f) { return f.path == path; }))
        return;
    if (auto id = identifyFile(path))
        files.push_back(*id);
}

std::vector<std::string> replacedFileNotes(const std::vector<FileIdentity>& files) {
    std::vector<std::string> notes;
    for (const auto& f : files) {
        auto now = identifyFile(f.path);
        if (now && now->dev == f.dev && now->ino == f.ino)
            continue;
        notes.push_back(fmt::format(
            "{} was {} while traced (probed: inode {}{}): the probes stayed on the file it "
            "was, so processes started from the path since were not traced",
            f.path, now ? "replaced" : "removed", f.ino,
            now ? fmt::format(", now inode {}", now->ino) : std::string()));
    }
    return notes;
}

}  // namespace probectl
