// KernelSymbols: the kernel's symbol table as /proc/kallsyms shows it, plus the kprobes
// blacklist, so that libctl can resolve and vet a location before asking the kernel
// (the module cannot: kallsyms_lookup_name is unexported since 5.7).
//
// /proc/kallsyms line format (kernel/kallsyms.c s_show): "%px %c %s\t[%s]"
//   ffffffff81234560 T __x64_sys_getppid
//   ffffffffc0a01000 t my_func\t[my_module]
// Addresses read as 0 when kptr_restrict hides them from the reader (non-root, or
// kptr_restrict=2).
// /sys/kernel/debug/kprobes/blacklist (kernel/kprobes.c blacklist_seq_show):
//   "0x%px-0x%px\t%ps\n" = 0xSTART-0xEND<TAB>SYMBOL  (addresses 0 when hidden)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "probectl/client.hpp"
#include "probectl/glob.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

namespace detail {
struct LazySymbols;
}

struct KernelSymbol {
    std::uint64_t addr = 0;
    char type = '?';  // kallsyms type letter: T/t text, D/d data, B/b bss, R/r rodata, ...
    std::string name;
    std::string module;  // "" for vmlinux
    // Text symbols (T/t, W/w): the ones a kprobe can target.
    bool isFunction() const;
    // "function", "data", "rodata", "bss", "weak", "absolute", "other"
    std::string_view kindName() const;
};

// One blacklist range (end exclusive, as the kernel's [start, end)).
struct BlacklistEntry {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::string symbol;
};

// Whether a location can be probed, and why not (for `probectl resolve`, `symbols`).
enum class Probeability {
    Ok,
    Unknown,      // no such symbol
    Duplicate,    // several addresses for the name: use kprobe:0xADDR
    Blacklisted,  // in the kprobes blacklist
    NotText,      // data symbol: nothing to execute there
    Padding,      // __pfx_ symbol: NOP padding before a function (kernel >= 6.2), not code
    InitText,     // vmlinux init code (.init.text): freed after boot, the kernel refuses it
};
std::string_view toString(Probeability p);

// A spec resolved against the symbol table: what to send and what it points at.
struct Resolution {
    ProbeRequest request;       // ready for Client::addProbe (kind, symbol/addr, offset, flags)
    std::string symbol;         // symbol the location is in ("" if an address outside any)
    std::string module;         // "" for vmlinux
    std::uint64_t address = 0;  // symbol address + offset (0 when addresses are hidden)
    // address - the symbol's address: the spec's +OFFSET, or where a 0xADDR falls inside its
    // function. Non-zero means "inside the function": only the kernel can tell whether that
    // is an instruction boundary.
    std::uint64_t symbol_offset = 0;
};

class KernelSymbols {
  public:
    // Parses kallsyms text and (optionally) blacklist text. Lines that do not parse are
    // skipped and counted in malformedLines(); EINVAL only if nothing parsed at all and the
    // text was not empty.
    static Result<KernelSymbols> fromText(std::string_view kallsyms,
                                          std::string_view blacklist = {});
    // Reads the real files. A missing/unreadable blacklist (debugfs not mounted, not root)
    // is not an error: hasBlacklist() is then false. Errors: errno of opening kallsyms.
    static Result<KernelSymbols> load(
        const std::string& kallsyms_path = "/proc/kallsyms",
        const std::string& blacklist_path = "/sys/kernel/debug/kprobes/blacklist");

    // The running kernel's table as load() gives it, with the kallsyms part from the
    // kallsyms cache when the cache was written in this boot, for the same loaded modules
    // (by build id) and the same visibility of addresses; otherwise /proc/kallsyms is read
    // and the cache rewritten. The blacklist is always read afresh. A cache that is missing,
    // stale, damaged or not safely owned is passed over silently. BPF programs, ftrace
    // trampolines and kprobe instruction pages (the "[bpf]" and "[__builtin__*]" entries)
    // come and go without a module load: a table from the cache leaves them out and
    // complete() is false, so a caller that symbolizes or vets an address uses load(). The
    // cache is
    // $PROBECTL_SYMBOL_CACHE/kallsyms.cache if that variable is set (empty: no cache),
    // else /run/probectl/kallsyms.cache for root, else under $XDG_CACHE_HOME/probectl or
    // $HOME/.cache/probectl; deleting it is always safe. Errors: as load().
    static Result<KernelSymbols> loadCurrent();
    // The table in the kallsyms cache file `path` (see loadCurrent) if it is valid under
    // `key`, answered from the file in place: a lookup by name costs a binary search in the
    // file's index, and only what needs every symbol (symbols(), size(), match(), symbolAt(),
    // suggest(), a lookup that finds nothing) reads the whole file, once, or `kallsyms_path`
    // when the file turns out damaged. nullopt when the file cannot be used.
    static std::optional<KernelSymbols> fromCacheFile(const std::string& path, std::string_view key,
                                                      std::string_view blacklist,
                                                      const std::string& kallsyms_path);
    // A table from symbols already split into fields (the cache's), in kallsyms order, plus
    // blacklist text as fromText takes it; `malformed` is the parse's skipped-line count.
    static KernelSymbols fromSymbols(std::vector<KernelSymbol> symbols,
                                     std::string_view blacklist = {}, std::size_t malformed = 0);

    std::size_t size() const;
    const std::vector<KernelSymbol>& symbols() const;
    std::size_t malformedLines() const { return malformed_; }
    // True when every address read as 0 (kptr_restrict or not root).
    bool addressesHidden() const { return hidden_; }
    bool hasBlacklist() const { return has_blacklist_; }
    // False for a table from the kallsyms cache (see loadCurrent): names of vmlinux and
    // modules only, without the entries that change without a module load.
    bool complete() const { return complete_; }

    // Every symbol with this exact name (several for duplicated static names), address order.
    std::vector<const KernelSymbol*> lookup(std::string_view name) const;
    // The text symbol containing `addr`, or nullptr. The nearest symbol at or below `addr`
    // of any kind must be text (an address in data, rodata or bss is in no function), and a
    // following symbol must exist (its address bounds the function: past the last symbol
    // the size is unknown). End markers (_etext, __*_end) are not functions.
    // Always nullptr when addresses are hidden.
    const KernelSymbol* symbolAt(std::uint64_t addr) const;

    // The unique function named `name`. Errors (EINVAL unless noted), each naming `name`:
    //   ENOENT  unknown, with "did you mean: a, b, c?" (see suggest())
    //   ENOTUNIQ  several addresses: lists candidates (address + module) and suggests
    //           kprobe:0xADDR
    //   EINVAL  not a function (data symbol), or __pfx_ padding (names the real function)
    Result<const KernelSymbol*> resolveFunction(std::string_view name) const;

    // Blacklist entry by symbol name, or containing `addr` (address ranges only when known).
    std::optional<BlacklistEntry> blacklisted(std::string_view name) const;
    std::optional<BlacklistEntry> blacklistedAddr(std::uint64_t addr) const;
    // Whether `addr` is in vmlinux's init text, [_sinittext, _einittext): code the kernel
    // freed after boot and refuses to probe since. False when either bound is unknown.
    bool inInitText(std::uint64_t addr) const;

    // Syscall name -> this kernel's entry symbol: __x64_sys_NAME, else __se_sys_NAME, else
    // sys_NAME (older or non-wrapper kernels). ENOENT with did-you-mean among syscalls.
    Result<std::string> syscallSymbol(std::string_view syscall) const;

    // Up to `max` function names close to `name`: first by edit distance (Levenshtein
    // <= max(2, len/3), closest first: likely typos), then names containing `name`
    // (shortest first).
    std::vector<std::string> suggest(std::string_view name, std::size_t max = 5) const;

    // Symbols whose name matches a shell glob (* ? [...]), in table order.
    std::vector<const KernelSymbol*> match(std::string_view glob) const;

    // Probe-ability verdict for one symbol entry / name.
    Probeability probeability(const KernelSymbol& sym) const;

    // Resolves a parsed spec (see Resolution). kprobe/kretprobe by name send the name (the
    // kernel resolves it) after checking it is unique, a function and not blacklisted;
    // by address send the address after a blacklist check and after checking it lies in a
    // function (symbolAt; EINVAL "not inside any function" otherwise). A kretprobe by
    // address must be at a function's entry: the symbol's address, or symbol+4 (entry after
    // ENDBR on IBT kernels); EINVAL "a kretprobe must be at a function's entry" otherwise.
    // syscall:NAME becomes a kprobe on syscallSymbol(NAME) with PROBECTL_PROBE_F_SYSCALL when it is
    // an __x64_sys_ wrapper (the flag means "arg0 is the user pt_regs"). Errors as resolveFunction,
    // plus EINVAL "SYMBOL is in the kprobes blacklist", EINVAL for an offset beyond the function
    // (when the next symbol's address is known), and EACCES "addresses hidden: run as root /
    // kptr_restrict" for an address spec when addresses are hidden.
    Result<Resolution> resolve(const ProbeSpec& spec) const;

  private:
    void index();
    void addBlacklist(std::string_view text);
    std::vector<KernelSymbol> symbols_;
    std::vector<std::size_t> by_addr_;  // every symbol with a non-zero address, by address
    // Names hashed into chains of symbol index + 1 (0 ends a chain): two flat arrays, far
    // cheaper to build for ~150k kallsyms lines than a sorted index or a map of vectors.
    std::vector<std::uint32_t> name_heads_;
    std::vector<std::uint32_t> name_next_;
    std::vector<BlacklistEntry> blacklist_;
    std::unordered_map<std::string, std::size_t> blacklist_by_name_;
    std::size_t malformed_ = 0;
    bool hidden_ = false;
    bool has_blacklist_ = false;
    bool complete_ = true;
    // Set for a table answered from the cache file (fromCacheFile): then symbols_ and the
    // indexes above are empty, and what needs them asks lazy_'s whole table.
    std::shared_ptr<detail::LazySymbols> lazy_;
    const KernelSymbols& whole() const;
};

}  // namespace probectl
#pragma GCC visibility pop
