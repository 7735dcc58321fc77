// JSON string literals appended to a buffer without a DOM (the writers' hot path): quotes,
// backslashes and control characters escaped; bytes that are not valid UTF-8 become U+FFFD
// (JSON text must be UTF-8), as toJsonLine does for JSON Lines.
//
// U+FFFD alone would merge distinct byte strings ("g\xff" and "g\xfe" both read "g\ufffd"),
// so every JSON writer adds, beside a member whose string is not valid UTF-8, the member
// NAME_bytes with its exact bytes as lowercase hex (only then: valid text needs no copy).
#pragma once

#include <string>
#include <string_view>

namespace probectl::json {

// The suffix of the member that holds a string's exact bytes.
inline constexpr std::string_view kBytesSuffix = "_bytes";

bool isUtf8(std::string_view s);

// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD, nothing escaped:
// for formats whose strings must be UTF-8 and have their own encoding (Perfetto's protobuf).
std::string validUtf8(std::string_view s);

// "..." with the escapes above.
void appendJsonString(std::string& out, std::string_view s);

// "6766ff": two lowercase hex digits per byte, unquoted.
void appendHexBytes(std::string& out, std::string_view s);
std::string hexBytes(std::string_view s);

// "key":"s", and ,"key_bytes":"hex" after it when s is not valid UTF-8.
void appendJsonMember(std::string& out, std::string_view key, std::string_view s);

}  // namespace probectl::json
