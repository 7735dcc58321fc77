// The text and JSON back ends of probectl/printer.hpp.
#include "probectl/printer.hpp"

#include <fmt/format.h>

#include <optional>
#include <ostream>

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
        fmt::format_to(std::back_inserter(buf_), fmt::runtime(f), v);
    }

    std::ostream& os_;
    fmt::memory_buffer buf_;
    std::optional<Table> table_;
    std::vector<std::string> row_;
};

class JsonPrinter final : public Printer {
  public:
    explicit JsonPrinter(std::ostream& os) : os_(os) {}
    bool json() const override { return true; }

    void beginRecord(std::string_view type) override {
        root_ = nlohmann::ordered_json::object();
        stack_.assign(1, &root_);
        root_["type"] = type;
    }
    void endRecord() override {
        line_ = toJsonLine(root_);
        line_ += '\n';
        os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
        stack_.clear();
    }
    void beginObject(std::string_view key) override { open(key, nlohmann::ordered_json::object()); }
    void beginArray(std::string_view key) override { open(key, nlohmann::ordered_json::array()); }
    void end() override { stack_.pop_back(); }
    void beginTable(std::string_view key, std::vector<Table::Column>) override { beginArray(key); }
    void beginRow() override { beginObject({}); }
    void endRow() override { end(); }
    void endTable() override { end(); }

    void u64(Show s, std::string_view k, std::string_view, std::uint64_t v) override {
        put(s, k, v);
    }
    void s64(Show s, std::string_view k, std::string_view, std::int64_t v) override {
        put(s, k, v);
    }
    void hex(Show s, std::string_view k, std::string_view, std::uint64_t v) override {
        put(s, k, fmt::format("{:#x}", v));
    }
    void str(Show s, std::string_view k, std::string_view, std::string_view v) override {
        put(s, k, v);
    }
    void boolean(Show s, std::string_view k, bool v) override { put(s, k, v); }
    void null(Show s, std::string_view k, std::string_view) override { put(s, k, nullptr); }
    void value(std::string_view k, nlohmann::ordered_json v) override {
        put(Show::Json, k, std::move(v));
    }
    void flush() override { os_.flush(); }

  private:
    nlohmann::ordered_json& slot(std::string_view key) {
        nlohmann::ordered_json& top = *stack_.back();
        if (top.is_array()) {
            top.push_back(nullptr);
            return top.back();
        }
        return top[std::string(key)];
    }
    void open(std::string_view key, nlohmann::ordered_json v) {
        nlohmann::ordered_json& s = slot(key);
        s = std::move(v);
        stack_.push_back(&s);
    }
    template <typename T>
    void put(Show s, std::string_view key, T&& v) {
        if (s != Show::Text)
            slot(key) = std::forward<T>(v);
    }

    std::ostream& os_;
    nlohmann::ordered_json root_;
    std::vector<nlohmann::ordered_json*> stack_;
    std::string line_;
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
