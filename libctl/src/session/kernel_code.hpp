// The kernel's own code, read from /proc/kcore (root only), to say which offsets of a
// kernel function are instruction boundaries when the kernel refuses a kprobe there.
#pragma once

#include <cstdint>
#include <string>

namespace probectl {

// For kprobe:SYM+OFFSET refused with EILSEQ: "SYM+0x4 is inside ...; the nearest
// instruction boundaries are SYM+0x0, SYM+0x5", decoded from the function at `fn_addr`.
// "" when the code cannot be read (no /proc/kcore, addresses hidden).
std::string kprobeBoundaryHint(const std::string& symbol, std::uint64_t fn_addr,
                               std::uint64_t offset);

}  // namespace probectl
