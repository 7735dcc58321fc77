// Resizing a vector of buffers without freeing them: elements cut off go to a spare pool
// and come back from it, so a decoder that reuses one Event for every record allocates
// only while its buffers grow, not per record.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace probectl::detail {

template <typename T>
void resizeKeeping(std::vector<T>& v, std::size_t n, std::vector<T>& spare) {
    while (v.size() > n) {
        spare.push_back(std::move(v.back()));
        v.pop_back();
    }
    while (v.size() < n) {
        if (spare.empty()) {
            v.emplace_back();
            continue;
        }
        v.push_back(std::move(spare.back()));
        spare.pop_back();
    }
}

}  // namespace probectl::detail
