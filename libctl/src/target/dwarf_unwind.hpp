// DWARF unwinding of user stack snapshots (perf --call-graph dwarf): the registers and the
// top of the user stack a probe copied (FetchOpcode::StoreUstackSnapshot), unwound with
// elfutils' libdwfl by the call frame information of the files the process mapped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/proc_maps.hpp"

namespace probectl {

struct DwarfFrame {
    std::uint64_t pc = 0;
    bool activation = false;  // the interrupted instruction (else a return address)
};

// DwarfUnwind::stopped of a walk that reached the end of the snapshot ("... N bytes").
inline constexpr std::string_view kSnapshotEnded = "the stack snapshot ends after";

struct DwarfUnwind {
    std::vector<DwarfFrame> frames;  // innermost first
    std::string stopped;             // why the walk ended early; "" at the outermost frame
    bool cut = false;                // max_frames reached
};

// The modules of one process, reported once from its maps (the files are read when a
// stack first needs them, so the process may be gone by then).
class DwarfUnwinder {
  public:
    // nullptr when libdwfl cannot take the maps.
    static std::unique_ptr<DwarfUnwinder> create(pid_t tgid, const ProcMaps& maps);
    ~DwarfUnwinder();
    DwarfUnwinder(const DwarfUnwinder&) = delete;
    DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

    // `snapshot`: struct probectl_ustack_regs, then the stack bytes from its sp up.
    // `truncated`: the stack went on above the bytes copied.
    DwarfUnwind unwind(std::span<const std::uint8_t> snapshot, bool truncated,
                       std::size_t max_frames);
    // The probed instruction alone, for a process without modules.
    static DwarfUnwind registersOnly(std::span<const std::uint8_t> snapshot);

    struct Impl;

  private:
    explicit DwarfUnwinder(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
