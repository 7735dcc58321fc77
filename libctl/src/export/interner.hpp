// String -> interning id (1, 2, ...) for writers that send a string once and refer to it by
// id afterwards. Lookups take a string_view without allocating; `limit` caps the entries
// (values of fetched strings can be unbounded: past the cap they are sent inline).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

namespace probectl::exporter {

class Interner {
  public:
    explicit Interner(std::size_t limit = std::numeric_limits<std::size_t>::max())
        : limit_(limit) {}
    struct Id {
        std::uint64_t iid = 0;  // 0: not interned (the table is full)
        bool is_new = false;    // the caller must send the string with this id now
    };
    Id intern(std::string_view s) {
        if (auto it = ids_.find(s); it != ids_.end())
            return {it->second, false};
        if (ids_.size() >= limit_)
            return {};
        const std::uint64_t iid = ids_.size() + 1;
        ids_.emplace(std::string(s), iid);
        return {iid, true};
    }
    std::size_t size() const { return ids_.size(); }

  private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::unordered_map<std::string, std::uint64_t, Hash, std::equal_to<>> ids_;
    std::size_t limit_;
};

}  // namespace probectl::exporter
