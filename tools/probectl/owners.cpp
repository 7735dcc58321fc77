#include "owners.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "probectl/proc_maps.hpp"

namespace probectl::cli {

namespace {

constexpr int kNetlinkGeneric = 16;  // NETLINK_GENERIC, /proc/net/netlink's Eth column

bool allDigits(const char* s) {
    if (!*s)
        return false;
    for (; *s; ++s)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

}  // namespace

std::map<std::uint32_t, unsigned long> genlSocketInodes(std::string_view text) {
    std::map<std::uint32_t, unsigned long> out;
    std::istringstream in{std::string(text)};
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string sk, groups, rmem, wmem, dump, locks, drops;
        int eth = -1;
        std::uint32_t port = 0;
        unsigned long inode = 0;
        if (f >> sk >> eth >> port >> groups >> rmem >> wmem >> dump >> locks >> drops >> inode &&
            eth == kNetlinkGeneric && port != 0)
            out[port] = inode;
    }
    return out;
}

std::map<std::uint32_t, ProbeOwner> probeOwners(const std::map<std::uint32_t, unsigned long>& ports,
                                                const std::string& proc) {
    std::map<unsigned long, std::uint32_t> by_inode;
    for (const auto& [port, inode] : ports)
        by_inode[inode] = port;
    std::map<std::uint32_t, ProbeOwner> out;
    DIR* d = ::opendir(proc.c_str());
    if (!d)
        return out;
    while (const dirent* e = ::readdir(d)) {
        if (!allDigits(e->d_name) || out.size() == ports.size())
            continue;
        const std::string base = proc + "/" + e->d_name;
        DIR* fds = ::opendir((base + "/fd").c_str());
        if (!fds)
            continue;
        while (const dirent* f = ::readdir(fds)) {
            char link[64];
            const std::string path = base + "/fd/" + f->d_name;
            const ssize_t n = ::readlink(path.c_str(), link, sizeof(link) - 1);
            if (n <= 0)
                continue;
            link[n] = '\0';
            const std::string_view l(link, static_cast<std::size_t>(n));
            if (!l.starts_with("socket:["))
                continue;
            const auto it = by_inode.find(std::strtoul(link + 8, nullptr, 10));
            if (it == by_inode.end())
                continue;
            ProbeOwner o;
            o.pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
            // The whole comm but the kernel's final newline: a comm may hold its own. Not
            // a stream: the owner may end while its comm is read (readProcFile).
            o.comm = readProcFile(base + "/comm").value_or("");
            if (o.comm.ends_with('\n'))
                o.comm.pop_back();
            out[it->second] = o;
        }
        ::closedir(fds);
    }
    ::closedir(d);
    return out;
}

}  // namespace probectl::cli
