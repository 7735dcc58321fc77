// One row of a generated attribute table (attrs_gen.hpp): an attribute id, its spec name, its
// wire type and the struct member it decodes into. The member's C++ type is checked against
// the wire type at compile time, so a spec change that a struct does not follow fails to build.
#pragma once

#include <linux/netlink.h>
#include <netlink/attr.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "probectl/client.hpp"
#include "probectl/kernel_stacks.hpp"
#include "uapi/probectl.h"

namespace probectl::detail {

enum class NlType { U32, U64, String, Binary };

template <NlType T, class S, class M>
struct AttrRow {
    int id;
    const char* name;
    M S::*member;

    // Absent attributes leave the member as it is.
    void decode(nlattr* const* tb, S& out) const {
        const nlattr* a = tb[id];
        if (!a)
            return;
        auto* p = const_cast<nlattr*>(a);
        const int len = nla_len(a);
        M& m = out.*member;
        if constexpr (T == NlType::U32) {
            m = static_cast<M>(len >= 4 ? nla_get_u32(p) : 0);
        } else if constexpr (T == NlType::U64) {
            // Counters are u64; tolerate a u32 from an older/leaner kernel side.
            m = len >= 8 ? nla_get_u64(p) : len >= 4 ? nla_get_u32(p) : 0;
        } else if constexpr (T == NlType::String) {
            const auto* s = static_cast<const char*>(nla_data(a));
            m.assign(s, strnlen(s, static_cast<std::size_t>(len)));
        } else if constexpr (T == NlType::Binary) {
            const auto* d = static_cast<const std::uint8_t*>(nla_data(a));
            m.assign(d, d + len);
        }
    }
};

template <NlType T, class S, class M>
constexpr AttrRow<T, S, M> attr(int id, const char* name, M S::*member) {
    if constexpr (T == NlType::U32)
        static_assert(sizeof(M) == 4 && (std::is_integral_v<M> || std::is_enum_v<M>));
    else if constexpr (T == NlType::U64)
        static_assert(std::is_same_v<M, std::uint64_t>);
    else if constexpr (T == NlType::String)
        static_assert(std::is_same_v<M, std::string>);
    else
        static_assert(std::is_same_v<M, std::vector<std::uint8_t>>);
    return {id, name, member};
}

// Decodes every attribute of `table` present in `tb` into `out`.
template <class Table, class S>
void decodeAll(const Table& table, nlattr* const* tb, S& out) {
    std::apply([&](const auto&... row) { (row.decode(tb, out), ...); }, table);
}

}  // namespace probectl::detail
