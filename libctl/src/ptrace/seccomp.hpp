// The --seccomp-bpf filter program (seccomp.cpp), apart from the engine so that tests can run
// it over every syscall number.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <set>
#include <vector>

#include "probectl/result.hpp"

namespace probectl::ptrace {

// A classic BPF program for SECCOMP_SET_MODE_FILTER: SECCOMP_RET_TRACE for the x86-64
// syscalls in `nrs`, SECCOMP_RET_ALLOW for every other number and every other ABI.
// Correct for any set: every jump is at most 3 instructions. Errors: E2BIG when it would
// exceed BPF_MAXINSNS (the kernel would refuse it).
Result<std::vector<sock_filter>> seccompProgram(const std::set<std::uint64_t>& nrs);

}  // namespace probectl::ptrace
