// A child the ptrace backend cannot follow (CLONE_UNTRACED) is named, not missed silently;
// the kernel backend follows it.
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string childPid(const std::string& out) {
    std::smatch m;
    static const std::regex re("child ([0-9]+)");
    return std::regex_search(out, m, re) ? m[1].str() : "";
}

}  // namespace

TEST(UntracedChild, PtraceBackendNamesTheCloneUntracedChild) {
    const std::string prog = itest::workload("clone_untraced");
    const Ran p = sh("probectl trace --backend=ptrace -f --syscalls=getppid -- " + prog + " 2>&1");
    EXPECT_EQ(p.status, 0) << p.out;
    const std::string pid = childPid(p.out);
    ASSERT_FALSE(pid.empty()) << p.out;
    EXPECT_THAT(p.out, HasSubstr("process " + pid + " was not traced")) << p.out;
    EXPECT_THAT(p.out, HasSubstr("CLONE_UNTRACED")) << p.out;
    // Without -f no child is traced anyway: nothing to say.
    const Ran n = sh("probectl trace --backend=ptrace --syscalls=getppid -- " + prog + " 2>&1");
    EXPECT_THAT(n.out, Not(HasSubstr("CLONE_UNTRACED"))) << n.out;
    // The kernel backend's fork tracking sees the child: its three calls and the parent's.
    const Ran k = sh("probectl trace -f --syscalls=getppid -- " + prog + " 2>&1");
    EXPECT_EQ(k.status, 0) << k.out;
    std::size_t calls = 0;
    for (std::size_t at = 0; (at = k.out.find("getppid()", at)) != std::string::npos; ++at)
        ++calls;
    EXPECT_EQ(calls, 4u) << k.out;
    EXPECT_THAT(k.out, Not(HasSubstr("CLONE_UNTRACED"))) << k.out;
}
