// Rules shared by the kernel map's request (aggr_request.cpp), its read-out (aggr_table.cpp)
// and the user-space aggregator (aggr_events.cpp): how many linear steps a histogram has,
// and which histogram specs are refused.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>

#include "probectl/aggr.hpp"

namespace probectl::detail {

// Steps of STEP from MIN to MAX, the last one possibly short (kmod/aggr.c's rule).
inline std::uint64_t linearSteps(std::int64_t min, std::int64_t max, std::int64_t step) {
    return (static_cast<std::uint64_t>(max - min) + static_cast<std::uint64_t>(step) - 1) /
           static_cast<std::uint64_t>(step);
}

// A histogram needs a value; a linear one MIN < MAX, STEP > 0, at most kAggrMaxLinear steps.
inline Result<void> checkHistogram(const AggrSpec& spec) {
    if (spec.hist != AggrHist::None && spec.value == AggrValue::None)
        return makeError(EINVAL, "a histogram needs a value");
    if (spec.hist != AggrHist::Linear)
        return {};
    if (spec.lin_step <= 0 || spec.lin_max <= spec.lin_min)
        return makeError(EINVAL, "a linear histogram needs MIN < MAX and STEP > 0");
    const auto steps = linearSteps(spec.lin_min, spec.lin_max, spec.lin_step);
    if (steps > kAggrMaxLinear)
        return makeError(EINVAL, fmt::format("a linear histogram has at most {} steps, not {}",
                                             kAggrMaxLinear, steps));
    return {};
}

}  // namespace probectl::detail
