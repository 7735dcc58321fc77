// The protobuf wire format, the little of it a trace writer needs: varints, length-delimited
// fields, and nested messages whose length is patched in afterwards as a 4-byte varint (a
// non-minimal varint is valid protobuf, so no message is encoded twice).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace probectl::exporter {

class ProtoEncoder {
  public:
    explicit ProtoEncoder(std::string& out) : out_(out) {}

    void varint(std::uint32_t field, std::uint64_t v) {
        key(field, 0);
        raw(v);
    }
    // int64 fields: two's complement as a varint (not zigzag, which is sint64).
    void int64(std::uint32_t field, std::int64_t v) {
        varint(field, static_cast<std::uint64_t>(v));
    }
    void bytes(std::uint32_t field, std::string_view s) {
        key(field, 2);
        raw(s.size());
        out_.append(s);
    }
    // Opens a nested message; pass the result to close() when its fields are written.
    std::size_t open(std::uint32_t field) {
        key(field, 2);
        out_.append(4, '\0');
        return out_.size();
    }
    void close(std::size_t at) {
        std::size_t len = out_.size() - at;  // < 2^28: messages here are far smaller
        for (int i = 0; i < 4; ++i, len >>= 7)
            out_[at - 4 + i] = static_cast<char>((len & 0x7f) | (i < 3 ? 0x80 : 0));
    }

  private:
    void key(std::uint32_t field, std::uint32_t wire_type) { raw((field << 3) | wire_type); }
    void raw(std::uint64_t v) {
        while (v >= 0x80) {
            out_ += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        out_ += static_cast<char>(v);
    }
    std::string& out_;
};

}  // namespace probectl::exporter
