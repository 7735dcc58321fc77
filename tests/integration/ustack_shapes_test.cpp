// User stacks whose frames are not plain calls, against the real module: inlined calls
// nested three deep (inline_nested.c) are a frame each, and frames that tail calls removed
// (tail_call.c) are shown as gone, by the DWARF the workloads keep in the VM image (named
// *_dwarf); the same with the ptrace backend, and with the module's frame-pointer walk.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;

namespace {

// Each event's "ustack" of `probectl trace ... --format json -o FILE`.
std::vector<std::vector<std::string>> stacks(const std::string& file) {
    std::vector<std::vector<std::string>> out;
    const std::string text = itest::readFile(file);
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        auto j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
        if (!j.is_discarded() && j.value("type", "") == "event" && j["ustack"].is_array())
            out.push_back(j["ustack"].get<std::vector<std::string>>());
    }
    return out;
}

std::vector<std::vector<std::string>> traceLeaf(const std::string& w, const std::string& options,
                                                const std::string& n) {
    const std::string file = "/tmp/ustack-shapes.json";
    Ran r = sh("probectl trace uprobe:" + w + ":leaf " + options + " --format json -o " + file +
               " -- " + w + " " + n + " 1");  // 1 s more: its maps are read at its first event
    EXPECT_EQ(r.status, 0) << r.out;
    return stacks(file);
}

std::string dump(const std::vector<std::string>& frames) {
    std::string s;
    for (const auto& f : frames)
        s += "\n  " + f;
    return s;
}

// The frames from the first that starts with `first` on, as far as `count` go.
std::vector<std::string> from(const std::vector<std::string>& frames, const std::string& first,
                              std::size_t count) {
    for (std::size_t i = 0; i < frames.size(); i++)
        if (frames[i].starts_with(first))
            return {
                frames.begin() + static_cast<std::ptrdiff_t>(i),
                frames.begin() + static_cast<std::ptrdiff_t>(std::min(i + count, frames.size()))};
    return {};
}

bool at(const std::string& frame, const std::string& head, const std::string& file) {
    return frame.starts_with(head) &&
           std::regex_search(frame, std::regex(" at (.*/)?" + file + ":[0-9]+$"));
}

// leaf, inner (inlined), middle (inlined), outer, main: each inlined level a frame at the
// line of the call it makes, whichever backend copied the stack.
void expectNested(const std::vector<std::vector<std::string>>& got, const std::string& w) {
    ASSERT_EQ(got.size(), 3u);
    for (const auto& frames : got) {
        const auto s = from(frames, "leaf ", 5);
        ASSERT_EQ(s.size(), 5u) << dump(frames);
        EXPECT_TRUE(at(s[0], "leaf (" + w + ")", "inline_nested\\.c")) << dump(frames);
        EXPECT_TRUE(at(s[1], "inner (inlined)", "inline_nested\\.c")) << dump(frames);
        EXPECT_TRUE(at(s[2], "middle (inlined)", "inline_nested\\.c")) << dump(frames);
        EXPECT_TRUE(at(s[3], "outer+0x", "inline_nested\\.c")) << dump(frames);
        EXPECT_TRUE(at(s[4], "main+0x", "inline_nested\\.c")) << dump(frames);
        // Three different call lines: no level repeats another's.
        EXPECT_NE(s[1].substr(s[1].rfind(':')), s[2].substr(s[2].rfind(':'))) << dump(frames);
        EXPECT_NE(s[2].substr(s[2].rfind(':')), s[3].substr(s[3].rfind(':'))) << dump(frames);
    }
}

const std::string kGone = " (tail call: its frame is gone)";

// Per round leaf is reached three ways (tail_call.c): start -> hop -> leaf, start2 -> hop2
// -> hop -> leaf, start3 -> either -> (hop ->) leaf.
void expectTailCalls(const std::vector<std::vector<std::string>>& got, const std::string& w) {
    ASSERT_EQ(got.size(), 6u);
    for (std::size_t i = 0; i < got.size(); i++) {
        const auto& frames = got[i];
        const auto s = from(frames, "leaf ", 4);
        ASSERT_GE(s.size(), 3u) << dump(frames);
        EXPECT_TRUE(at(s[0], "leaf (" + w + ")", "tail_call\\.c")) << dump(frames);
        switch (i % 3) {
            case 0:
                EXPECT_TRUE(at(s[1], "hop" + kGone, "tail_call\\.c")) << dump(frames);
                EXPECT_TRUE(s[2].starts_with("start+0x")) << dump(frames);
                break;
            case 1:
                ASSERT_EQ(s.size(), 4u) << dump(frames);
                EXPECT_TRUE(at(s[1], "hop" + kGone, "tail_call\\.c")) << dump(frames);
                EXPECT_TRUE(at(s[2], "hop2" + kGone, "tail_call\\.c")) << dump(frames);
                EXPECT_TRUE(s[3].starts_with("start2+0x")) << dump(frames);
                break;
            default:
                EXPECT_EQ(s[1],
                          "[start3 called either; the frames from it to leaf were not kept "
                          "(tail calls)]")
                    << dump(frames);
                EXPECT_TRUE(s[2].starts_with("start3+0x")) << dump(frames);
        }
    }
}

}  // namespace

TEST(UserStackShapes, NestedInlinedCallsAreAFrameEach) {
    const std::string w = itest::workload("inline_nested_dwarf");
    expectNested(traceLeaf(w, "--ustack=dwarf", "3"), w);
    expectNested(traceLeaf(w, "--ustack=dwarf --backend ptrace", "3"), w);
}

TEST(UserStackShapes, TailCallsShowTheFramesTheyRemoved) {
    const std::string w = itest::workload("tail_call_dwarf");
    expectTailCalls(traceLeaf(w, "--ustack=dwarf", "2"), w);
    expectTailCalls(traceLeaf(w, "--ustack=dwarf --backend ptrace", "2"), w);
}

// The module's frame-pointer walk sees the same return addresses, so the same frames.
TEST(UserStackShapes, TailCallsWithFramePointers) {
    const std::string w = itest::workload("tail_call_fp_dwarf");
    expectTailCalls(traceLeaf(w, "--ustack", "2"), w);
}
