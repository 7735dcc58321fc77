// Plain-text tables for list/summary/symbols output (and the text printer's tables): columns sized
// to their widest cell, numbers right-aligned so counters line up.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class Table {
  public:
    enum class Align { Left, Right };
    struct Column {
        std::string header;
        Align align = Align::Left;
    };

    explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
    // Adds a row; missing cells print empty, extra cells are ignored.
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::size_t rows() const { return rows_.size(); }
    // Header line then rows, columns separated by two spaces, no trailing blanks.
    void print(std::ostream& os) const;
    // The same, appended to `out`.
    void print(std::string& out) const;

  private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace probectl
#pragma GCC visibility pop
