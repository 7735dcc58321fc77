// One printer, two back ends (after iproute2's print_*(PRINT_ANY, key, fmt, value)): a
// caller emits each field once, with its JSON key and its text format, and the back end
// picks what it needs. Text writes the formatted fields as one line; JSON writes one
// object per record (JSON Lines).
//
//   p.beginRecord("event");
//   p.u64(Show::Json, "ts_ns", "", ts);         // JSON only
//   p.u64(Show::Any, "cpu", "[{:03}] ", cpu);   // text "[002] ", JSON "cpu":2
//   p.endRecord();                               // text '\n', JSON {"type":"event",...}\n
//
// Tables: inside beginTable/endTable each row is a JSON object in the array `key` and an
// aligned text row; Show::Any/Text fields are its cells, in column order.
// Records go to the stream with one write each; the buffer is reused, so a text record
// costs no allocation once the buffer has grown.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string_view>
#include <vector>

#include "probectl/text_table.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Which back ends show a field (iproute2's PRINT_ANY, PRINT_FP, PRINT_JSON).
enum class Show { Any, Text, Json };

class Printer {
  public:
    virtual ~Printer() = default;
    virtual bool json() const = 0;

    // A record: JSON {"type": type, ...} on one line; text: its fields, then '\n'.
    virtual void beginRecord(std::string_view type) = 0;
    virtual void endRecord() = 0;
    // JSON nesting (nothing in text). Inside an array keys are ignored.
    virtual void beginObject(std::string_view key) = 0;
    virtual void beginArray(std::string_view key) = 0;
    virtual void end() = 0;  // closes the innermost object or array
    // Text: an aligned table; JSON: the array `key` with one object per row.
    virtual void beginTable(std::string_view key, std::vector<Table::Column> columns) = 0;
    virtual void beginRow() = 0;
    virtual void endRow() = 0;
    virtual void endTable() = 0;

    // Fields. `text_fmt` is fmt syntax with one argument; "" in a table means "{}".
    virtual void u64(Show s, std::string_view key, std::string_view text_fmt, std::uint64_t v) = 0;
    virtual void s64(Show s, std::string_view key, std::string_view text_fmt, std::int64_t v) = 0;
    // JSON "0x.." string (64-bit values exceed many readers' exact range); text fmt of v.
    virtual void hex(Show s, std::string_view key, std::string_view text_fmt, std::uint64_t v) = 0;
    virtual void str(Show s, std::string_view key, std::string_view text_fmt,
                     std::string_view v) = 0;
    // JSON true/false; text "yes"/"no".
    virtual void boolean(Show s, std::string_view key, bool v) = 0;
    // JSON null; text `text` as is.
    virtual void null(Show s, std::string_view key, std::string_view text) = 0;
    // A prebuilt JSON value (JSON only).
    virtual void value(std::string_view key, nlohmann::ordered_json v) = 0;
    // Text only, as is.
    void text(std::string_view s) { str(Show::Text, {}, "{}", s); }

    virtual void flush() = 0;
};

// Writes to `os` (which must outlive the printer).
std::unique_ptr<Printer> makeTextPrinter(std::ostream& os);
std::unique_ptr<Printer> makeJsonPrinter(std::ostream& os);
std::unique_ptr<Printer> makePrinter(bool json, std::ostream& os);

}  // namespace probectl
#pragma GCC visibility pop
