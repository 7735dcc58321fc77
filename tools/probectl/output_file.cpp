#include "output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace probectl::cli {

// One rule for every format: an -o output whose writing failed is removed, never left
// incomplete (a JSON cut short does not parse, a CTF directory without its metadata does not
// open, a recording may end inside a block, a table may lose its last rows). Only what
// probectl made: a device (/dev/full) stays, and a CTF directory that existed (empty) before
// stays, emptied.
Error removeIncomplete(const Error& e, const std::string& path, bool ctf, bool dir_existed) {
    struct stat st {};
    bool removed = false;
    if (ctf && ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* ent = ::readdir(d))
                if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0)
                    (void)::unlink(fmt::format("{}/{}", path, ent->d_name).c_str());
            ::closedir(d);
        }
        removed = dir_existed || ::rmdir(path.c_str()) == 0;
    } else if (!ctf && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        removed = ::unlink(path.c_str()) == 0;
    }
    if (!removed)
        return e;
    return makeError(e.err, fmt::format("{} ({}): removed {}, as it was incomplete", e.message,
                                        std::strerror(e.err), path));
}

int streamErrno(const std::ostream& os) {
    if (os)
        return 0;
    const int err = errno;
    const auto* fd = dynamic_cast<const FdOutBuf*>(os.rdbuf());
    return fd && fd->error() ? fd->error() : err ? err : EIO;
}

Result<void> OutputFile::open(const std::string& path, std::size_t buffer) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot write {}", path));
    path_ = path;
    buf_.emplace(fd, buffer, true);
    os_.rdbuf(&*buf_);  // clears the state of the writes refused before
    return {};
}

Error OutputFile::discard(const Error& e) {
    os_.rdbuf(nullptr);
    buf_.reset();  // closed before it is removed
    return removeIncomplete(e, path_);
}

}  // namespace probectl::cli
