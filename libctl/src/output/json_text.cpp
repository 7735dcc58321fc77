#include "output/json_text.hpp"

#include <cstdint>

namespace probectl::json {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], 0 when it is not one.
std::size_t utf8Length(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates, beyond U+10FFFF.
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

}  // namespace

bool isUtf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = utf8Length(s, i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

std::string validUtf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8Length(s, i);
        if (n)
            out.append(s.substr(i, n));
        else
            out += "\xef\xbf\xbd";
        i += n ? n : 1;
    }
    return out;
}

void appendHexBytes(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
}

std::string hexBytes(std::string_view s) {
    std::string out;
    out.reserve(s.size() * 2);
    appendHexBytes(out, s);
    return out;
}

void appendJsonMember(std::string& out, std::string_view key, std::string_view s) {
    appendJsonString(out, key);
    out += ':';
    appendJsonString(out, s);
    if (isUtf8(s))
        return;
    out += ',';
    appendJsonString(out, std::string(key) + std::string(kBytesSuffix));
    out += ":\"";
    appendHexBytes(out, s);
    out += '"';
}

void appendJsonString(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            if (std::size_t n = utf8Length(s, i)) {
                out.append(s.substr(i, n));
                i += n;
            } else {
                out += "\xef\xbf\xbd";
                ++i;
            }
            continue;
        }
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += kHex[c >> 4];
                    out += kHex[c & 15];
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    out += '"';
}

}  // namespace probectl::json
