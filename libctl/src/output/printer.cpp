// The text and JSON back ends of probectl/printer.hpp.
#include "probectl/printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <type_traits>

#include "output/append_text.hpp"
#include "output/json_text.hpp"
#include "probectl/event_json.hpp"

namespace probectl {

namespace {

class TextPrinter final : public Printer {
  public:
    explicit TextPrinter(std::ostream& os) : os_(os) {}
    bool json() const override { return false; }

    void beginRecord(std::string_view) override { buf_.clear(); }
    void endRecord() override {
        buf_.push_back('\n');
        os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }
    void beginObject(std::string_view) override {}
    void beginArray(std::string_view) override {}
    void end() override {}
    void beginTable(std::string_view, std::vector<Table::Column> columns) override {
        table_.emplace(std::move(columns));
    }
    void beginRow() override { row_.clear(); }
    void endRow() override { table_->add(std::move(row_)); }
    void endTable() override {
        std::string out;
        table_->print(out);
        table_.reset();
        // The record's '\n' ends the last table line.
        if (!out.empty())
            out.pop_back();
        buf_.append(out.data(), out.data() + out.size());
    }

    void u64(Show s, std::string_view, std::string_view f, std::uint64_t v) override {
        put(s, f, v);
    }
    void s64(Show s, std::string_view, std::string_view f, std::int64_t v) override {
        put(s, f, v);
    }
    void hex(Show s, std::string_view, std::string_view f, std::uint64_t v) override {
        put(s, f, v);
    }
    void str(Show s, std::string_view, std::string_view f, std::string_view v) override {
        put(s, f, v);
    }
    void boolean(Show s, std::string_view, bool v) override { put(s, "{}", v ? "yes" : "no"); }
    void null(Show s, std::string_view, std::string_view text) override { put(s, "{}", text); }
    void value(std::string_view, nlohmann::ordered_json) override {}
    void flush() override { os_.flush(); }

  private:
    template <typename T>
    void put(Show s, std::string_view f, const T& v) {
        if (s == Show::Json)
            return;
        if (table_) {
            row_.push_back(fmt::format(fmt::runtime(f.empty() ? "{}" : f), v));
            return;
        }
        // A runtime format is parsed on every call; plain text skips it.
        if constexpr (std::is_convertible_v<const T&, std::string_view>) {
            if (f == "{}") {
                const std::string_view sv = v;
                buf_.append(sv.data(), sv.data() + sv.size());
                return;
            }
        }
        fmt::format_to(std::back_inserter(buf_), fmt::runtime(f), v);
    }

    std::ostream& os_;
    fmt::memory_buffer buf_;
    std::optional<Table> table_;
    std::vector<std::string> row_;
};

// Writes each record's JSON text straight into a reused buffer, as nlohmann's compact
// dump (toJsonLine) would print the tree the calls describe: no tree, no allocation per
// record once the buffer has grown. Keys must not repeat within an object.
class JsonPrinter final : public Printer {
  public:
    explicit JsonPrinter(std::ostream& os) : os_(os) {}
    bool json() const override { return true; }

    void beginRecord(std::string_view type) override {
        buf_.clear();
        buf_.push_back('{');
        frames_.assign(1, Frame{});
        str(Show::Json, "type", {}, type);
    }
    void endRecord() override {
        buf_.append(std::string_view("}\n"));
        os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
        frames_.clear();
    }
    void beginObject(std::string_view key) override { open(key, '{', false); }
    void beginArray(std::string_view key) override { open(key, '[', true); }
    void end() override {
        Frame f = std::move(frames_.back());
        frames_.pop_back();
        buf_.push_back(f.array ? ']' : '}');
        if (f.bytes.empty())
            return;
        // The array's strings that are not UTF-8, as hex at their index, null elsewhere.
        bytesKey(std::string(buf_.data() + f.key_at, f.key_len));
        buf_.push_back('[');
        std::size_t next = 0;
        for (std::size_t i = 0; i < f.elements; ++i) {
            if (i)
                buf_.push_back(',');
            if (next < f.bytes.size() && f.bytes[next].first == i) {
                buf_.push_back('"');
                buf_.append(f.bytes[next++].second);
                buf_.push_back('"');
            } else {
                buf_.append(std::string_view("null"));
            }
        }
        buf_.push_back(']');
    }
    void beginTable(std::string_view key, std::vector<Table::Column>) override { beginArray(key); }
    void beginRow() override { beginObject({}); }
    void endRow() override { end(); }
    void endTable() override { end(); }

    // Numbers without a format string parsed per call (append_text.hpp).
    void u64(Show s, std::string_view k, std::string_view, std::uint64_t v) override {
        if (field(s, k))
            appendDecimal(buf_, v);
    }
    void s64(Show s, std::string_view k, std::string_view, std::int64_t v) override {
        if (field(s, k))
            appendSigned(buf_, v);
    }
    void hex(Show s, std::string_view k, std::string_view, std::uint64_t v) override {
        if (!field(s, k))
            return;
        buf_.push_back('"');
        appendHex(buf_, v);
        buf_.push_back('"');
    }
    void str(Show s, std::string_view k, std::string_view, std::string_view v) override {
        if (!field(s, k))
            return;
        if (quote(v) || json::isUtf8(v))
            return;
        // The exact bytes beside the U+FFFD text (json_text.hpp): after the member in an
        // object, after the array (at the element's index) in an array.
        Frame& f = frames_.back();
        if (f.array) {
            if (f.key_len)
                f.bytes.emplace_back(f.elements - 1, json::hexBytes(v));
            return;
        }
        bytesKey(std::string(buf_.data() + key_at_, key_len_));
        buf_.push_back('"');
        const std::string hex = json::hexBytes(v);
        buf_.append(hex);
        buf_.push_back('"');
    }
    void boolean(Show s, std::string_view k, bool v) override {
        if (field(s, k))
            buf_.append(std::string_view(v ? "true" : "false"));
    }
    void null(Show s, std::string_view k, std::string_view) override {
        if (field(s, k))
            buf_.append(std::string_view("null"));
    }
    void value(std::string_view k, nlohmann::ordered_json v) override {
        if (v.is_string())
            return str(Show::Json, k, {}, v.get_ref<const std::string&>());
        if (field(Show::Json, k))
            buf_.append(toJsonLine(v));
    }
    void flush() override { os_.flush(); }

  private:
    // The separator and key of the next member (none inside an array); false for text-only.
    bool field(Show s, std::string_view key) {
        if (s == Show::Text)
            return false;
        Frame& f = frames_.back();
        if (f.elements)
            buf_.push_back(',');
        ++f.elements;
        key_len_ = 0;
        if (!f.array) {
            key_at_ = buf_.size();
            quote(key);
            key_len_ = buf_.size() - key_at_;
            buf_.push_back(':');
        }
        return true;
    }
    // ,"key_bytes": from the key as written, `quoted` ("key", escaped); a sibling is never
    // the first member. A copy of buf_'s text: appending may move buf_'s data.
    void bytesKey(std::string quoted) {
        buf_.push_back(',');
        quoted.pop_back();
        buf_.append(quoted);
        buf_.append(json::kBytesSuffix);
        buf_.append(std::string_view("\":"));
    }
    void open(std::string_view key, char bracket, bool array) {
        field(Show::Json, key);
        buf_.push_back(bracket);
        frames_.push_back(Frame{array, key_at_, key_len_, 0, {}});
    }
    // Printable ASCII is copied as is; anything else (escapes, UTF-8 and its replacement of
    // invalid bytes) is left to nlohmann so the text stays exactly what it prints.
    // True when s was plain ASCII.
    bool quote(std::string_view s) {
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
            return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
        });
        if (!plain) {
            buf_.append(toJsonLine(nlohmann::ordered_json(std::string(s))));
            return false;
        }
        buf_.push_back('"');
        buf_.append(s);
        buf_.push_back('"');
        return true;
    }

    std::ostream& os_;
    fmt::memory_buffer buf_;
    // An open object or array.
    struct Frame {
        bool array = false;
        // Where its key is in buf_, quoted (key_len 0 inside an array: no sibling); not a
        // copy, so a long key costs no allocation per record.
        std::size_t key_at = 0, key_len = 0;
        std::size_t elements = 0;  // members written so far
        // An array's elements that are not UTF-8: index, hex bytes.
        std::vector<std::pair<std::size_t, std::string>> bytes;
    };
    std::vector<Frame> frames_;
    std::size_t key_at_ = 0, key_len_ = 0;  // the last member's key in buf_, quoted
};

}  // namespace

std::unique_ptr<Printer> makeTextPrinter(std::ostream& os) {
    return std::make_unique<TextPrinter>(os);
}

std::unique_ptr<Printer> makeJsonPrinter(std::ostream& os) {
    return std::make_unique<JsonPrinter>(os);
}

std::unique_ptr<Printer> makePrinter(bool json, std::ostream& os) {
    return json ? makeJsonPrinter(os) : makeTextPrinter(os);
}

}  // namespace probectl
