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
//   -4@%edi   8@-8(%rbp)   4@$5   8@%rax   -2@16(%rsp)   8@(%rbx,%rax,8)   -4@glob(%rip)
// where N@ means an N-byte unsigned value and -N@ a signed one. gcc writes array elements
// with an index register ("(%r12,%rbp,8)", "table(,%rbp,8)" in non-PIE code) and globals
// by their symbol ("glob(%rip)", "4+pair(%rip)"): the symbol's address is the file's symbol
// table's, moved with the file's load bias.
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
        // `size` bytes at address reg + index * scale + offset: -8(%rbp), 16(%rbx,%rcx,4),
        // (,%rax,8); with a symbol, glob(%rip) and table(,%rax,8) (see `symbol`)
        Memory,
        Constant,  // the immediate `value` ($5)
    };
    Kind kind = Kind::Register;
    unsigned size = 8;       // bytes: 1, 2, 4 or 8
    bool is_signed = false;  // -N@ in the spec
    // Register and Memory: the 64-bit x86-64 register holding the value or base address,
    // without '%' ("rdi", "rbp", "r8", "rip"), whatever width the spec named ("%edi"); ""
    // for a memory operand without a base ("(,%rax,8)").
    std::string reg;
    unsigned reg_bits = 64;   // width of the register as written: 64, 32, 16 or 8
    std::int64_t offset = 0;  // Memory: displacement added to reg (with a symbol: see below)
    std::int64_t value = 0;   // Constant
    std::string text;         // the spec as written: "-4@%edi"
    // Memory: the 64-bit index register ("rax" of (%rbx,%rax,8)), "" for none, and what it
    // is multiplied by (1, 2, 4 or 8).
    std::string index;
    unsigned scale = 1;
    // Memory: the symbol of a symbolic displacement, "" for none: "glob" of glob+4(%rip) or
    // 4+glob(%rip), "table" of table(,%rax,8); symbol_addend is the number beside it (4).
    // parseUsdtArg leaves offset at the addend; ElfResolver (reading the notes) looks the
    // symbol up in the file's symbol table and sets symbol_address (its ELF address plus
    // the addend; 0 until then) and offset:
    //  - ip_relative: no base or %rip: the address counts from the probe site, at the site's
    //    runtime address (a uprobe's ip) + offset (+ index * scale), offset being
    //    symbol_address less the site's ELF address; right whatever the load bias (PIE,
    //    shared library, non-PIE);
    //  - a base register other than %rip (non-PIE files only, where ELF addresses are
    //    runtime addresses): offset = symbol_address.
    std::string symbol;
    std::int64_t symbol_addend = 0;
    std::uint64_t symbol_address = 0;
    bool ip_relative = false;

    // "s32 %rdi", "u64 -0x8(%rbp)", "s32 $5": type then source, as `probectl symbols` shows.
    std::string str() const;
};

// Decodes one argument spec ("-4@%edi"). A missing N@ prefix (old notes) means 8 bytes,
// unsigned. A symbol is left for the file's symbol table (UsdtProbe::decoded has it
// resolved). Errors (EINVAL, the message quotes the argument): sizes other than 1/2/4/8,
// unknown registers, the high-byte registers %ah..%dh, a base or index register that is not
// 64-bit, %rsp or %rip as the index, %rip with an index, scales other than 1/2/4/8,
// segment registers ("%fs:0x28"), displacements that are not NUMBER, SYMBOL, SYMBOL+-NUMBER
// or NUMBER+SYMBOL ("sym@GOTPCREL(%rip)"), anything else.
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
    std::string args;  // the argument specs as in the note
    // args decoded, symbols resolved (UsdtArg::symbol); empty when args_error is set
    std::vector<UsdtArg> decoded;
    // why args did not decode or a symbol did not resolve ("" when they did)
    std::string args_error;
};

}  // namespace probectl
#pragma GCC visibility pop
