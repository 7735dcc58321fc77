// Who owns a probe: the kernel knows the owning socket's netlink port id; the process is
// found as ss -p finds it, from /proc/net/netlink (port id -> socket inode) and the sockets
// among each process's open files.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace probectl::cli {

struct ProbeOwner {
    pid_t pid = 0;
    std::string comm;
};

// Generic-netlink port id -> socket inode, from /proc/net/netlink's text.
std::map<std::uint32_t, unsigned long> genlSocketInodes(std::string_view proc_net_netlink);

// The processes holding the sockets of these port ids (those found; reading another user's
// /proc/PID/fd needs root).
std::map<std::uint32_t, ProbeOwner> probeOwners(const std::map<std::uint32_t, unsigned long>& ports,
                                                const std::string& proc = "/proc");

}  // namespace probectl::cli
