// Fetched values as JSON, and JSON Lines text (schema in event_json.hpp).
#include "probectl/event_json.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "output/json_text.hpp"

namespace probectl {

namespace {

nlohmann::ordered_json integer(FetchType t, std::uint64_t raw) {
    if (isHexType(t))
        return fmt::format("{:#x}", raw);
    if (isSignedType(t))
        return fetchedSigned(t, raw);
    return raw;
}

using Json = nlohmann::ordered_json;

bool invalidString(const Json& j) {
    return j.is_string() && !json::isUtf8(j.get_ref<const std::string&>());
}

// A member needs a NAME_bytes sibling: a string, or an array with a string, not UTF-8.
bool needsBytes(const Json& j) {
    if (j.is_array())
        return std::any_of(j.begin(), j.end(), invalidString);
    return invalidString(j);
}

bool anyNeedsBytes(const Json& j) {
    if (j.is_object())
        return std::any_of(j.begin(), j.end(),
                           [](const Json& v) { return needsBytes(v) || anyNeedsBytes(v); });
    if (j.is_array())
        return std::any_of(j.begin(), j.end(), anyNeedsBytes);
    return false;
}

Json bytesOf(const Json& j) {
    if (j.is_string())
        return json::hexBytes(j.get_ref<const std::string&>());
    auto a = Json::array();
    for (const Json& e : j)
        a.push_back(invalidString(e) ? bytesOf(e) : Json());
    return a;
}

// Each NAME_bytes right after NAME, as the printer writes them (json_text.hpp).
void addBytes(Json& j) {
    if (j.is_array()) {
        for (Json& e : j)
            addBytes(e);
        return;
    }
    if (!j.is_object())
        return;
    auto out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
        addBytes(it.value());
        const bool bytes = needsBytes(it.value());
        out[it.key()] = std::move(it.value());
        if (bytes)
            out[it.key() + std::string(json::kBytesSuffix)] = bytesOf(out[it.key()]);
    }
    j = std::move(out);
}

}  // namespace

nlohmann::ordered_json fetchedValueToJson(const FetchedValue& v) {
    if (v.faulted || v.unknown)
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
    constexpr auto kReplace = nlohmann::ordered_json::error_handler_t::replace;
    if (!anyNeedsBytes(j))
        return j.dump(-1, ' ', false, kReplace);
    Json copy = j;
    addBytes(copy);
    return copy.dump(-1, ' ', false, kReplace);
}

}  // namespace probectl
