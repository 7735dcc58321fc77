// SnapshotStacks: user stack snapshots unwound into interned stacks.
#include "probectl/snapshot_stacks.hpp"

#include "probectl/kernel_stacks.hpp"

namespace probectl {

SnapshotStacks::SnapshotStacks(std::size_t max_frames) : max_frames_(max_frames) {}

std::uint32_t SnapshotStacks::intern(const std::vector<std::string>& lines) {
    auto [it, added] = ids_.emplace(lines, static_cast<std::uint32_t>(by_id_.size() + 1));
    if (added)
        by_id_.push_back(&it->first);
    return it->second;
}

const std::vector<std::string>* SnapshotStacks::lines(std::uint32_t id) const {
    return id >= 1 && id <= by_id_.size() ? by_id_[id - 1] : nullptr;
}

void SnapshotStacks::setMapsSource(MapsSource source) {
    source_ = std::move(source);
    symbols_.setMapsSource(
        [this](UserImage image) -> std::optional<std::string> { return source_(probe_, image); });
}

void SnapshotStacks::replace(Event& e) {
    for (FetchedValue& v : e.values) {
        if (v.name != kUserStackArg)
            continue;
        const UserImage image(static_cast<pid_t>(e.tgid), v.maps_seq);
        probe_ = e.probe_id;
        symbols_.capture(image);
        const auto lines = symbols_.snapshotLines(image, v.snapshot, v.truncated, max_frames_);
        walks_.count(lines, v.truncated && !v.faulted);
        v.raw = intern(lines);
        v.type = FetchType::U32;
        v.snapshot.clear();
        v.truncated = false;
        v.faulted = false;
        return;
    }
}

}  // namespace probectl
