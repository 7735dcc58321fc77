// Flame graphs as SVG, drawn by probectl itself: the stacks of `count --by kstack|ustack`
// (kernel_stacks.hpp: StackRow) merged into one tree of frames and written as a
// self-contained SVG 1.1 document (no script, no external font or style sheet).
//
// The drawing: a root frame "all" along the bottom, each frame's callees stacked above it,
// frames of the same name under the same parent merged, siblings in byte order of their
// names (left to right), every frame as wide as its share of all hits. Each frame is a
// <g class="frame"> holding a <title> ("NAME (N hits, P%)", shown on hover), a <rect>
// and, where it fits, a <text> label cut to the rect's width. Frames narrower than
// FlameGraphOptions::min_fraction of all hits are not drawn, nor anything above them;
// their hits are still in their parent's width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/kernel_stacks.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One stack and how many hits it had. `frames` are root first (outermost caller first,
// the probed location last), as a folded line lists them; the first `labels` of them are
// not code but what the stacks are grouped by (a probe's spec, other --by keys), which
// only changes their colour.
struct FlameStack {
    std::vector<std::string> frames;
    std::uint64_t count = 0;
    std::size_t labels = 0;
};

// The stacks of `rows` (stackRows), root first, with each row's other keys as the
// outermost frames, as formatFoldedRows orders them (stackRowFrames, reversed). A
// non-empty `root` becomes one more frame below all of them: the probe's spec when
// several probes share one graph.
std::vector<FlameStack> flameStacks(const std::vector<StackRow>& rows,
                                    const std::string& root = std::string());

// The size of the drawing; lengths in SVG user units (pixels at 100% zoom).
struct FlameGraphOptions {
    std::string title;            // first line, before ": N hits" (e.g. the probe spec)
    double width = 1200;          // of the whole image
    double margin = 10;           // left and right of the frames, below the root
    double title_height = 44;     // above the highest frame: the title lines
    double frame_height = 16;     // one level of frames, including a 1-unit gap
    double font_size = 12;        // of the labels (monospace)
    double min_fraction = 0.001;  // frames with fewer hits than this share are not drawn
};

// The SVG document of `stacks` (UTF-8, ends with a newline). Frame names are XML-escaped;
// control characters and bytes that are not UTF-8 become '?'. The frames span
// `width - 2 * margin` units: a frame of N hits out of T is N / T of it wide (widths and
// positions printed with 2 decimals). Colours are a function of the frame's name alone
// (the same frame has the same colour in every graph): warm hues, kernel frames
// (kernelFrameText) orange to yellow, user frames (UserSymbolizer::frameText) red to
// orange, other frames (keys, specs, markers) pale. With no hits at all, only the title
// and the root are drawn. Never fails.
std::string flameGraphSvg(std::span<const FlameStack> stacks, const FlameGraphOptions& options);

// `text` with & < > " ' as XML entities, and control characters, bytes that do not form
// UTF-8 and the non-characters U+FFFE and U+FFFF (none of which XML 1.0 allows, escaped
// or not) as '?': safe in element text and in quoted attributes.
std::string xmlEscape(std::string_view text);

}  // namespace probectl
#pragma GCC visibility pop
