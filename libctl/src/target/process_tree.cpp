// Descendants of a process from /proc (process_tree.hpp).
#include "target/process_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
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

namespace {

// Gone, or a zombie (field 3 of /proc/PID/stat).
bool ended(pid_t pid) {
    const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat").value_or("");
    const std::size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
           stat[paren + 2] == 'X';
}

}  // namespace

void killTree(pid_t tgid, int wait_ms) {
    std::vector<pid_t> tree{tgid};
    ::kill(tgid, SIGSTOP);
    for (int round = 0; round < 64; ++round) {
        bool grew = false;
        for (pid_t d : descendantsOf(tgid))
            if (std::find(tree.begin(), tree.end(), d) == tree.end()) {
                ::kill(d, SIGSTOP);
                tree.push_back(d);
                grew = true;
            }
        if (!grew)
            break;
    }
    for (pid_t p : tree)
        ::kill(p, SIGKILL);
    waitEnded(std::vector<pid_t>(tree.begin() + 1, tree.end()), wait_ms);
}

void waitEnded(const std::vector<pid_t>& pids, int wait_ms) {
    for (int waited = 0; waited < wait_ms; ++waited) {
        if (std::all_of(pids.begin(), pids.end(), ended))
            return;
        ::usleep(1000);
    }
}

}  // namespace probectl
