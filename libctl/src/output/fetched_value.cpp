// Text form of fetched values (conventions in fetched_value.hpp).
#include "probectl/fetched_value.hpp"

#include <fmt/format.h>

#include <limits>

#include "output/append_text.hpp"
#include "probectl/strace_format.hpp"

namespace probectl {

namespace {

// Once per value of every printed event: no format string parsed (append_text.hpp).
void integer(std::string& out, FetchType t, std::uint64_t raw) {
    if (isHexType(t)) {
        appendHex(out, raw);
    } else if (isSignedType(t)) {
        appendSigned(out, fetchedSigned(t, raw));
    } else {
        appendDecimal(out, raw);
    }
}

}  // namespace

std::int64_t fetchedSigned(FetchType t, std::uint64_t raw) {
    const unsigned width = fetchTypeSize(t);
    if (width == 0 || width >= 8)
        return static_cast<std::int64_t>(raw);
    const unsigned shift = 64 - width * 8;
    return static_cast<std::int64_t>(raw << shift) >> shift;
}

void appendFetchedValue(std::string& out, const FetchedValue& v) {
    if (v.faulted) {
        out += "<fault>";
    } else if (v.unknown) {
        out += '?';
    } else if (v.isSnapshot()) {
        fmt::format_to(std::back_inserter(out), "<user stack snapshot of {} bytes>",
                       v.snapshot.size());
    } else if (isStringType(v.type)) {
        appendStraceQuote(out, v.str, std::numeric_limits<std::size_t>::max(), v.truncated);
    } else if (v.array_len != 0) {
        out += '{';
        for (std::size_t i = 0; i < v.array.size(); ++i) {
            if (i)
                out += ',';
            integer(out, v.type, v.array[i]);
        }
        if (v.truncated)
            out += ",...";  // the rest was on a page that could not be read
        out += '}';
    } else {
        integer(out, v.type, v.raw);
    }
}

std::string formatFetchedValue(const FetchedValue& v) {
    std::string s;
    appendFetchedValue(s, v);
    return s;
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
