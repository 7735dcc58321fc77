// Probe spec text -> ProbeSpec (bpftrace-like locations; grammar below and in README):
//
//   kprobe:SYMBOL[+OFFSET]    kprobe:0xADDR
//   kretprobe:SYMBOL          kretprobe:0xADDR
//   syscall:NAME              (resolved later by KernelSymbols to e.g. __x64_sys_NAME)
//   tracepoint:SUBSYS:EVENT   a vmlinux tracepoint (t:SUBSYS:EVENT too); SUBSYS is the
//                             trace-event directory (tracefs events/SUBSYS/EVENT), `*` when
//                             not checked; resolved by Tracepoints (tracepoints.hpp). Fetch
//                             arguments: $argN (its raw arguments) and args.NAME[->FIELD]
//
// User space (resolved by resolveUserSpec, user_target.hpp):
//   uprobe:PATH:SYMBOL[+OFFSET]    function entry, or OFFSET bytes into it
//   uprobe:PATH:0xN                N is a FILE OFFSET in PATH (what the kernel takes)
//   uprobe:PATH:off=N              the same, marked explicitly (needed together with -p)
//   uprobe:PATH:elf=N              N is an ELF virtual address, as readelf -s, nm and
//                                  objdump print it (st_value space)
//   uprobe:PATH:va=N               N is a runtime address in the process given with -p PID
//   uretprobe:PATH:SYMBOL          function return (also with 0xN / off= / elf= / va=)
//   usdt:PATH:PROVIDER:NAME        a USDT (sys/sdt.h) probe; usdt:PATH:NAME when only one
//                                  provider has NAME
// PATH is an absolute or relative file path (it contains a '/'), or a library name such as
// libc or libc.so.6, found as the dynamic linker finds it (ld.so.cache, then the standard
// directories; with -p PID, in that process's mappings).
//
// Quoting: PATH and SYMBOL may be written in single or double quotes; inside quotes every
// character is literal up to the matching quote (there are no escapes, so a field cannot
// contain its own quote character: use the other kind). Quotes are needed for C++ names
// and for paths that contain ':':
//   uprobe:/bin/x:'ns::f(int)'     uprobe:"/opt/a:b/prog":main
// An unquoted user-space SYMBOL is [A-Za-z_.$][A-Za-z0-9_.$@]* ('@' for versioned names
// such as memcpy@GLIBC_2.2.5); a ':' or '(' in it is refused with a hint to quote it.
//
// OFFSET is decimal or 0x-hex bytes; a kernel SYMBOL is [A-Za-z_.][A-Za-z0-9_.$]* (covers
// compiler suffixes such as foo.isra.0, foo.cold).
//
// Fetch arguments follow the location, separated by spaces, in the kprobe_events language
// (fetch_spec.hpp): "kprobe:do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):ustring",
// "uretprobe:libc:malloc size=$arg1:u64 ptr=$retval". $argN is allowed at a function's
// entry (offset 0) and in return probes (the kernel saves the entry arguments); $retval in
// return probes only. USDT probes take none: they fetch their own arguments (arg1..argN).
//
// A predicate may end the spec, after the word `if` (as in ftrace trigger syntax), over the
// fetch arguments and $pid $tid $uid $cpu $comm (grammar in predicate.hpp):
//   "kprobe:do_sys_openat2 fn=+0($arg2):ustring if fn ~ \"/etc/*\" && $comm != \"sh\""
//   "usdt:/bin/app:pc:tick if arg1 >= 2"   (a USDT probe's own arg1..argN)
// The kernel evaluates it before a record is reserved; rejected hits are counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/fetch_spec.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/result.hpp"
#include "probectl/spec_error.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// What the number N of a user-space address location means. Three address spaces are in
// play and mixing them up probes the wrong instruction, so the spec names which one it uses.
enum class UserAddrKind {
    None,            // the location is a symbol (or a USDT probe)
    FileOffset,      // 0xN or off=N: byte offset in the file, the kernel's uprobe offset
    ElfAddress,      // elf=N: an address in the ELF's own layout (st_value, p_vaddr)
    ProcessAddress,  // va=N: an address in a running process (needs a pid to translate)
};

// "file offset", "ELF address", "process address" ("" for None)
std::string_view toString(UserAddrKind kind);

struct ProbeSpec {
    SpecKind kind = SpecKind::Kprobe;
    // Symbol name (kprobe/kretprobe) or syscall name (syscall, e.g. "openat"); empty when
    // the location is an address.
    std::string symbol;
    std::uint32_t offset = 0;  // bytes after `symbol` (kprobe only)
    std::uint64_t addr = 0;    // kernel virtual address, when has_addr
    bool has_addr = false;
    // kretprobe instances (1..PROBECTL_MAXACTIVE_MAX); 0 = kernel default. Not part of the
    // spec text: set from an option (probectl trace --maxactive N) or SessionOptions.
    std::uint32_t maxactive = 0;
    std::string text;  // the text this spec was parsed from (canonical form if built by hand)
    std::vector<FetchArg> fetch_args;  // NAME=SOURCE[:TYPE] after the location, in order
    // The predicate after `if` ("" = none), as written, and where it starts in `text`
    // (byte offset, for parsePredicate's columns). Type-checked against fetch_args when parsed,
    // except for usdt, whose arguments are known only once the probe is resolved.
    std::string predicate;
    std::size_t predicate_begin = 0;

    // User-space specs only. For uprobe/uretprobe, `symbol` is the function name as written
    // (mangled or demangled C++, optionally name@VERSION), `offset` the +OFFSET bytes, and an
    // address location sets has_addr, `addr` and `user_addr`.
    std::string path;       // PATH as written: a file path or a library name
    std::string provider;   // usdt: PROVIDER, "" when the spec gave only NAME
    std::string usdt_name;  // usdt: NAME
    std::string subsystem;  // tracepoint: SUBSYS as written ("*": any)
    UserAddrKind user_addr = UserAddrKind::None;
    // The address kind was written out (off=, elf=, va=) rather than implied by a bare 0xN.
    // With a pid a bare 0xN is ambiguous (file offset or process address?) and is refused.
    bool user_addr_marked = false;

    // Canonical text: "kprobe:do_sys_openat2+0x10", "kprobe:0xffffffff81000000",
    // "uprobe:/bin/x:'ns::f(int)'+0x4", "uprobe:libc:off=0x9be70", "usdt:/bin/x:prov:name",
    // with fields quoted where the grammar needs it, so that parsing str() gives this spec.
    std::string str() const;
    // str() without the fetch arguments and predicate.
    std::string locationStr() const;
};

// Parses one spec. Never touches the system (resolution is KernelSymbols' job).
Result<ProbeSpec, SpecError> parseProbeSpec(std::string_view text);

// The location at the start of spec text, as parseProbeSpec reads it: up to the first space
// or tab outside a quoted field, so "uprobe:/x:'A::get(int) const' k=$arg2:s32" gives
// "uprobe:/x:'A::get(int) const'" (what names the probe in text lines and exported events).
// Allocation-free; the text need not be a valid spec (then: up to its first such space).
std::string_view specLocation(std::string_view text);

// Whether the location is a shell glob (* ? [...]) over names: kprobe:, kretprobe:,
// syscall:, uprobe:PATH:, uretprobe:PATH: and a tracepoint's EVENT. It names many probes;
// expandSpec (expand.hpp) turns it into one spec per name. A uprobe:/uretprobe: name that
// names a function of the file exactly is that function, not a glob ("ns::g(char*)"): only
// SpecExpander and resolveSpec, which read the file, can tell.
bool hasGlob(const ProbeSpec& spec);

// Whether the spec's probe fires at a return, where $retval exists: kretprobe, uretprobe,
// and syscall (the wrapper's kretprobe), except the syscalls that never return.
bool firesAtReturn(const ProbeSpec& spec);

}  // namespace probectl
#pragma GCC visibility pop
