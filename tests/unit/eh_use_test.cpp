// Which files a kernel uretprobe is refused in: C++ code that throws or catches, not C
// (glibc's -fexceptions cleanups included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "elf/eh_use.hpp"

using ::testing::HasSubstr;

TEST(ExceptionUse, CxxThatUnwindsIsNamedCIsNot) {
    // This test binary is C++ with destructors run during unwinding.
    EXPECT_THAT(probectl::exceptionUse("/proc/self/exe"), HasSubstr("__gxx_personality_v0"));
    EXPECT_EQ(probectl::exceptionUse(FX_PIE_PATH), "");
    EXPECT_EQ(probectl::exceptionUse("/lib/x86_64-linux-gnu/libc.so.6"), "")
        << "glibc has .gcc_except_table for cancellation, but no C++ exceptions";
    EXPECT_EQ(probectl::exceptionUse("/nonexistent"), "");
}
