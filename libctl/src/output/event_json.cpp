// DecodedEvent / ProbeSummary -> JSON objects (schema in event_json.hpp).
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

nlohmann::ordered_json eventToJson(const DecodedEvent& e) {
    nlohmann::ordered_json j = {
        {"type", "event"},
        {"ts_ns", e.timestamp_ns},
        {"cpu", e.cpu},
        {"pid", e.pid},
        {"tid", e.tid},
        {"comm", e.comm},
        {"probe", e.probe},
        {"probe_id", e.probe_id},
        {"ip", fmt::format("{:#x}", e.ip)},
    };
    // ordered_json keeps keys in insertion order: args stay in fetch order.
    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    auto faults = nlohmann::ordered_json::array();
    auto truncated = nlohmann::ordered_json::array();
    for (const auto& v : e.values) {
        args[v.name] = fetchedValueToJson(v);
        if (v.faulted)
            faults.push_back(v.name);
        else if (v.truncated)
            truncated.push_back(v.name);
    }
    if (!e.values.empty())
        j["args"] = std::move(args);
    if (!faults.empty())
        j["faults"] = faults;
    if (!truncated.empty())
        j["truncated"] = truncated;
    if (e.retval)
        j["retval"] = *e.retval;
    if (e.latency_ns)
        j["latency_ns"] = *e.latency_ns;
    if (e.syscall)
        j["syscall"] = *e.syscall;
    return j;
}

nlohmann::ordered_json summaryToJson(const std::vector<ProbeSummary>& probes, std::uint64_t lost) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& p : probes)
        list.push_back({{"id", p.id},
                        {"probe", p.probe},
                        {"hits", p.hits},
                        {"delivered", p.delivered},
                        {"dropped", p.dropped},
                        {"nmissed", p.nmissed},
                        {"filtered", p.filtered},
                        {"rejected", p.rejected}});
    return {{"type", "summary"}, {"probes", list}, {"lost", lost}};
}

std::string toJsonLine(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace probectl
