// probectl list's OWNER: a generic-netlink socket's port id back to its process, through
// /proc/net/netlink and /proc/PID/fd, on this host's own socket.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "format.hpp"
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

// A comm is the process's own to set (prctl, /proc/PID/comm): list's OWNER shows one with a
// newline or an escape quoted as trace's COMM column does, on its one line. It printed the comm
// raw (cut at the newline, the escape sent to the terminal).
TEST(ProbeOwners, AnOwnersCommIsQuotedWhenNotPlain) {
    char saved[17] = {};
    ASSERT_EQ(::prctl(PR_GET_NAME, saved), 0);
    const std::string comm = "ev\nil\x1b[2J";
    ASSERT_EQ(::prctl(PR_SET_NAME, comm.c_str()), 0);
    const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    socklen_t len = sizeof(sa);
    const bool bound = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0;
    std::ifstream in("/proc/net/netlink");
    const std::string table((std::istreambuf_iterator<char>(in)), {});
    const auto owners = probeOwners(genlSocketInodes(table));
    ::prctl(PR_SET_NAME, saved);
    if (fd >= 0)
        ::close(fd);
    ASSERT_TRUE(bound);
    ASSERT_EQ(owners.count(sa.nl_pid), 1u) << "port " << sa.nl_pid;
    EXPECT_EQ(owners.at(sa.nl_pid).comm, comm) << "the whole comm, its newline included";

    probectl::ProbeInfo p;
    p.id = 1;
    p.symbol = "vfs_read";
    p.owner = sa.nl_pid;
    std::ostringstream os;
    printProbeList(os, {p}, false, owners);
    const std::string text = os.str();
    EXPECT_NE(text.find(std::to_string(::getpid()) + "/\"ev\\nil\\33[2J\" "), std::string::npos)
        << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << "a header and one row: " << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    // JSON keeps the comm as it is (escaped by JSON's own rules).
    std::ostringstream js;
    printProbeList(js, {p}, true, owners);
    EXPECT_NE(js.str().find("\"owner_comm\":\"ev\\nil\\u001b[2J\""), std::string::npos) << js.str();
}

// The owner ended while list read its comm: the read fails with ESRCH, which libstdc++'s
// filebuf throws through istreambuf_iterator ("basic_filebuf::underflow error reading the
// file: No such process", the end of probectl list). A proc tree made here whose PID/comm
// is a dead process's comm, reopened through /proc/self/fd (seen failing: it threw). The
// owner is still found, its comm unknown.
TEST(ProbeOwners, AnOwnerEndingWhileItsCommIsReadDoesNotThrow) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    const int comm = ::open(("/proc/" + std::to_string(child) + "/comm").c_str(), O_RDONLY);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ASSERT_GE(comm, 0);
    const std::string proc = testing::TempDir() + "/owners-proc";
    const std::string dir = proc + "/" + std::to_string(child);
    std::filesystem::remove_all(proc);
    std::filesystem::create_directories(dir + "/fd");
    std::filesystem::create_symlink("socket:[4242]", dir + "/fd/3");
    std::filesystem::create_symlink("/proc/self/fd/" + std::to_string(comm), dir + "/comm");
    std::map<std::uint32_t, ProbeOwner> owners;
    EXPECT_NO_THROW(owners = probeOwners({{7, 4242}}, proc));
    ::close(comm);
    std::filesystem::remove_all(proc);
    ASSERT_EQ(owners.count(7), 1u);
    EXPECT_EQ(owners.at(7).pid, child);
    EXPECT_EQ(owners.at(7).comm, "");
}
