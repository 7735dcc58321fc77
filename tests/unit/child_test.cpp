// The traced command's launcher: held before exec, released, reaped.
#include "child.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

using namespace probectl::cli;

namespace {

int waitFor(StoppedChild& c) {
    for (int i = 0; i < 500; ++i) {
        if (auto st = c.tryWait())
            return *st;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "child did not exit";
    return -1;
}

}  // namespace

TEST(StoppedChild, RunsOnlyAfterRelease) {
    char dir[] = "/tmp/probectl-child-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string marker = std::string(dir) + "/ran";
    auto c = StoppedChild::spawn({"sh", "-c", "touch " + marker});
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
    EXPECT_EQ(StoppedChild::describeStatus(st), "exited with status 0");
}

TEST(StoppedChild, ExecFailureIsReportedByRelease) {
    auto c = StoppedChild::spawn({"/nonexistent/program"});
    ASSERT_TRUE(c);
    auto r = c->release();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT);
    EXPECT_THAT(r.error().message, ::testing::HasSubstr("/nonexistent/program"));
}

TEST(StoppedChild, TerminateAndDestructorReap) {
    auto c = StoppedChild::spawn({"sleep", "30"});
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->release());
    const int st = c->terminate(2000);
    EXPECT_TRUE(WIFSIGNALED(st));
    EXPECT_THAT(StoppedChild::describeStatus(st), ::testing::HasSubstr("killed by signal 15"));
    // Never released: the destructor must not leave it waiting forever.
    pid_t pid;
    {
        auto held = StoppedChild::spawn({"true"});
        ASSERT_TRUE(held);
        pid = held->pid();
    }
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
}

TEST(StoppedChild, EmptyCommand) {
    EXPECT_FALSE(StoppedChild::spawn({}));
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

TEST(StoppedChild, DiesWithTheTracer) {
    // kill -9 of probectl must not leave the command running (PR_SET_PDEATHSIG).
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t tracer = fork();
    ASSERT_GE(tracer, 0);
    if (tracer == 0) {
        ::close(fds[0]);
        auto c = StoppedChild::spawn({"sleep", "30"});
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

TEST(StoppedChild, ExitCodeFollowsTheShell) {
    EXPECT_EQ(StoppedChild::exitCode(7 << 8), 7);  // exited with 7
    EXPECT_EQ(StoppedChild::exitCode(SIGKILL), 128 + SIGKILL);
    EXPECT_EQ(StoppedChild::exitCode(0), 0);
    auto c = StoppedChild::spawn({"sh", "-c", "exit 7"});
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->release());
    EXPECT_EQ(StoppedChild::exitCode(waitFor(*c)), 7);
}
