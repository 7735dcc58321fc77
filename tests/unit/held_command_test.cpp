// The traced command of both backends: held before exec, released, reaped.
#include "probectl/held_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using probectl::HeldCommand;

namespace {

int waitFor(HeldCommand& c) {
    for (int i = 0; i < 500; ++i) {
        if (auto st = c.tryWait())
            return *st;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "child did not exit";
    return -1;
}

}  // namespace

TEST(HeldCommand, RunsOnlyAfterRelease) {
    char dir[] = "/tmp/probectl-child-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string marker = std::string(dir) + "/ran";
    auto c = HeldCommand::spawn({"sh", "-c", "touch " + marker});
    ASSERT_TRUE(c) << c.error().describe();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_NE(access(marker.c_str(), F_OK), 0) << "ran before release";
    EXPECT_FALSE(c->tryWait().has_value());
    ASSERT_TRUE(c->release());
    const int st = waitFor(*c);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0);
    EXPECT_EQ(access(marker.c_str(), F_OK), 0);
    unlink(marker.c_str());
    rmdir(dir);
    EXPECT_EQ(HeldCommand::describeStatus(st), "exited with status 0");
}

// Becoming the subreaper of the command's orphans is the caller's choice: a program that
// embeds libctl is not made one by spawning a command.
TEST(HeldCommand, AdoptsOrphansOnlyWhenAsked) {
    // The attribute is the process's: another test of this binary (the CLI's drivers) may
    // have set it already. Start from 0 and leave it as found.
    int was = 0;
    ASSERT_EQ(prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0), 0);
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
    struct Restore {
        int was;
        ~Restore() { prctl(PR_SET_CHILD_SUBREAPER, was, 0, 0, 0); }
    } restore{was};
    int on = -1;
    {
        auto c = HeldCommand::spawn({"true"});
        ASSERT_TRUE(c) << c.error().describe();
        EXPECT_FALSE(c->adoptsOrphans());
        ASSERT_EQ(prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0), 0);
        EXPECT_EQ(on, 0);
    }
    auto c = HeldCommand::spawn({"true"}, true);
    ASSERT_TRUE(c) << c.error().describe();
    EXPECT_TRUE(c->adoptsOrphans());
    ASSERT_EQ(prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0), 0);
    EXPECT_EQ(on, 1);
}

// A command that cannot be found fails before anything forks, so a tracer reports it
// before arming a probe.
TEST(HeldCommand, MissingCommandFailsBeforeFork) {
    auto c = HeldCommand::spawn({"/nonexistent/program"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().err, ENOENT);
    EXPECT_THAT(c.error().message, ::testing::HasSubstr("/nonexistent/program"));
    auto p = HeldCommand::spawn({"probectl-no-such-command"});
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().err, ENOENT);
    EXPECT_THAT(p.error().message, ::testing::HasSubstr("'probectl-no-such-command'"));
    EXPECT_THAT(p.error().message, ::testing::HasSubstr("not found in PATH"));
}

// The PATH search is done by the tracer: the child execs the found file at once, so the
// command's trace shows one execve, not one failed execve per PATH entry before it.
TEST(HeldCommand, PathSearchSkipsNonExecutablesAndReportsEacces) {
    char dir[] = "/tmp/probectl-path-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string d1 = std::string(dir) + "/a", d2 = std::string(dir) + "/b";
    ASSERT_EQ(mkdir(d1.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(d2.c_str(), 0755), 0);
    const std::string plain = d1 + "/probectl-t", runnable = d2 + "/probectl-t";
    std::ofstream(plain) << "#!/bin/sh\nexit 3\n";
    std::ofstream(runnable) << "#!/bin/sh\nexit 7\n";
    ASSERT_EQ(chmod(plain.c_str(), 0644), 0);
    ASSERT_EQ(chmod(runnable.c_str(), 0755), 0);
    const char* old = getenv("PATH");
    const std::string saved = old ? old : "";
    setenv("PATH", (d1 + ":" + d2).c_str(), 1);
    auto c = HeldCommand::spawn({"probectl-t"});
    ASSERT_TRUE(c) << c.error().describe();
    ASSERT_TRUE(c->release());
    const int st = waitFor(*c);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 7) << "ran the non-executable file, or not the one in PATH";
    setenv("PATH", d1.c_str(), 1);
    auto denied = HeldCommand::spawn({"probectl-t"});
    setenv("PATH", saved.c_str(), 1);
    ASSERT_FALSE(denied);
    EXPECT_EQ(denied.error().err, EACCES);
    for (const std::string& f : {plain, runnable, d1, d2, std::string(dir)})
        remove(f.c_str());
}

// A file of no format the kernel runs (an ELF file or #! script) fails spawn(), before a
// tracer arms a probe and prints its header; it once failed only at release().
TEST(HeldCommand, NotAnExecutableFailsBeforeFork) {
    if (access("/proc/sys/fs/binfmt_misc/register", F_OK) == 0)
        GTEST_SKIP() << "binfmt_misc is mounted: only exec can tell what runs";
    char path[] = "/tmp/probectl-text-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "echo hi\n", 8), 8);
    close(fd);
    ASSERT_EQ(chmod(path, 0755), 0);
    auto c = HeldCommand::spawn({path});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().err, ENOEXEC);
    EXPECT_THAT(c.error().message, ::testing::HasSubstr(std::string("cannot run '") + path));
    EXPECT_THAT(c.error().message, ::testing::HasSubstr("neither an ELF executable nor"));
    // An empty file as well; a #! script runs.
    ASSERT_EQ(truncate(path, 0), 0);
    EXPECT_FALSE(HeldCommand::spawn({path}));
    std::ofstream(path) << "#!/bin/sh\nexit 5\n";
    auto s = HeldCommand::spawn({path});
    ASSERT_TRUE(s) << s.error().describe();
    ASSERT_TRUE(s->release());
    const int st = waitFor(*s);
    unlink(path);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 5);
}

// A directory, a #! line with no interpreter, or one naming a missing or non-executable
// interpreter fail spawn() too, naming what is wrong: they failed at release(), after the
// tracer's header, as "No such file or directory" for a script that exists.
TEST(HeldCommand, ScriptsWhoseInterpreterCannotRunFailBeforeFork) {
    char dir[] = "/tmp/probectl-interp-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string script = std::string(dir) + "/s", plain = std::string(dir) + "/plain";
    std::ofstream(plain) << "not a program\n";
    ASSERT_EQ(chmod(plain.c_str(), 0644), 0);
    struct Row {
        std::string text;
        int err;
        std::string says;
    };
    for (const Row& row :
         std::vector<Row>{{"#!/nonexistent/interp -x\necho hi\n", ENOENT,
                           "its interpreter '/nonexistent/interp'"},
                          {"#!  \t\n", ENOEXEC, "its #! line names no interpreter"},
                          {"#!", ENOEXEC, "its #! line names no interpreter"},
                          {"#!" + plain + "\n", EACCES, "its interpreter '" + plain + "'"}}) {
        std::ofstream(script, std::ios::trunc) << row.text;
        ASSERT_EQ(chmod(script.c_str(), 0755), 0);
        auto c = HeldCommand::spawn({script});
        ASSERT_FALSE(c) << row.text;
        EXPECT_EQ(c.error().err, row.err) << row.text;
        EXPECT_THAT(c.error().message, ::testing::HasSubstr(row.says)) << row.text;
        EXPECT_THAT(c.error().message, ::testing::HasSubstr("cannot run '" + script + "'"));
    }
    // An interpreter given with spaces after #! and arguments runs.
    std::ofstream(script, std::ios::trunc) << "#! /bin/sh -e\nexit 6\n";
    auto ok = HeldCommand::spawn({script});
    ASSERT_TRUE(ok) << ok.error().describe();
    ASSERT_TRUE(ok->release());
    const int st = waitFor(*ok);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 6);
    auto d = HeldCommand::spawn({dir});
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().err, EACCES);
    EXPECT_THAT(d.error().message, ::testing::HasSubstr("it is a directory"));
    for (const std::string& f : {script, plain, std::string(dir)})
        remove(f.c_str());
}

// What only the exec itself can find out still comes from release().
TEST(HeldCommand, ExecFailureIsReportedByRelease) {
    char path[] = "/tmp/probectl-noexec-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd,
                    "\x7f"
                    "ELF garbage",
                    12),
              12);
    close(fd);
    ASSERT_EQ(chmod(path, 0755), 0);
    auto c = HeldCommand::spawn({path});
    ASSERT_TRUE(c) << c.error().describe();
    auto r = c->release();
    unlink(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOEXEC);
    EXPECT_THAT(r.error().message, ::testing::HasSubstr(path));
}

TEST(HeldCommand, TerminateAndDestructorReap) {
    auto c = HeldCommand::spawn({"sleep", "30"});
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->release());
    const int st = c->terminate(2000);
    EXPECT_TRUE(WIFSIGNALED(st));
    EXPECT_THAT(HeldCommand::describeStatus(st), ::testing::HasSubstr("killed by signal 15"));
    // Never released: the destructor must not leave it waiting forever.
    pid_t pid;
    {
        auto held = HeldCommand::spawn({"true"});
        ASSERT_TRUE(held);
        pid = held->pid();
    }
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
}

TEST(HeldCommand, EmptyCommand) {
    EXPECT_FALSE(HeldCommand::spawn({}));
}

namespace {

// True once `pid` is gone or a zombie (reparented; its new parent may reap it later).
bool deadWithin(pid_t pid, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        if (!stat || !std::getline(stat, line))
            return true;
        const auto paren = line.rfind(')');
        if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z')
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

}  // namespace

TEST(HeldCommand, DiesWithTheTracer) {
    // kill -9 of probectl must not leave the command running (PR_SET_PDEATHSIG).
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t tracer = fork();
    ASSERT_GE(tracer, 0);
    if (tracer == 0) {
        ::close(fds[0]);
        auto c = HeldCommand::spawn({"sleep", "30"});
        if (!c || !c->release())
            _exit(1);
        const pid_t pid = c->pid();
        (void)!::write(fds[1], &pid, sizeof(pid));
        for (;;)
            pause();
    }
    ::close(fds[1]);
    pid_t child = -1;
    ASSERT_EQ(::read(fds[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
    ::close(fds[0]);
    ASSERT_GT(child, 0);
    ::kill(tracer, SIGKILL);
    int st;
    ASSERT_EQ(::waitpid(tracer, &st, 0), tracer);
    EXPECT_TRUE(deadWithin(child, 3000)) << "'sleep 30' outlived its tracer";
    ::kill(child, SIGKILL);  // in case the test failed
}

TEST(HeldCommand, ExitCodeFollowsTheShell) {
    EXPECT_EQ(HeldCommand::exitCode(7 << 8), 7);  // exited with 7
    EXPECT_EQ(HeldCommand::exitCode(SIGKILL), 128 + SIGKILL);
    EXPECT_EQ(HeldCommand::exitCode(0), 0);
    auto c = HeldCommand::spawn({"sh", "-c", "exit 7"});
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->release());
    EXPECT_EQ(HeldCommand::exitCode(waitFor(*c)), 7);
}

TEST(HeldCommand, StartDoesNotWaitAndExecResultAnswers) {
    // The ptrace backend's way: start() returns at once, execResult() reports the exec.
    auto c = HeldCommand::spawn({"true"});
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->held());
    ASSERT_TRUE(c->start());
    EXPECT_FALSE(c->held());
    EXPECT_FALSE(c->start()) << "a second start must fail: the child is gone from the pipe";
    std::optional<probectl::Result<void>> r;
    for (int i = 0; i < 500 && !r; ++i) {
        r = c->execResult();
        if (!r)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(*r);
    EXPECT_EQ(HeldCommand::exitCode(waitFor(*c)), 0);
    EXPECT_EQ(c->status(), 0);
}

TEST(HeldCommand, ReapedElsewhereIsNotKilledAgain) {
    // A ptrace tracer reaps the command in its own wait loop and reports the status.
    pid_t pid;
    {
        auto c = HeldCommand::spawn({"sh", "-c", "exit 3"});
        ASSERT_TRUE(c);
        ASSERT_TRUE(c->release());
        pid = c->pid();
        int st = 0;
        ASSERT_EQ(::waitpid(pid, &st, 0), pid);
        c->reaped(st);
        EXPECT_EQ(c->status(), st);
        EXPECT_EQ(c->tryWait(), st);
        EXPECT_EQ(c->terminate(), st);
    }
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
}

TEST(HeldCommand, MoveAssignmentEndsTheCommandItHeld) {
    auto a = HeldCommand::spawn({"sleep", "30"});
    auto b = HeldCommand::spawn({"true"});
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    const pid_t old = a->pid();
    *a = std::move(*b);
    EXPECT_EQ(waitpid(old, nullptr, WNOHANG), -1) << "the replaced command was not reaped";
    EXPECT_EQ(b->pid(), -1);
    EXPECT_TRUE(a->held());
}
