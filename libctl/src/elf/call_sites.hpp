// What a file's DWARF says about calls (DWARF 5 section 3.4.2, call site entries; GCC's
// DW_TAG_GNU_call_site before DWARF 5): the function a call with a given return address
// calls, and the tail calls a function makes (a jump that leaves no frame of its own). A
// symbolizer uses them to notice a frame a tail call took off the stack: the caller's call
// names B, but the frame above it is in C.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace probectl {

// The inner one of two adjacent frames, as seen from the file of the outer (the caller).
struct InnerFrame {
    bool same_file = false;  // in the caller's file; then `addr` is an ELF address in it
    std::uint64_t addr = 0;  // its pc (one byte back when it is a return address)
    std::string symbol;      // its function's symbol name ("" when unknown), any file
};

// A function whose frame a tail call removed: `jump` is an ELF address of the file inside
// the jump it made (DW_AT_call_pc, else one byte before the return address DWARF gives it).
struct TailCallFrame {
    std::string function;
    std::uint64_t jump = 0;
};

// What DWARF says lies between a return address and the frame above it.
struct TailGap {
    // The called function is provably not the inner frame's, so its frame is gone.
    bool gone = false;
    std::string callee;  // the called function's name
    // Set when the call sites name exactly one way from the callee to the inner frame's
    // function through tail calls: the functions left without a frame, callee first.
    std::vector<TailCallFrame> chain;
};

class CallSites {
  public:
    // The entry (ELF address) of the one function of this file with a symbol `name`;
    // nullopt when none or several. Callees defined in another CU are only declared in the
    // caller's: their code is found by their name.
    using EntryOf = std::function<std::optional<std::uint64_t>(std::string_view name)>;

    // `dw` stays the caller's and must outlive this.
    CallSites(Dwarf* dw, EntryOf entry_of);

    // The gap between a caller frame whose return address is `ret` (an ELF address of this
    // file) and `inner`, the frame above it. Not gone when DWARF names no call at `ret`,
    // calls through a pointer there, or the callee's code is not in this file (a PLT call
    // may end in any function: an ifunc's choice, an alias). Answers are kept.
    const TailGap& between(std::uint64_t ret, const InnerFrame& inner);

  private:
    struct Site {
        Dwarf_Die origin{};     // the called function's DIE; addr null: an indirect call
        std::uint64_t ret = 0;  // tail calls: an address inside the jump
    };
    struct Unit {
        std::map<std::uint64_t, Site> calls;  // non-tail call sites by return address
    };
    struct Walk;

    Unit* unitAt(std::uint64_t addr);
    std::optional<Dwarf_Die> subprogramAt(std::uint64_t addr);
    std::optional<Dwarf_Die> definitionOf(Dwarf_Die origin);
    std::vector<Site> tailCallsOf(Dwarf_Die def);
    bool isInner(Dwarf_Die fn, const InnerFrame& inner, const Dwarf_Die* inner_def);
    void search(Walk& w, Dwarf_Die def, int depth);

    Dwarf* dw_;
    EntryOf entry_of_;
    std::map<std::uint64_t, Unit> units_;  // by the CU's DIE offset
    std::map<std::tuple<std::uint64_t, bool, std::uint64_t, std::string>, TailGap> seen_;
};

}  // namespace probectl
