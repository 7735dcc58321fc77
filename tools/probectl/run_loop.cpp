#include "run_loop.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <ostream>
#include <utility>

#include "format.hpp"
#include "probectl/held_command.hpp"
#include "probectl/process_tree.hpp"
#include "probectl/strace_format.hpp"

namespace probectl::cli {

RunLoop::RunLoop(Tracer& tracer, const std::vector<std::string>& command, double duration_s,
                 std::function<int()> caught)
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

// Our child `pid` exists and has not ended (waitid fails for anyone else's process, so a
// pid that is not the command's own is never signalled).
bool runningChild(pid_t pid) {
    siginfo_t info{};
    return pid > 0 &&
           ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
}

// Up to grace_ms for the command to end after the forwarded stop signal, before
// terminateCommand()'s SIGTERM. Nothing is reaped here: the tracer reaps its command. True
// when it is still running.
bool outlives(pid_t pid, int grace_ms) {
    for (int waited = 0; waited < grace_ms && runningChild(pid); waited += 10)
        ::usleep(10000);
    return runningChild(pid);
}

int g_exit_signal = 0;

}  // namespace

void setExitSignal(int sig) {
    g_exit_signal = sig;
}

int takeExitSignal() {
    return std::exchange(g_exit_signal, 0);
}

void dieOf(int sig) {
    // Not dumpable: no core for any core_pattern (a pipe's helper ignores RLIMIT_CORE).
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
}

void RunLoop::watchPids(const std::vector<std::uint32_t>& pids, bool follow) {
    pids_ = pids;
    follow_ = follow;
    counted_ = !pids_.empty() && tracer_.tracedProcesses().ok();
    if (follow_ && !counted_)
        addDescendants();
}

bool RunLoop::watchedExited() {
    if (counted_) {
        if (auto t = tracer_.tracedProcesses()) {
            forked_count_ = t->total > pids_.size() ? t->total - pids_.size() : 0;
            return t->live == 0;
        }
        counted_ = false;  // the count failed: /proc from now on
    }
    if (follow_)
        addDescendants();
    forked_count_ = forked_.size();
    return std::all_of(pids_.begin(), pids_.end(), exited) &&
           std::all_of(forked_.begin(), forked_.end(), exited);
}

void RunLoop::addDescendants() {
    std::vector<std::uint32_t> alive;
    for (auto p : pids_)
        alive.push_back(p);
    for (auto p : forked_)
        alive.push_back(p);
    for (auto p : alive) {
        if (exited(p))
            continue;
        for (pid_t d : descendantsOf(static_cast<pid_t>(p)))
            if (std::find(pids_.begin(), pids_.end(), static_cast<std::uint32_t>(d)) ==
                    pids_.end() &&
                std::find(forked_.begin(), forked_.end(), static_cast<std::uint32_t>(d)) ==
                    forked_.end())
                forked_.push_back(static_cast<std::uint32_t>(d));
    }
}

int RunLoop::signalBeforeStart() {
    if (!signal_)
        signal_ = caught_();
    return signal_;
}

bool RunLoop::shouldStop() {
    const std::uint64_t now = monotonicNs();
    if (!ending_) {
        if (!signal_)
            signal_ = caught_();
        const bool late = deadline_ && now >= deadline_;
        if (!signal_ && !late) {
            if (!command_.empty() && !status_)
                status_ = tracer_.commandStatus();
            if (command_.empty() && !pids_.empty() && now >= next_pid_check_) {
                next_pid_check_ = now + 100'000'000;
                pids_gone_ = watchedExited();
            }
            return status_.has_value() || pids_gone_;
        }
        ending_ = true;
        // On to the command at once, as a terminal's Ctrl-C reaches both: it ends as an
        // interrupted command does (and may clean up). Sent after stop() instead, it ran on
        // untraced while the probes were disabled and drained. --duration ends it with
        // SIGTERM the same way.
        const pid_t pid = command_.empty() ? 0 : tracer_.commandPid();
        if (!runningChild(pid)) {
            // A terminal's Ctrl-C reaches the command's whole group: the command may have
            // died of it already while its background job (which ignores SIGINT) runs on.
            // That job gets the grace the command would have had, then is killed.
            if (command_.empty() || !tracer_.commandLeftRunning())
                return true;
            grace_end_ = now + kStopGraceNs;
            return false;
        }
        ::kill(pid, signal_ ? signal_ : SIGTERM);
        ended_by_us_ = !signal_;
        // Traced on while it ends by the signal: the calls the signal interrupts return
        // then (clock_nanosleep's ERESTART_RESTARTBLOCK), and stopping at once left them
        // "never returned" on the kernel backend where ptrace counted them.
        grace_end_ = now + kStopGraceNs;
        return false;
    }
    if (grace_end_ == 0)
        return true;
    if (!status_)
        status_ = tracer_.commandStatus();
    if (!killed_) {
        if (!status_ && now < grace_end_)
            return false;
        // The command ended by the signal: the run ends with it unless it left processes
        // running (sh's background job); those get the rest of the grace, as the command did.
        if (status_ && !tracer_.commandLeftRunning())
            return true;
        if (now < grace_end_)
            return false;
        // It, or what it started, outlived the grace (it ignores the signal): killed now,
        // every process of it, while still traced, so that the trace tells their ends and
        // none is left running after probectl (a tool that gives up on its command leaves
        // no part of it behind).
        killed_ = true;
        if (!status_)
            ended_by_us_ = true;
        kill_ends_polled_ = tracer_.killCommand();
        kill_end_ = monotonicNs() + kKillWaitNs;
        return false;
    }
    // The ptrace backend sees the killed processes end (its loop ends once all did).
    return (status_ && !kill_ends_polled_) || now >= kill_end_;
}

int RunLoop::finish(Io& io, int rc) {
    // The run can end with the command (the ptrace backend's done()) before the loop saw
    // the stop signal that ended both: a terminal's Ctrl-C reaches the whole group.
    if (!signal_ && !command_.empty())
        signal_ = caught_();
    std::optional<int> status = status_;
    // How it ended unless probectl had to end it.
    std::optional<int> own = ended_by_us_ ? std::nullopt : status_;
    bool killed_by_us = killed_;
    if (!command_.empty() && !status) {
        // --duration ends it as asked; a stop signal gives it up to a second to end by it,
        // passed already when it was forwarded while the command was traced.
        const int grace_ms = grace_end_ ? 0 : static_cast<int>(kStopGraceNs / 1'000'000);
        const bool outlived = !signal_ || outlives(tracer_.commandPid(), grace_ms);
        status = tracer_.terminateCommand(grace_end_ ? 0 : grace_ms);
        killed_by_us = killed_by_us ||
                       (outlived && status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
        if (!outlived && !ended_by_us_)
            own = status;
    }
    // The run ended with the command within the grace (the ptrace backend without -f:
    // nothing was traced any more) while processes it started run on: as in shouldStop(),
    // the rest of the grace, then they are killed.
    if (!command_.empty() && (grace_end_ || signal_) && !killed_ && status) {
        const std::uint64_t end = grace_end_ ? grace_end_ : monotonicNs() + kStopGraceNs;
        while (monotonicNs() < end && tracer_.commandLeftRunning())
            ::usleep(10000);
        if (tracer_.commandLeftRunning())
            (void)tracer_.killCommand();
    }
    if (status) {
        // Not the signal probectl was stopped by: it came from probectl, after the grace.
        const int sent = signal_ ? signal_ : SIGTERM;
        const bool ours = killed_by_us && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL;
        io.err << fmt::format("{} {}{}\n", shownQuoted(command_[0]),
                              HeldCommand::describeStatus(*status),
                              ours ? fmt::format(" by probectl: it outlived SIG{} by {} s",
                                                 sigabbrev_np(sent), kStopGraceNs / 1'000'000'000)
                                   : "");
    }
    // The command ended on its own while -f followed processes it started that run on:
    // their hits from now on are not traced, said rather than lost in silence.
    if (follow_command_ && !command_.empty() && status_ && !signal_ && !ended_by_us_ && !killed_ &&
        tracer_.commandLeftRunning())
        io.err << "probectl: note: processes the command started still run (a daemon, a "
                  "background job): -f traced them until the command exited, not after\n";
    if (pids_gone_ && forked_count_ == 0)
        io.err << fmt::format("{} {} exited\n", pids_.size() == 1 ? "pid" : "pids",
                              fmt::join(pids_, ", "));
    else if (pids_gone_)
        io.err << fmt::format("{} {} and the {} process{} {} forked exited\n",
                              pids_.size() == 1 ? "pid" : "pids", fmt::join(pids_, ", "),
                              forked_count_, forked_count_ == 1 ? "" : "es",
                              pids_.size() == 1 ? "it" : "they");
    const RunEnd end = runEnd(rc, !command_.empty(), own, signal_);
    setExitSignal(end.signal);
    return end.code;
}

int RunLoop::notStarted(Io& io, const char* cmd) const {
    io.err << fmt::format("probectl {}: {} before the trace began: {} was not run\n", cmd,
                          sigabbrev_np(signal_) ? fmt::format("SIG{}", sigabbrev_np(signal_))
                                                : fmt::format("signal {}", signal_),
                          shownQuoted(command_.empty() ? std::string() : command_[0]));
    setExitSignal(signal_);
    return 128 + signal_;
}

RunEnd runEnd(int rc, bool has_command, std::optional<int> status, int stop_signal) {
    if (rc != kExitOk)
        return {rc, 0};
    if (!has_command)
        return {};
    if (status && WIFSIGNALED(*status))
        return {128 + WTERMSIG(*status), WTERMSIG(*status)};
    if (status)
        return {HeldCommand::exitCode(*status), 0};
    if (stop_signal > 0)
        return {128 + stop_signal, stop_signal};
    return {};
}

std::vector<int> stopSignals() {
    std::vector<int> out{SIGINT, SIGTERM};
    struct sigaction hup {};
    if (::sigaction(SIGHUP, nullptr, &hup) != 0 || hup.sa_handler != SIG_IGN)
        out.push_back(SIGHUP);
    return out;
}

BlockedStopSignals::BlockedStopSignals() {
    sigemptyset(&set_);
}

BlockedStopSignals::~BlockedStopSignals() {
    if (!blocked_)
        return;
    while (take())
        ;
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

void BlockedStopSignals::block() {
    if (blocked_)
        return;
    for (int sig : stopSignals())
        sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    blocked_ = true;
}

int BlockedStopSignals::caught() {
    if (blocked_ && !first_)
        first_ = take();
    return first_;
}

int BlockedStopSignals::take() {
    const timespec zero{};
    const int s = sigtimedwait(&set_, nullptr, &zero);
    return s > 0 ? s : 0;
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
