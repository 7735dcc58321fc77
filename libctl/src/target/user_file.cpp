// A spec's PATH -> the file to read and to hand to the kernel, in the traced process's
// mount namespace when there is a pid.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "probectl/library_path.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/user_target.hpp"

namespace probectl {

namespace {

// "" when PID sees our root, else "/proc/PID/root": paths opened through that magic link
// reach the file in PID's mount namespace, and so can the kernel's path lookup.
Result<std::string> rootOf(pid_t pid) {
    const std::string root = fmt::format("/proc/{}/root", pid);
    struct stat theirs, ours;
    if (::stat((root + "/").c_str(), &theirs) != 0) {
        const int err = errno == ENOENT ? ESRCH : errno;
        return makeError(err, fmt::format("{}: {}", root,
                                          err == ESRCH ? "no such process" : std::strerror(err)));
    }
    if (::stat("/", &ours) == 0 && ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)
        return std::string();
    return root;
}

}  // namespace

Result<UserFile> findUserFile(std::string_view name, const UserResolveOptions& o) {
    UserFile f;
    if (o.pid > 0) {
        auto root = rootOf(o.pid);
        if (!root)
            return std::move(root).error();
        f.root = std::move(*root);
    }
    if (name.find('/') != std::string_view::npos) {
        if (o.pid > 0 && !name.starts_with('/'))
            return makeError(EINVAL, fmt::format("'{}': with a pid, give an absolute path (as "
                                                 "the process sees it) or a library name",
                                                 name));
        std::string p(name);
        if (f.root.empty()) {
            // The kernel resolves the path in its own context: hand it an absolute one.
            char buf[PATH_MAX];
            if (!::realpath(p.c_str(), buf))
                return makeError(errno, fmt::format("{}: {}", p, std::strerror(errno)));
            p = buf;
        }
        f.file = p;
        f.path = f.root + p;
        struct stat st;
        if (::stat(f.path.c_str(), &st) != 0)
            return makeError(errno, fmt::format("{}: {}", f.path, std::strerror(errno)));
        if (!S_ISREG(st.st_mode))
            return makeError(EINVAL, fmt::format("{}: not a regular file", f.path));
        f.how = f.root.empty()
                    ? fmt::format("path {}", f.path)
                    : fmt::format("path {} in pid {}'s mount namespace: {}", name, o.pid, f.path);
        return f;
    }
    if (o.pid > 0) {
        auto maps = ProcMaps::read(o.pid);
        if (!maps)
            return std::move(maps).error();
        auto files = maps->filesNamed(name);
        if (files.size() > 1)
            return makeError(ENOTUNIQ, fmt::format("library '{}' matches several files mapped "
                                                   "by pid {}: {} (give one path)",
                                                   name, o.pid, fmt::join(files, ", ")));
        if (files.size() == 1) {
            f.file = files[0];
            f.path = f.root + f.file;
            f.how = fmt::format("library '{}' mapped by pid {}: {}", name, o.pid, f.file);
            return f;
        }
    }
    auto lib = findLibrary(name, f.root);
    if (!lib)
        return std::move(lib).error();
    f.file = lib->path;
    f.path = f.root + lib->path;
    f.how =
        fmt::format("library '{}'{}: {}", name,
                    o.pid > 0 ? fmt::format(" (not mapped by pid {} yet)", o.pid) : "", lib->how);
    return f;
}

}  // namespace probectl
