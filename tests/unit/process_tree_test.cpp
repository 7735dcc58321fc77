// Descendants of a process, as -p PID -f finds the children that exist at attach time.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "target/process_tree.hpp"

TEST(ProcessTree, ChildrenAndGrandchildren) {
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    const pid_t child = fork();
    if (child == 0) {
        const pid_t grandchild = fork();
        if (grandchild == 0) {
            pause();
            _exit(0);
        }
        (void)!write(pipefd[1], &grandchild, sizeof(grandchild));
        pause();
        _exit(0);
    }
    pid_t grandchild = 0;
    ASSERT_EQ(read(pipefd[0], &grandchild, sizeof(grandchild)),
              static_cast<ssize_t>(sizeof(grandchild)));
    const auto d = probectl::descendantsOf(getpid());
    EXPECT_NE(std::find(d.begin(), d.end(), child), d.end());
    auto g = std::find(d.begin(), d.end(), grandchild);
    EXPECT_NE(g, d.end());
    EXPECT_LT(std::find(d.begin(), d.end(), child), g) << "parents first";
    EXPECT_TRUE(probectl::descendantsOf(grandchild).empty());
    kill(grandchild, SIGKILL);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    close(pipefd[0]);
    close(pipefd[1]);
}
