// KernelMapsSource: MAPS_GET through the latest probe of a session, as a maps source.
#include "probectl/kernel_maps.hpp"

#include <utility>

namespace probectl {

struct KernelMapsSource::State {
    std::optional<Client> own;  // open()'s socket
    Take take;
    std::uint32_t probe = 0;
    std::uint64_t unpinned = 0;

    std::optional<std::string> maps(UserImage image) {
        // Without a number the hit kept nothing; asking for the newest would let go of
        // every address space of the process, which other stacks may still need.
        if (!probe || !image.maps_seq)
            return std::nullopt;
        auto text = take(probe, image, &unpinned);
        if (!text)
            return std::nullopt;
        return std::move(*text);
    }
};

namespace {

KernelMapsSource::Take takeThrough(Client& client) {
    return [&client](std::uint32_t probe_id, UserImage image, std::uint64_t* unpinned) {
        return client.takeMaps(probe_id, image.tgid, unpinned, image.maps_seq);
    };
}

}  // namespace

Result<KernelMapsSource> KernelMapsSource::open() {
    auto c = Client::connect(ClientOptions::dumpsOnly());
    if (!c)
        return std::move(c).error();
    KernelMapsSource source(Take{});
    source.state_->own.emplace(std::move(*c));
    source.state_->take = takeThrough(*source.state_->own);
    return source;
}

KernelMapsSource::KernelMapsSource(Client& client) : KernelMapsSource(takeThrough(client)) {}

KernelMapsSource::KernelMapsSource(Take take) : state_(std::make_unique<State>()) {
    state_->take = std::move(take);
}

KernelMapsSource::KernelMapsSource(KernelMapsSource&&) noexcept = default;
KernelMapsSource& KernelMapsSource::operator=(KernelMapsSource&&) noexcept = default;
KernelMapsSource::~KernelMapsSource() = default;

void KernelMapsSource::setProbe(std::uint32_t probe_id) {
    if (probe_id)
        state_->probe = probe_id;
}

std::uint32_t KernelMapsSource::probe() const {
    return state_->probe;
}

std::optional<std::string> KernelMapsSource::maps(UserImage image) {
    return state_->maps(image);
}

std::uint64_t KernelMapsSource::refreshUnpinned() {
    if (state_->probe)
        (void)state_->take(state_->probe, UserImage{0}, &state_->unpinned);
    return state_->unpinned;
}

std::uint64_t KernelMapsSource::unpinned() const {
    return state_->unpinned;
}

UserSymbolizer::MapsSource KernelMapsSource::source() {
    return [st = state_.get()](UserImage image) { return st->maps(image); };
}

std::function<std::optional<std::string>(std::uint32_t, UserImage)>
KernelMapsSource::probeSource() {
    return [st = state_.get()](std::uint32_t probe_id, UserImage image) {
        if (probe_id)
            st->probe = probe_id;
        return st->maps(image);
    };
}

}  // namespace probectl
