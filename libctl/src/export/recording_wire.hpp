// Constants and little-endian encoding shared by the recording's writer and reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "probectl/syscall_probe.hpp"
#include "uapi/probectl.h"

namespace probectl::recording {

// The magic's last byte is the version: 1 had no header CRC, 2 keeps it at kHeaderCrcAt.
inline constexpr char kMagic[8] = {'P', 'R', 'B', 'C', 'T', 'L', 'R', 2};
inline constexpr std::size_t kHeaderBytes = 48;
inline constexpr std::size_t kHeaderCrcAt = 12;
inline constexpr std::uint32_t kBlockMagic = 0x4b4c4250;  // "PBLK"
inline constexpr std::size_t kBlockHeaderBytes = 16;
inline constexpr std::size_t kBlockFlushBytes = 64 * 1024;
// A block is one write of the events between flushes: larger means damage, not data.
inline constexpr std::uint32_t kBlockMaxBytes = 64u << 20;
// Summary tags: 3 and 4 carry a fixed list of counters (4 adds unreturned); 5 names its
// counters first (PROBECTL_TRACE_COUNTERS), so a new counter needs no new tag and a reader
// skips names it does not know.
inline constexpr std::uint8_t kTagProbe = 1, kTagEvent = 2, kTagSummary = 3,
                              kTagSummaryUnreturned = 4, kTagSummaryNamed = 5;
// kEvNoRetval: a return whose value is not known (Event::parts without kRecordPartRetval);
// readers before it read its retval as 0.
inline constexpr std::uint8_t kEvReturn = 1, kEvSyscallReturned = 2, kEvNoRetval = 4;
inline constexpr std::uint8_t kValFaulted = 1, kValTruncated = 2;

inline void putU16(std::string& b, std::uint16_t v) {
    b.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
inline void putU32(std::string& b, std::uint32_t v) {
    b.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
inline void putU64(std::string& b, std::uint64_t v) {
    b.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
inline void putStr(std::string& b, std::string_view s) {
    putU32(b, static_cast<std::uint32_t>(s.size()));
    b.append(s);
}

// Reads from a block's payload; any read past its end sets `bad` and yields zeros.
struct Cursor {
    const char* p;
    const char* end;
    bool bad = false;
    template <class T>
    T get() {
        T v{};
        if (static_cast<std::size_t>(end - p) < sizeof(T)) {
            bad = true;
            p = end;
            return v;
        }
        std::memcpy(&v, p, sizeof(T));
        p += sizeof(T);
        return v;
    }
    std::string_view str() {
        const auto n = get<std::uint32_t>();
        if (static_cast<std::size_t>(end - p) < n) {
            bad = true;
            p = end;
            return {};
        }
        std::string_view s(p, n);
        p += n;
        return s;
    }
};

}  // namespace probectl::recording
