// A USDT site's arguments read by the tracer: the fetch programs usdtFetch() builds from
// the site's note (register, constant, memory at base + index * scale + offset, the base
// possibly the site's own address), run against a thread stopped at the site, as
// kmod/fetch.c runs them in the kernel backend.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"

namespace probectl::ptrace {

// Whether every instruction is one runSiteFetch() can run: load-reg, load-imm, load-addr, a
// user dereference, store-int. Anything else stays the kernel backend's.
bool siteFetchSupported(const std::vector<FetchInsn>& insns);

// One value per store, in order, as the kernel stores them: the low `size` bytes of the
// accumulator, or no bytes and PROBECTL_FETCH_V_FAULT (with the errno of the failed read)
// when a dereference could not be read. `regs` are the thread's registers with rip at the
// probed instruction (the int3's address), which is where the kernel's uprobe sees it.
std::vector<Event::RawValue> runSiteFetch(pid_t tid, const user_regs_struct& regs,
                                          const std::vector<FetchInsn>& insns);

// Event::fetched and Event::values of a hit, decoded with the site's arguments.
void fillSiteValues(Event& ev, pid_t tid, const user_regs_struct& regs,
                    const std::vector<FetchInsn>& insns, const std::vector<FetchArg>& args);

}  // namespace probectl::ptrace
