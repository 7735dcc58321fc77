#include "target/no_dwarf_note.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <utility>

namespace probectl {

namespace {

constexpr std::string_view kIsStatic = "' is a static function and ";

}  // namespace

std::string noDwarfNote(const std::string& name, const std::string& path) {
    return fmt::format(
        "'{}{}{} has no DWARF (.debug_info, nor a debug file with it): calls the compiler "
        "inlined into callers are not seen. Build with -g or install the debug file, and each "
        "inlined copy is probed too",
        name, kIsStatic, path);
}

void mergeNoDwarfNotes(std::vector<std::string>& notes, const std::string& spec) {
    // Per file (what follows the name: the file and the advice), the index of its first note
    // and every name.
    std::map<std::string, std::pair<std::size_t, std::vector<std::string>>> files;
    std::vector<const std::string*> file_of(notes.size(), nullptr);
    for (std::size_t i = 0; i < notes.size(); i++) {
        const std::string& n = notes[i];
        const std::size_t at = n.find(kIsStatic);
        const std::size_t open = at == std::string::npos ? at : n.rfind('\'', at - 1);
        if (open == std::string::npos)
            continue;
        auto it =
            files.try_emplace(n.substr(at + kIsStatic.size()), i, std::vector<std::string>()).first;
        it->second.second.push_back(n.substr(open + 1, at - open - 1));
        file_of[i] = &it->first;
    }
    constexpr std::size_t kShown = 3;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < notes.size(); i++) {
        if (!file_of[i]) {
            out.push_back(std::move(notes[i]));
            continue;
        }
        const auto& [first, names] = files.at(*file_of[i]);
        if (first != i)
            continue;  // said in its file's first note
        if (names.size() == 1) {
            out.push_back(std::move(notes[i]));
            continue;
        }
        std::string list;
        for (std::size_t k = 0; k < names.size() && k < kShown; k++)
            list += fmt::format("{}'{}'", k == 0 ? "" : ", ", names[k]);
        if (names.size() > kShown)
            list += fmt::format(" and {} more", names.size() - kShown);
        out.push_back(fmt::format("{}: {} are static functions and {}", spec, list, *file_of[i]));
    }
    notes = std::move(out);
}

}  // namespace probectl
