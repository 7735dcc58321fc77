// The note for a static function of a file without DWARF (its inlined copies cannot be
// found), and the merging of one such note per function into one line for a glob. Internal
// to libctl.
#pragma once

#include <string>
#include <vector>

namespace probectl {

// "'NAME' is a static function and PATH has no DWARF (...): calls the compiler inlined
// into callers are not seen. ..."
std::string noDwarfNote(const std::string& name, const std::string& path);

// A glob over a file without DWARF gave one noDwarfNote() per static function (a C
// program's start-up functions alone are five): those of one file become one note,
// "SPEC: 'a', 'b', 'c' and N more are static functions and PATH has no DWARF ...", in the
// place of the first. Other notes are kept as they are, in order.
void mergeNoDwarfNotes(std::vector<std::string>& notes, const std::string& spec);

}  // namespace probectl
