// User stacks of a process that execs: its stack before the exec and the one after it are
// addresses in two address spaces under one tgid. Both hits' records are held in the kernel
// until the process is gone, so both address spaces are kept (mm_pin.c) when probectl first
// asks for maps; each stack must be named with its own (the one before the exec with
// exec_first's functions, the one after with exec_second's), never both with the newest.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "stack_text.hpp"

using itest::Ran;
using itest::sh;

namespace {

// Records wait in the kernel this long unless a quarter of the ring fills.
constexpr const char* kExecDrainMs = "60000";

// The names of `wanted` among the frames in `path`, innermost first (DWARF also reaches
// _start and libc's frames, frame pointers stop at main).
std::vector<std::string> execChain(const std::vector<std::string>& frames, const std::string& path,
                                   const std::vector<std::string>& wanted) {
    std::vector<std::string> out;
    for (const auto& name : itest::workloadFrames(frames, path))
        if (std::find(wanted.begin(), wanted.end(), name) != wanted.end())
            out.push_back(name);
    return out;
}

const std::vector<std::string> kFirst = {"first_leaf", "first_top", "main"};
const std::vector<std::string> kSecond = {"second_leaf", "second_top", "main"};

}  // namespace

// trace --ustack and --ustack=dwarf: the child's event before its exec names exec_first's
// frames, the one after names exec_second's.
TEST(ExecStacks, TraceNamesEachStackWithItsOwnImage) {
    itest::ModuleParam slow("drain_interval_ms", kExecDrainMs);
    ASSERT_TRUE(slow.ok());
    const std::string first = itest::workload("exec_first");
    const std::string second = itest::workload("exec_second");
    for (const std::string mode : {"--ustack", "--ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string file = "/tmp/exec-stacks.json";
        Ran r = sh("probectl trace -f uprobe:" + first + ":first_leaf uprobe:" + second +
                   ":second_leaf " + mode + " --format json -o " + file + " -- " + first + " " +
                   second);
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        const auto evs = itest::jsonLines(text, "event");
        ASSERT_EQ(evs.size(), 2u) << text << r.out;
        int seen_first = 0, seen_second = 0;
        for (const auto& ev : evs) {
            ASSERT_TRUE(ev["ustack"].is_array()) << ev.dump();
            const auto frames = ev["ustack"].get<std::vector<std::string>>();
            const std::string probe = ev["probe"];
            if (probe.find(":first_leaf") != std::string::npos) {
                seen_first++;
                EXPECT_EQ(execChain(frames, first, kFirst), kFirst) << ev.dump();
            } else {
                seen_second++;
                EXPECT_EQ(execChain(frames, second, kSecond), kSecond) << ev.dump();
            }
            EXPECT_EQ(std::count_if(frames.begin(), frames.end(),
                                    [](const std::string& f) { return f.ends_with("[unknown]"); }),
                      0)
                << ev.dump();
            EXPECT_NE(frames.back().rfind("[unwind stopped: ", 0), 0u) << ev.dump();
        }
        EXPECT_EQ(seen_first, 1) << text;
        EXPECT_EQ(seen_second, 1) << text;
    }
}

// count --by ustack, both modes: the stacks are read out after the process is gone, each
// with the address space of its own hit.
TEST(ExecStacks, CountByUstackNamesEachStackWithItsOwnImage) {
    itest::ModuleParam slow("drain_interval_ms", kExecDrainMs);
    ASSERT_TRUE(slow.ok());
    const std::string first = itest::workload("exec_first");
    const std::string second = itest::workload("exec_second");
    for (const std::string mode : {"", " --ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string file = "/tmp/exec-stacks.folded";
        Ran r = sh("probectl count -f uprobe:" + first + ":first_leaf uprobe:" + second +
                   ":second_leaf --by ustack" + mode + " --format folded -o " + file + " -- " +
                   first + " " + second);
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        int seen_first = 0, seen_second = 0;
        for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
            const std::string line = text.substr(at, nl - at);
            // root first, then the count
            std::vector<std::string> frames;
            const std::size_t end = line.rfind(' ');
            for (std::size_t b = 0, e; b < end; b = e + 1) {
                e = std::min(line.find(';', b), end);
                frames.insert(frames.begin(), line.substr(b, e - b));
            }
            if (line.find("first_leaf") != std::string::npos) {
                seen_first++;
                EXPECT_EQ(execChain(frames, first, kFirst), kFirst) << text;
            }
            if (line.find("second_leaf") != std::string::npos) {
                seen_second++;
                EXPECT_EQ(execChain(frames, second, kSecond), kSecond) << text;
            }
        }
        EXPECT_EQ(seen_first, 1) << text << r.out;
        EXPECT_EQ(seen_second, 1) << text << r.out;
    }
}
