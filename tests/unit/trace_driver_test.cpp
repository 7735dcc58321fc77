// The trace driver against a scripted Tracer: what `probectl trace` prints and exits with,
// for any backend, without a kernel module or a traced process.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "probectl/recording.hpp"
#include "probectl/session.hpp"
#include "run_loop.hpp"
#include "subcommands.hpp"
#include "trace_sink.hpp"

namespace probectl::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Delivers `events` one per poll, then reports the command's `status` after `polls_to_exit`
// polls (never, when negative).
class FakeTracer : public Tracer {
  public:
    std::string_view backend() const override { return name; }
    Result<std::uint32_t> add(const ProbeSpec& spec) override {
        if (!add_error.empty())
            return makeError(ENOENT, spec.text + ": " + add_error);
        specs.push_back(spec.text);
        return static_cast<std::uint32_t>(specs.size());
    }
    Result<void> start() override {
        ++starts;
        return {};
    }
    bool watchTaskEnds(TaskEndCallback cb) override {
        on_end = std::move(cb);
        return sees_ends;
    }
    Result<std::size_t> poll(int, const EventCallback& cb) override {
        ++polls;
        if (sees_ends && !ends.empty()) {
            on_end(ends.front());
            ends.pop_front();
        }
        if (!events.empty()) {
            cb(events.front());
            events.pop_front();
            return std::size_t{1};
        }
        return std::size_t{0};
    }
    bool done() const override { return false; }
    // As probectl.ko counts its filter: each read gives the next count (the last one stays);
    // none given: the ptrace backend's EOPNOTSUPP.
    Result<TracedProcesses> tracedProcesses() override {
        if (counts.empty())
            return Tracer::tracedProcesses();
        ++count_reads;
        const TracedProcesses c = counts.front();
        if (counts.size() > 1)
            counts.pop_front();
        return c;
    }
    Result<SessionStats> stop(const EventCallback& cb) override {
        ++stops;
        for (const auto& ev : held)
            cb(ev);
        SessionStats st;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            ProbeStats p;
            p.id = static_cast<std::uint32_t>(i + 1);
            p.spec = specs[i];
            p.hits = p.delivered = 1;
            st.probes.push_back(p);
        }
        return st;
    }
    pid_t commandPid() const override { return pid; }
    std::optional<int> commandStatus() const override {
        if (polls_to_exit >= 0 && polls >= polls_to_exit)
            return status;
        return std::nullopt;
    }
    std::optional<int> terminateCommand(int) override {
        ++terminations;
        // A real child of the test: ended as HeldCommand::terminate ends it.
        if (child) {
            int st = 0;
            ::kill(pid, SIGTERM);
            ::waitpid(pid, &st, 0);
            return st;
        }
        return terminated;
    }

    std::string name = "kernel";
    pid_t pid = 4242;    // not a child of this test: a forwarded stop signal is not sent
    bool child = false;  // `pid` is a child of the test's
    // The status terminateCommand() gives: how the command ended, after the forwarded stop
    // signal (pid 4242 is never seen running) or terminateCommand()'s SIGTERM.
    int terminated = SIGTERM;  // "killed by signal 15"
    std::string add_error;
    std::deque<Event> events;
    std::vector<Event> held;  // delivered by stop()
    int status = 0;
    int polls_to_exit = -1;
    std::vector<std::string> specs;
    int polls = 0, starts = 0, stops = 0, terminations = 0;
    // As the ptrace backend: each thread's end, one per poll (sees_ends), else none.
    bool sees_ends = false;
    std::deque<TaskEnd> ends;
    TaskEndCallback on_end;
    std::deque<TracedProcesses> counts;
    int count_reads = 0;
};

struct Run {
    int rc = -1;
    std::string out, err;
    int dies_of = 0;  // the signal main() would die of (takeExitSignal())
};

// `signal` arrives once the tracer started, or before (`early`), while the probes were added.
Run drive(FakeTracer& t, const std::vector<std::string>& args, int signal = 0, bool early = false) {
    auto o = parseTraceOptions(args);
    EXPECT_TRUE(o);
    std::ostringstream out, err;
    Io io{out, err};
    Run r;
    r.rc = runTrace(
        t, *o, io, [&] { return openTraceSink(o->format, o->output, o->layout(), io, &io.err); },
        [&] { return early || t.starts ? signal : 0; });
    r.out = out.str();
    r.err = err.str();
    r.dies_of = takeExitSignal();
    return r;
}

Event event(std::uint32_t id, std::string_view spec) {
    Event ev;
    ev.probe_id = id;
    ev.spec = spec;
    ev.pid = ev.tgid = 4242;
    ev.comm = "true";
    return ev;
}

TEST(TraceDriver, CommandStatusIsTheExitCode) {
    FakeTracer t;
    t.events = {event(1, "syscall:getppid"), event(1, "syscall:getppid")};
    t.held = {event(1, "syscall:getppid")};
    t.status = 7 << 8;  // exited with 7
    t.polls_to_exit = 3;
    auto r = drive(t, {"syscall:getppid", "--", "sh", "-c", "exit 7"});
    EXPECT_EQ(r.rc, 7);
    EXPECT_EQ(t.starts, 1);
    EXPECT_EQ(t.stops, 1);
    EXPECT_EQ(t.terminations, 0) << "a command that ended is not signalled";
    EXPECT_THAT(r.err, HasSubstr("Tracing 1 probe in 'sh' (pid 4242). Ends when the command "
                                 "exits or on Ctrl-C.\n"));
    EXPECT_THAT(r.err, HasSubstr("'sh' exited with status 7\n"));
    // Header, the two polled events and the one stop() drained, then the summary: on
    // stderr, as strace's, since the command shares stdout.
    EXPECT_EQ(r.out, "");
    std::istringstream lines(r.err);
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line);)
        n += line.find("syscall:getppid") != std::string::npos;
    EXPECT_EQ(n, 3u + 1u) << r.out;  // three events + the summary row
}

// A command a signal killed kills probectl the same way (strace's rule), once the output is
// complete; 128+N is the code if dying fails.
TEST(TraceDriver, KilledCommandKillsProbectlWithTheSameSignal) {
    FakeTracer t;
    t.name = "ptrace";
    t.status = SIGSEGV;
    t.polls_to_exit = 1;
    auto r = drive(t, {"syscall:getppid", "--", "crash"});
    EXPECT_EQ(r.rc, 128 + SIGSEGV);
    EXPECT_EQ(r.dies_of, SIGSEGV);
    EXPECT_THAT(r.err, HasSubstr("Tracing 1 probe in 'crash' (pid 4242) with ptrace."));
    EXPECT_THAT(r.err, HasSubstr("'crash' killed by signal 11"));
}

// Ctrl-C, SIGTERM or SIGHUP ending the trace of a command goes on to it: what it then ends with is
// the run's end. Killed by it: probectl dies of it too (it exited 128+N, so a shell's loop
// went on after Ctrl-C). The output is complete all the same.
TEST(TraceDriver, AStopSignalThatKillsTheCommandKillsProbectl) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        SCOPED_TRACE(sig);
        FakeTracer t;
        t.terminated = sig;
        t.events = {event(1, "syscall:getppid")};
        auto r = drive(t, {"syscall:getppid", "--", "sleep", "30"}, sig);
        EXPECT_EQ(r.rc, 128 + sig);
        EXPECT_EQ(r.dies_of, sig);
        EXPECT_EQ(t.terminations, 1);
        EXPECT_THAT(r.err, HasSubstr(fmt::format("'sleep' killed by signal {}", sig)));
        EXPECT_THAT(r.err, HasSubstr("HITS"));
    }
}

// A command that catches the stop signal and exits ends the run with its own code: it
// exited 130 or 143 whatever the command did.
TEST(TraceDriver, ACommandThatCatchesTheStopSignalGivesItsOwnStatus) {
    for (int code : {0, 3}) {
        SCOPED_TRACE(code);
        FakeTracer t;
        t.terminated = code << 8;
        auto r = drive(t, {"syscall:getppid", "--", "handler"}, SIGINT);
        EXPECT_EQ(r.rc, code);
        EXPECT_EQ(r.dies_of, 0);
        EXPECT_THAT(r.err, HasSubstr(fmt::format("'handler' exited with status {}", code)));
    }
}

// A command that outlives the stop signal by a second is killed by probectl (SIGKILL, while
// still traced: Tracer::killCommand): the run still ends as the interrupt asked, killed by
// the stop signal, not by that SIGKILL.
TEST(TraceDriver, ACommandThatOutlivesTheStopSignalEndsTheRunByIt) {
    // SIGINT blocked across the fork: the forwarded one must find the child ignoring it.
    sigset_t intr, old;
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    ::sigprocmask(SIG_BLOCK, &intr, &old);
    const pid_t child = ::fork();
    if (child == 0) {
        ::signal(SIGINT, SIG_IGN);
        ::signal(SIGTERM, SIG_DFL);
        sigset_t all;
        sigemptyset(&all);
        ::sigprocmask(SIG_SETMASK, &all, nullptr);
        for (;;)
            ::pause();
    }
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ASSERT_GE(child, 0);
    FakeTracer t;
    t.pid = child;
    t.child = true;
    auto r = drive(t, {"syscall:getppid", "--", "stubborn"}, SIGINT);
    EXPECT_EQ(r.rc, 128 + SIGINT);
    EXPECT_EQ(r.dies_of, SIGINT);
    // Said who killed it and why: "killed by signal 9" alone read as the signal probectl got.
    EXPECT_THAT(r.err, HasSubstr("'stubborn' killed by signal 9 (Killed) by probectl: it "
                                 "outlived SIGINT by 1 s\n"));
}

// A stop signal while the probes were still being added: the command is not released to run
// untraced (it was, and ran to its end while stop() disabled the probes), and the run says so.
TEST(TraceDriver, AStopSignalBeforeTheTraceBeganDoesNotRunTheCommand) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        SCOPED_TRACE(sig);
        FakeTracer t;
        auto r = drive(t, {"syscall:getppid", "--", "sleep", "30"}, sig, true);
        EXPECT_EQ(r.rc, 128 + sig);
        EXPECT_EQ(r.dies_of, sig);
        EXPECT_EQ(t.starts, 0);
        EXPECT_THAT(r.err, HasSubstr(fmt::format("probectl trace: SIG{} before the trace began: "
                                                 "'sleep' was not run",
                                                 sigabbrev_np(sig))));
    }
    // Without a command there is nothing to hold back: the trace starts and ends at once.
    FakeTracer t;
    auto r = drive(t, {"syscall:getppid", "-p", std::to_string(::getpid())}, SIGINT, true);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.dies_of, 0);
    EXPECT_EQ(t.starts, 1);
}

// A stop signal while the specs are still attaching (a big glob takes seconds): the attaching
// ends there, with a note, and the run ends by the signal's rule. Before, the signal found no
// handler yet and killed probectl silently.
TEST(TraceDriver, AStopSignalWhileAttachingEndsTheAttaching) {
    const std::vector<std::string> specs{"syscall:getppid", "syscall:getpid", "syscall:read"};
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        SCOPED_TRACE(sig);
        for (bool command : {true, false}) {
            SCOPED_TRACE(command);
            FakeTracer t;
            std::vector<std::string> args = specs;
            if (command)
                args.insert(args.end(), {"--", "sleep", "30"});
            else
                args.insert(args.end(), {"-p", std::to_string(::getpid())});
            auto o = parseTraceOptions(args);
            ASSERT_TRUE(o);
            std::ostringstream out, err;
            Io io{out, err};
            // The signal comes once the first spec is added.
            const int rc = runTrace(
                t, *o, io,
                [&] { return openTraceSink(o->format, o->output, o->layout(), io, &io.err); },
                [&] { return t.specs.empty() ? 0 : sig; });
            EXPECT_EQ(t.specs, std::vector<std::string>{"syscall:getppid"});
            EXPECT_THAT(err.str(), HasSubstr("probectl: note: a stop signal ended the attaching: "
                                             "1 probe attached\n"));
            // The banner said "Hit Ctrl-C to end." after the signal had ended the run.
            EXPECT_THAT(err.str(), HasSubstr(kEndsNow));
            EXPECT_THAT(err.str(), Not(HasSubstr("on Ctrl-C"))) << err.str();
            if (command) {
                EXPECT_EQ(rc, 128 + sig);
                EXPECT_EQ(t.starts, 0);
                EXPECT_THAT(err.str(), HasSubstr("'sleep' was not run"));
            } else {
                EXPECT_EQ(rc, 0);
                EXPECT_EQ(t.starts, 1);
                EXPECT_EQ(t.stops, 1);
                EXPECT_THAT(out.str(), HasSubstr("HITS")) << "the summary of what was attached";
            }
        }
    }
}

// SIGHUP ends a run as Ctrl-C does (a closed terminal must not lose the count), unless it is
// ignored already: nohup asked for the run to outlive the terminal.
TEST(StopSignals, SighupUnlessIgnored) {
    struct sigaction old {};
    ASSERT_EQ(::sigaction(SIGHUP, nullptr, &old), 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ASSERT_EQ(::sigaction(SIGHUP, &dfl, nullptr), 0);
    EXPECT_EQ(stopSignals(), (std::vector<int>{SIGINT, SIGTERM, SIGHUP}));
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGHUP, &ign, nullptr), 0);
    EXPECT_EQ(stopSignals(), (std::vector<int>{SIGINT, SIGTERM}));
    ::sigaction(SIGHUP, &old, nullptr);
}

// count's stop signals stay pending from block() until the guard is gone: one that arrives
// after the run's end, while the tracer is torn down, is taken there instead of killing
// probectl (status 143 after a complete table, seen in the VM suites); the first is kept,
// and the mask is the caller's again afterwards. Before block() nothing is held: the
// command spawned before it must not inherit the mask.
TEST(StopSignals, BlockedUntilTheGuardIsGone) {
    sigset_t before;
    ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &before), 0);
    ASSERT_FALSE(sigismember(&before, SIGTERM));
    {
        BlockedStopSignals guard;
        sigset_t now;
        pthread_sigmask(SIG_SETMASK, nullptr, &now);
        EXPECT_FALSE(sigismember(&now, SIGTERM)) << "blocked before block()";
        EXPECT_EQ(guard.caught(), 0);
        guard.block();
        pthread_sigmask(SIG_SETMASK, nullptr, &now);
        EXPECT_TRUE(sigismember(&now, SIGINT));
        EXPECT_TRUE(sigismember(&now, SIGTERM));
        EXPECT_EQ(guard.caught(), 0);
        ASSERT_EQ(::raise(SIGTERM), 0);
        EXPECT_EQ(guard.caught(), SIGTERM);
        ASSERT_EQ(::raise(SIGINT), 0);
        EXPECT_EQ(guard.caught(), SIGTERM) << "the first one is kept";
        // The run has ended; another one during the teardown.
        ASSERT_EQ(::raise(SIGTERM), 0);
    }
    // Still alive: the pending ones were taken, and the mask is as before.
    sigset_t after, pending;
    ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
    EXPECT_FALSE(sigismember(&after, SIGTERM));
    EXPECT_FALSE(sigismember(&after, SIGINT));
    ASSERT_EQ(sigpending(&pending), 0);
    EXPECT_FALSE(sigismember(&pending, SIGTERM));
    EXPECT_FALSE(sigismember(&pending, SIGINT));
}

// -p PID -f ends when the backend's count of the processes it traces says none lives, not by
// what /proc shows (PID is this test, alive throughout): a process forked and orphaned between
// two looks at /proc is counted by the module. The end line names how many PID forked.
TEST(TraceDriver, APidTraceWithFollowEndsWhenTheTracerCountsNoneLiving) {
    FakeTracer t;
    t.counts = {{2, 2}, {1, 3}, {0, 3}};
    const std::string self = std::to_string(::getpid());
    auto r = drive(t, {"syscall:getppid", "-p", self, "-f"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(t.count_reads, 3);
    EXPECT_THAT(r.err, HasSubstr("pid " + self + " and the 2 processes it forked exited\n"));
    // Without -f the same count ends it: PID alone.
    FakeTracer alone;
    alone.counts = {{1, 1}, {0, 1}};
    r = drive(alone, {"syscall:getppid", "-p", self});
    EXPECT_EQ(r.rc, 0);
    EXPECT_THAT(r.err, HasSubstr("pid " + self + " exited\n"));
}

// --duration is a time-bounded trace the user asked for: 0, though the command is terminated.
TEST(TraceDriver, DurationEndingATraceOfACommandExitsZero) {
    FakeTracer t;
    auto r = drive(t, {"syscall:getppid", "--duration", "0.1", "--", "sleep", "30"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.dies_of, 0);
    EXPECT_EQ(t.terminations, 1);
}

// Without a command (-p, or system-wide) Ctrl-C is how a trace ends: 0, as perf and bpftrace.
TEST(TraceDriver, AStopSignalEndingATraceWithoutACommandExitsZero) {
    FakeTracer t;
    auto r = drive(t, {"syscall:getppid", "-p", std::to_string(::getpid())}, SIGINT);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.dies_of, 0);
    EXPECT_EQ(t.terminations, 0);
}

// The stop signal goes on to the command first (a terminal's Ctrl-C reaches both), so that
// it ends as an interrupted command does, not by the SIGTERM of terminateCommand().
TEST(TraceDriver, TheStopSignalIsForwardedToTheCommand) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        sigset_t all;
        sigemptyset(&all);
        ::sigprocmask(SIG_SETMASK, &all, nullptr);
        ::signal(SIGINT, SIG_DFL);
        for (;;)
            ::pause();
    }
    FakeTracer t;
    t.pid = child;
    t.child = true;  // reaped by terminateCommand(), with the status the signal left
    auto r = drive(t, {"syscall:getppid", "--", "sleep", "30"}, SIGINT);
    EXPECT_EQ(r.rc, 128 + SIGINT);
    EXPECT_EQ(r.dies_of, SIGINT);
    EXPECT_THAT(r.err, HasSubstr("'sleep' killed by signal 2 ("));
}

bool same(RunEnd a, RunEnd b) {
    return a.code == b.code && a.signal == b.signal;
}

TEST(RunEnd, TheCommandsOwnEndThenTheStopSignalThenZero) {
    EXPECT_TRUE(same(runEnd(kExitOk, true, 3 << 8, 0), {3, 0}));
    EXPECT_TRUE(same(runEnd(kExitOk, true, SIGKILL, 0), {128 + SIGKILL, SIGKILL}));
    EXPECT_TRUE(same(runEnd(kExitOk, true, 0, SIGINT), {0, 0})) << "it exited, whatever came";
    EXPECT_TRUE(same(runEnd(kExitOk, true, SIGINT, SIGINT), {130, SIGINT}));
    EXPECT_TRUE(same(runEnd(kExitOk, true, SIGTERM, SIGINT), {143, SIGTERM}));
    EXPECT_TRUE(same(runEnd(kExitOk, true, std::nullopt, SIGINT), {130, SIGINT}))
        << "probectl ended a command that outlived Ctrl-C";
    EXPECT_TRUE(same(runEnd(kExitOk, true, std::nullopt, SIGHUP), {129, SIGHUP}))
        << "a closed terminal the command outlived";
    EXPECT_TRUE(same(runEnd(kExitOk, true, std::nullopt, 0), {0, 0})) << "--duration";
    EXPECT_TRUE(same(runEnd(kExitOk, false, std::nullopt, SIGINT), {0, 0})) << "-p or system-wide";
    EXPECT_TRUE(same(runEnd(kExitRuntime, true, std::nullopt, SIGINT), {kExitRuntime, 0}));
    EXPECT_TRUE(same(runEnd(kExitRuntime, true, SIGKILL, 0), {kExitRuntime, 0}));
}

// main()'s end: killed by the signal, with no core dump, after the output.
TEST(RunEnd, DieOfKillsWithTheSignalAndNoCore) {
    for (int sig : {SIGINT, SIGSEGV}) {
        SCOPED_TRACE(sig);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::signal(sig, SIG_IGN);  // as a handler or an ignored signal would leave it
            sigset_t blocked;
            sigemptyset(&blocked);
            sigaddset(&blocked, sig);
            ::sigprocmask(SIG_BLOCK, &blocked, nullptr);
            dieOf(sig);
            _exit(99);
        }
        int st = 0;
        ASSERT_EQ(::waitpid(child, &st, 0), child);
        EXPECT_TRUE(WIFSIGNALED(st)) << st;
        EXPECT_EQ(WTERMSIG(st), sig);
        EXPECT_FALSE(WCOREDUMP(st));
    }
}

TEST(TraceDriver, DurationEndsASystemWideTrace) {
    FakeTracer t;
    auto r = drive(t, {"syscall:getppid", "--duration", "0.2"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_GT(t.polls, 0);
    EXPECT_EQ(t.terminations, 0);
    // It says when it ends, not only Ctrl-C.
    EXPECT_THAT(r.err, HasSubstr("Tracing 1 probe system-wide. Ends after 0.2s or on Ctrl-C.\n"));
    EXPECT_THAT(r.err, Not(HasSubstr("exited")));
    FakeTracer ms;
    r = drive(ms, {"syscall:getppid", "--duration", "200ms"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_THAT(r.err, HasSubstr("Tracing 1 probe system-wide. Ends after 200ms or on Ctrl-C.\n"));
}

TEST(TraceDriver, WithoutDurationCtrlCEndsIt) {
    FakeTracer t;
    t.polls_to_exit = -1;
    auto r = drive(t, {"syscall:getppid"}, SIGINT);
    EXPECT_EQ(r.rc, 0);
    EXPECT_THAT(r.err, HasSubstr("Tracing 1 probe system-wide. Hit Ctrl-C to end.\n"));
    FakeTracer c;
    c.status = 0;
    c.polls_to_exit = 1;
    r = drive(c, {"syscall:getppid", "--duration", "2m", "--", "true"});
    EXPECT_THAT(r.err, HasSubstr("Ends when the command exits, after 2m or on Ctrl-C.\n"));
}

// 300 copies of one spec are traced once with one note (once 299 identical notes, and
// every hit reported 300 times); the same location with other arguments is a spec of its own.
TEST(TraceDriver, ARepeatedSpecIsTracedOnceWithOneNote) {
    FakeTracer t;
    std::vector<std::string> args(300, "syscall:getppid");
    args.insert(args.begin() + 100, "syscall:getppid if $pid == 1");
    args.insert(args.end(), {"--duration", "0.05"});
    auto r = drive(t, args);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(t.specs,
              (std::vector<std::string>{"syscall:getppid", "syscall:getppid if $pid == 1"}));
    EXPECT_THAT(r.err, HasSubstr("probectl: note: syscall:getppid given 300 times; traced once\n"));
    std::size_t notes = 0;
    for (std::size_t at = 0; (at = r.err.find("note:", at)) != std::string::npos; ++at)
        ++notes;
    EXPECT_EQ(notes, 2u) << r.err;  // and the one on the second spec's shared location
}

TEST(TraceDriver, AddErrorIsARuntimeErrorBeforeAnythingStarts) {
    FakeTracer t;
    t.add_error = "no such symbol";
    auto r = drive(t, {"kprobe:nope", "--", "true"});
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_EQ(t.starts, 0);
    EXPECT_THAT(r.err, HasSubstr("kprobe:nope: no such symbol"));
}

// strace's rule: with -- CMD the trace goes to stderr (the command's stdout stays its own),
// unless -o; without a command nothing shares stdout and the trace goes there.
TEST(TraceDriver, TraceOfACommandGoesToStderr) {
    FakeTracer t;
    t.events = {event(1, "syscall:getppid")};
    t.polls_to_exit = 2;
    auto cmd = drive(t, {"syscall:getppid", "--", "true"});
    EXPECT_EQ(cmd.out, "");
    EXPECT_THAT(cmd.err, HasSubstr("syscall:getppid  arg1="));
    FakeTracer w;
    w.events = {event(1, "syscall:getppid")};
    auto wide = drive(w, {"syscall:getppid", "--duration", "0.1"});
    EXPECT_THAT(wide.out, HasSubstr("syscall:getppid  arg1="));
    EXPECT_THAT(wide.err, Not(HasSubstr("arg1=")));
    const std::string path = ::testing::TempDir() + "driver-o.txt";
    FakeTracer f;
    f.events = {event(1, "syscall:getppid")};
    f.polls_to_exit = 2;
    auto file = drive(f, {"syscall:getppid", "-o", path, "--", "true"});
    EXPECT_THAT(file.err, Not(HasSubstr("arg1=")));
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_THAT(text, HasSubstr("syscall:getppid  arg1="));
}

// A refused spec ends the trace before its output is opened: an existing -o FILE is kept.
TEST(TraceDriver, ARefusedSpecLeavesTheOutputFileAlone) {
    const std::string dir = ::testing::TempDir() + "driver-keep";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const std::string format : {"text", "record", "perfetto"}) {
        const std::string path = dir + "/out." + format;
        std::ofstream(path) << "precious";
        FakeTracer t;
        t.add_error = "no such symbol";
        auto r = drive(t, {"kprobe:nope", "--format", format, "-o", path});
        EXPECT_EQ(r.rc, kExitRuntime) << format;
        std::ifstream in(path);
        const std::string kept((std::istreambuf_iterator<char>(in)), {});
        EXPECT_EQ(kept, "precious") << format;
    }
}

TEST(TraceDriver, JsonSummaryObjectAndStraceCountersOnStderr) {
    FakeTracer t;
    t.polls_to_exit = 0;
    auto j = drive(t, {"syscall:getppid", "--format", "json", "--", "true"});
    EXPECT_THAT(j.err, HasSubstr("\"type\":\"summary\""));
    FakeTracer s;
    s.polls_to_exit = 0;
    auto r = drive(s, {"--syscalls", "getppid", "--", "true"});
    EXPECT_THAT(r.out, Not(HasSubstr("HITS"))) << "strace layout: counters go to stderr";
    EXPECT_THAT(r.err, HasSubstr("HITS"));
}

// Every backend writes every file format through the same sink: the events the tracer
// delivered (polled and drained by stop) are in the file, the counters on stderr.
TEST(TraceDriver, FileFormatsGetEveryEventOfEitherBackend) {
    const std::string dir = ::testing::TempDir() + "driver-formats";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const std::string backend : {"kernel", "ptrace"}) {
        FakeTracer t;
        t.name = backend;
        t.events = {event(1, "syscall:getppid"), event(1, "syscall:getppid")};
        t.held = {event(1, "syscall:getppid")};
        t.polls_to_exit = 3;
        const std::string rec = dir + "/" + backend + ".rec";
        auto r = drive(t, {"syscall:getppid", "--format", "record", "-o", rec, "--", "true"});
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, "") << "events go to the file, not stdout";
        EXPECT_THAT(r.err, HasSubstr("HITS"));
        auto reader = RecordingReader::open(rec);
        ASSERT_TRUE(reader) << reader.error().message;
        Event ev;
        int n = 0;
        while (reader->next(ev))
            n += ev.spec == "syscall:getppid";
        EXPECT_EQ(n, 3) << backend;
        ASSERT_TRUE(reader->summary()) << "the counters end the recording";
        EXPECT_EQ(reader->summary()->probes.at(0).hits, 1u);

        FakeTracer c;
        c.name = backend;
        c.events = {event(1, "syscall:getppid")};
        c.polls_to_exit = 2;
        const std::string json = dir + "/" + backend + ".json";
        r = drive(c, {"syscall:getppid", "--format", "chrome", "-o", json, "--", "true"});
        EXPECT_EQ(r.rc, 0) << r.err;
        std::ifstream in(json);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        EXPECT_THAT(text, HasSubstr("\"traceEvents\""));
        EXPECT_THAT(text, HasSubstr("\"name\":\"syscall:getppid\""));
    }
}

// A writer that fails (here: a full disk) fails the trace, even when the command succeeded.
TEST(TraceDriver, AWriteErrorOfTheTraceFileIsARuntimeError) {
    FakeTracer t;
    t.events = {event(1, "syscall:getppid")};
    t.polls_to_exit = 2;
    auto r = drive(t, {"syscall:getppid", "--format", "perfetto", "-o", "/dev/full", "--", "true"});
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_THAT(r.err, HasSubstr("probectl trace:"));
    // Its header failed before the command was released: no trace ran, so no counters
    // (a trace that ran shows them: TheSummaryOfAFailedOutputGoesToStderr).
    EXPECT_EQ(t.starts, 0) << r.err;
}

// Text and JSON name the file and the write's own error (it once said "cannot write the trace
// output (Input/output error)" for a full disk).
TEST(TraceDriver, AWriteErrorOfTextOrJsonNamesTheFileAndTheReason) {
    for (const char* format : {"text", "json"}) {
        SCOPED_TRACE(format);
        FakeTracer t;
        t.events = {event(1, "syscall:getppid")};
        t.polls_to_exit = 2;
        auto r = drive(t, {"syscall:getppid", "--format", format, "-o", "/dev/full", "--", "true"});
        EXPECT_EQ(r.rc, kExitRuntime);
        EXPECT_THAT(r.err, HasSubstr("cannot write /dev/full (No space left on device)")) << r.err;
    }
}

// Every format names the file and the write's own errno; the trace stops at the first failed
// write (it ran on to the command's end with every event counted as delivered, said nothing
// until then, and chrome and perfetto said "cannot write the trace (Input/output error)").
// JSON writes nothing before the first event; the other formats' first write fails before
// the command is released (AWriteErrorBeforeTheCommandIsReleasedNeverRunsIt), and fail
// part-way in CliWriteErrors.ATraceOutputThatFillsUpStopsTheTrace.
TEST(TraceDriver, AFailedWriteIsSaidAtOnceAndStopsTheTrace) {
    for (const char* format : {"json"}) {
        SCOPED_TRACE(format);
        FakeTracer t;
        for (int i = 0; i < 100; ++i)
            t.events.push_back(event(1, "syscall:getppid"));
        t.polls_to_exit = 1000;
        auto r = drive(t, {"syscall:getppid", "--format", format, "-o", "/dev/full", "--", "true"});
        EXPECT_EQ(r.rc, kExitRuntime);
        EXPECT_THAT(r.err, HasSubstr("probectl trace: cannot write /dev/full (No space left on "
                                     "device): stopping the trace\n"))
            << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("Input/output error"))) << r.err;
        EXPECT_LT(t.polls, 100) << "the trace went on after the failed write";
        EXPECT_EQ(t.terminations, 1) << "the command is ended, as --duration ends it";
        EXPECT_TRUE(std::filesystem::exists("/dev/full")) << "a device is never removed";
    }
}

// The output's first write (the header, a recording's, chrome's, perfetto's) fails before
// the command is released: it is never run, as when the trace fails to start. The header
// was buffered until the first poll, with the command already running untraced (it created
// its files, printed its output and exited 0, with a summary of 0 hits).
TEST(TraceDriver, AWriteErrorBeforeTheCommandIsReleasedNeverRunsIt) {
    for (const char* format : {"text", "chrome", "perfetto", "record"}) {
        SCOPED_TRACE(format);
        FakeTracer t;
        t.events = {event(1, "syscall:getppid")};
        t.polls_to_exit = 2;
        auto r = drive(t, {"syscall:getppid", "--format", format, "-o", "/dev/full", "--", "true"});
        EXPECT_EQ(r.rc, kExitRuntime);
        EXPECT_EQ(t.starts, 0) << "the command was released";
        EXPECT_EQ(r.err.find("cannot write /dev/full (No space left on device): 'true' was not "
                             "run\n"),
                  r.err.rfind("cannot write"))
            << r.err;
        EXPECT_TRUE(std::filesystem::exists("/dev/full")) << "a device is never removed";
    }
}

// JSON's summary went to the -o file that failed, and was lost with it: it goes to stderr.
TEST(TraceDriver, TheSummaryOfAFailedOutputGoesToStderr) {
    FakeTracer t;
    t.events = {event(1, "syscall:getppid")};
    t.polls_to_exit = 2;
    auto r = drive(t, {"syscall:getppid", "--format", "json", "-o", "/dev/full", "--", "true"});
    EXPECT_EQ(r.rc, kExitRuntime);
    EXPECT_THAT(r.err, HasSubstr("stopping the trace\n")) << r.err;
    EXPECT_THAT(r.err, HasSubstr("HITS")) << r.err;
}

// -o - is standard output for text and json, even with -- CMD (whose trace goes to stderr
// without -o): it made a file named '-'.
TEST(TraceDriver, DashOutputIsStandardOutput) {
    std::filesystem::remove("-");
    for (const char* format : {"text", "json"}) {
        SCOPED_TRACE(format);
        FakeTracer t;
        t.events = {event(1, "syscall:getppid")};
        t.polls_to_exit = 2;
        auto r = drive(t, {"syscall:getppid", "--format", format, "-o", "-", "--", "true"});
        EXPECT_EQ(r.rc, kExitOk) << r.err;
        EXPECT_THAT(r.out, HasSubstr("syscall:getppid")) << r.err;
        EXPECT_THAT(r.err, Not(HasSubstr("syscall:getppid\n")));
        EXPECT_FALSE(std::filesystem::exists("-")) << "a file named '-' was made";
        std::filesystem::remove("-");
    }
    // The trace file formats still refuse it.
    for (const char* format : {"chrome", "perfetto", "ctf", "record"}) {
        auto o = parseTraceOptions({"syscall:getppid", "--format", format, "-o", "-"});
        ASSERT_FALSE(o) << format;
        EXPECT_THAT(o.error().message, HasSubstr("-o -:")) << format;
    }
}

}  // namespace
}  // namespace probectl::cli

namespace probectl::cli {
namespace {

std::string traceFile(FakeTracer& t, std::vector<std::string> args, int signal = 0) {
    const auto path =
        std::filesystem::temp_directory_path() / fmt::format("probectl-ends-{}.txt", ::getpid());
    args.insert(args.begin(), {"--syscalls=getppid", "-o", path.string()});
    drive(t, args, signal);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    return text.str();
}

// The kernel backend sees no process end: the command's own (its launcher's wait status)
// is strace's last line, pid-prefixed with -f; none when the command outlived the trace.
TEST(TraceDriver, CommandEndIsStracesLastLine) {
    FakeTracer t;
    t.status = 7 << 8;
    t.polls_to_exit = 1;
    EXPECT_EQ(traceFile(t, {"--", "sh", "-c", "exit 7"}), "+++ exited with 7 +++\n");
    FakeTracer f;
    f.status = SIGKILL;
    f.polls_to_exit = 1;
    EXPECT_EQ(traceFile(f, {"-f", "--", "sh", "-c", "kill -9 $$"}),
              "4242  +++ killed by SIGKILL +++\n");
    FakeTracer core;
    core.status = SIGSEGV | WCOREFLAG;
    core.polls_to_exit = 1;
    EXPECT_EQ(traceFile(core, {"--", "crash"}), "+++ killed by SIGSEGV (core dumped) +++\n");
    FakeTracer running;  // stopped by SIGINT, then ended by it: untraced by then
    EXPECT_EQ(traceFile(running, {"--", "sleep", "9"}, SIGINT), "");
    // Not in other layouts.
    FakeTracer plain;
    plain.status = 0;
    plain.polls_to_exit = 1;
    const auto r = drive(plain, {"syscall:getppid", "--", "true"});
    EXPECT_THAT(r.out + r.err, Not(HasSubstr("+++")));
}

// The ptrace backend tells every thread's end: each one prints, in order, with -f; without
// it only the process's (strace without -f traces no other thread).
TEST(TraceDriver, ThreadEndsAsTheBackendTellsThem) {
    auto fake = [] {
        FakeTracer t;
        t.name = "ptrace";
        t.sees_ends = true;
        t.ends = {{4244, 4242, 0}, {4243, 4243, 3 << 8}, {4242, 4242, 5 << 8}};
        t.status = 5 << 8;
        t.polls_to_exit = 4;
        return t;
    };
    FakeTracer f = fake();
    EXPECT_EQ(traceFile(f, {"-f", "--", "exits"}),
              "4244  +++ exited with 0 +++\n4243  +++ exited with 3 +++\n4242  +++ exited with 5 "
              "+++\n");
    FakeTracer one = fake();
    one.ends = {{4244, 4242, 0}, {4242, 4242, 5 << 8}};
    EXPECT_EQ(traceFile(one, {"--", "exits"}), "+++ exited with 5 +++\n");
}

}  // namespace
}  // namespace probectl::cli
