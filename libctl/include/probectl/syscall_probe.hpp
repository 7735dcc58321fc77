// syscall:NAME probes that print like strace: which memory the kernel (or the ptrace
// backend) reads for a syscall, as fetch arguments, and how an event's fetched bytes turn
// back into a SyscallRecord for formatSyscall (strace_format.hpp). Both backends use the
// same plan, so both print the same line for the same call.
//
// The plan follows syscallMemHints(): a path is read as a user string (at most
// kSyscallPathMax bytes incl. NUL), a buffer as kSyscallBufferMax bytes; formatSyscall shows
// at most StraceOptions::string_limit of them. The kernel reads them at the return, when the
// syscall has faulted the pages in (a probe handler cannot), except execve's path (the
// address means nothing in the new program) and a struct the call reads but may write over
// before it returns (a sleep's request, which coreutils' sleep passes as its remaining time
// too), read at entry and kept in the kretprobe instance (PROBECTL_A_PROBE_FETCH_ENTRY)
// until the return; calls that never return read all at entry. Entry reads come first in
// the plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/strace_format.hpp"
#include "probectl/syscall_meta.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

inline constexpr std::uint32_t kSyscallPathMax = 256;   // bytes of a path incl. NUL
inline constexpr std::uint32_t kSyscallBufferMax = 64;  // bytes of a data buffer

struct SyscallPlan {
    std::string name;                   // "openat"
    std::vector<SyscallMemHint> hints;  // entry hints first, then return ones
    std::vector<FetchArg> args;         // one per hint, same order
    std::uint32_t entry_args = 0;       // how many of them are read at entry
    bool returns = true;                // false for exit and exit_group: entry only, " = ?"
    // Values of the probe's own fetch arguments (SessionProbe::fetch_args) read at the entry
    // as well: the first entry_extra of them, a stack (kernel_stacks.hpp). A record holds
    // the plan's entry values, these, the plan's return values, then the probe's other
    // values (syscallValueIndex, syscallArgIndex). Set by the Session from what it sent.
    std::uint32_t entry_extra = 0;
};

// Where the plan's value `hint` (an index into plan.hints) is among a record's fetched values.
std::size_t syscallValueIndex(const SyscallPlan& plan, std::size_t hint);

// Where the probe's own fetch argument `arg` is among a record's fetched values, after and
// between the plan's (the plan's hints are empty when the spec has arguments of its own).
std::size_t syscallArgIndex(const SyscallPlan& plan, std::size_t arg);

// The plan for syscall `name`; `info` (may be null) supplies string arguments of syscalls
// without a decoder. Never fails: a syscall without hints gets an empty plan.
SyscallPlan syscallPlan(std::string_view name, const SyscallInfo* info);

// Syscalls whose entry is their only event (they never return to the caller).
bool syscallNeverReturns(std::string_view name);

// The syscall a spec's text names: "mmap" of "syscall:mmap len=$arg2"; "" for a spec of
// another kind.
std::string_view specSyscall(std::string_view spec);
// The syscall whose return a spec's probe sees: specSyscall's, or that of a kretprobe on a
// syscall's entry function ("openat" of "kretprobe:__x64_sys_openat", and of __ia32_sys_,
// __se_sys_, __do_sys_); "" for other specs. Its $retval is the call's: -4095..-1 an errno.
std::string_view specReturnSyscall(std::string_view spec);

// The record formatSyscall prints for an event of a probe built from `plan`: arguments and
// return value from the event, memory from Event::fetched where syscallValueIndex puts it (a
// missing or faulted value leaves the pointer to print; buffers are cut to the count or
// return value).
// `returned` false: the call has not returned (exit_group), retval prints "?".
SyscallRecord syscallRecord(const Event& ev, const SyscallPlan& plan, bool returned);

// The syscall table of this machine (tracefs format files, else the built-in names),
// loaded once on first use; thread-safe.
const SyscallTable& systemSyscallTable();

}  // namespace probectl
#pragma GCC visibility pop
