// count --by kstack|ustack --format svg against the real module: the flame graph's root
// holds every counted hit (the calls the workload made, as the folded lines count them),
// the known functions are frames stacked in call order, several probes each stand on a
// frame of their spec, and hits the aggregation could not hold are said on stderr.
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;

namespace {

// One frame of the SVG: its hover title's name and hits, and its height in the image.
struct Frame {
    std::string name;
    std::uint64_t hits = 0;
    double y = 0;
};

// The frames of a flame graph as flameGraphSvg writes them.
std::vector<Frame> svgFrames(const std::string& svg) {
    static const std::regex frame(
        R"re(<g class="frame"><title>(.*?) \(([0-9]+) hits?(, [0-9.]+%)?\)</title><rect x="[0-9.]+" y="([0-9.]+)")re");
    std::vector<Frame> out;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame);
         it != std::sregex_iterator(); ++it)
        out.push_back({(*it)[1], std::stoull((*it)[2]), std::stod((*it)[4])});
    return out;
}

std::uint64_t rootHits(const std::vector<Frame>& frames) {
    return !frames.empty() && frames[0].name == "all" ? frames[0].hits : 0;
}

// The sum of the counts of `probectl count ... --format folded` lines.
std::uint64_t foldedTotal(const std::string& text) {
    std::uint64_t total = 0;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string line = text.substr(at, nl - at);
        if (const auto sp = line.rfind(' '); sp != std::string::npos)
            total += std::stoull(line.substr(sp + 1));
    }
    return total;
}

// The frames whose name starts with `prefix`, their hits added up, and the lowest y.
std::pair<std::uint64_t, double> framesNamed(const std::vector<Frame>& frames,
                                             const std::string& prefix) {
    std::uint64_t hits = 0;
    double y = -1;
    for (const auto& f : frames)
        if (f.name.starts_with(prefix)) {
            hits += f.hits;
            y = std::max(y, f.y);
        }
    return {hits, y};
}

}  // namespace

// A kprobe's kernel stacks: every call in the root, as the folded lines of the same run
// count them, the probed function on top of the syscall entry.
TEST(FlameSvg, KernelStacksOfEveryCall) {
    const int n = itest::debugKernel() ? 20 : 500;
    const std::string run = " -- " + itest::workload("getppid_loop") + " " + std::to_string(n);
    Ran r =
        sh("probectl count kprobe:__x64_sys_getppid --by kstack --format svg -o /tmp/k.svg" + run);
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string svg = itest::readFile("/tmp/k.svg");
    ASSERT_TRUE(svg.starts_with("<?xml ")) << svg;
    ASSERT_TRUE(svg.ends_with("</svg>\n")) << svg;
    EXPECT_NE(svg.find(">kprobe:__x64_sys_getppid: " + std::to_string(n) + " hits</text>"),
              std::string::npos)
        << svg;
    const auto frames = svgFrames(svg);
    EXPECT_EQ(rootHits(frames), static_cast<std::uint64_t>(n)) << svg;
    const auto [entry_hits, entry_y] = framesNamed(frames, "do_syscall_64");
    const auto [probed_hits, probed_y] = framesNamed(frames, "__x64_sys_getppid");
    const auto [inner_hits, inner_y] = framesNamed(frames, "__do_sys_getppid");
    EXPECT_EQ(entry_hits, static_cast<std::uint64_t>(n)) << svg;
    EXPECT_EQ(probed_hits + inner_hits, static_cast<std::uint64_t>(n)) << svg;
    EXPECT_GT(entry_y, std::max(probed_y, inner_y)) << svg;  // the root is at the bottom

    Ran f =
        sh("probectl count kprobe:__x64_sys_getppid --by kstack --format folded -o "
           "/tmp/k.folded" +
           run);
    ASSERT_EQ(f.status, 0) << f.out;
    EXPECT_EQ(foldedTotal(itest::readFile("/tmp/k.folded")), rootHits(frames));
}

// A uprobe's user stacks: main, top, mid, leaf, each above its caller, each with every call.
TEST(FlameSvg, UserStacksInCallOrder) {
    const int n = itest::debugKernel() ? 20 : 300;
    const std::string w = itest::workload("ustack_fp");
    const std::string run = " -- " + w + " " + std::to_string(n);
    Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack --format svg -o /tmp/u.svg" + run);
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string svg = itest::readFile("/tmp/u.svg");
    const auto frames = svgFrames(svg);
    EXPECT_EQ(rootHits(frames), static_cast<std::uint64_t>(n)) << svg;
    double below = 1e9;
    const std::vector<std::string> chain = {"main+0x", "top+0x", "mid+0x", "leaf (" + w + ")"};
    for (const auto& fn : chain) {
        const auto [hits, y] = framesNamed(frames, fn);
        EXPECT_EQ(hits, static_cast<std::uint64_t>(n)) << fn << "\n" << svg;
        EXPECT_LT(y, below) << fn << "\n" << svg;
        below = y;
    }

    Ran f = sh("probectl count uprobe:" + w + ":leaf --by ustack --format folded -o /tmp/u.folded" +
               run);
    ASSERT_EQ(f.status, 0) << f.out;
    EXPECT_EQ(foldedTotal(itest::readFile("/tmp/u.folded")), rootHits(frames));
}

// Two probes: one graph, each probe's stacks on a frame named by its spec.
TEST(FlameSvg, EachProbeOnItsSpec) {
    const int n = itest::debugKernel() ? 10 : 100;
    Ran r =
        sh("probectl count kprobe:__x64_sys_getppid kretprobe:__x64_sys_getppid --by kstack "
           "--format svg -o /tmp/two.svg -- " +
           itest::workload("getppid_loop") + " " + std::to_string(n));
    ASSERT_EQ(r.status, 0) << r.out;
    const auto frames = svgFrames(itest::readFile("/tmp/two.svg"));
    EXPECT_EQ(rootHits(frames), 2u * n);
    std::map<std::string, std::uint64_t> specs;
    for (const auto& f : frames)
        if (f.name.find("probe:") != std::string::npos)
            specs[f.name] = f.hits;
    EXPECT_EQ(specs, (std::map<std::string, std::uint64_t>{{"kprobe:__x64_sys_getppid", n},
                                                           {"kretprobe:__x64_sys_getppid", n}}))
        << itest::readFile("/tmp/two.svg");
}

// 32 calls of 32 stacks into 8 keys: the graph has the counted hits, stderr the rest.
TEST(FlameSvg, UncountedHitsOnStderr) {
    const std::string w = itest::workload("ustack_fp");
    Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack --max-entries 8 --format svg " +
               "-o /tmp/full.svg -- " + w + " 5 tree");
    ASSERT_EQ(r.status, 0) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(([0-9]+) hits not counted \(map full)")))
        << r.out;
    const auto frames = svgFrames(itest::readFile("/tmp/full.svg"));
    EXPECT_GT(std::stoull(m[1]), 0u) << r.out;
    EXPECT_EQ(rootHits(frames) + std::stoull(m[1]), 32u) << r.out;
}

// Without -o there is nowhere to draw: a usage error naming it, before anything is traced.
TEST(FlameSvg, NeedsAnOutputFile) {
    Ran r = sh("probectl count kprobe:__x64_sys_getppid --by kstack --format svg -- true");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("give -o FILE"), std::string::npos) << r.out;
}
