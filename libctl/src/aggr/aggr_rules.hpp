// Rules shared by the kernel map's request (aggr_request.cpp), its read-out (aggr_table.cpp)
// and the user-space aggregator (aggr_events.cpp): how many linear steps a histogram has,
// which histogram specs are refused, and which return values are errnos.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/never_returns.hpp"
#include "probectl/aggr.hpp"
#include "probectl/fetch_spec.hpp"

namespace probectl::detail {

// The kernel's IS_ERR_VALUE, strace's failed call: -4095..-1 as 64 bits.
inline bool isErrno(std::uint64_t retval) {
    return retval >= static_cast<std::uint64_t>(-4095);
}

// Values are kept as their raw 64 bits; signed ones compare as signed (min, max, buckets).
inline bool lessRaw(bool is_signed, std::uint64_t a, std::uint64_t b) {
    return is_signed ? static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b) : a < b;
}

// Steps of STEP from MIN to MAX (MIN < MAX, STEP > 0), the last one possibly short
// (kmod/aggr.c's rule). MAX - MIN always fits in 64 unsigned bits, but rounding up by
// adding STEP - 1 could wrap it to a small count (and a histogram too few buckets).
inline std::uint64_t linearSteps(std::int64_t min, std::int64_t max, std::int64_t step) {
    const std::uint64_t range = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
    const auto s = static_cast<std::uint64_t>(step);
    return range / s + (range % s != 0 ? 1 : 0);
}

// Distinct keys a map is made for: the user's --max-entries, else one for a map without keys
// (its key, the fault mask of no argument, is always zero: an exact fit), else
// kAggrDefaultEntries. The default would give a keyless map 1023 value slots it never uses, per
// possible CPU and per bank: a latency map (log2 histogram, 560 bytes a value) took 2.2 MiB on
// 2 CPUs instead of 2.2 KiB, and a syscall:* glob outgrew the module's max_map_kb.
inline std::uint32_t mapCapacity(const AggrSpec& spec) {
    if (spec.max_entries)
        return spec.max_entries;
    return spec.keys.empty() ? 1 : kAggrDefaultEntries;
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

// hist's value `name` is summed and bucketed as a 64-bit integer; why it cannot be, if so.
// `arg`: the spec's own argument of that name, else null for a task field. A stack's fetched
// value is its id in the stack map, no number to histogram.
inline std::optional<std::string> notAnIntegerValue(const std::string& name, const FetchArg* arg) {
    using Kind = FetchSource::Kind;
    const Kind kind = arg && arg->source ? arg->source->kind
                      : name == "kstack" ? Kind::KStack
                      : name == "ustack" ? Kind::UStack
                                         : Kind::Arg;
    if (kind == Kind::KStack || kind == Kind::UStack || kind == Kind::UStackSnapshot)
        return fmt::format(
            "value '{}' is a stack, not an integer: count --by {} counts the hits of each stack",
            name, kind == Kind::KStack ? "kstack" : "ustack");
    if (arg ? isStringType(arg->type) || arg->array_len != 0 : name == "comm")
        return fmt::format("value '{}' is not an integer", name);
    return std::nullopt;
}

// exit or exit_group (`syscall`) asked for `what` ("latency", "$retval", "$errno"), which
// only a return has: the reason once, and what to do. The caller puts the spec before it.
inline std::string neverReturns(std::string_view syscall, std::string_view what) {
    return fmt::format("{}: {}", neverReturnsReason(syscall, what),
                       what == "latency" ? "count or trace it instead, or leave it out"
                                         : "key by another field, or leave it out");
}

}  // namespace probectl::detail
