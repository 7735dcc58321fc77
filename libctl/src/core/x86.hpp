// x86-64 instruction facts the breakpoint code of both backends shares.
#pragma once

#include <cstdint>

namespace probectl {

// int3, the one-byte breakpoint (Intel SDM vol. 2A, "INT n/INTO/INT3/INT1").
inline constexpr std::uint8_t kInt3 = 0xcc;

}  // namespace probectl
