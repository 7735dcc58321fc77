// JSON string literals appended to a buffer without a DOM (the writers' hot path): quotes,
// backslashes and control characters escaped; bytes that are not valid UTF-8 become U+FFFD,
// as toJsonLine does for JSON Lines.
#pragma once

#include <string>
#include <string_view>

namespace probectl::exporter {

void appendJsonString(std::string& out, std::string_view s);

}  // namespace probectl::exporter
