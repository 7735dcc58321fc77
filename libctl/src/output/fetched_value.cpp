// Text form of fetched values (conventions in fetched_value.hpp).
#include "probectl/fetched_value.hpp"

#include <fmt/format.h>

#include <limits>

#include "probectl/strace_format.hpp"

namespace probectl {

namespace {

std::string integer(FetchType t, std::uint64_t raw) {
    if (isHexType(t))
        return fmt::format("{:#x}", raw);
    if (isSignedType(t))
        return fmt::format("{}", fetchedSigned(t, raw));
    return fmt::format("{}", raw);
}

}  // namespace

std::int64_t fetchedSigned(FetchType t, std::uint64_t raw) {
    const unsigned width = fetchTypeSize(t);
    if (width == 0 || width >= 8)
        return static_cast<std::int64_t>(raw);
    const unsigned shift = 64 - width * 8;
    return static_cast<std::int64_t>(raw << shift) >> shift;
}

std::string formatFetchedValue(const FetchedValue& v) {
    if (v.faulted)
        return "<fault>";
    if (isStringType(v.type))
        return straceQuote(v.str, std::numeric_limits<std::size_t>::max(), v.truncated);
    if (v.array_len != 0) {
        std::string s = "{";
        for (std::size_t i = 0; i < v.array.size(); ++i)
            s += (i ? "," : "") + integer(v.type, v.array[i]);
        return s + "}";
    }
    return integer(v.type, v.raw);
}

std::string formatFetchedValues(const std::vector<FetchedValue>& values) {
    std::string s;
    for (const auto& v : values) {
        if (!s.empty())
            s += ' ';
        s += v.name + "=" + formatFetchedValue(v);
    }
    return s;
}

}  // namespace probectl
