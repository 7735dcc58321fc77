// Probe spec text -> ProbeSpec (grammar in /work/shared/DESIGN.md, bpftrace-like locations):
//
//   kprobe:SYMBOL[+OFFSET]    kprobe:0xADDR
//   kretprobe:SYMBOL          kretprobe:0xADDR
//   syscall:NAME              (resolved later by KernelSymbols to e.g. __x64_sys_NAME)
//
// OFFSET is decimal or 0x-hex bytes; SYMBOL is [A-Za-z_.][A-Za-z0-9_.$]* (covers
// compiler suffixes such as foo.isra.0, foo.cold). Fetch arguments (NAME=SOURCE) are not
// part of protocol version 1 and are rejected with a column-accurate error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "probectl/result.hpp"

namespace probectl {

enum class SpecKind {
    Kprobe,     // kprobe:...
    Kretprobe,  // kretprobe:...
    Syscall,    // syscall:NAME, a kprobe on the syscall's entry wrapper
};

// "kprobe", "kretprobe", "syscall"
std::string_view toString(SpecKind kind);

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

    // Canonical text: "kprobe:do_sys_openat2+0x10", "kprobe:0xffffffff81000000", ...
    std::string str() const;
};

// A parse error pointing into the input.
//  column: 1-based column of the offending character (input.size()+1 for "unexpected end").
struct SpecError {
    std::string message;
    std::size_t column = 0;
    std::string input;

    // Three lines in the style of bpftrace/perf:
    //   <input>:1:<column>: error: <message>
    //   <input>
    //         ^
    std::string render() const;
};

// Parses one spec. Never touches the system (resolution is KernelSymbols' job).
Result<ProbeSpec, SpecError> parseProbeSpec(std::string_view text);

// SpecError -> Error (err = EINVAL, message = render()), for callers using one error type.
Error toError(const SpecError& e);

}  // namespace probectl
