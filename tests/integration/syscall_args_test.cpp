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

// A buffer or pointer array that ends where an unmapped page begins: the fixed-size read of
// its memory stops at the page and keeps what it read, as strace shows it. Before, the
// whole read failed and the line had only the pointers (the execve env count went missing
// whenever the stack's random offset left an envp array near the top of the stack).
TEST(SyscallArgs, MemoryEndingAtAnUnmappedPageIsShownOnBothBackends) {
    if (!std::filesystem::is_directory("/sys/kernel/tracing/events/syscalls"))
        GTEST_SKIP() << "no syscall events: arguments are not decoded";
    const std::string w = itest::workload("page_edge");
    for (const std::string backend : {"kernel", "ptrace"}) {
        itest::Ran r =
            itest::sh("probectl trace --backend=" + backend + " --syscalls=write,execve -- " + w);
        ASSERT_EQ(r.status, 0) << backend << ": " << r.out;
        EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(write\(1, "hi!\\n", 4\) += 4)")))
            << backend << ": " << r.out;
        // argv's strings are cut at 32 bytes, as strace -s 32 does.
        EXPECT_TRUE(std::regex_search(
            r.out, std::regex("execve\\(\"" + w + "\", \\[\"[^\"]*\"(\\.\\.\\.)?, \"done\"\\], " +
                              "0x[0-9a-f]+ /\\* 2 vars \\*/\\) += 0\n")))
            << backend << ": " << r.out;
    }
}

// execve's path and argv on pages the program never touched (a string literal on a page not
// yet read in): a probe handler must not fault them in, so the kernel backend's read at the
// entry fails. They were shown as unreadable; now the kernel reads them again at the return,
// where the failed exec has faulted them in (its strings share one page, as literals do),
// and from the new program's copies after a successful exec: the lines strace and the ptrace
// backend show.
TEST(SyscallArgs, ExecveStringsOnUntouchedPagesAreShownOnBothBackends) {
    // A short path: strace -s 32 would cut a longer argv[0].
    const std::string w = "/tmp/exec_untouched";
    ASSERT_EQ(itest::sh("cp " + itest::workload("exec_untouched") + " " + w).status, 0);
    for (const std::string backend : {"kernel", "ptrace"}) {
        const itest::Ran r = itest::sh("probectl trace --backend=" + backend +
                                       " --syscalls=execve -- " + w + " 2>&1");
        ASSERT_EQ(r.status, 0) << backend << ": " << r.out;
        EXPECT_THAT(r.out, ::testing::Not(HasSubstr("unreadable"))) << backend << ": " << r.out;
        EXPECT_TRUE(std::regex_search(
            r.out, std::regex(R"(execve\("/nonexistent/untouched-exec", \["untouched-a0", )"
                              R"("untouched-a1"\], 0x[0-9a-f]+ /\* [0-9]+ vars \*/\) += -1 )"
                              R"(ENOENT \(No such file or directory\)\n)")))
            << backend << ": " << r.out;
        EXPECT_TRUE(std::regex_search(
            r.out, std::regex("execve\\(\"" + w + "\", \\[\"" + w +
                              R"(", "second-exec", "untouched-arg2"\], 0x[0-9a-f]+ )"
                              R"(/\* [0-9]+ vars \*/\) += 0\n)")))
            << backend << ": " << r.out;
    }
}
