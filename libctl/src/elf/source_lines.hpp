// Source positions of code addresses from a file's DWARF (libdw): the line table's file
// and line (DWARF 5, section 6.2), and the inlined calls that hold the address
// (DW_TAG_inlined_subroutine scopes, section 3.3.8.2), innermost first.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace probectl {

// One frame of source: `inlined` names a function inlined at this point ("" for the
// frame's own function, always the last); file "" and line 0 when the line table has none.
struct SourceFrame {
    std::string inlined;
    std::string file;  // as the CU names it: relative to its DW_AT_comp_dir when under it
    unsigned line = 0;
};

class SourceLines {
  public:
    // The DWARF of `dwarf_path` (the file itself or its separate debug file); nullptr when
    // it cannot be read or has no .debug_info.
    static std::unique_ptr<SourceLines> open(const std::string& dwarf_path);
    ~SourceLines();
    SourceLines(const SourceLines&) = delete;
    SourceLines& operator=(const SourceLines&) = delete;

    // The frames at ELF address `addr`, innermost first; empty when no CU covers it.
    // Answers are kept per address.
    const std::vector<SourceFrame>& at(std::uint64_t addr);
    // The file's DWARF, for other readers of it (CallSites); owned by this.
    Dwarf* dwarf() const { return dw_; }

  private:
    SourceLines(int fd, Dwarf* dw) : fd_(fd), dw_(dw) {}

    int fd_;
    Dwarf* dw_;
    std::map<std::uint64_t, std::vector<SourceFrame>> seen_;
};

}  // namespace probectl
