// Descendants of a process from /proc (process_tree.hpp).
#include "target/process_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "probectl/proc_maps.hpp"

namespace probectl {

namespace {

// Children of every thread of `tgid` (a thread's children file lists the processes that
// thread forked); false when the kernel has no children files (CONFIG_PROC_CHILDREN).
bool childrenFiles(pid_t tgid, std::vector<pid_t>& out) {
    const std::string task = "/proc/" + std::to_string(tgid) + "/task";
    DIR* d = ::opendir(task.c_str());
    if (!d)
        return true;  // gone: no children
    bool have = false;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        const auto children = readProcFile(task + "/" + e->d_name + "/children");
        if (!children)
            continue;
        have = true;
        std::istringstream in(*children);
        for (pid_t pid; in >> pid;)
            out.push_back(pid);
    }
    ::closedir(d);
    return have;
}

// Parent of every process, from field 4 of /proc/PID/stat (after the parenthesised comm).
std::multimap<pid_t, pid_t> childrenByParent() {
    std::multimap<pid_t, pid_t> out;
    DIR* d = ::opendir("/proc");
    if (!d)
        return out;
    while (dirent* e = ::readdir(d)) {
        const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
        if (pid <= 0)
            continue;
        const std::string stat =
            readProcFile(std::string("/proc/") + e->d_name + "/stat").value_or("");
        const std::size_t paren = stat.rfind(')');
        if (paren == std::string::npos)
            continue;
        std::istringstream rest(stat.substr(paren + 1));
        std::string state;
        pid_t ppid = 0;
        if (rest >> state >> ppid)
            out.emplace(ppid, pid);
    }
    ::closedir(d);
    return out;
}

}  // namespace

std::vector<pid_t> descendantsOf(pid_t tgid) {
    std::vector<pid_t> out;
    std::multimap<pid_t, pid_t> by_parent;
    bool scanned = false;
    std::vector<pid_t> todo = {tgid};
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        std::vector<pid_t> kids;
        if (!scanned && !childrenFiles(p, kids)) {
            by_parent = childrenByParent();
            scanned = true;
        }
        if (scanned) {
            kids.clear();
            auto [b, e] = by_parent.equal_range(p);
            for (auto it = b; it != e; ++it)
                kids.push_back(it->second);
        }
        for (pid_t k : kids)
            if (k != tgid && std::find(out.begin(), out.end(), k) == out.end()) {
                out.push_back(k);
                todo.push_back(k);
            }
    }
    return out;
}

bool processEnded(pid_t pid) {
    const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat").value_or("");
    const std::size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
           stat[paren + 2] == 'X';
}

pid_t processOf(pid_t tid) {
    const std::string status =
        readProcFile("/proc/" + std::to_string(tid) + "/status").value_or("");
    const std::size_t at = status.find("\nTgid:");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::atol(status.c_str() + at + 6));
}

pid_t tracerOf(pid_t pid) {
    const std::string status =
        readProcFile("/proc/" + std::to_string(pid) + "/status").value_or("");
    const std::size_t at = status.find("\nTracerPid:");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::atol(status.c_str() + at + 11));
}

namespace {

// Field 3 of /proc/PID/stat, '\0' once it is gone.
char stateOf(pid_t pid) {
    const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat").value_or("");
    const std::size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

// Returns once each of `pids` is stopped (or traced-stopped) or ended, or after `wait_ms`.
// A SIGSTOP does not abort a fork already under way: its child joins the children list
// only when the fork completes, maybe after the sender's next look. A stopped process is
// back from its fork, so its children are all listed then.
void waitStopped(std::vector<pid_t> pids, int wait_ms) {
    for (int waited = 0; waited < wait_ms; ++waited) {
        std::erase_if(pids, [](pid_t p) {
            const char s = stateOf(p);
            return s == '\0' || s == 'T' || s == 't' || s == 'Z' || s == 'X';
        });
        if (pids.empty())
            return;
        ::usleep(1000);
    }
}

}  // namespace

void killTree(pid_t root, int wait_ms, const std::function<bool(pid_t)>& spare) {
    const bool self = root == ::getpid();
    const auto spared = [&](pid_t p) { return spare && spare(p); };
    std::vector<pid_t> tree;  // what is stopped here, then killed and waited for
    std::vector<pid_t> seen;  // the spared too, so that each is asked about once
    if (!self && !spared(root)) {
        ::kill(root, SIGSTOP);
        tree.push_back(root);
        waitStopped({root}, 1000);
    }
    for (int round = 0; round < 64; ++round) {
        std::vector<pid_t> stopping;
        bool grew = false;
        for (pid_t d : descendantsOf(root)) {
            if (std::find(seen.begin(), seen.end(), d) != seen.end())
                continue;
            seen.push_back(d);
            grew = true;
            if (spared(d))
                continue;
            ::kill(d, SIGSTOP);
            tree.push_back(d);
            stopping.push_back(d);
        }
        if (!grew)
            break;
        // Bounded: one in uninterruptible sleep stops late (it forks nothing meanwhile).
        waitStopped(std::move(stopping), 1000);
    }
    for (pid_t p : tree)
        ::kill(p, SIGKILL);
    // `root` is its parent's to reap: only what is under it is waited for.
    if (!tree.empty() && tree.front() == root)
        tree.erase(tree.begin());
    waitEnded(tree, wait_ms);
}

void reapChildren(pid_t keep) {
    for (;;) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
            return;
        if (info.si_pid != keep) {
            (void)::waitpid(info.si_pid, nullptr, WNOHANG);
            continue;
        }
        // The ended `keep` comes first each time: the others one by one.
        for (pid_t c : descendantsOf(::getpid()))
            if (c != keep && processEnded(c))
                (void)::waitpid(c, nullptr, WNOHANG);
        return;
    }
}

void waitEnded(const std::vector<pid_t>& pids, int wait_ms) {
    for (int waited = 0; waited < wait_ms; ++waited) {
        if (std::all_of(pids.begin(), pids.end(), processEnded))
            return;
        ::usleep(1000);
    }
}

}  // namespace probectl
