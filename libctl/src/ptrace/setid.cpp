// Set-user-ID and set-group-ID files under the ptrace backend: execve(2) does not give a
// traced process the file's ids unless its tracer has CAP_SYS_PTRACE, so the program runs
// unprivileged and may fail in ways it never does untraced. The kernel backend does not
// change what exec does.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "ptrace/engine.hpp"

namespace probectl::ptrace {

namespace {

// The effective id (the second field) of a "Uid:" or "Gid:" line of /proc/PID/status.
std::optional<unsigned> effectiveId(pid_t pid, const std::string& key) {
    std::ifstream f(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind(key, 0) != 0)
            continue;
        std::istringstream in(line.substr(key.size()));
        unsigned real = 0, effective = 0;
        if (in >> real >> effective)
            return effective;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> setidNote(pid_t pid) {
    const auto exe = fmt::format("/proc/{}/exe", pid);
    struct stat st {};
    if (::stat(exe.c_str(), &st) != 0 || !(st.st_mode & (S_ISUID | S_ISGID)))
        return std::nullopt;
    const bool uid_lost = (st.st_mode & S_ISUID) && effectiveId(pid, "Uid:") != st.st_uid;
    // A set-group-ID bit without group execute permission marks mandatory locking, not an id.
    const bool gid_lost =
        (st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && effectiveId(pid, "Gid:") != st.st_gid;
    if (!uid_lost && !gid_lost)
        return std::nullopt;
    char path[4096];
    const ssize_t n = ::readlink(exe.c_str(), path, sizeof(path) - 1);
    const std::string file = n > 0 ? std::string(path, static_cast<std::size_t>(n)) : exe;
    return fmt::format(
        "process {} ran the set-{}-ID file {} without its privileges: under the ptrace "
        "backend exec does not change ids unless the tracer has CAP_SYS_PTRACE (the "
        "kernel backend leaves exec alone)",
        pid, uid_lost ? "user" : "group", file);
}

}  // namespace probectl::ptrace
