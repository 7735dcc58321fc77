#include "run_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "format.hpp"
#include "probectl/held_command.hpp"

namespace probectl::cli {

RunLoop::RunLoop(Tracer& tracer, const std::vector<std::string>& command, double duration_s,
                 std::function<bool()> caught)
    : tracer_(tracer), command_(command), caught_(std::move(caught)), t0_(monotonicNs()) {
    if (duration_s > 0)
        deadline_ = t0_ + static_cast<std::uint64_t>(duration_s * 1e9);
}

bool RunLoop::shouldStop() {
    if (caught_())
        return true;
    if (deadline_ && monotonicNs() >= deadline_)
        return true;
    if (!command_.empty() && !status_)
        status_ = tracer_.commandStatus();
    return status_.has_value();
}

int RunLoop::finish(Io& io, int rc) {
    const bool ended_itself = status_.has_value();
    std::optional<int> status = status_;
    if (!command_.empty() && !status)
        status = tracer_.terminateCommand();
    if (status)
        io.err << fmt::format("'{}' {}\n", command_[0], HeldCommand::describeStatus(*status));
    if (rc == kExitOk && ended_itself)
        return HeldCommand::exitCode(*status);
    return rc;
}

std::optional<UsageError> splitCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>& mine,
                                       std::vector<std::string>& command) {
    auto dash = std::find(args.begin(), args.end(), "--");
    mine.assign(args.begin(), dash);
    command.clear();
    if (dash == args.end())
        return std::nullopt;
    command.assign(dash + 1, args.end());
    if (command.empty())
        return UsageError{"'--' must be followed by a command to run"};
    return std::nullopt;
}

}  // namespace probectl::cli
