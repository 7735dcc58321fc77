// The processes descended from a process now: what -p PID -f traces besides PID, since
// following forks from attach time on misses the children that exist already.
#pragma once

#include <sys/types.h>

#include <vector>

namespace probectl {

// Every living descendant of `tgid` (children, their children, ...), parents first, from
// /proc/TGID/task/*/children (every thread's children), or by parent pid in /proc/*/stat
// when the kernel has no children files. Empty when `tgid` does not exist.
std::vector<pid_t> descendantsOf(pid_t tgid);

}  // namespace probectl
