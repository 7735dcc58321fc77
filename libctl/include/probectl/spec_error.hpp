// SpecError: a parse error pointing into the text of a probe spec, its fetch arguments or
// its filter, shared by every parser of that text.
#pragma once

#include <cstddef>
#include <string>

#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// A parse error pointing into the input.
//  column: 1-based byte position of the offending character (input.size()+1 for "unexpected
//  end"); render() names and marks it by characters (UTF-8 code points) instead.
struct SpecError {
    std::string message;
    std::size_t column = 0;
    std::string input;

    // Three lines in the style of bpftrace/perf:
    //   <input>:1:<column>: error: <message>
    //   <input>
    //         ^
    std::string render() const;
};

// SpecError -> Error (err = EINVAL, message = render()), for callers using one error type.
Error toError(const SpecError& e);

}  // namespace probectl
#pragma GCC visibility pop
