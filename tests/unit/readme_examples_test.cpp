// The extractor and the output rule behind Readme.Examples (tests/integration/readme_examples.hpp),
// and README.md's own vm-checked blocks, which must parse.
#include "readme_examples.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace {

using readme::extract;
using readme::lineMatches;
using readme::mismatch;

TEST(ReadmeExamples, ExtractsCommandsOutputAndExitStatus) {
    const auto ex = extract(
        "## Intro\n"
        "```\n$ not checked\n```\n"
        "## Uprobes\n"
        "```console vm-checked copy=/usr/bin/ls needs=/sys/kernel/btf/vmlinux\n"
        "$ T=/x\n"
        "$ probectl trace a \\\n"
        "      -- b          # exit 3\n"
        "line one\n"
        "\n"
        "  line two\n"
        "$ probectl symbols 'x # exit 4'\n"
        "```\n");
    ASSERT_EQ(ex.size(), 1u);
    EXPECT_EQ(ex[0].section, "Uprobes");
    EXPECT_EQ(ex[0].line, 6);
    EXPECT_EQ(ex[0].copies, std::vector<std::string>{"/usr/bin/ls"});
    EXPECT_EQ(ex[0].needs, std::vector<std::string>{"/sys/kernel/btf/vmlinux"});
    ASSERT_EQ(ex[0].commands.size(), 3u);
    EXPECT_EQ(ex[0].commands[0].text, "T=/x");
    EXPECT_TRUE(ex[0].commands[0].shown.empty());
    EXPECT_EQ(ex[0].commands[1].text, "probectl trace a \\\n      -- b          # exit 3");
    EXPECT_EQ(ex[0].commands[1].line, 8);
    EXPECT_EQ(ex[0].commands[1].exit_status, 3);
    EXPECT_EQ(ex[0].commands[1].shown, (std::vector<std::string>{"line one", "  line two"}));
    // Only a comment says the status, not the same words inside an argument.
    EXPECT_EQ(ex[0].commands[2].exit_status, 0);
}

TEST(ReadmeExamples, RefusesBlocksThatCannotRun) {
    EXPECT_THROW(extract("```console vm-checked\nout first\n$ true\n```\n"), std::runtime_error);
    EXPECT_THROW(extract("```console vm-checked\n```\n"), std::runtime_error);
    EXPECT_THROW(extract("```console vm-checked\n$ true\n"), std::runtime_error);
    EXPECT_THROW(extract("```console vm-checked kernel=6.1\n$ true\n```\n"), std::runtime_error);
    EXPECT_THROW(extract("```console vm-checked copy=ls\n$ true\n```\n"), std::runtime_error);
    EXPECT_THROW(extract("```console vm-checked needs=btf\n$ true\n```\n"), std::runtime_error);
    try {
        extract("text\n```console vm-checked\noops\n```\n");
        ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(),
                     "README line 3: output before the first `$ ` command of a vm-checked block");
    }
}

TEST(ReadmeExamples, EventLinesMatchWhateverTimeCpuAndTid) {
    const std::string shown =
        "    0.054512 [001] uprobe_target        172 usdt:.../uprobe_target:pc:tick  arg1=1 arg2=1";
    EXPECT_TRUE(lineMatches(shown,
                            "  12.000001 [000] uprobe_target 9 "
                            "usdt:/b/tests/integration/uprobe_target:pc:tick arg1=1 arg2=1"));
    // The comm, the probe and the values are the example's point.
    EXPECT_FALSE(lineMatches(shown, "0.1 [000] exe 9 usdt:/b/uprobe_target:pc:tick arg1=1 arg2=1"));
    EXPECT_FALSE(lineMatches(shown,
                             "0.1 [000] uprobe_target 9 usdt:/b/uprobe_target:pc:tick "
                             "arg1=1 arg2=4"));
    EXPECT_FALSE(lineMatches(shown,
                             "0.1 [000] uprobe_target 9 usdt:/b/uprobe_target:pc:tick "
                             "arg1=1 arg2=1 arg3=1"));
}

TEST(ReadmeExamples, CountsAndSmallNumbersMustBeEqual) {
    const std::string shown = "uprobe:$T:pc_add     4          4        0        0         0";
    EXPECT_TRUE(lineMatches(shown, "uprobe:$T:pc_add 4 4 0 0 0"));
    EXPECT_FALSE(lineMatches(shown, "uprobe:$T:pc_add 2 2 0 0 0"));
    EXPECT_FALSE(lineMatches("file offset:  0x98930", "file offset: 0x98931"));
    EXPECT_TRUE(lineMatches("file offset:  0x98930", "file offset: 0x98930"));
    EXPECT_FALSE(lineMatches("x86_64", "x87_64"));
}

TEST(ReadmeExamples, AddressesTimesAndPidsMatchAnyValue) {
    EXPECT_TRUE(
        lineMatches("parent=0xffff8e29c1fb8000 lat=3.01ms", "parent=0xffff9a0001234000 lat=519us"));
    EXPECT_FALSE(lineMatches("parent=0xffff8e29c1fb8000", "parent=(nil)"));
    EXPECT_TRUE(lineMatches("Tracing 4 probes in 'cat' (pid 168). Ends when",
                            "Tracing 4 probes in 'cat' (pid 2001). Ends when"));
    EXPECT_FALSE(lineMatches("Tracing 4 probes in 'cat' (pid 168).",
                             "Tracing 3 probes in 'cat' (pid 168)."));
    EXPECT_TRUE(lineMatches("172   openat(AT_FDCWD, \"/etc/hostname\", O_RDONLY) = 3",
                            "9 openat(AT_FDCWD, \"/etc/hostname\", O_RDONLY) = 3"));
    EXPECT_FALSE(lineMatches("172   openat(AT_FDCWD, \"/etc/hostname\", O_RDONLY) = 3",
                             "9 openat(AT_FDCWD, \"/etc/hostname\", O_RDONLY) = 4"));
    EXPECT_TRUE(lineMatches("171   +++ exited with 0 +++", "9     +++ exited with 0 +++"));
    EXPECT_FALSE(lineMatches("171   +++ exited with 0 +++", "9     +++ exited with 1 +++"));
    EXPECT_TRUE(lineMatches("count 2, avg 46.8ms, min 21.1ms", "count 2, avg 1.2s, min 900us"));
    EXPECT_FALSE(lineMatches("count 2, avg 46.8ms", "count 3, avg 46.8ms"));
}

TEST(ReadmeExamples, EllipsisMatchesAnyTextOrNone) {
    EXPECT_TRUE(lineMatches("a=1 ...", "a=1 b=2 c=3"));
    EXPECT_TRUE(lineMatches("a=1 ...", "a=1"));
    EXPECT_TRUE(lineMatches("... c=3", "a=1 b=2 c=3"));
    EXPECT_TRUE(lineMatches("a=1 ... c=3", "a=1 c=3"));
    EXPECT_TRUE(lineMatches("usdt:.../uprobe_target:pc:tick", "usdt:/w/b/uprobe_target:pc:tick"));
    EXPECT_FALSE(lineMatches("a=1 ... c=3", "a=1 b=2 c=4"));
    // Regex characters in shown text are literal.
    EXPECT_TRUE(lineMatches("f(x) [a-z]* $arg1", "f(x) [a-z]* $arg1"));
    EXPECT_FALSE(lineMatches("f(x)", "fx"));
}

TEST(ReadmeExamples, ShownLinesInOrderWithOthersBetween) {
    const std::string out = "banner\nfirst 1\nnoise\nsecond 2\nsummary\n";
    EXPECT_EQ(mismatch({"first 1", "...", "second 2"}, out), "");
    EXPECT_EQ(mismatch({"first 1", "summary"}, out), "");
    EXPECT_EQ(mismatch({}, out), "");
    EXPECT_EQ(mismatch({"second 2", "first 1"}, out),
              "shown line out of order (it matches output line 2, before the previous shown "
              "line's): first 1");
    EXPECT_EQ(mismatch({"first 1", "third 3"}, out), "shown line matches no output line: third 3");
    // Each shown line takes its own output line.
    EXPECT_NE(mismatch({"first 1", "first 1"}, out), "");
}

// README.md's own blocks: they parse, each shown line is a valid pattern, and each copy=
// names an executable file of this host (what the build puts beside the suite).
TEST(ReadmeExamples, ReadmeBlocksParse) {
    std::ifstream in(PROBECTL_README);
    ASSERT_TRUE(in) << PROBECTL_README;
    std::stringstream text;
    text << in.rdbuf();
    const auto examples = extract(text.str());
    ASSERT_FALSE(examples.empty());
    for (const auto& ex : examples) {
        for (const std::string& p : ex.copies)
            EXPECT_EQ(access(p.c_str(), X_OK), 0) << "README line " << ex.line << ": copy=" << p;
        for (const auto& c : ex.commands) {
            EXPECT_FALSE(c.text.empty()) << "README line " << c.line;
            for (const std::string& s : c.shown)
                EXPECT_NO_THROW(std::regex(readme::lineRegex(s)))
                    << "README line " << c.line << ": " << s;
        }
    }
}

}  // namespace
