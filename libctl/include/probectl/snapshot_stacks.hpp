// `count --by ustack --ustack=dwarf`: the kernel cannot key a map by a stack only the host
// can unwind, so each hit arrives as an event with its user stack snapshot
// (appendUserStackSnapshotArg); SnapshotStacks unwinds it (UserSymbolizer::snapshotLines)
// and puts in its place the id of the distinct stack, so that an EventAggregator keyed by
// `ustack` counts per stack and stackRows prints the rows with lines(id), as for $ustack ids.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/user_stacks.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class SnapshotStacks {
  public:
    // Stacks keep at most `max_frames` frames (then "...").
    explicit SnapshotStacks(std::size_t max_frames);

    // The id of `lines` (from 1; equal lines, equal id).
    std::uint32_t intern(const std::vector<std::string>& lines);
    // The lines of id, nullptr for an id not given out.
    const std::vector<std::string>* lines(std::uint32_t id) const;

    // Unwinds the `ustack` snapshot of `e` (a faulted one as "[no user stack]") with the maps
    // of the address space it was taken in (UserImage: e.tgid and the snapshot's maps_seq;
    // read now unless kept) and replaces it by its stack's id, a u32. Events
    // without a `ustack` value are left as they are.
    void replace(Event& e);
    // Maps from `source` before procfs (UserSymbolizer::setMapsSource), asked with the
    // probe id of the event being replaced (KernelMapsSource::probeSource).
    using MapsSource =
        std::function<std::optional<std::string>(std::uint32_t probe_id, UserImage image)>;
    void setMapsSource(MapsSource source);

    // How the walks went, for userSnapshotSummary.
    const SnapshotWalks& walks() const { return walks_; }

  private:
    std::size_t max_frames_;
    UserSymbolizer symbols_;
    MapsSource source_;
    std::uint32_t probe_ = 0;  // of the event being replaced
    std::map<std::vector<std::string>, std::uint32_t> ids_;
    std::vector<const std::vector<std::string>*> by_id_;  // id - 1 -> key of ids_
    SnapshotWalks walks_;
};

}  // namespace probectl
#pragma GCC visibility pop
