// The traced command of both backends: held before exec, released, reaped.
#include "probectl/held_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

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

TEST(HeldCommand, ExecFailureIsReportedByRelease) {
    auto c = HeldCommand::spawn({"/nonexistent/program"});
    ASSERT_TRUE(c);
    auto r = c->release();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, ::testing::HasSubstr("/nonexistent/program"));
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
