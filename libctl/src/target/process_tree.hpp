// Killing and reaping a process tree found from /proc; descendantsOf() is public
// (probectl/process_tree.hpp).
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

#include "probectl/process_tree.hpp"

namespace probectl {

// SIGKILL to `root` and to every descendant of it but the ones `spare` picks (this process
// too when `root` is it: a held command's subreaper, HeldCommand::spawn, finds the
// command's orphans among its own descendants). Each is stopped first (SIGSTOP), parents
// first, and looked at again once it has stopped, until no new one shows (a stopped
// process forks no child the kill would miss), then all die together. The spared (processes this one traces, which its tracer ends
// through their stops: a SIGSTOP would be a signal stop it has to handle) are not stopped,
// killed or waited for, but what is under them is. Returns once the killed are gone or
// zombies (not the caller's to reap), or after `wait_ms`; `root` is left for its parent to
// reap.
void killTree(pid_t root, int wait_ms, const std::function<bool(pid_t)>& spare = {});

// Returns once each of `pids` is gone or a zombie, or after `wait_ms`.
void waitEnded(const std::vector<pid_t>& pids, int wait_ms);

// The pid of the thread that ptraces `pid` (/proc/PID/status TracerPid), 0 for none.
pid_t tracerOf(pid_t pid);

// Reaps every ended child of this process but `keep` (the held command, whose status its
// owner collects): the orphans a subreaper adopts would otherwise stay zombies until it
// exits.
void reapChildren(pid_t keep);

}  // namespace probectl
