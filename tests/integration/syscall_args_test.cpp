// Syscall lines keep their arguments on every kernel and backend: 7.2's syscall events
// have fields the older parser refused (which cost every syscall its arguments without a
// word); where the kernel has no syscall events at all, trace says so.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"

using ::testing::HasSubstr;

TEST(SyscallArgs, KillLseekMkdirShowTheirArgumentsOnBothBackends) {
    const bool events = std::filesystem::is_directory("/sys/kernel/tracing/events/syscalls");
    for (const std::string backend : {"kernel", "ptrace"}) {
        const std::string dir = "/tmp/probectl-sys-args-" + backend;
        ::rmdir(dir.c_str());
        itest::Ran r =
            itest::sh("probectl trace --backend=" + backend + " --syscalls=kill,lseek,mkdir -- " +
                      itest::workload("sys_args") + " " + dir);
        ASSERT_EQ(r.status, 0) << backend << ": " << r.out;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(pid=(\d+) fd=(\d+))"))) << r.out;
        const std::string pid = m[1], fd = m[2];
        if (!events) {
            EXPECT_THAT(r.out, HasSubstr("note: syscall arguments are unknown")) << backend;
            continue;
        }
        EXPECT_THAT(r.out, ::testing::Not(HasSubstr("note:"))) << backend << ": " << r.out;
        // strace pads the "= RET" column; the mode may be octal or hex (0750 = 0x1e8).
        EXPECT_TRUE(std::regex_search(r.out, std::regex("kill\\(" + pid + ", 0\\) += 0\n")))
            << backend << ": " << r.out;
        EXPECT_TRUE(
            std::regex_search(r.out, std::regex("lseek\\(" + fd + ", 5, (0|SEEK_SET)\\) += 5\n")))
            << backend << ": " << r.out;
        EXPECT_TRUE(
            std::regex_search(r.out, std::regex("mkdir\\(\"" + dir + "\", (0750|0x1e8)\\) += 0\n")))
            << backend << ": " << r.out;
        ::rmdir(dir.c_str());
    }
}
