#include "session/removed_notes.hpp"

#include <fmt/format.h>

namespace probectl {

// `probectl remove` has usually exited by the time the owner reads this, so the kernel's
// record of it is all there is to name it by.
std::string probeRemover(const ProbeStats& p) {
    if (!p.removed_by_pid)
        return fmt::format("netlink port {}", p.removed_by);
    if (p.removed_by_comm.empty())
        return fmt::format("pid {}", p.removed_by_pid);
    return fmt::format("pid {} ({})", p.removed_by_pid, p.removed_by_comm);
}

std::vector<std::string> removedProbeNotes(const std::vector<ProbeStats>& probes) {
    std::vector<std::string> notes;
    for (const auto& p : probes)
        if (p.removed_by)
            notes.push_back(fmt::format(
                "probe {} ({}) was removed by another client, {}, during the trace: its "
                "counters (and table) are those at its removal, and hits after it were not seen",
                p.id, p.spec, probeRemover(p)));
    return notes;
}

}  // namespace probectl
