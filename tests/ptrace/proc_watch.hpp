// What a test sees of processes through /proc: whether one still runs, and the processes
// running a given command line whoever's child they are now (a daemon, a background job).
// Shared by the CLI tests that check what is left running when probectl ends (host and VM).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace procwatch {

// A process may exit between open and read (ESRCH): that reads as "", never throws (an
// istreambuf_iterator over an ifstream throws from the read).
inline std::string slurp(const std::string& path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

// Field 3 of /proc/PID/stat ('Z': a zombie), '\0' once it is gone.
inline char stateOf(pid_t pid) {
    const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

// Running: neither gone nor a zombie.
inline bool running(pid_t pid) {
    const char s = stateOf(pid);
    return s != '\0' && s != 'Z' && s != 'X';
}

// Every running process whose command line is `argv` (a unique sleep's "sleep\0N\0").
inline std::vector<pid_t> processesRunning(const std::vector<std::string>& argv) {
    std::string want;
    for (const auto& a : argv)
        want += a + '\0';
    std::vector<pid_t> out;
    DIR* d = ::opendir("/proc");
    if (!d)
        return out;
    while (dirent* e = ::readdir(d)) {
        const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
        if (pid > 0 && slurp(std::string("/proc/") + e->d_name + "/cmdline") == want &&
            running(pid))
            out.push_back(pid);
    }
    ::closedir(d);
    return out;
}

// Waits until a process runs `argv` (false after 30 s: the command did not get there).
inline bool waitRunning(const std::vector<std::string>& argv) {
    for (int i = 0; i < 3000; i++) {
        if (!processesRunning(argv).empty())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Kills what a failed check left running, until none is left (a loop may still fork).
inline void killAll(const std::vector<std::string>& argv) {
    for (int round = 0; round < 100; ++round) {
        const auto left = processesRunning(argv);
        if (left.empty())
            return;
        for (pid_t p : left)
            ::kill(p, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace procwatch
