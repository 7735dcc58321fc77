// The event loop every Tracer shares.
#include "probectl/tracer.hpp"

#include <cerrno>

namespace probectl {

Result<void> Tracer::run(const EventCallback& cb, const std::function<bool()>& should_stop,
                         int tick_ms) {
    if (should_stop && should_stop())
        return {};
    for (;;) {
        auto r = poll(tick_ms, cb);
        if (!r && r.error().err != EINTR)
            return std::move(r).error();
        if ((should_stop && should_stop()) || done())
            return {};
    }
}

}  // namespace probectl
