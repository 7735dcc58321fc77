// User stacks against the real module: a workload whose call chain is known (main -> top ->
// mid -> leaf, ustack_target.c) shows it in records (trace --ustack, text and JSON, at a
// uprobe, a uretprobe and a kprobe in the same task) and as aggregation keys (count --by
// ustack, whose per-stack counts add up to the calls); built without frame pointers it
// neither crashes nor shows a frame that is not there. --ustack=dwarf (a snapshot of the
// registers and the stack top, unwound by CFI in probectl) shows the whole chain both ways.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "stack_text.hpp"
#include "uapi/probectl.h"

using itest::Ran;
using itest::sh;

namespace {

using itest::frameName;
using itest::jsonLines;
using itest::kChain;
using itest::workloadFrames;

// Every frame named after a workload function is one of the chain, the names in the
// chain's order and none twice: frames are missing at worst, never made up.
void expectNoInventedFrames(const std::vector<std::string>& names, const std::string& ctx) {
    std::size_t at = 0;
    for (const auto& n : names) {
        auto it = std::find(kChain.begin() + static_cast<std::ptrdiff_t>(at), kChain.end(), n);
        ASSERT_NE(it, kChain.end()) << n << " out of order or unknown in " << ctx;
        at = static_cast<std::size_t>(it - kChain.begin()) + 1;
    }
}

// `probectl count ... --format folded` lines: (frames root first, count).
std::vector<std::pair<std::string, std::uint64_t>> foldedLines(const std::string& text) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string line = text.substr(at, nl - at);
        const auto sp = line.rfind(' ');
        if (sp == std::string::npos || line.empty())
            continue;
        out.emplace_back(line.substr(0, sp), std::stoull(line.substr(sp + 1)));
    }
    return out;
}

// `probectl trace kprobe:__x64_sys_getppid OPTION` over 3 syscalls of workload `w`: each
// event's user stack as workload frames, with the event's JSON; the stack must start in
// libc (the syscall() wrapper).
std::vector<std::pair<std::vector<std::string>, std::string>> kprobeUserStacks(
    const std::string& w, const std::string& option, const std::string& file) {
    std::vector<std::pair<std::vector<std::string>, std::string>> out;
    Ran r = sh("probectl trace kprobe:__x64_sys_getppid " + option + " --format json -o " + file +
               " -- " + w + " 3 syscall");
    EXPECT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    EXPECT_EQ(events.size(), 3u) << itest::readFile(file);
    for (const auto& ev : events) {
        EXPECT_TRUE(ev["ustack"].is_array()) << ev.dump();
        if (!ev["ustack"].is_array())
            continue;
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        EXPECT_FALSE(frames.empty()) << ev.dump();
        if (!frames.empty()) {
            EXPECT_NE(frames[0].find("libc"), std::string::npos) << ev.dump();
        }
        out.emplace_back(workloadFrames(frames, w), ev.dump());
    }
    return out;
}

}  // namespace

// At leaf's entry: leaf, then its callers mid, top, main (mid is read from the stack
// pointer: leaf has not pushed its frame pointer yet), each in the workload's file.
TEST(UserStacks, TraceShowsTheCallChain) {
    const std::string w = itest::workload("ustack_fp");
    const std::string file = "/tmp/ustack.json";
    Ran r = sh("probectl trace uprobe:" + w + ":leaf --ustack --format json -o " + file + " -- " +
               w + " 5");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("stacks: "), std::string::npos) << r.out;
    const std::string text = itest::readFile(file);
    const auto events = jsonLines(text, "event");
    ASSERT_EQ(events.size(), 5u) << text;
    for (const auto& ev : events) {
        ASSERT_TRUE(ev.contains("ustack") && ev["ustack"].is_array()) << ev.dump();
        EXPECT_GT(ev["ustack_id"].get<std::uint32_t>(), 0u);
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_GE(frames.size(), 4u) << ev.dump();
        EXPECT_EQ(frames[0], "leaf (" + w + ")") << ev.dump();
        for (std::size_t i = 1; i < 4; i++) {
            EXPECT_EQ(frameName(frames[i]), kChain[i]) << ev.dump();
            EXPECT_TRUE(frames[i].ends_with("(" + w + ")")) << ev.dump();
        }
    }
}

// Text: the frames one per line, indented, under the event line; the same stack each time.
TEST(UserStacks, TextPrintsOneFramePerLine) {
    const std::string w = itest::workload("ustack_fp");
    Ran r = sh("probectl trace uprobe:" + w + ":leaf --ustack -o /tmp/ustack.txt -- " + w + " 3");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string text = itest::readFile("/tmp/ustack.txt");
    const std::string chain = "\n             leaf (" + w + ")\n             mid+0x";
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(chain, at)) != std::string::npos; at++)
        n++;
    EXPECT_EQ(n, 3u) << text;
    EXPECT_NE(text.find("\n             top+0x"), std::string::npos) << text;
    EXPECT_NE(text.find("\n             main+0x"), std::string::npos) << text;
}

// At leaf's return the innermost frame is in mid (where leaf returned to), then top, main;
// a depth of 2 keeps mid and top and marks the stack truncated.
TEST(UserStacks, ReturnProbeAndDepth) {
    const std::string w = itest::workload("ustack_fp");
    const std::string file = "/tmp/ustack-ret.json";
    Ran r = sh("probectl trace uretprobe:" + w + ":leaf --ustack --format json -o " + file +
               " -- " + w + " 2");
    ASSERT_EQ(r.status, 0) << r.out;
    auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), 2u) << itest::readFile(file);
    for (const auto& ev : events) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_GE(frames.size(), 3u) << ev.dump();
        EXPECT_EQ(frameName(frames[0]), "mid") << ev.dump();
        EXPECT_EQ(frameName(frames[1]), "top") << ev.dump();
        EXPECT_EQ(frameName(frames[2]), "main") << ev.dump();
    }

    Ran d = sh("probectl trace uprobe:" + w + ":leaf --ustack --stack-depth 2 --format json -o " +
               file + " -- " + w + " 2");
    ASSERT_EQ(d.status, 0) << d.out;
    EXPECT_NE(d.out.find("2 truncated"), std::string::npos) << d.out;
    events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), 2u);
    for (const auto& ev : events) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_EQ(frames.size(), 3u) << ev.dump();
        EXPECT_EQ(frameName(frames[0]), "leaf");
        EXPECT_EQ(frameName(frames[1]), "mid");
        EXPECT_EQ(frames[2], "...");
    }
}

// A kernel probe in the workload's syscall: the user stack from the registers saved at
// kernel entry (the C library's syscall() keeps no frame pointer, so leaf is not seen;
// its callers are). count --by kstack,ustack: the kernel frames above the user ones.
TEST(UserStacks, KprobeInTheTaskHasItsUserStack) {
    const std::string w = itest::workload("ustack_fp");
    const auto stacks = kprobeUserStacks(w, "--ustack", "/tmp/ustack-k.json");
    ASSERT_EQ(stacks.size(), 3u);
    for (const auto& [names, json] : stacks) {
        expectNoInventedFrames(names, json);
        EXPECT_EQ(names, (std::vector<std::string>{"mid", "top", "main"})) << json;
    }

    Ran c =
        sh("probectl count kprobe:__x64_sys_getppid --by kstack,ustack --format folded -o "
           "/tmp/ustack-k.folded -- " +
           w + " 7 syscall");
    ASSERT_EQ(c.status, 0) << c.out;
    const std::string folded = itest::readFile("/tmp/ustack-k.folded");
    std::uint64_t total = 0;
    for (const auto& [line, count] : foldedLines(folded)) {
        total += count;
        // Root first: the user frames (main ... mid, then the C library), then the kernel's.
        const auto main_at = line.find("main+0x");
        const auto mid_at = line.find(";mid+0x");
        const auto entry_at = line.find("do_syscall_64");
        ASSERT_NE(main_at, std::string::npos) << folded;
        EXPECT_LT(main_at, mid_at) << folded;
        EXPECT_LT(mid_at, entry_at) << folded;
        EXPECT_NE(entry_at, std::string::npos) << folded;
    }
    EXPECT_EQ(total, 7u) << folded;
}

// count --by ustack: every call counted once, all under the one chain; folded lines are
// root first, leaf last.
TEST(UserStacks, CountByStackAddsUpToTheCalls) {
    const int n = itest::debugKernel() ? 20 : 300;
    const std::string w = itest::workload("ustack_fp");
    const std::string run = " -- " + w + " " + std::to_string(n);
    Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack --format folded -o " +
               "/tmp/ustack.folded" + run);
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string folded = itest::readFile("/tmp/ustack.folded");
    const auto lines = foldedLines(folded);
    ASSERT_FALSE(lines.empty()) << folded;
    std::uint64_t total = 0;
    for (const auto& [line, count] : lines) {
        total += count;
        const std::string frames = ";" + line;  // every frame after a ';', the root too
        const auto main_at = frames.find(";main+0x");
        const auto top_at = frames.find(";top+0x");
        const auto mid_at = frames.find(";mid+0x");
        const auto leaf_at = frames.find(";leaf (" + w + ")");
        ASSERT_NE(main_at, std::string::npos) << folded;
        EXPECT_LT(main_at, top_at) << folded;
        EXPECT_LT(top_at, mid_at) << folded;
        EXPECT_LT(mid_at, leaf_at) << folded;
        EXPECT_EQ(leaf_at + std::string(";leaf (" + w + ")").size(), frames.size()) << folded;
    }
    EXPECT_EQ(total, static_cast<std::uint64_t>(n)) << folded;

    Ran j = sh("probectl count uprobe:" + w + ":leaf --by comm,ustack --format json -o " +
               "/tmp/ustack-count.json" + run);
    ASSERT_EQ(j.status, 0) << j.out;
    const auto tables = jsonLines(itest::readFile("/tmp/ustack-count.json"), "aggregation");
    ASSERT_EQ(tables.size(), 1u) << itest::readFile("/tmp/ustack-count.json");
    std::uint64_t sum = 0;
    for (const auto& e : tables[0]["entries"]) {
        sum += e["count"].get<std::uint64_t>();
        EXPECT_EQ(e["key"]["comm"], "ustack_fp") << e.dump();
        ASSERT_TRUE(e["ustack"].is_array()) << e.dump();
        const auto frames = e["ustack"].get<std::vector<std::string>>();
        EXPECT_EQ(workloadFrames(frames, w), kChain) << e.dump();
    }
    EXPECT_EQ(sum, static_cast<std::uint64_t>(n));

    Ran t = sh("probectl count uprobe:" + w + ":leaf --by ustack" + run);
    ASSERT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("\n    leaf (" + w + ")\n    mid+0x"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("stacks: "), std::string::npos) << t.out;
}

// 2^11 calls, each with a stack of its own, into a map of PROBECTL_STACK_MAP_ENTRIES: the
// stacks the map could not keep are counted, shown under "[stack not kept]", and the
// counts still add up to the calls.
TEST(UserStacks, AFullStackMapIsCountedAndShown) {
    constexpr std::uint64_t kCalls = 1u << 11;
    static_assert(kCalls > PROBECTL_STACK_MAP_ENTRIES);
    const std::string w = itest::workload("ustack_fp");
    // --max-entries: room in the aggregation for every stack id and the "not kept" key.
    Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack --max-entries 4096 " +
               "--format folded -o /tmp/ustack-full.folded -- " + w + " 11 tree");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string folded = itest::readFile("/tmp/ustack-full.folded");
    std::uint64_t total = 0, not_kept = 0, kept_lines = 0;
    for (const auto& [line, count] : foldedLines(folded)) {
        total += count;
        if (line == "[stack not kept]") {
            not_kept += count;
        } else {
            kept_lines++;
            EXPECT_EQ(count, 1u) << line;  // every path once
        }
    }
    EXPECT_EQ(total, kCalls) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m, std::regex(R"(stacks: ([0-9]+) kept, 0 truncated .*, ([0-9]+) lost)")))
        << r.out;
    const std::uint64_t kept = std::stoull(m[1]), lost = std::stoull(m[2]);
    EXPECT_GT(lost, 0u) << r.out;
    EXPECT_LE(kept, static_cast<std::uint64_t>(PROBECTL_STACK_MAP_ENTRIES)) << r.out;
    EXPECT_EQ(kept + lost, kCalls) << r.out;
    EXPECT_EQ(not_kept, lost) << r.out;
    EXPECT_EQ(kept_lines, kept) << r.out;

    // At the default --max-entries (1024) the kept stacks and the "not kept" key are one key
    // too many for the aggregation: that hit is not counted, and stderr says so.
    Ran d = sh("probectl count uprobe:" + w + ":leaf --by ustack --format folded -o " +
               "/tmp/ustack-full.folded -- " + w + " 11 tree");
    ASSERT_EQ(d.status, 0) << d.out;
    std::uint64_t counted = 0;
    for (const auto& [line, count] : foldedLines(itest::readFile("/tmp/ustack-full.folded")))
        counted += count;
    std::smatch o;
    ASSERT_TRUE(std::regex_search(d.out, o, std::regex(R"(([0-9]+) hits not counted \(map full)")))
        << d.out;
    EXPECT_GT(std::stoull(o[1]), 0u) << d.out;
    EXPECT_EQ(counted + std::stoull(o[1]), kCalls) << d.out;
}

// Without frame pointers: every call is still recorded and counted, leaf comes first, and
// any frame named after a workload function is a real caller in the real order.
TEST(UserStacks, NoFramePointersNoInventedFrames) {
    const int n = itest::debugKernel() ? 10 : 100;
    const std::string w = itest::workload("ustack_nofp");
    const std::string file = "/tmp/ustack-nofp.json";
    Ran r = sh("probectl trace uprobe:" + w + ":leaf --ustack --format json -o " + file + " -- " +
               w + " " + std::to_string(n));
    ASSERT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), static_cast<std::size_t>(n)) << r.out;
    for (const auto& ev : events) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_FALSE(frames.empty()) << ev.dump();
        EXPECT_EQ(frames[0], "leaf (" + w + ")") << ev.dump();
        expectNoInventedFrames(workloadFrames(frames, w), ev.dump());
    }
    Ran c = sh("probectl count uprobe:" + w + ":leaf --by ustack --format folded -o " +
               "/tmp/ustack-nofp.folded -- " + w + " " + std::to_string(n));
    ASSERT_EQ(c.status, 0) << c.out;
    std::uint64_t total = 0;
    for (const auto& [frames, count] : foldedLines(itest::readFile("/tmp/ustack-nofp.folded")))
        total += count;
    EXPECT_EQ(total, static_cast<std::uint64_t>(n));
}

// Refusals: an unknown unwinder; a depth or copy out of range, or a copy leaving too
// little room for the fetched values; the ptrace backend.
TEST(UserStacks, Refusals) {
    const std::string spec = "uprobe:" + itest::workload("ustack_fp") + ":leaf";
    Ran d = sh("probectl trace " + spec + " --ustack=lbr -- true");
    EXPECT_EQ(d.status, 2) << d.out;
    EXPECT_NE(d.out.find("fp (frame pointers) and dwarf"), std::string::npos) << d.out;
    EXPECT_EQ(sh("probectl trace " + spec + " --ustack=dwarf --stack-size 4096 -- true").status, 2);
    EXPECT_EQ(sh("probectl trace " + spec + " --ustack --stack-depth 128 -- true").status, 2);
    // A copy that leaves too little room for the fetched values says what to shrink.
    Ran big = sh("probectl trace '" + spec +
                 " a=+0($arg1):string b=+0($arg2):string c=+0($arg3):string' --ustack=dwarf "
                 "--stack-size 3000 -- true");
    EXPECT_EQ(big.status, 1) << big.out;
    EXPECT_NE(big.out.find("the user stack copy takes 3136 bytes of it (136 of registers and "
                           "--stack-size 3000)"),
              std::string::npos)
        << big.out;
    EXPECT_EQ(sh("probectl trace " + spec + " --ustack --backend ptrace -- true").status, 2);
    EXPECT_EQ(sh("probectl count " + spec + " --by ustack --backend ptrace -- true").status, 2);
}

// --ustack=dwarf: the whole chain with and without frame pointers, at leaf's entry (JSON)
// and at its return (text), each frame in the workload; what follows main is the C
// library's start code, and nothing is ever invented.
TEST(UserStacks, DwarfShowsTheChainWithAndWithoutFramePointers) {
    for (const char* name : {"ustack_fp", "ustack_nofp"}) {
        SCOPED_TRACE(name);
        const std::string w = itest::workload(name);
        const std::string file = "/tmp/ustack-dwarf.json";
        Ran r = sh("probectl trace uprobe:" + w + ":leaf --ustack=dwarf --format json -o " + file +
                   " -- " + w + " 5");
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        const auto events = jsonLines(text, "event");
        ASSERT_EQ(events.size(), 5u) << text;
        for (const auto& ev : events) {
            ASSERT_TRUE(ev.contains("ustack") && ev["ustack"].is_array()) << ev.dump();
            EXPECT_FALSE(ev.contains("ustack_id")) << ev.dump();
            const auto frames = ev["ustack"].get<std::vector<std::string>>();
            ASSERT_GE(frames.size(), 4u) << ev.dump();
            EXPECT_EQ(frames[0], "leaf (" + w + ")") << ev.dump();
            for (std::size_t i = 1; i < 4; i++) {
                EXPECT_EQ(frameName(frames[i]), kChain[i]) << ev.dump();
                EXPECT_TRUE(frames[i].ends_with("(" + w + ")")) << ev.dump();
            }
            // The C library's start code, then the workload's _start end the stack.
            auto names = workloadFrames(frames, w);
            std::erase(names, "_start");
            expectNoInventedFrames(names, ev.dump());
            for (std::size_t i = 4; i + 1 < frames.size(); i++)
                EXPECT_FALSE(frames[i].starts_with("[unwind stopped")) << ev.dump();
        }

        Ran t = sh("probectl trace uretprobe:" + w +
                   ":leaf --ustack=dwarf -o /tmp/ustack-dwarf.txt -- " + w + " 2");
        ASSERT_EQ(t.status, 0) << t.out;
        const std::string out = itest::readFile("/tmp/ustack-dwarf.txt");
        std::size_t n = 0;
        for (std::size_t at = 0; (at = out.find("\n             mid+0x", at)) != std::string::npos;
             at++) {
            const std::string top = "\n             top+0x";
            EXPECT_EQ(out.compare(out.find('\n', at + 1), top.size(), top), 0) << out;
            n++;
        }
        EXPECT_EQ(n, 2u) << out;
        EXPECT_NE(out.find("\n             main+0x"), std::string::npos) << out;
    }
}

// A pending uretprobe puts the uprobes trampoline where its function's return address was:
// the module gives the real one back from the kernel's return instances, so leaf's callers
// are all there under uretprobes on mid and main, by frame pointers and by DWARF alike
// (the trampoline, "[uprobes]", once stood in for top and for main's caller).
TEST(UserStacks, PendingUretprobesHideNoCaller) {
    for (const auto& [name, option] : {std::pair<std::string, std::string>{"ustack_fp", "--ustack"},
                                       {"ustack_nofp", "--ustack=dwarf"}}) {
        SCOPED_TRACE(option);
        const std::string w = itest::workload(name);
        const std::string file = "/tmp/ustack-uret.json";
        Ran r = sh("probectl trace uprobe:" + w + ":leaf uretprobe:" + w + ":mid uretprobe:" + w +
                   ":main " + option + " --format json -o " + file + " -- " + w + " 3");
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        const auto events = jsonLines(text, "event");
        ASSERT_EQ(events.size(), 7u) << text;  // 3 leaf, 3 mid returns, main's return
        std::size_t leaves = 0;
        for (const auto& ev : events) {
            const auto frames = ev["ustack"].get<std::vector<std::string>>();
            for (const auto& f : frames)
                EXPECT_EQ(f.find("[uprobes]"), std::string::npos) << ev.dump();
            if (frames.empty() || frames[0] != "leaf (" + w + ")")
                continue;
            leaves++;
            ASSERT_GE(frames.size(), 5u) << ev.dump();
            for (std::size_t i = 1; i < 4; i++)
                EXPECT_EQ(frameName(frames[i]), kChain[i]) << ev.dump();
            EXPECT_NE(frames[4].find("libc"), std::string::npos) << ev.dump();
        }
        EXPECT_EQ(leaves, 3u) << text;
    }
    const std::string w = itest::workload("ustack_fp");
    Ran c = sh("probectl count uprobe:" + w + ":leaf uretprobe:" + w +
               ":mid --by ustack --format folded -o /tmp/ustack-uret.folded -- " + w + " 4");
    ASSERT_EQ(c.status, 0) << c.out;
    const std::string folded = itest::readFile("/tmp/ustack-uret.folded");
    bool leaf = false;
    for (const auto& [stack, n] : foldedLines(folded)) {
        EXPECT_EQ(stack.find("[uprobes]"), std::string::npos) << folded;
        if (stack.ends_with(";leaf (" + w + ")")) {
            leaf = true;
            EXPECT_EQ(n, 4u) << folded;
            EXPECT_NE(stack.find(";main+"), std::string::npos) << folded;
            EXPECT_NE(stack.find(";top+"), std::string::npos) << folded;
        }
    }
    EXPECT_TRUE(leaf) << folded;
}

// The ptrace backend copies the registers and stack as the module does, for the same
// unwinder: the same frames for the same hits, at entries and at returns.
TEST(UserStacks, DwarfBothBackendsPrintTheSameStacks) {
    const std::string w = itest::workload("ustack_nofp");
    for (const std::string kind : {"uprobe", "uretprobe"}) {
        std::vector<std::vector<std::string>> by_backend;
        for (const std::string backend : {"kernel", "ptrace"}) {
            const std::string file = "/tmp/ustack-" + backend + ".json";
            Ran r = sh("probectl trace " + kind + ":" + w + ":leaf --ustack=dwarf --backend " +
                       backend + " --format json -o " + file + " -- " + w + " 3");
            ASSERT_EQ(r.status, 0) << r.out;
            const std::string text = itest::readFile(file);
            const auto events = jsonLines(text, "event");
            ASSERT_EQ(events.size(), 3u) << text;
            // The workload's own frames: the C library's are at addresses ASLR moves.
            std::vector<std::string> frames;
            for (const auto& ev : events)
                for (const auto& f : ev["ustack"].get<std::vector<std::string>>())
                    if (f.ends_with("(" + w + ")"))
                        frames.push_back(f);
            ASSERT_GE(frames.size(), 12u) << text;  // leaf or mid, ..., main, _start: each hit
            by_backend.push_back(std::move(frames));
        }
        EXPECT_EQ(by_backend[0], by_backend[1]) << kind;
    }
}

// With DWARF (inline_dwarf keeps its DWARF in the VM image) each frame says its source
// line, and a call inlined where the probe hit is a frame of its own, as DWARF says.
TEST(UserStacks, DwarfFramesHaveSourceLinesAndInlinedCalls) {
    const std::string w = itest::workload("inline_dwarf");
    const std::string file = "/tmp/ustack-lines.json";
    Ran r = sh("probectl trace uprobe:" + w + ":helper --ustack=dwarf --format json -o " + file +
               " -- " + w + " 3 1");  // 1 s more: its maps are read at its first event
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string text = itest::readFile(file);
    const auto events = jsonLines(text, "event");
    ASSERT_EQ(events.size(), 8u) << text;  // 2N+2 calls of helper
    std::size_t inlined = 0;
    for (const auto& ev : events) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_GE(frames.size(), 2u) << ev.dump();
        // " at FILE:LINE", FILE as DWARF names it (absolute when outside the build folder).
        const std::regex at(R"( at (.*/)?inline_target\.c:[0-9]+$)");
        EXPECT_TRUE(std::regex_search(frames[0], at)) << ev.dump();
        bool main_line = false;
        for (std::size_t i = 0; i < frames.size(); i++) {
            main_line =
                main_line || (frames[i].starts_with("main+") && std::regex_search(frames[i], at));
            if (frames[i].starts_with("helper (inlined) at ") && std::regex_search(frames[i], at)) {
                inlined++;
                ASSERT_LT(i + 1, frames.size()) << ev.dump();
                EXPECT_TRUE(frames[i + 1].starts_with("twice") ||
                            frames[i + 1].starts_with("thrice"))
                    << ev.dump();
            }
        }
        EXPECT_TRUE(main_line) << ev.dump();
    }
    EXPECT_GE(inlined, 1u) << text;
}

// A copy too small for the stack: the unwind stops where the copy ends and says so; the
// frames before are right.
TEST(UserStacks, DwarfStopsWhereTheSnapshotEnds) {
    const std::string w = itest::workload("ustack_nofp");
    const std::string file = "/tmp/ustack-dwarf-small.json";
    Ran r = sh("probectl trace uprobe:" + w +
               ":leaf --ustack=dwarf --stack-size 8 --format json -o " + file + " -- " + w + " 2");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), 2u) << itest::readFile(file);
    for (const auto& ev : events) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        ASSERT_GE(frames.size(), 2u) << ev.dump();
        EXPECT_EQ(frames[0], "leaf (" + w + ")") << ev.dump();
        EXPECT_EQ(frames.back(), "[unwind stopped: the stack snapshot ends after 8 bytes]")
            << ev.dump();
        expectNoInventedFrames(workloadFrames(frames, w), ev.dump());
    }
    // The end of the trace counts them.
    EXPECT_NE(r.out.find("user stacks (dwarf): 2 unwound, 2 stopped early, 2 filled the 8-byte "
                         "copy, 2 stopped at its end (--stack-size can take more)"),
              std::string::npos)
        << r.out;
}

// At a kprobe in the workload's getppid syscall, from the registers the task entered the
// kernel with: the C library's syscall(), then every workload frame of the nofp build,
// leaf included (the frame-pointer walk skips it: syscall() keeps no frame pointer).
TEST(UserStacks, DwarfAtAKprobeInTheTask) {
    const std::string w = itest::workload("ustack_nofp");
    auto stacks = kprobeUserStacks(w, "--ustack=dwarf", "/tmp/ustack-dwarf-k.json");
    ASSERT_EQ(stacks.size(), 3u);
    for (auto& [names, json] : stacks) {
        std::erase(names, "_start");
        EXPECT_EQ(names, kChain) << json;
    }
}
