// Fetched values as JSON, and JSON Lines text (schema in event_json.hpp).
#include "probectl/event_json.hpp"

#include <fmt/format.h>

namespace probectl {

namespace {

nlohmann::ordered_json integer(FetchType t, std::uint64_t raw) {
    if (isHexType(t))
        return fmt::format("{:#x}", raw);
    if (isSignedType(t))
        return fetchedSigned(t, raw);
    return raw;
}

}  // namespace

nlohmann::ordered_json fetchedValueToJson(const FetchedValue& v) {
    if (v.faulted)
        return nullptr;
    if (v.isSnapshot())
        return v.snapshot.size();
    if (isStringType(v.type))
        return v.str;
    if (v.array_len != 0) {
        auto a = nlohmann::ordered_json::array();
        for (std::uint64_t x : v.array)
            a.push_back(integer(v.type, x));
        return a;
    }
    return integer(v.type, v.raw);
}

std::string toJsonLine(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace probectl
