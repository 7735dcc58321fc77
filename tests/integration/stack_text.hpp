// Reading stacks out of probectl's output in the stack tests: JSON lines, frame names and the
// call chain of the unwind workloads (workloads/ustack_target.c).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace itest {

// The JSON objects of `text` (one per line) whose "type" is `type`; other lines are skipped.
inline std::vector<nlohmann::json> jsonLines(const std::string& text, const std::string& type) {
    std::vector<nlohmann::json> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        auto j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
        if (!j.is_discarded() && j.value("type", "") == type)
            out.push_back(std::move(j));
    }
    return out;
}

// The function a frame's text names: "mid+0x9 (/path)" -> "mid", "leaf (/path)" -> "leaf".
inline std::string frameName(const std::string& frame) {
    return frame.substr(0, frame.find_first_of("+ "));
}

// The unwind workloads' call chain, leaf first.
inline const std::vector<std::string> kChain = {"leaf", "mid", "top", "main"};

// The frames of the workload at `path`, by name, in their order in `frames`.
inline std::vector<std::string> workloadFrames(const std::vector<std::string>& frames,
                                               const std::string& path) {
    std::vector<std::string> out;
    for (const auto& f : frames)
        if (f.ends_with("(" + path + ")") && !f.starts_with("0x"))
            out.push_back(frameName(f));
    return out;
}

}  // namespace itest
