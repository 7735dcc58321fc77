// The processes descended from a process now, from /proc: what -p PID -f traces besides PID
// (following forks from attach time on misses the children that exist already), and what a
// run of -p PID -f waits for before it ends when the backend does not count them itself
// (Tracer::tracedProcesses; a look at /proc misses a process forked and orphaned since the
// last one).
#pragma once

#include <sys/types.h>

#include <vector>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Every living descendant of `tgid` (children, their children, ...), parents first, from
// /proc/TGID/task/*/children (every thread's children), or by parent pid in /proc/*/stat
// when the kernel has no children files. Empty when `tgid` does not exist. Zombies are
// listed (processEnded() tells them).
std::vector<pid_t> descendantsOf(pid_t tgid);

// Gone, or a zombie (field 3 of /proc/PID/stat).
bool processEnded(pid_t pid);

// The process (thread group) thread `tid` belongs to, from /proc/TID/status "Tgid:"; `tid`
// itself for a process's main thread; 0 when unreadable (gone).
pid_t processOf(pid_t tid);

}  // namespace probectl
#pragma GCC visibility pop
