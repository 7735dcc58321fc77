// User stacks: the frames of a `$ustack` (fetch_spec.hpp) stack, return addresses in one
// process, turned into text with the maps that process had: "leaf+0x4 (/usr/bin/app)".
//
// Addresses mean something only with the process's mappings (/proc/TGID/maps), which go
// away with the process: maps are captured per tgid while it lives (UserSymbolizer::capture)
// and kept, so a stack read after the process exited is still symbolized. A stack whose
// process was never captured prints its frames as "0xADDR [unknown]". A process that execs
// has another address space under the same tgid: maps are kept per UserImage, the tgid and
// the number of the address space the kernel kept for the stack.
//
// DWARF mode (perf --call-graph dwarf): a probe copies the user registers and the top of the
// user stack (FetchedValue::snapshot); snapshotLines unwinds it with libdwfl by the call frame
// information of the files in the kept maps, so code built without frame pointers unwinds too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "probectl/elf_resolver.hpp"
#include "probectl/proc_maps.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

class CallSites;
class DwarfUnwinder;
class SourceLines;

// Whose maps name a stack's addresses: process `tgid`, in the address space the kernel kept
// for the stack under `maps_seq` (struct probectl_stack and probectl_fetch_value maps_seq,
// MAPS_GET maps-seq), or with maps_seq 0 the process's current one (/proc/TGID/maps: none
// was kept, or another backend). Converts from a tgid alone.
struct UserImage {
    pid_t tgid = 0;
    std::uint32_t maps_seq = 0;
    UserImage(pid_t t, std::uint32_t seq = 0) : tgid(t), maps_seq(seq) {}
    auto operator<=>(const UserImage&) const = default;
};

// How the walks of UserSymbolizer::snapshotLines went, for userSnapshotSummary.
struct SnapshotWalks {
    std::uint64_t unwound = 0;  // snapshots unwound
    std::uint64_t stopped = 0;  // walks that ended before the outermost frame
    std::uint64_t filled = 0;   // snapshots that filled their copy (the stack went on above)
    std::uint64_t cut = 0;      // walks that ended where the copy did: a bigger one goes on
    // Counts the walk that gave `lines`, of a snapshot that `filled` its copy.
    void count(const std::vector<std::string>& lines, bool filled);
};

// Maps per process and ELF files per path, cached; not thread-safe.
class UserSymbolizer {
  public:
    // `proc` is the procfs to read maps from ("/proc"; tests pass a directory of their own
    // holding TGID/maps files).
    explicit UserSymbolizer(std::string proc = "/proc");
    UserSymbolizer(UserSymbolizer&&) noexcept;
    UserSymbolizer& operator=(UserSymbolizer&&) noexcept;
    ~UserSymbolizer();

    // Reads and keeps the maps of `image` unless they are already kept. Returns whether maps
    // are kept for it (false: the process is gone or unreadable, and was never captured).
    bool capture(UserImage image);
    // Reads the maps of `image` again (a library loaded since); keeps the old ones when the
    // process is gone. Maps kept for an image with a maps_seq come only from the source
    // (the kernel renders that very address space again when it kept it again), never from
    // /proc, which may be a later exec's; /proc's replace those of an image without one only
    // while they show the same program and [vdso] mappings (no exec since). Returns whether
    // maps are kept for it.
    bool refresh(UserImage image);
    // Reads the maps of `image` again (refresh) when an address of `addrs` is in none of
    // the kept mappings (code mapped since they were read: a dlopen()ed library) and its page
    // was not looked for before: an address no mapping ever holds (a bad frame, code gone)
    // costs one read, not one per stack. Returns whether the maps were read again.
    bool refreshMissing(UserImage image, std::span<const std::uint64_t> addrs);
    // Keeps `maps` as those of `image` (maps read elsewhere).
    void setMaps(UserImage image, ProcMaps maps);
    // Where maps come from before procfs: the /proc/PID/maps text of `image`, or nullopt
    // when the source has none (e.g. the kernel backend's KernelMapsSource, whose address
    // space outlives the process). capture and refresh try it first; text that does not
    // parse, or holds no mapping, counts as none.
    using MapsSource = std::function<std::optional<std::string>(UserImage image)>;
    void setMapsSource(MapsSource source);
    bool hasMaps(UserImage image) const;

    // One frame as text:
    //   "FUNC+0xOFF (PATH)"  the function of PATH's symbol table holding the address ("FUNC"
    //                        at offset 0); PATH as the process maps it
    //   "PATH+0xELF"         in no function of PATH: its ELF address (addr2line -e PATH,
    //                        objdump, uprobe:PATH:elf=0xELF), stable across runs
    //   "PATH+0xOFF (file offset)"  PATH cannot be read as ELF: the file offset
    //   "[vdso]+0xOFF"       in the vDSO, its offset (= its ELF address)
    //   "0xADDR (NAME)"      in a mapping with no file ("[anon]", "[stack]", "[heap]")
    //   "0xADDR [unknown]"   no mapping holds it, or no maps were kept for the process
    // `caller`: the address is a return address (every frame but the innermost), looked up
    // one byte back so that a call ending a function is still inside it.
    std::string frameText(UserImage image, std::uint64_t addr, bool caller);
    // The frame as frameText gives it, with " at FILE:LINE" where the file's DWARF (its own
    // or its separate debug file's) has a line for the address; before it, one line per
    // call inlined at that point, innermost first: "FUNC (inlined) at FILE:LINE", the line
    // being where the next inner one is (DWARF's inlined-subroutine scopes and call sites).
    // Without DWARF: exactly frameText.
    std::vector<std::string> frameLines(UserImage image, std::uint64_t addr, bool caller);
    // What goes between two adjacent frames of a stack: `inner` (`inner_caller` as for
    // frameText) and `outer`, a return address. Where the call before `outer` called a
    // function B that the DWARF of its file (call-site entries) proves is not the inner
    // frame's, B's frame is gone: B ended in a tail call (a jump, which leaves no frame),
    // maybe through more of them. When the call sites name exactly one chain of tail calls
    // from B to the inner frame's function, one line per function of it, innermost first:
    //   "FUNC (tail call: its frame is gone) at FILE:LINE"  (the line of its jump; calls
    //                                    inlined at the jump come before it, as in frameLines)
    // else one line, nothing guessed:
    //   "[A called B; the frames from it to C were not kept (tail calls)]"
    // Empty when no frame is gone or DWARF does not say (no call-site entries, a call
    // through a pointer, a callee not in the caller's file: a PLT call may end anywhere).
    std::vector<std::string> tailCallLines(UserImage image, std::uint64_t inner, bool inner_caller,
                                           std::uint64_t outer);

    // The frames of a user stack snapshot of `image` (struct probectl_ustack_regs, then the
    // stack bytes from its sp up), unwound by DWARF CFI through the kept maps, innermost
    // first, each as frameLines gives it, with tailCallLines between them; at most
    // `max_frames`, then "...". A walk that ends before the outermost frame says why in a
    // last line "[unwind stopped: REASON]" (e.g. the snapshot ended: `truncated` says the
    // stack went on above it); nothing is guessed.
    std::vector<std::string> snapshotLines(UserImage image, std::span<const std::uint8_t> snapshot,
                                           bool truncated, std::size_t max_frames = 127);

  private:
    const ElfResolver* elf(const std::string& path);
    SourceLines* sourceLines(const std::string& path, const ElfResolver& file);
    CallSites* callSites(const std::string& path, const ElfResolver& file);
    // The file mapped at `addr` and the ELF address of it (one byte back for a caller);
    // null when no kept map or readable file holds it.
    const ElfResolver* fileAt(UserImage image, std::uint64_t addr, bool caller,
                              const ProcMapping** map, std::uint64_t* elf_addr);

    bool fromSource(UserImage image);

    std::string proc_;
    MapsSource source_;
    std::map<UserImage, ProcMaps> maps_;
    // Pages of addresses refreshMissing read the maps again for, per image.
    std::map<UserImage, std::set<std::uint64_t>> looked_for_;
    std::map<std::string, std::optional<ElfResolver>> elfs_;  // nullopt: could not be read
    // Per process, made by the first snapshot; null: libdwfl could not take its maps.
    std::map<UserImage, std::unique_ptr<DwarfUnwinder>> unwinders_;
    std::map<std::string, std::unique_ptr<SourceLines>> lines_;  // null: no DWARF
    std::map<std::string, std::unique_ptr<CallSites>> calls_;    // null: no DWARF; uses lines_
};

}  // namespace probectl
#pragma GCC visibility pop
