// probectl list's OWNER: a generic-netlink socket's port id back to its process, through
// /proc/net/netlink and /proc/PID/fd, on this host's own socket.
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "owners.hpp"

using namespace probectl::cli;

TEST(ProbeOwners, ParsesGenericNetlinkRowsOnly) {
    const auto ports = genlSocketInodes(
        "sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks    Drops    "
        "Inode\n"
        "000000003adbd651 0   812        00000000 0        0        0     2        0        4\n"
        "00000000d407acf1 16  4242       00000000 0        0        0     2        0        1583\n"
        "00000000d407acf2 16  0          00000000 0        0        0     2        0        "
        "1584\n");
    ASSERT_EQ(ports.size(), 1u);
    EXPECT_EQ(ports.at(4242), 1583u);
}

TEST(ProbeOwners, FindsTheProcessOfASocket) {
    const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    ASSERT_GE(fd, 0);
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    std::ifstream in("/proc/net/netlink");
    const std::string table((std::istreambuf_iterator<char>(in)), {});
    const auto owners = probeOwners(genlSocketInodes(table));
    ::close(fd);
    ASSERT_EQ(owners.count(sa.nl_pid), 1u) << "port " << sa.nl_pid;
    EXPECT_EQ(owners.at(sa.nl_pid).pid, ::getpid());
    std::ifstream comm("/proc/self/comm");
    std::string self;
    std::getline(comm, self);
    EXPECT_EQ(owners.at(sa.nl_pid).comm, self);
}
