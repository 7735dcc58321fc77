// The probectl binary with --backend=ptrace, stopped by a signal while its command ignores
// it: what is left running afterwards and what the trace says of the command's end.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proc_watch.hpp"
#include "target/process_tree.hpp"

namespace {

using procwatch::killAll;
using procwatch::processesRunning;
using procwatch::running;
using procwatch::slurp;
using procwatch::stateOf;
using procwatch::waitRunning;

// A process that exits between slurp's open and its read fails the read (ESRCH); a
// directory fails it the same way (EISDIR), on purpose. Threw before, failing
// Cli.ACommandForkingAllTheTimeLeavesNoProcessBehind in a VM.
TEST(ProcWatch, AFailedReadReadsAsEmpty) {
    EXPECT_EQ(slurp("/proc"), "");
    EXPECT_EQ(slurp("/proc/self/no-such-file"), "");
    EXPECT_NE(slurp("/proc/self/stat"), "");
}

// A descendant of `root` whose comm is `comm` (-1: none).
pid_t descendantNamed(pid_t root, const std::string& comm) {
    for (pid_t d : probectl::descendantsOf(root))
        if (slurp("/proc/" + std::to_string(d) + "/comm") == comm + "\n")
            return d;
    return -1;
}

// `probectl ARGS...` with stdout and stderr in `log`, the stop signals at their defaults.
pid_t startProbectl(const std::vector<std::string>& args, const std::string& log,
                    bool own_group = false) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (own_group)
            ::setpgid(0, 0);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        for (int sig : {SIGINT, SIGTERM, SIGHUP})
            ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        std::vector<char*> argv{const_cast<char*>(PROBECTL_BIN)};
        for (const auto& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(PROBECTL_BIN, argv.data());
        ::_exit(127);
    }
    return pid;
}

// A traced command that ignores the stop signal outlives it; probectl then kills it with every
// process descended from it (sh's child sleep, traced with -f or not), while still tracing:
// the trace tells the command's end (strace's "+++ killed by SIGKILL +++"), and nothing of it
// is left running once probectl is gone. Before: the line was missing (the kill came after
// the trace), and the sleep ran on (without -f until the last change).
TEST(CliStop, ACommandIgnoringTheStopSignalIsKilledWithWhatItTraced) {
    const std::string log = testing::TempDir() + "/cli-stop-ignored.log";
    for (const bool follow : {false, true}) {
        for (const int sig : {SIGTERM, SIGINT}) {
            SCOPED_TRACE(std::string(follow ? "-f " : "") + sigabbrev_np(sig));
            std::vector<std::string> args = {"trace", "--backend=ptrace", "--syscalls=wait4"};
            if (follow)
                args.push_back("-f");
            args.insert(args.end(), {"--", "sh", "-c", "trap '' TERM INT; sleep 3017"});
            const pid_t p = startProbectl(args, log);
            ASSERT_GT(p, 0);
            // Once sh forked its sleep (the trap is set by then).
            pid_t sleeper = -1;
            for (int i = 0; i < 3000 && sleeper < 0; i++) {
                sleeper = descendantNamed(p, "sleep");
                if (sleeper < 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            ASSERT_GT(sleeper, 0) << slurp(log);
            const pid_t sh = descendantNamed(p, "sh");
            ASSERT_GT(sh, 0);
            ::kill(p, sig);
            int st = 0;
            ASSERT_EQ(::waitpid(p, &st, 0), p);
            const std::string out = slurp(log);
            // The interrupt ended the run: probectl dies of it, as strace does.
            EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << st << "\n" << out;
            EXPECT_FALSE(running(sh)) << "the command outlived probectl\n" << out;
            // -f: each line starts with the pid, padded
            auto endLine = [&](pid_t pid) {
                return std::regex("(^|\n)" + (pid ? std::to_string(pid) + " +" : "") +
                                  "\\+\\+\\+ killed by SIGKILL \\+\\+\\+\n");
            };
            EXPECT_TRUE(std::regex_search(out, endLine(follow ? sh : 0))) << out;
            EXPECT_NE(out.find(std::string("'sh' killed by signal 9 (Killed) by probectl: it "
                                           "outlived SIG") +
                               sigabbrev_np(sig) + " by 1 s\n"),
                      std::string::npos)
                << out;
            // Traced (-f) or not, the sleep would run on after probectl.
            EXPECT_FALSE(running(sleeper)) << "a process of the command outlived probectl\n" << out;
            if (follow) {
                EXPECT_TRUE(std::regex_search(out, endLine(sleeper))) << out;
            }
            if (running(sleeper))
                ::kill(sleeper, SIGKILL);
        }
    }
}

// The command dies of the stop signal (sh does not catch SIGTERM) while a process it forked
// runs on: a second later that one is killed too, traced (-f) or not, as when the command
// ignores the signal; probectl still dies of the command's signal. Seen failing before: the
// run ended with the command and the background sleep ran on (with -f, detached).
TEST(CliStop, ACommandDyingOfTheStopSignalTakesItsProcessesWithIt) {
    const std::string log = testing::TempDir() + "/cli-stop-died.log";
    const std::vector<std::string> bg = {"sleep", "3022"}, fg = {"sleep", "3023"};
    for (const bool follow : {false, true}) {
        SCOPED_TRACE(follow ? "-f" : "no -f");
        std::vector<std::string> args = {"trace", "--backend=ptrace", "--syscalls=wait4"};
        if (follow)
            args.push_back("-f");
        args.insert(args.end(), {"--", "sh", "-c", "sleep 3022 & sleep 3023; :"});
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        ASSERT_TRUE(waitRunning(bg) && waitRunning(fg)) << slurp(log);
        ::kill(p, SIGTERM);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << st << "\n" << out;
        EXPECT_NE(out.find("'sh' killed by signal 15 (Terminated)\n"), std::string::npos) << out;
        EXPECT_TRUE(processesRunning(bg).empty()) << "the background sleep outlived probectl\n"
                                                  << out;
        killAll(bg);
        killAll(fg);
    }
}

// A terminal's Ctrl-C: SIGINT to probectl's whole process group, the command and its
// background job included (a non-interactive sh's background job ignores SIGINT). The command
// dies of it before probectl can pass it on; the background job is still killed a second
// later. Seen failing before: probectl ended at once and the background sleep ran on.
TEST(CliStop, CtrlCToTheWholeGroupTakesTheBackgroundJobToo) {
    const std::string log = testing::TempDir() + "/cli-stop-ctrlc.log";
    const std::vector<std::string> bg = {"sleep", "3040"}, fg = {"sleep", "3041"};
    // A probe the command never hits: nothing stops it on its way to dying of SIGINT.
    for (const std::string cmd : {"count", "trace"}) {
        SCOPED_TRACE(cmd);
        // sh execs its last command: the command is the sleep, which SIGINT ends at once.
        const std::vector<std::string> args = {
            cmd,  "--backend=ptrace",       "syscall:getppid", "--", "sh",
            "-c", "sleep 3040 & sleep 3041"};
        const pid_t p = startProbectl(args, log, true);
        ASSERT_GT(p, 0);
        ASSERT_TRUE(waitRunning(bg) && waitRunning(fg)) << slurp(log);
        ::kill(-p, SIGINT);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_NE(out.find("'sh' killed by signal 2 (Interrupt)\n"), std::string::npos) << out;
        EXPECT_TRUE(processesRunning(bg).empty()) << "the background sleep outlived probectl\n"
                                                  << out;
        killAll(bg);
        killAll(fg);
    }
}

// -f and a command that leaves a daemon behind: the run ends with the command, so the
// daemon's later hits are not traced; said with -f (strace -f would follow it), not without
// (it was never traced). Before: nothing said so.
TEST(CliStop, AFollowedDaemonOutlivingTheCommandIsSaid) {
    const std::string log = testing::TempDir() + "/cli-stop-outlived.log";
    const std::vector<std::string> daemon = {"sleep", "3044"};
    const std::string note =
        "probectl: note: processes the command started still run (a daemon, "
        "a background job): -f traced them until the command exited, not "
        "after\n";
    for (const bool follow : {true, false}) {
        SCOPED_TRACE(follow ? "-f" : "no -f");
        std::vector<std::string> args = {"trace", "--backend=ptrace", "syscall:getppid"};
        if (follow)
            args.push_back("-f");
        args.insert(args.end(), {"--", "sh", "-c", "(sleep 3044 &); :"});
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st << "\n" << out;
        EXPECT_EQ(out.find(note) != std::string::npos, follow) << out;
        killAll(daemon);
    }
}

// A process the command daemonised (its parent, a subshell, exited at once: it is nobody's
// descendant any more) is killed with the command that ignored the stop signal: probectl is
// the command's subreaper, so the orphan is probectl's child, found and killed. Seen failing
// before: re-parented to init, the sleep ran on.
TEST(CliStop, ADaemonisedGrandchildIsKilledWithTheCommand) {
    const std::string log = testing::TempDir() + "/cli-stop-daemon.log";
    const std::vector<std::string> daemon = {"sleep", "3024"}, fg = {"sleep", "3025"};
    for (const bool follow : {false, true}) {
        SCOPED_TRACE(follow ? "-f" : "no -f");
        std::vector<std::string> args = {"trace", "--backend=ptrace", "--syscalls=wait4"};
        if (follow)
            args.push_back("-f");
        args.insert(args.end(),
                    {"--", "sh", "-c", "trap '' TERM INT; (sleep 3024 &); sleep 3025; :"});
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        ASSERT_TRUE(waitRunning(daemon) && waitRunning(fg)) << slurp(log);
        ::kill(p, SIGINT);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) << st << "\n" << out;
        EXPECT_TRUE(processesRunning(fg).empty()) << out;
        EXPECT_TRUE(processesRunning(daemon).empty()) << "the daemon outlived probectl\n" << out;
        killAll(daemon);
        killAll(fg);
    }
}

// A command that ignores the stop signal and forks all the time: the kill finds the processes
// it forks while its tree is being killed too (the untraced ones are stopped first, as the
// kernel backend's tree kill does, and what the traced command forked before its own kill is
// found after it). Seen failing before without -f: sleeps forked between the look at the
// command's children and its kill ran on.
TEST(CliStop, ACommandForkingAllTheTimeLeavesNoProcessBehind) {
    const std::string log = testing::TempDir() + "/cli-stop-forking.log";
    const std::vector<std::string> forked = {"sleep", "3026"};
    for (const bool follow : {false, true}) {
        SCOPED_TRACE(follow ? "-f" : "no -f");
        std::vector<std::string> args = {"trace", "--backend=ptrace", "--syscalls=wait4"};
        if (follow)
            args.push_back("-f");
        args.insert(args.end(), {"--", "sh", "-c",
                                 "trap '' TERM INT; sh -c 'while :; do sleep 3026 & done'; :"});
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        ASSERT_TRUE(waitRunning(forked)) << slurp(log);
        ::kill(p, SIGTERM);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << st << "\n" << out;
        EXPECT_EQ(processesRunning(forked).size(), 0u)
            << "processes of the command outlived probectl\n"
            << out.substr(0, 2000);
        killAll(forked);
    }
}

// The syscall /proc/PID/syscall says `pid` is blocked in (-1: none, or not readable).
long blockedIn(pid_t pid) {
    if (stateOf(pid) != 'S')
        return -1;
    long nr = -1;
    std::istringstream(slurp("/proc/" + std::to_string(pid) + "/syscall")) >> nr;
    return nr;
}

// -p, then the stop signal, while the process is inside a traced syscall: the detach's
// PTRACE_INTERRUPT ends the call with a restart code (an exit stop with -ERESTARTSYS), the
// kernel restarts it once detached and the process goes on waiting. The call is in progress,
// as the kernel backend shows one still inside at the end: no line, a hit UNRETURNED in the
// summary; count's "never returned 1 (not counted)". Seen failing before: the line
// "wait4(...) = ? ERESTARTSYS", a return that never was, DELIVERED 1, COUNT 1.
TEST(CliStop, DetachInsideASyscallLeavesItInProgress) {
    const std::string log = testing::TempDir() + "/cli-stop-detach.log";
    struct Case {
        std::vector<std::string> args;
        std::string want;  // a line of the output
    };
    // hits, delivered, dropped, nmissed, filtered, rejected, unreturned
    const std::vector<Case> cases = {
        {{"trace", "--syscalls=wait4"}, "syscall:wait4 +1 +0 +0 +0 +0 +0 +1"},
        {{"count", "syscall:wait4"}, "syscall:wait4 +0"},
        {{"latency", "syscall:wait4"}, "syscall:wait4  hits 1, .*never returned 1"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.args.front());
        // sh waits on its sleep, entered once probectl traces it (after the line read).
        int in[2];
        ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
        const pid_t sh = ::fork();
        if (sh == 0) {
            ::dup2(in[0], STDIN_FILENO);
            // not its "Killed" when the test ends the sleep
            ::dup2(::open("/dev/null", O_WRONLY), STDERR_FILENO);
            ::execl("/bin/sh", "sh", "-c", "read x; sleep 3019; true", nullptr);
            ::_exit(127);
        }
        ::close(in[0]);
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"--backend=ptrace", "-p", std::to_string(sh)});
        // Not the banner of the run before: sh would read its line and be inside wait4
        // before the attach, a call the trace never sees.
        ::unlink(log.c_str());
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        for (int i = 0; i < 3000 && slurp(log).find(" probe in pid ") == std::string::npos; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_NE(slurp(log).find(" probe in pid "), std::string::npos) << slurp(log);
        ASSERT_EQ(::write(in[1], "\n", 1), 1);
        // Blocked in wait4: past its entry stop, which the tracer saw.
        pid_t sleeper = -1;
        for (int i = 0; i < 3000 && (sleeper < 0 || blockedIn(sh) != SYS_wait4); i++) {
            sleeper = descendantNamed(sh, "sleep");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ASSERT_GT(sleeper, 0) << slurp(log);
        ASSERT_EQ(blockedIn(sh), SYS_wait4) << slurp(log);
        ::kill(p, SIGTERM);
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        const std::string out = slurp(log);
        EXPECT_EQ(out.find("wait4("), std::string::npos) << out;
        EXPECT_EQ(out.find("ERESTART"), std::string::npos) << out;
        EXPECT_TRUE(std::regex_search(out, std::regex("\n" + c.want + "\n"))) << out;
        if (c.args.front() == "count") {
            EXPECT_NE(out.find("syscall:wait4: never returned 1 (not counted)\n"),
                      std::string::npos)
                << out;
        }
        // It goes on waiting, untraced, and returns once its child is gone.
        EXPECT_TRUE(running(sh)) << out;
        ::kill(sleeper, SIGKILL);
        ::close(in[1]);
        ASSERT_EQ(::waitpid(sh, &st, 0), sh);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
    }
}

// -p on a process already blocked inside a syscall: the kernel backend never sees that call
// (its probe did not exist at the call's entry, and a return probe is armed at the entry),
// so it is no hit and its return none either. The ptrace backend's attach interrupts the
// call (PTRACE_INTERRUPT: -ERESTARTSYS for a read, which the kernel runs again from its
// entry; -ERESTART_RESTARTBLOCK for a sleep, which restart_syscall resumes): that restart is
// the same call going on, not a hit, and ends unseen as the kernel backend's does. Seen
// failing before: the read counted twice (the restarted one, key 1 COUNT 2), and a
// "restart_syscall() = ? ERESTART_RESTARTBLOCK" call the program never made.
TEST(CliStop, AttachInsideASyscallCountsItNot) {
    const std::string log = testing::TempDir() + "/cli-stop-attach.log";
    struct Case {
        const char* mode;
        long blocked_in;
        std::vector<std::string> args;
        std::vector<std::string> want;    // lines of the output (regexes)
        std::vector<std::string> not_in;  // texts the output must not have
    };
    // hits, delivered, dropped, nmissed, filtered, rejected, unreturned
    const std::vector<Case> cases = {
        {"blocked-read",
         SYS_read,
         {"count", "syscall:read", "--by", "retval"},
         {"RETVAL +COUNT", "1 +1",
          "syscall:read +hits 1, filtered 0, rejected 0, nmissed 0, "
          "never returned 0"},
         {"1 +2"}},
        {"blocked-read",
         SYS_read,
         {"trace", "--syscalls=read"},
         {"read\\(0, \"y\", 1\\) += 1", "syscall:read +1 +1 +0 +0 +0 +0 +0"},
         {"\"x\"", "ERESTART"}},
        {"blocked-sleep",
         SYS_clock_nanosleep,
         // --zeros: the row of restart_syscall, 0 (a summary leaves it out without it)
         {"trace", "--syscalls=clock_nanosleep,restart_syscall", "--zeros"},
         {"clock_nanosleep\\(CLOCK_REALTIME, 0, \\{tv_sec=0, tv_nsec=0\\}, NULL\\) += 0",
          "syscall:clock_nanosleep +1 +1 +0 +0 +0 +0 +0",
          "syscall:restart_syscall +0 +0 +0 +0 +0 +0 +0"},
         {"restart_syscall(", "ERESTART", "tv_sec=300"}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(fmt::format("{} {}", c.mode, c.args.front()));
        int in[2];
        ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
        const pid_t w = ::fork();
        if (w == 0) {
            ::dup2(in[0], STDIN_FILENO);
            ::execl(PT_WORKLOAD_PATH, "pt_workload", c.mode, "1", nullptr);
            ::_exit(127);
        }
        ::close(in[0]);
        for (int i = 0; i < 3000 && blockedIn(w) != c.blocked_in; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_EQ(blockedIn(w), c.blocked_in);
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"--backend=ptrace", "-p", std::to_string(w)});
        ::unlink(log.c_str());  // not the banner of the case before
        const pid_t p = startProbectl(args, log);
        ASSERT_GT(p, 0);
        for (int i = 0; i < 3000 && slurp(log).find(" in pid ") == std::string::npos; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_NE(slurp(log).find(" in pid "), std::string::npos) << slurp(log);
        // The call in progress ends (a byte read, the sleep cut short), then the program
        // makes one more, seen whole.
        if (c.blocked_in == SYS_read)
            ASSERT_EQ(::write(in[1], "xy", 2), 2);
        else
            ::kill(w, SIGUSR1);
        int st = 0;
        ASSERT_EQ(::waitpid(w, &st, 0), w);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
        ::close(in[1]);
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
        const std::string out = slurp(log);
        for (const auto& want : c.want)
            EXPECT_TRUE(std::regex_search(out, std::regex("\n" + want + "\n"))) << want << "\n"
                                                                                << out;
        for (const auto& no : c.not_in)
            EXPECT_EQ(out.find(no), std::string::npos) << no << "\n" << out;
    }
}

}  // namespace
