// Notes for the probes another client removed while a session traced them.
#pragma once

#include "probectl/session.hpp"

#include <string>
#include <vector>

namespace probectl {

// One sentence per probe with ProbeStats::removed_by set, in the probes' order, naming the
// probe, the remover (its pid and comm; its netlink portid from a module that does not
// report them) and what the counters and tables then mean.
std::vector<std::string> removedProbeNotes(const std::vector<ProbeStats>& probes);

}  // namespace probectl
