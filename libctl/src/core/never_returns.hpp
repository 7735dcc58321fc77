// exit and exit_group (syscall:) never return: what only a return has (latency, $retval,
// $errno) is refused for them in the same words by the spec parser (a fetch argument or a
// predicate's $retval) and by the aggregations (a key or value).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace probectl::detail {

// "exit_group never returns (the task ends in it), so it has no $retval": the reason, to
// which the caller adds what to do.
inline std::string neverReturnsReason(std::string_view syscall, std::string_view what) {
    return fmt::format("{} never returns (the task ends in it), so it has no {}", syscall, what);
}

// $retval fetched or tested on `syscall`'s probe: the reason and what to probe instead.
inline std::string neverReturnsRetval(std::string_view syscall) {
    return neverReturnsReason(syscall, "$retval") +
           ": fetch its entry arguments instead (the exit status is $arg1, e.g. "
           "status=$arg1:s32), or probe tracepoint:sched:sched_process_exit to see each task "
           "end";
}

}  // namespace probectl::detail
