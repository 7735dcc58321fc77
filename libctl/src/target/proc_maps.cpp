// /proc/PID/maps parsing (format in proc_maps.hpp).
#include "probectl/proc_maps.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace probectl {

namespace {

// Reads a hex or decimal field up to the next `stop` character.
bool field(std::string_view& s, char stop, int base, std::uint64_t* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
    if (ec != std::errc() || p == s.data())
        return false;
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
    if (stop) {
        if (s.empty() || s[0] != stop)
            return false;
        s.remove_prefix(1);
    }
    return true;
}

bool parseLine(std::string_view s, ProcMapping* m) {
    std::uint64_t major = 0, minor = 0;
    if (!field(s, '-', 16, &m->start) || !field(s, ' ', 16, &m->end))
        return false;
    const auto sp = s.find(' ');
    if (sp == std::string_view::npos)
        return false;
    m->perms = std::string(s.substr(0, sp));
    s.remove_prefix(sp + 1);
    if (!field(s, ' ', 16, &m->offset) || !field(s, ':', 16, &major) ||
        !field(s, ' ', 16, &minor) || !field(s, 0, 10, &m->inode))
        return false;
    m->dev_major = static_cast<unsigned>(major);
    m->dev_minor = static_cast<unsigned>(minor);
    while (!s.empty() && s[0] == ' ')
        s.remove_prefix(1);
    constexpr std::string_view kDeleted = " (deleted)";
    if (s.ends_with(kDeleted)) {
        m->deleted = true;
        s.remove_suffix(kDeleted.size());
    }
    m->path = std::string(s);
    return true;
}

}  // namespace

std::optional<std::string> readProcFile(const std::string& path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

bool libraryNameMatches(std::string_view file, std::string_view name) {
    if (file == name)
        return true;
    // libc -> libc.so.6 / libc-2.31.so; libc.so -> libc.so.6. A name with a version
    // (libc.so.6) only matches itself.
    std::string_view stem = name;
    if (stem.ends_with(".so"))
        stem.remove_suffix(3);
    else if (stem.find(".so.") != std::string_view::npos)
        return false;
    if (!file.starts_with(stem))
        return false;
    const std::string_view rest = file.substr(stem.size());
    return rest.starts_with(".so.") || rest == ".so" ||
           (rest.starts_with('-') && rest.ends_with(".so"));
}

Result<ProcMaps> ProcMaps::parse(std::string_view text) {
    ProcMaps out;
    std::size_t line_no = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++line_no;
        if (line.empty())
            continue;
        ProcMapping m;
        if (!parseLine(line, &m))
            return makeError(EINVAL,
                             fmt::format("maps line {} does not parse: '{}'", line_no, line));
        out.maps_.push_back(std::move(m));
    }
    return out;
}

Result<ProcMaps> ProcMaps::read(pid_t pid) {
    const std::string path = fmt::format("/proc/{}/maps", pid);
    std::ifstream in(path);
    if (!in) {
        const int err = errno == ENOENT ? ESRCH : errno;
        return makeError(err, fmt::format("{}: {}", path,
                                          err == ESRCH ? "no such process" : std::strerror(err)));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    // Reading maps of a process one may not ptrace yields an empty file, not an error.
    if (ss.str().empty() && !in.eof())
        return makeError(EACCES, fmt::format("{}: cannot read (ptrace access needed)", path));
    return parse(ss.str());
}

const ProcMapping* ProcMaps::containing(std::uint64_t addr) const {
    for (const auto& m : maps_)
        if (m.contains(addr))
            return &m;
    return nullptr;
}

std::vector<std::string> ProcMaps::filesNamed(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& m : maps_) {
        if (!m.isFile())
            continue;
        const auto slash = m.path.rfind('/');
        if (libraryNameMatches(std::string_view(m.path).substr(slash + 1), name) &&
            std::find(out.begin(), out.end(), m.path) == out.end())
            out.push_back(m.path);
    }
    return out;
}

}  // namespace probectl
