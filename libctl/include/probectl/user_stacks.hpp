// User stacks: the frames of a `$ustack` (fetch_spec.hpp) stack, return addresses in one
// process, turned into text with the maps that process had: "leaf+0x4 (/usr/bin/app)".
//
// Addresses mean something only with the process's mappings (/proc/TGID/maps), which go
// away with the process: maps are captured per tgid while it lives (UserSymbolizer::capture)
// and kept, so a stack read after the process exited is still symbolized. A stack whose
// process was never captured prints its frames as "0xADDR [unknown]".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "probectl/elf_resolver.hpp"
#include "probectl/proc_maps.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Maps per process and ELF files per path, cached; not thread-safe.
class UserSymbolizer {
  public:
    // `proc` is the procfs to read maps from ("/proc"; tests pass a directory of their own
    // holding TGID/maps files).
    explicit UserSymbolizer(std::string proc = "/proc");

    // Reads and keeps the maps of `tgid` unless they are already kept. Returns whether maps
    // are kept for it (false: the process is gone or unreadable, and was never captured).
    bool capture(pid_t tgid);
    // Reads the maps of `tgid` again (a library loaded since); keeps the old ones when the
    // process is gone. Returns whether maps are kept for it.
    bool refresh(pid_t tgid);
    // Keeps `maps` as those of `tgid` (maps read elsewhere).
    void setMaps(pid_t tgid, ProcMaps maps);
    bool hasMaps(pid_t tgid) const;

    // One frame as text:
    //   "FUNC+0xOFF (PATH)"  the function of PATH's symbol table holding the address ("FUNC"
    //                        at offset 0); PATH as the process maps it
    //   "0xADDR (PATH)"      in a mapping of PATH (or of "[vdso]", an anonymous "[anon]")
    //                        whose file has no function there or cannot be read
    //   "0xADDR [unknown]"   no mapping holds it, or no maps were kept for the process
    // `caller`: the address is a return address (every frame but the innermost), looked up
    // one byte back so that a call ending a function is still inside it.
    std::string frameText(pid_t tgid, std::uint64_t addr, bool caller);

  private:
    const ElfResolver* elf(const std::string& path);

    std::string proc_;
    std::unordered_map<pid_t, ProcMaps> maps_;
    std::map<std::string, std::optional<ElfResolver>> elfs_;  // nullopt: could not be read
};

}  // namespace probectl
#pragma GCC visibility pop
