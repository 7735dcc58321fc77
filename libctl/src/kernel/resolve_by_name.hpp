// Kernel specs the kernel can resolve by name alone, without reading /proc/kallsyms (the
// slowest step of starting a trace): syscall:NAME and kprobe/kretprobe:__x64_sys_NAME at
// the entry. A syscall wrapper is a global vmlinux symbol, so its name is unique and the
// kernel's lookup (kprobe symbol_name) finds the function kallsyms would; the checks
// KernelSymbols::resolve adds only make a refusal's text better, so a refused request is
// resolved again against kallsyms to explain it (Session::add).
#pragma once

#include <optional>

#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"

namespace probectl {

// The request KernelSymbols::resolve would make for `spec` on an x86-64 kernel with
// syscall wrappers, or nullopt when the spec needs the symbol table (any other name, an
// offset, an address, a limit it would refuse).
std::optional<Resolution> resolveByName(const ProbeSpec& spec);

}  // namespace probectl
