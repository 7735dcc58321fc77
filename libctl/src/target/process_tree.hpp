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

// SIGKILL to `tgid` and to every descendant of it. Each is stopped first (SIGSTOP), parents
// first, until no new one shows (a stopped process forks no child the kill would miss),
// then all die together. Returns once the descendants are gone or zombies (not the
// caller's to reap), or after `wait_ms`; `tgid` is left for its parent to reap.
void killTree(pid_t tgid, int wait_ms);

// Returns once each of `pids` is gone or a zombie, or after `wait_ms`.
void waitEnded(const std::vector<pid_t>& pids, int wait_ms);

}  // namespace probectl
