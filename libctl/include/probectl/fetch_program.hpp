// Fetch programs: a parsed FetchArg compiled into a flat list of fixed-size instructions
// that a probe handler runs without recursion or allocation.
//
// Machine model (what the kernel interpreter implements): one u64 accumulator per argument.
// A program is exactly
//
//   [Load]  Deref*  Store          (Load is absent only before StoreComm)
//
//   Load*      set the accumulator: an argument, register, stack slot, return value, a task
//              property or an immediate.
//   Deref      acc = zero-extended `size` bytes read at acc + offset, from kernel memory or,
//              with kFetchFlagUser, from the current task's user memory. Reads never fault:
//              the kernel uses copy_from_kernel_nofault / copy_from_user_nofault; a failed
//              read ends the argument with its fault flag set (printed "<fault>", JSON null).
//   StoreInt   write the low `size` bytes of acc into the record.
//   StoreString copy the NUL-terminated string at acc + offset (kernel memory, or user with
//              kFetchFlagUser), at most `operand` bytes including the NUL; a string that does
//              not end within the bound is stored truncated and flagged so.
//   StoreArray copy `operand` elements of `size` bytes from acc + offset.
//   StoreComm  copy current->comm (operand = 16, TASK_COMM_LEN).
//   StoreUstackSnapshot  copy the user registers and the top `operand` bytes of the user
//              stack (no Load before it either).
//
// Display properties (signed, hex) are not in the program: the host keeps the FetchArg and
// formats the stored bytes itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "probectl/fetch_spec.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Values and layout are the kernel's (enum probectl_fetch_op, struct probectl_fetch_insn in
// kmod/uapi/probectl.h, checked in src/core/uapi_checks.cpp): programs go to the kernel as
// they are.
enum class FetchOpcode : std::uint8_t {
    LoadArg = 1,       // operand = N of $argN (1..6); size 8
    LoadReg = 2,       // operand = X86Reg (pt_regs word); size 8 or 4
    LoadStack = 3,     // operand = N of $stackN; size 8
    LoadRetval = 4,    // size 8
    LoadPid = 5,       // task tgid; size 4
    LoadTid = 6,       // task pid; size 4
    LoadUid = 7,       // uid in the initial user namespace; size 4
    LoadCpu = 8,       // smp_processor_id(); size 4
    LoadImm = 9,       // acc = operand | (u64)(u32)offset << 32
    Deref = 10,        // size 1/2/4/8, offset, flags kFetchFlagUser
    StoreInt = 11,     // size 1/2/4/8
    StoreString = 12,  // offset, operand = max bytes incl. NUL
    StoreArray = 13,   // element size, offset, operand = count
    StoreComm = 14,    // operand = 16
    LoadKstack = 15,   // operand = depth 1..kStackMaxDepth; size 4: the stack's id
    LoadUstack = 16,   // the same for the task's user stack (frame pointers), with its tgid
    // alone: the user registers (struct probectl_ustack_regs) and up to operand
    // (1..kUstackSnapshotMax) bytes of the user stack from its pointer up, for unwinding by DWARF
    // CFI (user_stacks.hpp)
    StoreUstackSnapshot = 17,
    // acc = execve's path (operand 0) or argv[operand - 1] (1..PROBECTL_FETCH_EXEC_ARGS), from
    // the new program once an exec replaced the address space; read again at a kretprobe's
    // return when it faulted at entry (PROBECTL_FETCH_V_REREAD)
    LoadExec = 18,
    // acc = base + index * size: a memory operand's address with an index register, as USDT
    // notes write array elements ("disp(%base,%index,scale)"; the displacement goes in the
    // Deref after it). operand = base X86Reg | index X86Reg << 8, the base kFetchAddrNoBase
    // when there is none; size = the scale (1, 2, 4, 8). At a uprobe, base Ip is the probed
    // instruction's address (fetchAddrOperand)
    LoadAddr = 19,
};

// LoadAddr's base register byte when the operand has none (PROBECTL_FETCH_ADDR_NO_BASE).
inline constexpr std::uint8_t kFetchAddrNoBase = 255;
// LoadAddr's operand: the base register (kFetchAddrNoBase for none) and the index register.
constexpr std::uint32_t fetchAddrOperand(std::uint8_t base, std::uint8_t index) {
    return base | static_cast<std::uint32_t>(index) << 8;
}

inline constexpr std::uint16_t kFetchFlagUser = 1u << 0;  // user memory (PROBECTL_FETCH_F_USER)
// LoadRetval: the value when it is an errno (-4095..-1), else 0 (PROBECTL_FETCH_F_ERRNO)
inline constexpr std::uint16_t kFetchFlagErrno = 1u << 1;
// LoadUstack: the probe is on a function's first instruction, where the return address is at
// the stack pointer and the frame pointer is the caller's (PROBECTL_FETCH_F_FUNC_ENTRY)
inline constexpr std::uint16_t kFetchFlagFuncEntry = 1u << 2;

// One instruction, 12 bytes: the kernel's struct probectl_fetch_insn.
struct FetchInsn {
    std::uint8_t op = 0;  // FetchOpcode
    std::uint8_t size = 0;
    std::uint16_t flags = 0;
    std::int32_t offset = 0;
    std::uint32_t operand = 0;

    friend bool operator==(const FetchInsn&, const FetchInsn&) = default;
};

inline constexpr std::size_t kFetchMaxInsns = 16;  // per argument
// Bounds on StoreString's operand; kprobe_events' own bound is MAX_STRING_SIZE (PATH_MAX).
inline constexpr std::uint32_t kFetchMinString = 2;
inline constexpr std::uint32_t kFetchMaxString = 4096;
inline constexpr std::uint32_t kFetchDefaultString = 256;
inline constexpr std::uint32_t kFetchCommLen = 16;
// Bounds on StoreUstackSnapshot's operand (PROBECTL_USTACK_SNAPSHOT_MAX, _DEFAULT), and the
// bytes of registers before the stack (struct probectl_ustack_regs: DWARF registers 0..16).
inline constexpr std::uint32_t kUstackSnapshotMax = 3584;
inline constexpr std::uint32_t kUstackSnapshotDefault = 3072;
inline constexpr std::uint32_t kUstackRegCount = 17;
inline constexpr std::uint32_t kUstackRegsBytes = kUstackRegCount * 8;

struct FetchProgram {
    std::vector<FetchInsn> insns;
    // Upper bound of the bytes the Store writes (value or string incl. NUL), so the kernel
    // can size a record before running the program.
    std::uint32_t max_bytes = 0;
};

struct FetchCompileOptions {
    // Longest string stored, bytes including the NUL (kFetchMinString..kFetchMaxString).
    std::uint32_t max_string = kFetchDefaultString;
};

// Compiles one parsed argument. Errors (EINVAL): max_string out of range, or an argument not
// produced by parseFetchArg that breaks its rules (no source, depth or array out of bounds).
Result<FetchProgram> compileFetchArg(const FetchArg& arg, const FetchCompileOptions& opts = {});

// Compiles every argument; at most kFetchMaxArgs.
Result<std::vector<FetchProgram>> compileFetchArgs(const std::vector<FetchArg>& args,
                                                   const FetchCompileOptions& opts = {});

// The checks the kernel must make on a program it receives, written once here so the
// kernel's validator and the host agree (and tests can feed crafted programs). Errors
// (EINVAL, message names the instruction index and the rule): empty or longer than
// kFetchMaxInsns, unknown opcode, a Load not first, more than one Load, a Deref before any
// Load, Deref/StoreInt/StoreArray size not 1/2/4/8, Load sizes other than documented,
// LoadArg operand outside 1..6, LoadReg operand >= kX86RegCount, LoadAddr registers
// >= kX86RegCount (the base may be kFetchAddrNoBase), a scale other than 1/2/4/8 or an
// offset, LoadStack operand above kFetchMaxStackN, StoreString bound outside
// kFetchMinString..kFetchMaxString, StoreArray count outside 1..kFetchMaxArray, StoreComm
// with a Load before it or operand != 16, more than kFetchMaxDepth Derefs, unknown flags,
// the last instruction not a Store or a Store before the end.
Result<void> validateFetchProgram(std::span<const FetchInsn> insns);

// One instruction as text, for debugging and test failure messages: "deref.u s4 +0x10".
std::string toString(const FetchInsn& insn);

}  // namespace probectl
#pragma GCC visibility pop
