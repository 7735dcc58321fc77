// Flame graphs as SVG: well-formed XML (xmllint), one frame per merged name, widths and
// positions from the hits, siblings in name order, escaped names, tiny frames left out but
// counted in their callers, labels cut to fit, and the stacks of count's rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "probectl/flame_svg.hpp"
#include "text_proto.hpp"

using namespace probectl;

namespace {

// One <g class="frame"> of the output, its numbers and texts read back.
struct Frame {
    std::string title;  // unescaped
    double x = 0, y = 0, width = 0;
    std::string fill;
    std::string text;  // the label, unescaped; empty when none
    int rects = 0;
};

std::string unescape(std::string s) {
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}})
        for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
            s.replace(at, from.size(), to);
    return s;
}

std::vector<Frame> frames(const std::string& svg) {
    static const std::regex group(R"(<g class="frame">(.*?)</g>)");
    static const std::regex title(R"(<title>([^<]*)</title>)");
    static const std::regex rect(
        R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="[0-9.]+" rx="2" fill="(#[0-9a-f]{6})"/>)re");
    static const std::regex text(R"(<text [^>]*>([^<]*)</text>)");
    static const std::regex anyRect("<rect ");
    std::vector<Frame> out;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), group);
         it != std::sregex_iterator(); ++it) {
        const std::string body = (*it)[1];
        Frame f;
        std::smatch m;
        if (std::regex_search(body, m, title))
            f.title = unescape(m[1]);
        if (std::regex_search(body, m, rect)) {
            f.x = std::stod(m[1]);
            f.y = std::stod(m[2]);
            f.width = std::stod(m[3]);
            f.fill = m[4];
        }
        if (std::regex_search(body, m, text))
            f.text = unescape(m[1]);
        f.rects = static_cast<int>(std::distance(
            std::sregex_iterator(body.begin(), body.end(), anyRect), std::sregex_iterator()));
        out.push_back(f);
    }
    return out;
}

// The frames by the name their title starts with.
std::map<std::string, Frame> byName(const std::vector<Frame>& fs) {
    std::map<std::string, Frame> out;
    for (const auto& f : fs)
        out[f.title.substr(0, f.title.rfind(" ("))] = f;
    return out;
}

int occurrences(const std::string& s, const std::string& what) {
    int n = 0;
    for (std::size_t at = 0; (at = s.find(what, at)) != std::string::npos; at += what.size())
        n++;
    return n;
}

void expectWellFormed(const std::string& svg, const std::string& name) {
    ASSERT_STRNE(PROBECTL_XMLLINT, "") << "xmllint not found: make deps installs libxml2-utils";
    const std::string path = testing::TempDir() + name;
    std::ofstream(path, std::ios::binary) << svg;
    int status = -1;
    const std::string err =
        prototest::run(std::string(PROBECTL_XMLLINT) + " --noout " + path + " 2>&1", &status);
    EXPECT_EQ(status, 0) << err << svg;
    EXPECT_EQ(err, "") << svg;
}

FlameStack stack(std::vector<std::string> frames, std::uint64_t count) {
    FlameStack s;
    s.frames = std::move(frames);
    s.count = count;
    return s;
}

const FlameGraphOptions kOptions;  // 1200 wide, 10 of margin: frames span 1180
const double kPlot = kOptions.width - 2 * kOptions.margin;

}  // namespace

// Same-named frames under one parent merge (the two main;a;x stacks, every main), siblings
// go left to right by name whatever the input order, and every frame is hits/total wide.
TEST(FlameSvg, OneFramePerMergedNameWidthsFromTheHits) {
    const std::vector<FlameStack> stacks = {stack({"main", "b"}, 5), stack({"main", "a", "y"}, 2),
                                            stack({"main", "a", "x"}, 3),
                                            stack({"main", "a", "x"}, 1)};
    const std::string svg = flameGraphSvg(stacks, kOptions);
    expectWellFormed(svg, "merged.svg");
    const auto fs = frames(svg);
    ASSERT_EQ(fs.size(), 6u) << svg;                  // all, main, a, b, x, y
    EXPECT_EQ(occurrences(svg, "<rect "), 7) << svg;  // and the background
    for (const auto& f : fs)
        EXPECT_EQ(f.rects, 1) << f.title;
    const auto by = byName(fs);
    const double total = 11, unit = kPlot / total;
    const std::map<std::string, std::pair<double, double>> want = {
        // name: hits, hits to its left
        {"all", {11, 0}}, {"main", {11, 0}}, {"a", {6, 0}},
        {"x", {4, 0}},    {"y", {2, 4}},     {"b", {5, 6}}};
    for (const auto& [name, hw] : want) {
        ASSERT_TRUE(by.contains(name)) << name << "\n" << svg;
        const Frame& f = by.at(name);
        EXPECT_NEAR(f.width, hw.first * unit, 0.005) << name;
        EXPECT_NEAR(f.x, kOptions.margin + hw.second * unit, 0.005) << name;
        char share[32];
        std::snprintf(share, sizeof(share), "%.2f%%", 100 * hw.first / total);
        EXPECT_EQ(f.title, name + " (" + std::to_string(static_cast<int>(hw.first)) + " hits, " +
                               share + ")");
    }
    // Root at the bottom, callees above: y falls one frame height per level.
    EXPECT_NEAR(by.at("all").y - by.at("main").y, kOptions.frame_height, 0.005);
    EXPECT_NEAR(by.at("main").y - by.at("a").y, kOptions.frame_height, 0.005);
    EXPECT_NEAR(by.at("a").y - by.at("x").y, kOptions.frame_height, 0.005);
    EXPECT_EQ(by.at("a").y, by.at("b").y);
    EXPECT_NE(svg.find(">11 hits</text>"), std::string::npos) << svg;
}

// A frame is merged with its namesake only under the same parent.
TEST(FlameSvg, SameNameUnderAnotherParentIsAnotherFrame) {
    const std::vector<FlameStack> stacks = {stack({"a", "f"}, 1), stack({"b", "f"}, 1),
                                            stack({"b", "f"}, 1)};
    const auto fs = frames(flameGraphSvg(stacks, kOptions));
    ASSERT_EQ(fs.size(), 5u);
    int fcount = 0;
    for (const auto& f : fs)
        if (f.title.starts_with("f ("))
            fcount++;
    EXPECT_EQ(fcount, 2);
}

// C++ names and paths hold < > & " ': escaped in titles, labels and the heading; bytes XML
// cannot carry become '?'.
TEST(FlameSvg, NamesAreEscaped) {
    const std::string cxx = "std::map<int, std::pair<A&, \"q\">>::at('x')+0x1c (/app)";
    FlameGraphOptions o;
    o.title = "uprobe:/app:f if $arg1 < 3 && \"x\"";
    const std::vector<FlameStack> stacks = {stack({cxx, std::string("bad\x01\xff")}, 2)};
    const std::string svg = flameGraphSvg(stacks, o);
    expectWellFormed(svg, "escaped.svg");
    const auto by = byName(frames(svg));
    ASSERT_TRUE(by.contains(cxx)) << svg;
    EXPECT_EQ(by.at(cxx).text, cxx);  // it fits in the whole width
    EXPECT_TRUE(by.contains("bad??")) << svg;
    EXPECT_NE(
        svg.find("std::map&lt;int, std::pair&lt;A&amp;, &quot;q&quot;&gt;&gt;::at(&apos;x&apos;)"),
        std::string::npos)
        << svg;
    EXPECT_NE(svg.find("if $arg1 &lt; 3 &amp;&amp; &quot;x&quot;: 2 hits"), std::string::npos)
        << svg;
    EXPECT_EQ(svg.find("<int"), std::string::npos);

    EXPECT_EQ(xmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    EXPECT_EQ(xmlEscape("\x01\t\x7f"), "???");
    EXPECT_EQ(xmlEscape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"),
              "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
    EXPECT_EQ(xmlEscape("\xc3"), "?");            // cut short
    EXPECT_EQ(xmlEscape("\xc0\xaf"), "??");       // overlong
    EXPECT_EQ(xmlEscape("\xed\xa0\x80"), "???");  // surrogate
    EXPECT_EQ(xmlEscape("\xef\xbf\xbf"), "???");  // U+FFFF
}

// Under 0.1% of the hits a frame is not drawn, nor its callees, but its hits are still in
// its caller's width and in the total.
TEST(FlameSvg, TinyFramesAreLeftOutButCounted) {
    const std::vector<FlameStack> stacks = {stack({"main", "big"}, 10000),
                                            stack({"main", "tiny", "deeper"}, 4),
                                            stack({"main", "tiny"}, 5)};
    const std::string svg = flameGraphSvg(stacks, kOptions);
    expectWellFormed(svg, "tiny.svg");
    const auto by = byName(frames(svg));
    ASSERT_EQ(by.size(), 3u) << svg;
    EXPECT_FALSE(by.contains("tiny"));
    EXPECT_FALSE(by.contains("deeper"));
    EXPECT_EQ(by.at("main").title, "main (10009 hits, 100.00%)");
    EXPECT_NEAR(by.at("main").width, kPlot, 0.005);
    EXPECT_NEAR(by.at("big").width, 10000 * kPlot / 10009, 0.005);
    EXPECT_EQ(by.at("all").title, "all (10009 hits, 100.00%)");
    EXPECT_NE(svg.find("1 frame under 0.1% of the hits not drawn"), std::string::npos) << svg;

    // At 0.1% exactly it is drawn.
    const std::vector<FlameStack> edge = {stack({"main", "big"}, 999), stack({"main", "one"}, 1)};
    EXPECT_TRUE(byName(frames(flameGraphSvg(edge, kOptions))).contains("one"));
}

// A label never runs past its rect (monospace, 0.6 em a character, 3 units of padding):
// a long name is cut with "..", a frame too narrow for three characters has none.
TEST(FlameSvg, LabelsFitTheirFrame) {
    const std::string lng(200, 'n');
    const std::vector<FlameStack> stacks = {stack({"root", lng}, 100),
                                            stack({"root", "wide"}, 1000), stack({"root", "z"}, 2)};
    const auto by = byName(frames(flameGraphSvg(stacks, kOptions)));
    ASSERT_TRUE(by.contains(lng));
    const Frame& f = by.at(lng);
    ASSERT_TRUE(f.text.ends_with("..")) << f.text;
    EXPECT_LE(static_cast<double>(f.text.size()) * 0.6 * kOptions.font_size, f.width - 6);
    EXPECT_GT(static_cast<double>(f.text.size() + 1) * 0.6 * kOptions.font_size, f.width - 6);
    EXPECT_EQ(f.text.substr(0, f.text.size() - 2), lng.substr(0, f.text.size() - 2));
    EXPECT_EQ(by.at("wide").text, "wide");
    ASSERT_TRUE(by.contains("z"));
    EXPECT_EQ(by.at("z").text, "");  // 2.14 units wide
}

// Colours depend on the name alone; kernel, user and label frames get different ranges.
TEST(FlameSvg, ColoursFollowTheName) {
    const std::vector<FlameStack> one = {stack({"vfs_read+0x5", "main+0x9 (/app)"}, 1)};
    const std::vector<FlameStack> two = {stack({"x"}, 7), stack({"vfs_read+0x5"}, 3),
                                         stack({"y", "main+0x9 (/app)"}, 3)};
    const auto a = frames(flameGraphSvg(one, kOptions));
    const auto b = frames(flameGraphSvg(two, kOptions));
    std::map<std::string, std::string> fill;
    for (const auto& f : a)
        fill[f.title.substr(0, f.title.rfind(" ("))] = f.fill;
    for (const auto& f : b) {
        const std::string name = f.title.substr(0, f.title.rfind(" ("));
        if (fill.contains(name)) {
            EXPECT_EQ(fill[name], f.fill) << name;
        }
    }
    // Kernel: red at least 225, green at least 130, blue under 55; user: green under 120.
    const int kr = std::stoi(fill["vfs_read+0x5"].substr(1, 2), nullptr, 16);
    const int kb = std::stoi(fill["vfs_read+0x5"].substr(5, 2), nullptr, 16);
    const int kg = std::stoi(fill["vfs_read+0x5"].substr(3, 2), nullptr, 16);
    const int ug = std::stoi(fill["main+0x9 (/app)"].substr(3, 2), nullptr, 16);
    EXPECT_GE(kr, 225);
    EXPECT_GE(kg, 130);
    EXPECT_LT(kb, 55);
    EXPECT_LT(ug, 120);
}

// Unsymbolized user frames ("/PATH+0xELF", "[vdso]+0xOFF") are user frames, not kernel ones.
TEST(FlameSvg, UnsymbolizedUserFramesAreUserFrames) {
    const std::vector<FlameStack> one = {stack({"vfs_read+0x5", "/app+0x1234", "[vdso]+0x9a0"}, 1)};
    std::map<std::string, std::string> fill;
    for (const auto& f : frames(flameGraphSvg(one, kOptions)))
        fill[f.title.substr(0, f.title.rfind(" ("))] = f.fill;
    ASSERT_TRUE(fill.contains("/app+0x1234"));
    ASSERT_TRUE(fill.contains("[vdso]+0x9a0"));
    EXPECT_GE(std::stoi(fill["vfs_read+0x5"].substr(3, 2), nullptr, 16), 130);
    EXPECT_LT(std::stoi(fill["/app+0x1234"].substr(3, 2), nullptr, 16), 120);
    EXPECT_LT(std::stoi(fill["[vdso]+0x9a0"].substr(3, 2), nullptr, 16), 120);
}

// No hits: the heading and the root, still a well-formed document.
TEST(FlameSvg, NoHits) {
    FlameGraphOptions o;
    o.title = "kprobe:vfs_read";
    const std::string svg = flameGraphSvg({}, o);
    expectWellFormed(svg, "empty.svg");
    const auto fs = frames(svg);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].title, "all (0 hits)");
    EXPECT_NE(svg.find("kprobe:vfs_read: 0 hits"), std::string::npos);
    // Stacks of no hits are no frames, and nothing was left out.
    const std::string zero = flameGraphSvg(std::vector<FlameStack>{stack({"main"}, 0)}, o);
    expectWellFormed(zero, "zero.svg");
    EXPECT_EQ(frames(zero).size(), 1u) << zero;
    EXPECT_EQ(zero.find("not drawn"), std::string::npos) << zero;
}

// count's rows: other keys outermost, the stack root first, "[stack not kept]" for a stack
// the map lost; with a root (several probes), the spec below them all.
TEST(FlameSvg, StacksOfCountRows) {
    StackRow kept;
    kept.keys = {"cat", "7"};
    kept.lines = {"leaf+0x1", "mid+0x2", "do_syscall_64+0x87"};
    kept.count = 4;
    StackRow lost;
    lost.keys = {"ls", "8"};
    lost.count = 1;
    const auto s = flameStacks({kept, lost});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].frames,
              (std::vector<std::string>{"cat", "7", "do_syscall_64+0x87", "mid+0x2", "leaf+0x1"}));
    EXPECT_EQ(s[0].count, 4u);
    EXPECT_EQ(s[0].labels, 2u);
    EXPECT_EQ(s[1].frames, (std::vector<std::string>{"ls", "8", "[stack not kept]"}));
    const auto r = flameStacks({kept}, "kprobe:getppid");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].frames.front(), "kprobe:getppid");
    EXPECT_EQ(r[0].frames.size(), 6u);
    EXPECT_EQ(r[0].labels, 3u);
}
