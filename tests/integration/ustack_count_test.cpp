// count --by ustack --ustack=dwarf against the real module and the ptrace backend: every
// hit of the no-frame-pointer workload (main -> top -> mid -> leaf, ustack_target.c) is
// recorded with its stack snapshot, unwound by CFI in probectl and counted per stack: one
// stack, the whole chain, counted once per call, the same on both backends; the records the
// ring could not take are the hits said not counted.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "stack_text.hpp"

using itest::Ran;
using itest::sh;

namespace {

using itest::frameName;

const std::vector<std::string> kChainRootFirst = {"main", "top", "mid", "leaf"};

// Calls of leaf whose records all fit in the default ring (256 KiB per CPU) before a drain:
// a 3 KiB snapshot takes a ring page of its own.
constexpr int kCalls = 40;

// The frames of the workload `w` (root first stays root first), the C library's left out:
// their addresses move with ASLR from run to run.
std::vector<std::string> workloadFrameTexts(const std::vector<std::string>& frames,
                                            const std::string& w) {
    std::vector<std::string> out;
    for (const auto& f : frames)
        if (f.ends_with("(" + w + ")"))
            out.push_back(f);
    return out;
}

// The chain's functions among `frames`, in their order.
std::vector<std::string> chainNames(const std::vector<std::string>& frames, const std::string& w) {
    std::vector<std::string> out;
    for (const auto& f : workloadFrameTexts(frames, w))
        if (std::find(kChainRootFirst.begin(), kChainRootFirst.end(), frameName(f)) !=
            kChainRootFirst.end())
            out.push_back(frameName(f));
    return out;
}

struct FoldedLine {
    std::vector<std::string> frames;  // root first
    std::uint64_t count = 0;
};

// `probectl count ... --format folded` output, one FoldedLine per line.
std::vector<FoldedLine> folded(const std::string& text) {
    std::vector<FoldedLine> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string line = text.substr(at, nl - at);
        const auto sp = line.rfind(' ');
        if (sp == std::string::npos)
            continue;
        FoldedLine f;
        for (std::size_t b = 0; b <= sp;) {
            const std::size_t e = std::min(line.find(';', b), sp);
            f.frames.push_back(line.substr(b, e - b));
            b = e + 1;
        }
        f.count = std::stoull(line.substr(sp + 1));
        out.push_back(std::move(f));
    }
    return out;
}

// The first JSON object of a file of JSON lines (null when there is none).
nlohmann::json firstJson(const std::string& text) {
    return nlohmann::json::parse(text.substr(0, text.find('\n')), nullptr, false);
}

constexpr const char* kRingKb = "/sys/module/probectl/parameters/buffer_kb";

// Sets buffer_kb for the sessions created while it lives, then puts the old value back.
class RingKb {
  public:
    explicit RingKb(unsigned kb) : old_(itest::readFile(kRingKb)) { write(std::to_string(kb)); }
    ~RingKb() { write(old_); }
    RingKb(const RingKb&) = delete;
    RingKb& operator=(const RingKb&) = delete;

  private:
    static void write(const std::string& v) { std::ofstream(kRingKb) << v << std::flush; }
    std::string old_;
};

}  // namespace

// Folded: one stack, main;top;mid;leaf with leaf innermost, counted once per call, on each
// backend, the workload's frames the same on both; the end line says every snapshot was
// unwound to the outermost frame.
TEST(UstackCount, OneStackOfTheWholeChainOnBothBackends) {
    const std::string w = itest::workload("ustack_nofp");
    std::vector<std::vector<std::string>> by_backend;
    for (const std::string backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        const std::string file = "/tmp/ustack-count-" + backend + ".folded";
        Ran r =
            sh("probectl count uprobe:" + w + ":leaf --by ustack --ustack=dwarf --backend " +
               backend + " --format folded -o " + file + " -- " + w + " " + std::to_string(kCalls));
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        const auto lines = folded(text);
        ASSERT_EQ(lines.size(), 1u) << text << r.out;
        EXPECT_EQ(lines[0].count, static_cast<std::uint64_t>(kCalls)) << text;
        EXPECT_EQ(chainNames(lines[0].frames, w), kChainRootFirst) << text;
        EXPECT_EQ(lines[0].frames.back(), "leaf (" + w + ")") << text;
        // How much of the copy the stack fills depends on the environment above main.
        EXPECT_NE(
            r.out.find(fmt::format("user stacks (dwarf): {} unwound, 0 stopped early, ", kCalls)),
            std::string::npos)
            << r.out;
        EXPECT_EQ(r.out.find("not counted"), std::string::npos) << r.out;
        by_backend.push_back(workloadFrameTexts(lines[0].frames, w));
    }
    EXPECT_EQ(by_backend[0], by_backend[1]);
}

// JSON: the one entry's key, frames (innermost first) and count, and the counters with
// nothing dropped; text: the counters line, the frames over the count.
TEST(UstackCount, JsonAndTextShowTheStackAndItsCount) {
    const std::string w = itest::workload("ustack_nofp");
    const std::string run = " -- " + w + " " + std::to_string(kCalls);
    const std::string file = "/tmp/ustack-count-dwarf.json";
    Ran j = sh("probectl count uprobe:" + w +
               ":leaf --by comm,ustack --ustack=dwarf --format json -o " + file + run);
    ASSERT_EQ(j.status, 0) << j.out;
    const std::string text = itest::readFile(file);
    const auto t = firstJson(text);
    ASSERT_TRUE(t.is_object()) << text;
    EXPECT_EQ(t["hits"], kCalls) << text;
    EXPECT_EQ(t["dropped"], 0) << text;
    ASSERT_EQ(t["entries"].size(), 1u) << text;
    const auto& e = t["entries"][0];
    EXPECT_EQ(e["count"], kCalls) << text;
    EXPECT_EQ(e["key"]["comm"], "ustack_nofp") << text;
    ASSERT_TRUE(e["ustack"].is_array()) << text;
    auto frames = e["ustack"].get<std::vector<std::string>>();
    ASSERT_FALSE(frames.empty()) << text;
    EXPECT_EQ(frames.front(), "leaf (" + w + ")") << text;
    std::reverse(frames.begin(), frames.end());
    EXPECT_EQ(chainNames(frames, w), kChainRootFirst) << text;

    Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack --ustack=dwarf" + run);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(
        r.out.find(fmt::format("hits {}, filtered 0, rejected 0, nmissed 0, dropped 0\n", kCalls)),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\n    leaf (" + w + ")\n    mid+0x"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(fmt::format("\n  {}\n", kCalls)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(fmt::format("user stacks (dwarf): {} unwound", kCalls)), std::string::npos)
        << r.out;
}

// A ring of two pages cannot take a burst of snapshots of a page each: every hit is either
// in the stack's count or among the records dropped, and the drop is said. The drain is
// never woken early (wake_percent 100) and polls every 20 s, so drops are certain:
// at the default wake-up it can keep up with this burst, and then nothing is dropped.
TEST(UstackCount, DroppedRecordsAreTheHitsNotCounted) {
    const std::string w = itest::workload("ustack_nofp");
    const int calls = 200;
    RingKb small(8);
    itest::ModuleParam wake("wake_percent", "100");
    itest::ModuleParam poll("drain_interval_ms", "20000");
    ASSERT_TRUE(wake.ok() && poll.ok());
    const std::string file = "/tmp/ustack-count-drops.json";
    Ran r = sh("probectl count uprobe:" + w +
               ":leaf --by ustack --ustack=dwarf --stack-size 3584 --format json -o " + file +
               " -- " + w + " " + std::to_string(calls));
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string text = itest::readFile(file);
    const auto t = firstJson(text);
    ASSERT_TRUE(t.is_object()) << text;
    std::uint64_t counted = 0;
    for (const auto& e : t["entries"])
        counted += e["count"].get<std::uint64_t>();
    const auto dropped = t["dropped"].get<std::uint64_t>();
    EXPECT_EQ(t["hits"], calls) << text;
    EXPECT_EQ(counted + dropped, static_cast<std::uint64_t>(calls)) << text;
    EXPECT_GT(dropped, 0u) << text;
    // what the ring held at the end is flushed and counted
    EXPECT_GT(counted, 0u) << text;
    // JSON has the count in "dropped"; the warning on stderr says it too.
    EXPECT_NE(r.out.find(fmt::format("warning: events were lost: {} dropped", dropped)),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(fmt::format("user stacks (dwarf): {} unwound", counted)),
              std::string::npos)
        << r.out;

    Ran f = sh("probectl count uprobe:" + w +
               ":leaf --by ustack --ustack=dwarf --stack-size 3584 --format folded -o "
               "/tmp/ustack-count-drops.folded -- " +
               w + " " + std::to_string(calls));
    ASSERT_EQ(f.status, 0) << f.out;
    EXPECT_NE(f.out.find("hits not counted (their records were dropped: ring full or delivery "
                         "failed)"),
              std::string::npos)
        << f.out;
}

// What --ustack=dwarf does not go with is refused as a usage error (exit 2), saying why.
TEST(UstackCount, Refusals) {
    const std::string w = itest::workload("ustack_nofp");
    const std::string leaf = "uprobe:" + w + ":leaf";
    const std::string run = " -- " + w + " 1";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"count " + leaf + " --ustack=dwarf" + run, "--ustack goes with --by ustack"},
        {"count --from /tmp/none.prb --by ustack --ustack=dwarf", "not with --from"},
        {"count kprobe:vfs_read --by kstack,ustack --ustack=dwarf" + run, "not with --by kstack"},
        {"count syscall:getppid --by ustack --ustack=dwarf" + run, "syscall: specs"},
        {"count " + leaf + " --by ustack --stack-size 512" + run,
         "--stack-size goes with --ustack=dwarf"},
        {"count " + leaf + " --by ustack --ustack=dwarf --stack-size 0" + run,
         "--stack-size must be"},
        {"count " + leaf + " --by ustack --backend ptrace" + run,
         "with --backend ptrace add --ustack=dwarf"},
        // Refused once the probes are known: events carry no uid to key by.
        {"count " + leaf + " --by ustack,uid --ustack=dwarf" + run, "key uid"},
        {"hist '" + leaf + " n=$arg1' n --by ustack --ustack=dwarf" + run,
         "unrecognised option '--ustack=dwarf'"},
    };
    for (const auto& [args, says] : cases) {
        Ran r = sh("probectl " + args);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
        EXPECT_NE(r.out.find(says), std::string::npos) << args << "\n" << r.out;
    }
}
