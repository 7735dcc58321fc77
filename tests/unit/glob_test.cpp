#include <gtest/gtest.h>

#include "probectl/kernel_symbols.hpp"

using probectl::editDistance;
using probectl::globError;
using probectl::globMatch;

TEST(Glob, StarsAndQuestionMarks) {
    EXPECT_TRUE(globMatch("*", ""));
    EXPECT_TRUE(globMatch("*sys_getppid*", "__x64_sys_getppid"));
    EXPECT_TRUE(globMatch("__x64_sys_open*", "__x64_sys_openat2"));
    EXPECT_FALSE(globMatch("__x64_sys_open*", "__ia32_sys_openat"));
    EXPECT_TRUE(globMatch("vfs_?ead", "vfs_read"));
    EXPECT_FALSE(globMatch("vfs_?ead", "vfs_rread"));
    EXPECT_TRUE(globMatch("a*b*c", "axxbyyc"));
    EXPECT_FALSE(globMatch("a*b*c", "axxbyy"));
    EXPECT_TRUE(globMatch("exact", "exact"));
    EXPECT_FALSE(globMatch("exact", "exactly"));
}

TEST(Glob, BracketExpressions) {
    EXPECT_TRUE(globMatch("vfs_[rw]*", "vfs_write"));
    EXPECT_FALSE(globMatch("vfs_[!rw]*", "vfs_write"));
    EXPECT_TRUE(globMatch("sys_[a-c]x", "sys_bx"));
    EXPECT_FALSE(globMatch("sys_[a-c]x", "sys_dx"));
    // An unterminated bracket is a literal '['.
    EXPECT_TRUE(globMatch("a[b", "a[b"));
}

TEST(Glob, UnterminatedBracketIsReported) {
    EXPECT_NE(globError("["), "");
    EXPECT_NE(globError("sys_[ab"), "");
    EXPECT_NE(globError("a[]"), "");  // ']' first is a member: still unterminated
    EXPECT_EQ(globError("[[]"), "");
    EXPECT_EQ(globError("vfs_[!rw]*"), "");
    EXPECT_EQ(globError("plain"), "");
}

TEST(EditDistance, Levenshtein) {
    EXPECT_EQ(editDistance("", ""), 0u);
    EXPECT_EQ(editDistance("abc", ""), 3u);
    EXPECT_EQ(editDistance("do_sys_opn", "do_sys_open"), 1u);
    EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}
