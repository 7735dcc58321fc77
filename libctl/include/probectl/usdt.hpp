// USDT (statically defined tracing, <sys/sdt.h> from SystemTap) probes and their argument
// specs.
//
// Each probe site is one ELF note in section .note.stapsdt (owner "stapsdt", type 3), as
// described on the SystemTap wiki page "UserSpaceProbeImplementation":
//   desc = pc, base, semaphore      (three addresses of the file's address size)
//          provider\0 name\0 args\0
// pc is the ELF address of the probe's NOP; base is the ELF address the section
// .stapsdt.base had at link time: when a tool such as prelink later moved the file, the
// difference between .stapsdt.base's current address and `base` is added to pc (and to the
// semaphore, which moved with it). semaphore is the ELF address of a 2-byte counter that
// the program checks before evaluating the probe's arguments (0 = none); a tracer raises it
// while attached. The kernel does this itself when the uprobe is registered with a
// ref_ctr_offset: the semaphore's FILE offset, translated through the PT_LOAD segment that
// holds it (the writable data segment).
//
// args is a space-separated list of GNU assembler operands with a size prefix, e.g.
//   -4@%edi   8@-8(%rbp)   4@$5   8@%rax   -2@16(%rsp)
// where N@ means an N-byte unsigned value and -N@ a signed one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct UsdtArg {
    enum class Kind {
        Register,  // the value of register `reg` (%edi)
        Memory,    // `size` bytes at address reg + offset (-8(%rbp))
        Constant,  // the immediate `value` ($5)
    };
    Kind kind = Kind::Register;
    unsigned size = 8;       // bytes: 1, 2, 4 or 8
    bool is_signed = false;  // -N@ in the spec
    // Register and Memory: the 64-bit x86-64 register holding the value or base address,
    // without '%' ("rdi", "rbp", "r8", "rip"), whatever width the spec named ("%edi").
    std::string reg;
    unsigned reg_bits = 64;   // width of the register as written: 64, 32, 16 or 8
    std::int64_t offset = 0;  // Memory: displacement added to reg
    std::int64_t value = 0;   // Constant
    std::string text;         // the spec as written: "-4@%edi"

    // "s32 %rdi", "u64 -0x8(%rbp)", "s32 $5": type then source, as `probectl symbols` shows.
    std::string str() const;
};

// Decodes one argument spec ("-4@%edi"). A missing N@ prefix (old notes) means 8 bytes,
// unsigned. Errors (EINVAL, the message quotes the argument): sizes other than 1/2/4/8,
// unknown registers, the high-byte registers %ah..%dh, index/scale operands
// ("8@(%rax,%rbx,8)"), symbolic displacements ("8@counter(%rip)"), anything else.
Result<UsdtArg> parseUsdtArg(std::string_view text);
// Decodes a whole args string (space-separated). An error names the argument by number
// (1-based) and quotes it.
Result<std::vector<UsdtArg>> parseUsdtArgs(std::string_view args);

// One USDT probe site of a file.
struct UsdtProbe {
    std::string provider;
    std::string name;
    std::uint64_t pc = 0;           // ELF address of the site, after the base adjustment
    std::uint64_t file_offset = 0;  // the site's file offset (the uprobe offset)
    std::uint64_t base = 0;         // .stapsdt.base address recorded in the note
    std::uint64_t semaphore = 0;    // ELF address of the semaphore, 0 = none
    // The semaphore's file offset, the kernel's ref_ctr_offset; 0 = none.
    std::uint64_t semaphore_offset = 0;
    // An earlier writable PT_LOAD maps the semaphore's file page too (lld puts the RELRO
    // segment's end and the data segment's start in one file page). At exec the kernel
    // raises the semaphore in the first writable mapping of that page, the RELRO one, before
    // the dynamic loader makes it read-only: the program then reads its own as 0.
    bool semaphore_page_shared = false;
    std::string args;              // the argument specs as in the note
    std::vector<UsdtArg> decoded;  // args decoded; empty when args_error is set
    std::string args_error;        // why args did not decode ("" when they did)
};

}  // namespace probectl
#pragma GCC visibility pop
