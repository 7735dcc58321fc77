#include "probectl/result.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

using namespace probectl;

TEST(Result, HoldsValueOrError) {
    Result<int> ok = 42;
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, 42);
    EXPECT_THROW((void)ok.error(), BadResultAccess);

    Result<int> bad = makeError(ENOENT, "no such probe");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().err, ENOENT);
    EXPECT_THROW((void)bad.value(), BadResultAccess);
}

TEST(Result, MoveOnlyValues) {
    Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
    ASSERT_TRUE(r);
    std::unique_ptr<int> p = std::move(r).value();
    EXPECT_EQ(*p, 7);
}

TEST(Result, VoidResult) {
    Result<void> ok;
    EXPECT_TRUE(ok);
    Result<void> bad = makeError(EPERM, "add kprobe foo");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().err, EPERM);
}

TEST(Error, DescribeAppendsStrerror) {
    EXPECT_EQ(makeError(ENOENT, "family missing").describe(),
              "family missing (No such file or directory)");
    EXPECT_EQ(makeError(0, "just text").describe(), "just text");
}

TEST(Error, DescribeLeavesOutMisleadingStrerror) {
    EXPECT_EQ(makeError(EILSEQ, "bad spec").describe(), "bad spec");
    EXPECT_EQ(makeError(ENOTUNIQ, "'x' names 2 functions").describe(), "'x' names 2 functions");
    EXPECT_EQ(makeError(ERANGE, "offset too large").describe(), "offset too large");
    EXPECT_EQ(makeError(ENOENT, "unknown kernel symbol 'x'").describe(),
              "unknown kernel symbol 'x'");
}

// The CLI prints describe() as the whole error: libc's text must neither repeat the message
// nor contradict it.
// A usage error is the input's fault: libc's text for its errno ("Invalid argument") is
// noise after a message that says what is wrong.
TEST(Error, UsageErrorsCarryNoStrerror) {
    Error e = makeError(EINVAL, "a histogram needs a value");
    EXPECT_EQ(e.describe(), "a histogram needs a value (Invalid argument)");
    e.usage = true;
    EXPECT_EQ(e.describe(), "a histogram needs a value");
    e.message.clear();
    EXPECT_EQ(e.describe(), "Invalid argument");
}

TEST(Error, DescribeNeverRepeatsOrContradicts) {
    EXPECT_EQ(makeError(ENOENT, "/nope: No such file or directory").describe(),
              "/nope: No such file or directory");
    EXPECT_EQ(makeError(ESRCH, "process 9: no such process").describe(),
              "process 9: no such process");
    EXPECT_EQ(makeError(ENOENT,
                        "family 'probectl' not found: is probectl.ko loaded? (sudo "
                        "modprobe probectl)")
                  .describe(),
              "family 'probectl' not found: is probectl.ko loaded? (sudo modprobe probectl)");
    EXPECT_EQ(makeError(ENOENT, "cannot run 'x': command not found in PATH").describe(),
              "cannot run 'x': command not found in PATH");
    EXPECT_EQ(makeError(EPROTO, "probectl.ko speaks protocol version 3").describe(),
              "probectl.ko speaks protocol version 3");
    EXPECT_EQ(makeError(EINVAL, "add probe: PROBE_FILTER instruction 1: unknown opcode",
                        "PROBE_FILTER instruction 1: unknown opcode")
                  .describe(),
              "add probe: PROBE_FILTER instruction 1: unknown opcode");
    // Context only: the errno is the explanation.
    EXPECT_EQ(makeError(EACCES, "cannot write /x").describe(),
              "cannot write /x (Permission denied)");
    EXPECT_EQ(makeError(EINVAL, "add probe kprobe:f").describe(),
              "add probe kprobe:f (Invalid argument)");
    // Messages that say what is missing or why: no errno text after them.
    EXPECT_EQ(
        makeError(ENOENT, "usdt:./app:p:t: no USDT probe p:t in ./app; it has: p:u").describe(),
        "usdt:./app:p:t: no USDT probe p:t in ./app; it has: p:u");
    EXPECT_EQ(makeError(ENOENT, "syscall:nosuch*: the glob matches no syscall").describe(),
              "syscall:nosuch*: the glob matches no syscall");
    EXPECT_EQ(
        makeError(EINVAL, "tracepoint:a:b x=args.p->q: struct s has no member 'q'").describe(),
        "tracepoint:a:b x=args.p->q: struct s has no member 'q'");
    EXPECT_EQ(makeError(EINVAL, "uprobe:./a:0x10: with a pid, 0x10 is ambiguous: write off=0x10")
                  .describe(),
              "uprobe:./a:0x10: with a pid, 0x10 is ambiguous: write off=0x10");
    // A file a uprobe cannot use: once "/tmp: not a regular file (Invalid argument)" and
    // "/etc/passwd: not an ELF file (Exec format error)".
    EXPECT_EQ(makeError(EINVAL, "/tmp: not a regular file").describe(), "/tmp: not a regular file");
    EXPECT_EQ(makeError(ENOEXEC, "/etc/passwd: not an ELF file").describe(),
              "/etc/passwd: not an ELF file");
}
