// Children ptrace cannot follow: clone(2) with CLONE_UNTRACED reports no event to the
// tracer, so under -f such a child runs untraced. It is found by the SIGCHLD its parent
// gets (the child exited) or among the living children at detach, and named in a note.
#include <signal.h>
#include <sys/ptrace.h>

#include "ptrace/engine.hpp"
#include "target/process_tree.hpp"

namespace probectl::ptrace {

void Engine::noteUntracedChild(Thread& t) {
    siginfo_t si{};
    if (!options_.follow || ::ptrace(PTRACE_GETSIGINFO, t.tid, nullptr, &si) != 0 ||
        si.si_code <= 0 || si.si_pid <= 0)
        return;
    if (!seen_tgids_.count(si.si_pid))
        untraced_children_.insert(si.si_pid);
}

void Engine::findUntracedChildren() {
    if (!options_.follow)
        return;
    std::set<pid_t> tgids;
    for (const auto& [tid, t] : threads_)
        tgids.insert(t.tgid);
    for (pid_t tgid : tgids)
        for (pid_t d : descendantsOf(tgid))
            if (!seen_tgids_.count(d) && !early_.count(d))
                untraced_children_.insert(d);
}

}  // namespace probectl::ptrace
