// Separate debug files, found as gdb finds them: by GNU build-id
// (DEBUG_DIR/.build-id/xx/rest.debug), then by the .gnu_debuglink section's file name in
// the file's own folder, its .debug/ subfolder and DEBUG_DIR/FOLDER/, accepting a
// debuglink candidate only when its CRC-32 matches the one the link records.
#pragma once

#include <libelf.h>

#include <string>

namespace probectl {

struct DebugFileSearch {
    std::string path;  // the debug file, "" when none fits
    // Why none was used, for the symbol source text: "no debug file", or what the
    // debuglink named and why each candidate was refused.
    std::string note;
};

// `path`: the file `elf` was read from, as the tracer opens it; `root`: the prefix of
// `path` and `debug_dir` that leads into the traced process's mount namespace ("" for
// none); `debug_dir` "" never looks.
DebugFileSearch findDebugFile(Elf* elf, const std::string& path, const std::string& root,
                              const std::string& build_id, const std::string& debug_dir);

}  // namespace probectl
