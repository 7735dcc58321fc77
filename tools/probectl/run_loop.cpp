#include "run_loop.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
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

namespace {

// Exited: gone, or a zombie its parent has not reaped yet (kill(2) still finds those).
bool exited(std::uint32_t pid) {
    if (::kill(static_cast<pid_t>(pid), 0) < 0 && errno == ESRCH)
        return true;
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat;
    if (!std::getline(in, stat))
        return true;
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() &&
           (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X');
}

}  // namespace

bool RunLoop::shouldStop() {
    if (caught_())
        return true;
    const std::uint64_t now = monotonicNs();
    if (deadline_ && now >= deadline_)
        return true;
    if (!command_.empty() && !status_)
        status_ = tracer_.commandStatus();
    if (command_.empty() && !pids_.empty() && now >= next_pid_check_) {
        next_pid_check_ = now + 100'000'000;
        pids_gone_ = std::all_of(pids_.begin(), pids_.end(), exited);
    }
    return status_.has_value() || pids_gone_;
}

int RunLoop::finish(Io& io, int rc) {
    const bool ended_itself = status_.has_value();
    std::optional<int> status = status_;
    if (!command_.empty() && !status)
        status = tracer_.terminateCommand();
    if (status)
        io.err << fmt::format("'{}' {}\n", command_[0], HeldCommand::describeStatus(*status));
    if (pids_gone_)
        io.err << fmt::format("{} {} exited\n", pids_.size() == 1 ? "pid" : "pids",
                              fmt::join(pids_, ", "));
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
