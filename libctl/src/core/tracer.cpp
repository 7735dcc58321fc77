// The event loop every Tracer shares.
#include "probectl/tracer.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "probectl/session.hpp"  // SessionStats
#include "target/process_tree.hpp"

namespace probectl {

namespace {

template <typename Poll>
Result<void> loop(const Tracer& t, const Poll& poll, const std::function<bool()>& should_stop) {
    if (should_stop && should_stop())
        return {};
    for (;;) {
        auto r = poll();
        if (!r && r.error().err != EINTR)
            return std::move(r).error();
        if ((should_stop && should_stop()) || t.done())
            return {};
    }
}

}  // namespace

bool Tracer::killCommand() {
    // Only a child of ours that has not ended: waitid fails for anyone else's pid.
    const pid_t pid = commandPid();
    siginfo_t info{};
    if (pid > 0 && !commandStatus() &&
        ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == 0)
        ::kill(pid, SIGKILL);
    return false;
}

bool Tracer::commandLeftRunning() const {
    const pid_t pid = commandPid();
    if (pid <= 0)
        return false;
    for (pid_t d : descendantsOf(adoptsOrphans() ? ::getpid() : pid))
        if (d != pid && !processEnded(d))
            return true;
    return false;
}

Result<TracedProcesses> Tracer::tracedProcesses() {
    return makeError(
        EOPNOTSUPP,
        fmt::format("the {} backend does not count the processes it traces", backend()));
}

std::vector<std::string> Tracer::takeNotes() {
    std::vector<std::string> out;
    out.swap(notes_);
    return out;
}

Result<void> Tracer::run(const EventCallback& cb, const std::function<bool()>& should_stop,
                         int tick_ms) {
    return loop(
        *this, [&] { return poll(tick_ms, cb); }, should_stop);
}

Result<void> Tracer::runViews(const EventViewCallback& cb, const std::function<bool()>& should_stop,
                              int tick_ms) {
    return loop(
        *this, [&] { return pollViews(tick_ms, cb); }, should_stop);
}

// A backend that makes Events hands out views of them.
Result<std::size_t> Tracer::pollViews(int timeout_ms, const EventViewCallback& cb) {
    return poll(timeout_ms, [&cb](const Event& ev) {
        if (cb)
            cb(EventView::of(ev));
    });
}

Result<SessionStats> Tracer::stopViews(const EventViewCallback& cb) {
    return stop([&cb](const Event& ev) {
        if (cb)
            cb(EventView::of(ev));
    });
}

}  // namespace probectl
