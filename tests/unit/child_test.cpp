// The traced command's launcher: held before exec, released, reaped.
#include "child.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
