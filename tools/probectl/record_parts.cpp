#include "record_parts.hpp"

#include "probectl/event.hpp"

namespace probectl::cli {

std::uint32_t traceRecordParts(std::string_view format, const std::vector<FetchArg>& fetch) {
    if (format != "text")
        return kRecordPartsAll;
    std::uint32_t parts = kRecordPartComm | kRecordPartRetval | kRecordPartLatency;
    if (fetch.empty())
        parts |= kRecordPartArgs;
    return parts;
}

}  // namespace probectl::cli
