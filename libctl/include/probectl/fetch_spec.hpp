// Fetch arguments: the kprobe_events argument language, parsed into an AST.
//
// Source of the grammar: the kernel's Documentation/trace/kprobetrace.rst ("Synopsis of
// kprobe_events", "Types"). One argument is
//
//   [NAME=]SOURCE[:TYPE]
//
//   SOURCE  $argN          Nth function argument, 1-based as in kprobe_events (N = 1..6: the
//                          x86-64 SysV argument registers; for syscall: probes the syscall's
//                          own arguments). Only valid at a function entry (kprobe at offset 0,
//                          uprobe on a symbol).
//           $retval        return value; return probes only (FetchOptions::is_return)
//           $comm          current->comm; its type is always `string` (as in kprobe_events)
//           $pid $tid $uid $cpu   process id (tgid), thread id, real uid, cpu: probectl
//                          additions with no kprobe_events equivalent; default type u32
//           %REG           x86-64 register by kernel pt_regs name (%ax %bx %cx %dx %si %di
//                          %bp %sp %ip %flags %r8..%r15 %cs %ss %orig_ax), by its 64-bit
//                          assembler name (%rax ... %rip), or by a 32-bit name (%eax ...
//                          %r15d: the low 32 bits, default type x32)
//           $stackN        Nth unsigned long on the stack at the probe (N >= 0)
//           $kstack $kstackN  the id of the kernel stack at the probe in the session's stack
//                          map, at most N frames (1..kStackMaxDepth; $kstack: the default
//                          kStackDefaultDepth); kprobes, kretprobes and tracepoints only;
//                          always u32. Session::kernelStacks() turns ids into frames.
//           $ustack $ustackN  the same for the task's user stack, walked by frame pointers
//                          (kernel_stacks.hpp: UserStacks); any probe kind; always u32
//           +OFFS(SOURCE)  kernel memory at SOURCE + OFFS (OFFS decimal or 0x hex; `-OFFS`
//           -OFFS(SOURCE)  subtracts); nestable up to kFetchMaxDepth levels
//           +uOFFS(SOURCE) the same in user memory of the current task
//           \IMM           an immediate (decimal, 0x hex, or negative decimal)
//           args.NAME[->FIELD...]  tracepoint probes only (FetchOptions::tracepoint): the
//                          tracepoint's parameter NAME, and members of the structs it points
//                          to, by their names in the kernel's BTF (tracepoints.hpp resolves
//                          them into $argN and +OFFS(...) with a default type). bpftrace's
//                          `args.` spelling: clashes with neither $argN/$comm nor %REG.
//   TYPE    u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 string ustring, and TYPE[N] for a
//           fixed array of N (1..kFetchMaxArray) integers read from memory.
//           Default: x64 (as kprobe_events on 64-bit), x32 for 32-bit register names,
//           u32 for $pid $tid $uid $cpu, string for $comm.
//   NAME    [A-Za-z_][A-Za-z0-9_]*; when omitted, "argK" where K is the 1-based position of
//           the argument in its list (kprobe_events' naming).
//
// Type rules (checked here, so the kernel only ever sees well-formed programs):
//  - string/ustring need an address: a dereference (`+0($arg2):string` reads the string at
//    arg2+0, kprobe_events' form) or a 64-bit pointer-sized source (`$arg2:ustring` is a
//    probectl shorthand for the same thing). Not on $pid..$cpu, 32-bit registers or \IMM.
//  - `ustring`, or a `+u` outermost dereference, reads the string from user memory.
//  - Arrays need a dereference as the outermost source (kprobe_events: '$stack1:x8[8]' is
//    wrong, '+8($stack):x8[8]' is right); arrays of strings are not supported.
//  - $comm takes no type but `string` and no array, and cannot be dereferenced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"
#include "probectl/spec_error.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

// Limits shared with the fetch-program compiler and, through it, the kernel's validator.
// The kernel's limits (kmod/uapi/probectl.h, checked in src/core/uapi_checks.cpp), which it
// checks again.
inline constexpr std::size_t kFetchMaxArgs = 16;         // per probe
inline constexpr std::size_t kFetchMaxDepth = 8;         // dereferences
inline constexpr std::uint32_t kFetchMaxArray = 64;      // MAX_ARRAY_LEN
inline constexpr std::uint32_t kFetchMaxArgN = 6;        // $arg1..$arg6
inline constexpr std::uint32_t kFetchMaxStackN = 511;    // $stackN
inline constexpr std::uint32_t kStackMaxDepth = 127;     // $kstackN: PROBECTL_STACK_MAX_DEPTH
inline constexpr std::uint32_t kStackDefaultDepth = 64;  // $kstack: PROBECTL_STACK_DEFAULT_DEPTH
// Address spaces a session keeps at once for their maps (PROBECTL_MM_PIN_SLOTS).
inline constexpr std::uint32_t kMmPinSlots = 64;
// Of those, kept again at once because code was mapped after their maps were read
// (PROBECTL_MM_PIN_AGAIN).
inline constexpr std::uint32_t kMmPinAgain = 16;

enum class FetchType : std::uint8_t {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    X8,
    X16,
    X32,
    X64,
    String,   // NUL-terminated, kernel memory (or user memory under a +u dereference)
    Ustring,  // NUL-terminated, user memory
};

// "u8" ... "ustring"
std::string_view toString(FetchType t);
// Width in bytes of an integer type (1, 2, 4, 8); 0 for string types.
std::uint8_t fetchTypeSize(FetchType t);
bool isStringType(FetchType t);
bool isSignedType(FetchType t);
bool isHexType(FetchType t);

// x86-64 registers by their index in struct pt_regs viewed as an array of unsigned long
// (arch/x86/include/asm/ptrace.h, 64-bit layout): the kernel reads
// ((unsigned long *)regs)[id]. Stable because pt_regs is part of the x86-64 ptrace ABI
// (struct user_regs_struct has the same order).
enum class X86Reg : std::uint8_t {
    R15 = 0,
    R14,
    R13,
    R12,
    Bp,
    Bx,
    R11,
    R10,
    R9,
    R8,
    Ax,
    Cx,
    Dx,
    Si,
    Di,
    OrigAx,
    Ip,
    Cs,
    Flags,
    Sp,
    Ss,
};
inline constexpr std::uint8_t kX86RegCount = 21;
// Kernel name without '%': "ax", "r8", "orig_ax", ...
std::string_view toString(X86Reg r);

struct FetchSource;
using FetchSourcePtr = std::shared_ptr<const FetchSource>;

// One node of the SOURCE grammar. Immutable once parsed; shared between copies of the AST.
struct FetchSource {
    enum class Kind : std::uint8_t {
        Arg,  // index = N (1-based)
        Retval,
        Comm,
        Pid,
        Tid,
        Uid,
        Cpu,
        Reg,     // index = X86Reg; reg32 when named by a 32-bit alias
        Stack,   // index = N (0-based, as kprobe_events)
        Deref,   // *(inner + offset), kernel or user memory
        Imm,     // imm
        Field,   // args.NAME->F...: path = {NAME, F, ...}; resolved before compiling
        KStack,  // index = depth (0: kStackDefaultDepth)
        UStack,  // index = depth (0: kStackDefaultDepth)
        // a whole argument: registers and index bytes (0: the default) of user stack, for
        // DWARF unwinding; made by appendUserStackArg, not spelled in the grammar
        UStackSnapshot,
        // execve's path (index 0) or argv[index - 1], read again from the new program after
        // a successful exec (load-exec); made by the syscall plan, not spelled in the grammar
        Exec,
    };
    Kind kind = Kind::Arg;
    std::uint32_t index = 0;
    bool reg32 = false;
    std::int64_t offset = 0;        // Deref: signed byte displacement (fits in int32)
    bool user = false;              // Deref: user memory (+u)
    std::uint64_t imm = 0;          // Imm: value (two's complement for negative input)
    FetchSourcePtr inner;           // Deref: the address source
    std::vector<std::string> path;  // Field: parameter name, then member names
    std::size_t column = 0;         // 1-based column of this node's first character

    // Canonical kprobe_events text: "$arg2", "%di", "+0x10(+0($arg1))", "+u0($arg2)", "\\5".
    std::string str() const;
    // Dereference levels in this source (0 for a leaf).
    std::size_t depth() const;
};

// One parsed argument.
struct FetchArg {
    std::string name;         // user's NAME, or "argK"
    bool auto_named = false;  // NAME was omitted
    FetchSourcePtr source;
    FetchType type = FetchType::X64;
    bool type_given = false;      // TYPE was written (else the default above applies)
    std::uint32_t array_len = 0;  // 0: scalar; else TYPE[array_len]
    std::size_t column = 0;       // 1-based column of the argument's first character

    // Canonical text with the type always spelled out: "fn=+0($arg2):ustring".
    std::string str() const;
    // Reads user memory (ustring or any +u dereference): useful for the kernel, which must
    // use non-faulting user-copy helpers then.
    bool readsUserMemory() const;
};

struct FetchOptions {
    // The probe fires at a function return (kretprobe, uretprobe): $retval allowed.
    bool is_return = false;
    // $retval's type when none is written: a syscall's is s64 (-errno), a function's x64
    // (its C type is not known here).
    bool signed_retval = false;
    // The probe fires at a function's first instruction: $argN allowed. False for
    // kprobe:SYM+OFFSET with OFFSET != 0 (kprobe_events' rule: argument registers are only
    // meaningful at entry). At a return the argument registers hold whatever the function
    // left there, so callers set this false for return probes too unless the kernel side
    // saves the entry arguments.
    bool at_function_entry = true;
    // A tracepoint probe: args.NAME allowed; %REG and $stackN refused (a tracepoint's probe
    // has its arguments, not the registers of a probed instruction).
    bool tracepoint = false;
};

// Parses a whitespace-separated list of arguments found in `input` from byte `begin` on
// (so callers pass the whole probe spec text and errors point into it). Auto names count
// positions in this list from 1.
//
// Errors (SpecError, column 1-based into `input`): unknown source/type/register, bad
// number, missing ')' or '(', $argN out of 1..6, $stackN out of range, $retval without
// is_return, $argN without at_function_entry, type rules above, array length out of
// 1..64, dereference deeper than kFetchMaxDepth, offset outside int32, duplicate NAME,
// more than kFetchMaxArgs arguments.
Result<std::vector<FetchArg>, SpecError> parseFetchArgs(std::string_view input,
                                                        std::size_t begin = 0,
                                                        const FetchOptions& opts = {});

// Parses exactly one argument spanning all of `text`; `position` (1-based) names it
// "arg<position>" when NAME is omitted.
Result<FetchArg, SpecError> parseFetchArg(std::string_view text, std::size_t position = 1,
                                          const FetchOptions& opts = {});

}  // namespace probectl
#pragma GCC visibility pop
