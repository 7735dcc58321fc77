// Releasing a held command only as far as its ELF entry point (AT_ENTRY): the dynamic
// loader has then mapped and relocated the program and its libraries and made their RELRO
// read-only, and no code of the program's own has run (its constructors run after the
// entry point). The tracer becomes the command's ptrace tracer for that moment only.
#pragma once

#include <sys/types.h>

#include <functional>

#include "probectl/held_command.hpp"
#include "probectl/result.hpp"
#include "ptrace/memory.hpp"

namespace probectl {

// Lets `cmd` exec (HeldCommand::start), stops it at its entry point with a one-time
// breakpoint, calls `at_entry` with its pid and its memory while it is stopped there, then
// detaches and lets it run on. Signals it gets before the entry point are passed on.
// Errors: EPERM/ESRCH of PTRACE_SEIZE (nothing was started then: the caller can still
// release() it); the child's errno of a failed exec; ECHILD when it ended before its entry
// point (named with how it ended, and reaped); errno of reading /proc/PID/auxv, of its
// memory or of ptrace; at_entry's error (after the detach).
Result<void> releaseToEntry(
    HeldCommand& cmd, const std::function<Result<void>(pid_t, const ptrace::ProcMem&)>& at_entry);

// Adds `delta` to the 16-bit counter (a USDT semaphore) at process address `addr`.
// Errors: ProcMem's, naming the address.
Result<void> addToU16(const ptrace::ProcMem& mem, std::uint64_t addr, int delta);

}  // namespace probectl
