// The two ends of a fetch argument outside the kernel: turning the bytes a record carries
// (struct probectl_fetch_value, kmod/uapi/probectl.h) back into a typed FetchedValue, and
// turning a USDT probe's argument specs into fetch arguments and programs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/fetched_value.hpp"
#include "probectl/result.hpp"
#include "probectl/usdt.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// One stored value, typed by the argument it was fetched for. `bytes` is the value as the
// kernel stored it (integers little-endian in their type's width, arrays element by
// element, strings with their NUL); `flags` its PROBECTL_FETCH_V_* bits. A faulted value
// decodes to faulted = true; fewer bytes than the type needs also count as a fault.
FetchedValue decodeFetchedValue(const FetchArg& arg, std::span<const std::uint8_t> bytes,
                                std::uint8_t flags);
// The same into `out`, reusing its buffers (the per-event path: no allocation once grown).
void decodeFetchedValue(FetchedValue& out, const FetchArg& arg, std::span<const std::uint8_t> bytes,
                        std::uint8_t flags);

// A USDT probe's arguments as fetch arguments arg1..argN (types s8..s64 or u8..u64 from
// the spec's N@ size and sign) with one program each, concatenated in order, for
// ProbeRequest::fetch: registers are loaded, memory operands read from user memory at
// base + index * scale + displacement (LoadAddr with an index register; base ip for a
// symbol counted from the probe site, UsdtArg::ip_relative), constants loaded as
// immediates. Errors (EINVAL, naming the argument): a register the kernel's pt_regs does
// not hold, a symbol not resolved (UsdtArg::symbol_address 0), a displacement beyond 32
// bits.
struct UsdtFetch {
    std::vector<FetchArg> args;
    std::vector<FetchInsn> insns;
};
Result<UsdtFetch> usdtFetch(const std::vector<UsdtArg>& usdt_args);

}  // namespace probectl
#pragma GCC visibility pop
