// Aggregation rows made by hand, for the tests of what the stack tables print.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "probectl/aggr.hpp"
#include "probectl/fetched_value.hpp"

namespace probectl::test {

inline AggrEntry entry(std::vector<FetchedValue> key, std::uint64_t count) {
    AggrEntry e;
    e.key = std::move(key);
    e.count = count;
    return e;
}

inline FetchedValue u32(const char* name, std::uint64_t v) {
    FetchedValue f;
    f.name = name;
    f.type = FetchType::U32;
    f.raw = v;
    return f;
}

}  // namespace probectl::test
