// Which file a probed path was when the probe was added, to notice it being replaced on
// disk (`mv new app`, a package upgrade): the uprobe stays on the old inode, so processes
// started from the new file are not traced.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace probectl {

struct FileIdentity {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
};

// The file `path` is now; nullopt when it cannot be stat'ed.
std::optional<FileIdentity> identifyFile(const std::string& path);

// Adds `path`'s identity to `files` unless it is there already (or a /proc magic link,
// which names a process's file and vanishes with the process).
void rememberFile(std::vector<FileIdentity>& files, const std::string& path);

// One note per remembered path that now leads to another file or none.
std::vector<std::string> replacedFileNotes(const std::vector<FileIdentity>& files);

}  // namespace probectl
