// Flame graphs as SVG: stacks merged into a tree of frames, laid out bottom-up, written as
// rects with hover titles and labels cut to fit.
#include "probectl/flame_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace probectl {

namespace {

// The length of the UTF-8 sequence starting at s[i] if it is one XML allows, else 0.
std::size_t utf8Length(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xc0) == 0x80; };
    const unsigned char c = b(0);
    if (c < 0x80)
        return c >= 0x20 && c != 0x7f ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf)
        return cont(1) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if (!cont(1) || !cont(2))
            return 0;
        if ((c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) >= 0xa0))
            return 0;  // overlong, surrogate
        if (c == 0xef && b(1) == 0xbf && b(2) >= 0xbe)
            return 0;  // U+FFFE, U+FFFF
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (!cont(1) || !cont(2) || !cont(3))
            return 0;
        if ((c == 0xf0 && b(1) < 0x90) || (c == 0xf4 && b(1) >= 0x90))
            return 0;  // overlong, above U+10FFFF
        return 4;
    }
    return 0;
}

// `text` as characters XML allows: one string per character, '?' for what it does not.
std::vector<std::string_view> xmlChars(std::string_view text) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8Length(text, i);
        out.push_back(n ? text.substr(i, n) : std::string_view("?"));
        i += n ? n : 1;
    }
    return out;
}

void appendEscaped(std::string& out, std::string_view c) {
    if (c.size() != 1) {
        out += c;
        return;
    }
    switch (c[0]) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out += c[0];
    }
}

std::string escapeChars(const std::vector<std::string_view>& chars, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n && i < chars.size(); i++)
        appendEscaped(out, chars[i]);
    return out;
}

// The label of a frame `width` units wide: the name, or its start and ".." when it does
// not fit; empty when not even three characters fit. Monospace: a character is 0.6 em.
std::string label(std::string_view name, double width, double font_size) {
    const double room = width - 6;  // 3 units of padding each side
    const auto fit = room > 0 ? static_cast<std::size_t>(room / (0.6 * font_size)) : 0;
    const auto chars = xmlChars(name);
    if (chars.size() <= fit)
        return escapeChars(chars, chars.size());
    if (fit < 3)
        return std::string();
    return escapeChars(chars, fit - 2) + "..";
}

// FNV-1a: a stable hash, so a frame keeps its colour from one run and build to the next.
std::uint32_t nameHash(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

enum class FrameKind { Kernel, User, Label };

// From the text's form: kernelFrameText gives "SYM+0xOFF", "SYM+0xOFF [MODULE]" or
// "0xADDR"; UserSymbolizer's lines have their file in parentheses, start with it
// ("/PATH+0xELF", "[vdso]+0xOFF") or end "[unknown]". Markers ("[stack not kept]", "...")
// are labels.
FrameKind frameKind(std::string_view name) {
    if (name.starts_with('/') || name.starts_with("[vdso]+"))
        return FrameKind::User;
    if (name.empty() || name.front() == '[' || name == "...")
        return FrameKind::Label;
    if (name.find(" (") != std::string_view::npos || name.ends_with(" [unknown]"))
        return FrameKind::User;
    return FrameKind::Kernel;
}

std::string colour(std::string_view name, FrameKind kind) {
    const std::uint32_t h = nameHash(name);
    const unsigned a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;
    unsigned r = 0, g = 0, bl = 0;
    switch (kind) {
        case FrameKind::Kernel:  // orange to yellow
            r = 225 + a % 31, g = 130 + b % 90, bl = c % 55;
            break;
        case FrameKind::User:  // red to orange
            r = 200 + a % 56, g = 50 + b % 70, bl = 30 + c % 45;
            break;
        case FrameKind::Label:  // pale sand
            r = 225 + a % 21, g = 210 + b % 21, bl = 180 + c % 31;
            break;
    }
    return fmt::format("#{:02x}{:02x}{:02x}", r, g, bl);
}

struct Node {
    std::string name;
    std::uint64_t hits = 0;
    bool label = false;                           // a key or spec, not code
    std::map<std::string, std::size_t> children;  // name -> index; byte order is draw order
};

// The stacks as one tree: nodes[0] is the root "all".
std::vector<Node> mergeStacks(std::span<const FlameStack> stacks) {
    std::vector<Node> nodes(1);
    nodes[0].name = "all";
    nodes[0].label = true;
    for (const auto& s : stacks) {
        nodes[0].hits += s.count;
        std::size_t at = 0;
        for (std::size_t i = 0; i < s.frames.size(); i++) {
            const auto it = nodes[at].children.find(s.frames[i]);
            if (it != nodes[at].children.end()) {
                at = it->second;
            } else {
                const std::size_t added = nodes.size();
                nodes[at].children.emplace(s.frames[i], added);
                Node n;
                n.name = s.frames[i];
                n.label = i < s.labels;
                nodes.push_back(std::move(n));
                at = added;
            }
            nodes[at].hits += s.count;
        }
    }
    return nodes;
}

struct Placed {
    std::size_t node;
    std::size_t depth;
    std::uint64_t before;  // hits left of it, in the root's units
};

std::string hitsText(std::uint64_t n) {
    return fmt::format("{} hit{}", n, n == 1 ? "" : "s");
}

}  // namespace

std::string xmlEscape(std::string_view text) {
    const auto chars = xmlChars(text);
    return escapeChars(chars, chars.size());
}

std::vector<FlameStack> flameStacks(const std::vector<StackRow>& rows, const std::string& root) {
    std::vector<FlameStack> out;
    out.reserve(rows.size());
    for (const auto& r : rows) {
        FlameStack s;
        s.count = r.count;
        if (!root.empty())
            s.frames.push_back(root);
        const auto frames = stackRowFrames(r);
        s.frames.insert(s.frames.end(), frames.rbegin(), frames.rend());
        s.labels = r.keys.size() + (root.empty() ? 0 : 1);
        out.push_back(std::move(s));
    }
    return out;
}

std::string flameGraphSvg(std::span<const FlameStack> stacks, const FlameGraphOptions& o) {
    const std::vector<Node> nodes = mergeStacks(stacks);
    const std::uint64_t total = nodes[0].hits;
    const double plot = std::max(o.width - 2 * o.margin, 1.0);
    const auto drawn = [&](const Node& n) {
        return total && static_cast<double>(n.hits) / static_cast<double>(total) >= o.min_fraction;
    };

    // Depth first, left to right: each drawn frame with the hits to its left.
    std::vector<Placed> placed;
    std::size_t omitted = 0, top = 0;
    std::vector<Placed> todo{{0, 0, 0}};
    while (!todo.empty()) {
        const Placed p = todo.back();
        todo.pop_back();
        placed.push_back(p);
        top = std::max(top, p.depth);
        std::uint64_t before = p.before;
        std::vector<Placed> kids;
        for (const auto& [name, child] : nodes[p.node].children) {
            if (drawn(nodes[child]))
                kids.push_back({child, p.depth + 1, before});
            else if (total)
                omitted++;
            before += nodes[child].hits;
        }
        todo.insert(todo.end(), kids.rbegin(), kids.rend());
    }

    const double height = o.title_height + static_cast<double>(top + 1) * o.frame_height + o.margin;
    std::string out = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0:.0f}\" "
        "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"monospace\" "
        "font-size=\"{2:g}\">\n"
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
        "fill=\"#fdfaf3\"/>\n",
        o.width, height, o.font_size);
    const std::string heading =
        o.title.empty() ? hitsText(total) : fmt::format("{}: {}", o.title, hitsText(total));
    out += fmt::format(
        "<text class=\"title\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" "
        "font-size=\"{:g}\">{}</text>\n",
        o.width / 2, o.title_height / 2, o.font_size * 1.4, xmlEscape(heading));
    if (omitted)
        out += fmt::format(
            "<text class=\"note\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" "
            "fill=\"#666666\">{} frame{} under {:g}% of the hits not drawn (counted in "
            "their callers)</text>\n",
            o.width / 2, o.title_height / 2 + o.font_size * 1.3, omitted, omitted == 1 ? "" : "s",
            o.min_fraction * 100);

    const double unit = total ? plot / static_cast<double>(total) : 0;
    for (const Placed& p : placed) {
        const Node& n = nodes[p.node];
        const double x = o.margin + static_cast<double>(p.before) * unit;
        const double w = p.node == 0 ? plot : static_cast<double>(n.hits) * unit;
        const double y = height - o.margin - static_cast<double>(p.depth + 1) * o.frame_height;
        const std::string share =
            total ? fmt::format(", {:.2f}%",
                                100.0 * static_cast<double>(n.hits) / static_cast<double>(total))
                  : std::string();
        const FrameKind kind = n.label ? FrameKind::Label : frameKind(n.name);
        out += fmt::format(
            "<g class=\"frame\"><title>{} ({}{})</title><rect x=\"{:.2f}\" y=\"{:.2f}\" "
            "width=\"{:.2f}\" height=\"{:g}\" rx=\"2\" fill=\"{}\"/>",
            xmlEscape(n.name), hitsText(n.hits), share, x, y, w, o.frame_height - 1,
            colour(n.name, kind));
        if (auto text = label(n.name, w, o.font_size); !text.empty())
            out += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">{}</text>", x + 3,
                               y + (o.frame_height - 1) / 2 + o.font_size * 0.35, text);
        out += "</g>\n";
    }
    out += "</svg>\n";
    return out;
}

}  // namespace probectl
