// The probe kinds a spec can name, in one table: the spec prefix and its alias, which
// resolver turns the spec into PROBE_ADD requests, the kernel kind it becomes and the rules
// that follow from it. Parsing, printing, help text and every user-space test of a kind
// read this table, so a new kind is one row here (plus its resolver).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "probectl/result.hpp"  // its C++20 check, before std::span is used

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

enum class SpecKind {
    Kprobe,      // kprobe:...
    Kretprobe,   // kretprobe:...
    Syscall,     // syscall:NAME, a kprobe on the syscall's entry wrapper
    Uprobe,      // uprobe:PATH:...
    Uretprobe,   // uretprobe:PATH:...
    Usdt,        // usdt:PATH:[PROVIDER:]NAME
    Tracepoint,  // tracepoint:SUBSYS:EVENT (symbol = EVENT, subsystem = SUBSYS)
};

// Which resolver turns a spec into requests: kallsyms and the kprobes blacklist, the
// syscall wrappers, tracepoints and their BTF, or an ELF file (symbols, USDT notes).
enum class KindFamily { KernelSymbol, Syscall, Tracepoint, UserElf };

struct KindInfo {
    SpecKind kind;
    std::string_view name;   // the spec prefix, and toString()
    std::string_view alias;  // a short prefix ("p", "r", "t"); "" when none
    KindFamily family;
    // The PROBECTL_KIND_* of the request (a syscall's kretprobe becomes a kprobe for the
    // calls that never return).
    std::uint32_t kernel_kind;
    bool user_space;  // located in an ELF file, armed per process
    bool is_return;   // fires at the function's return: $retval, no +OFFSET
    bool maxactive;   // takes --maxactive (kretprobe instances)
    bool fetch_args;  // takes NAME=SOURCE fetch arguments (usdt records its own)
    // The predicate is type-checked when the spec is parsed; otherwise its arguments are
    // known only once the spec is resolved (usdt notes, tracepoint BTF).
    bool predicate_at_parse;
    std::string_view forms;  // the location forms, for help text
};

// Every kind, in SpecKind order.
std::span<const KindInfo> probeKinds();
const KindInfo& kindInfo(SpecKind kind);
// The kind whose name or alias is `prefix`; nullptr when none.
const KindInfo* findKind(std::string_view prefix);

// "kprobe", "kretprobe", "syscall", "uprobe", "uretprobe", "usdt", "tracepoint"
std::string_view toString(SpecKind kind);
// Uprobe, Uretprobe and Usdt: resolved against ELF files, not the kernel's symbols.
bool isUserSpace(SpecKind kind);
// Kretprobe, Uretprobe.
bool isReturn(SpecKind kind);

// "kprobe, kretprobe, syscall, uprobe, uretprobe, usdt or tracepoint"
std::string kindNames();
// The user-space ("uprobe, uretprobe or usdt") or kernel ones.
std::string kindNames(bool user_space);
// One line per kind for help text: "  kprobe (p:)     kprobe:SYMBOL[+OFF]  kprobe:0xADDR".
std::string kindsHelp();

}  // namespace probectl
#pragma GCC visibility pop
