#include "session/removed_notes.hpp"

#include <fmt/format.h>

namespace probectl {

std::vector<std::string> removedProbeNotes(const std::vector<ProbeStats>& probes) {
    std::vector<std::string> notes;
    for (const auto& p : probes)
        if (p.removed_by)
            notes.push_back(fmt::format(
                "probe {} ({}) was removed by another client (netlink port {}) during the "
                "trace: its counters are those at its removal, and hits after it were not seen",
                p.id, p.spec, p.removed_by));
    return notes;
}

}  // namespace probectl
