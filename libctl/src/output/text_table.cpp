#include "probectl/text_table.hpp"

#include <algorithm>
#include <ostream>

namespace probectl {

void Table::print(std::ostream& os) const {
    std::string out;
    print(out);
    os << out;
}

void Table::print(std::string& os) const {
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        width[c] = columns_[c].header.size();
        for (const auto& r : rows_)
            if (c < r.size())
                width[c] = std::max(width[c], r[c].size());
    }
    auto line = [&](auto cell) {
        const std::size_t start = os.size();
        std::string& out = os;
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            const std::string& text = cell(c);
            const std::size_t pad = width[c] - std::min(width[c], text.size());
            if (c > 0)
                out += "  ";
            if (columns_[c].align == Align::Right)
                out += std::string(pad, ' ') + text;
            else
                out += text + (c + 1 < columns_.size() ? std::string(pad, ' ') : "");
        }
        while (out.size() > start && out.back() == ' ')
            out.pop_back();
        os += '\n';
    };
    line([&](std::size_t c) -> const std::string& { return columns_[c].header; });
    static const std::string empty;
    for (const auto& r : rows_)
        line([&](std::size_t c) -> const std::string& { return c < r.size() ? r[c] : empty; });
}

}  // namespace probectl
