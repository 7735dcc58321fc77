#include "target/no_dwarf_note.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <map>

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
    struct Group {
        std::size_t first;  // index in `notes` of its first note
        std::vector<std::string> names;
    };
    std::map<std::string, Group> groups;  // by what follows the name: the file and advice
    std::vector<bool> merged(notes.size(), false);
    for (std::size_t i = 0; i < notes.size(); i++) {
        const std::string& n = notes[i];
        const std::size_t at = n.find(kIsStatic);
        const std::size_t open = at == std::string::npos ? at : n.rfind('\'', at - 1);
        if (open == std::string::npos)
            continue;
        auto [g, fresh] = groups.try_emplace(n.substr(at + kIsStatic.size()), Group{i, {}});
        g->second.names.push_back(n.substr(open + 1, at - open - 1));
        merged[i] = true;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < notes.size(); i++) {
        if (!merged[i]) {
            out.push_back(std::move(notes[i]));
            continue;
        }
        for (auto& [rest, g] : groups) {
            if (g.first != i)
                continue;
            if (g.names.size() == 1) {
                out.push_back(std::move(notes[i]));
                break;
            }
            constexpr std::size_t kShown = 3;
            std::string names;
            for (std::size_t k = 0; k < g.names.size() && k < kShown; k++)
                names += fmt::format("{}'{}'", k == 0 ? "" : ", ", g.names[k]);
            if (g.names.size() > kShown)
                names += fmt::format(" and {} more", g.names.size() - kShown);
            out.push_back(fmt::format("{}: {} are static functions and {}", spec, names, rest));
            break;
        }
    }
    notes = std::move(out);
}

}  // namespace probectl
