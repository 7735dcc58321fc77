// PROBECTL_TIMING lines: see step_timing.hpp.
#include "core/step_timing.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <cstdlib>
#include <string_view>

namespace probectl::detail {

namespace {

// Set when the library is loaded: the origin of the "end at" column.
const std::chrono::steady_clock::time_point g_loaded = std::chrono::steady_clock::now();

}  // namespace

bool timingOn() {
    static const bool on = [] {
        const char* v = std::getenv("PROBECTL_TIMING");
        return v && *v && std::string_view(v) != "0";
    }();
    return on;
}

void reportStep(std::string_view step, std::chrono::steady_clock::time_point start) {
    const auto end = std::chrono::steady_clock::now();
    const std::chrono::duration<double, std::milli> took = end - start;
    const std::chrono::duration<double, std::milli> at = end - g_loaded;
    // One write(2) per line, so lines from the held command's side never interleave.
    const std::string line =
        fmt::format("probectl: timing: {:<32} {:9.2f} ms  (end at {:.1f} ms)\n", step, took.count(),
                    at.count());
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace probectl::detail
