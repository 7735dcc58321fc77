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

bool sameInode(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

// "" when PID sees our root in our mount namespace, else "/proc/PID/root": paths opened
// through that magic link reach the file in PID's mount namespace, and so can the kernel's
// path lookup. The same root directory in another mount namespace (unshare -m) can still
// have other files mounted at the same paths.
Result<std::string> rootOf(pid_t pid) {
    const std::string root = fmt::format("/proc/{}/root", pid);
    struct stat theirs;
    if (::stat((root + "/").c_str(), &theirs) != 0) {
        const int err = errno == ENOENT ? ESRCH : errno;
        return makeError(err, fmt::format("{}: {}", root,
                                          err == ESRCH ? "no such process" : std::strerror(err)));
    }
    if (sameInode("/", root + "/") &&
        sameInode("/proc/self/ns/mnt", fmt::format("/proc/{}/ns/mnt", pid)))
        return std::string();
    return root;
}

// /proc/PID/root/... and /proc/PID/exe name a file in PID's mount namespace through magic
// links that the kernel's path lookup follows too: realpath would turn them into a path
// in ours (another file, or none).
bool procMagicPath(std::string_view p) {
    if (!p.starts_with("/proc/"))
        return false;
    p.remove_prefix(6);
    const std::size_t digits = p.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos)
        return false;
    p.remove_prefix(digits);
    return p == "/exe" || p.starts_with("/root/") || p.starts_with("/map_files/");
}

// A process keeps running the file it mapped when the path is given another one (`mv new
// app`, a package upgrade) or unlinked: probing the path would probe a file it does not
// run. Its mapping of the file it names `file`, as /proc/PID/map_files/START-END (a magic
// link to the mapped file that the kernel's lookup follows too), when that differs from
// what `path` now leads to; "" when it is the same file or not mapped.
std::string mappedInstead(pid_t pid, const std::string& file, const std::string& path,
                          std::string& how) {
    auto maps = ProcMaps::read(pid);
    if (!maps)
        return {};
    struct stat st;
    const bool exists = ::stat(path.c_str(), &st) == 0;
    for (const ProcMapping& m : maps->mappings()) {
        if (!m.isFile() || m.path != file)
            continue;
        if (exists && !m.deleted && m.inode == st.st_ino)
            return {};
        const std::string link = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, m.start, m.end);
        how = fmt::format(
            "; pid {} maps {} from inode {}{}: using its mapping {}", pid, file, m.inode,
            exists ? fmt::format(", but the path is now inode {} (replaced)", st.st_ino)
                   : std::string(" (deleted)"),
            link);
        return link;
    }
    return {};
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
        const bool magic = procMagicPath(p);
        if (magic)
            f.root.clear();  // the path says whose namespace it is in
        if (f.root.empty() && !magic) {
            // The kernel resolves the path in its own context: hand it an absolute one.
            // A path that is gone (the file removed while a process runs it) stays as given
            // with a pid: that process's mapping of it is probed (mappedInstead).
            char buf[PATH_MAX];
            if (::realpath(p.c_str(), buf))
                p = buf;
            else if (const int e = errno; o.pid <= 0 || e != ENOENT)
                return makeError(e, fmt::format("{}: {}", p, std::strerror(e)));
        }
        f.file = p;
        f.path = f.root + p;
        std::string replaced;
        if (o.pid > 0 && !magic)
            if (std::string m = mappedInstead(o.pid, f.file, f.path, replaced); !m.empty())
                f.path = m;
        struct stat st;
        if (::stat(f.path.c_str(), &st) != 0)
            return makeError(errno, fmt::format("{}: {}", f.path, std::strerror(errno)));
        if (!S_ISREG(st.st_mode))
            return makeError(EINVAL, fmt::format("{}: not a regular file", f.path));
        f.how =
            f.root.empty()
                ? fmt::format("path {}{}", f.path,
                              magic ? " (through /proc: in that process's mount namespace)" : "")
                : fmt::format("path {} in pid {}'s mount namespace: {}", name, o.pid, f.path);
        f.how += replaced;
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
            std::string replaced;
            if (std::string m = mappedInstead(o.pid, f.file, f.path, replaced); !m.empty())
                f.path = m;
            f.how =
                fmt::format("library '{}' mapped by pid {}: {}{}", name, o.pid, f.file, replaced);
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
