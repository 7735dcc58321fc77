// Instruction boundaries of machine code, decoded with capstone: a breakpoint (uprobe,
// kprobe, int3) replaces the first byte of an instruction, so one placed inside an
// instruction corrupts it: the program dies of SIGILL or silently computes something else.
// Decoding runs linearly from a function's entry, which is exact for compiled code (x86
// compilers put no data in .text between a function's instructions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probectl/result.hpp"

namespace probectl {

struct Instruction {
    std::uint64_t offset = 0;  // bytes from the start of the decoded range
    std::uint16_t size = 0;
    std::string text;  // "push rbp" (capstone's Intel syntax)
};

// The instructions of `code`, decoded for ELF machine `e_machine` (EM_X86_64, EM_386,
// EM_AARCH64). Decoding stops at the first bytes that are no instruction. Errors: ENOTSUP
// for another machine; ELIBACC when the capstone library (loaded with dlopen on the first
// call) cannot be loaded, naming it and its package; ENOMEM/EINVAL from capstone.
Result<std::vector<Instruction>> decodeInstructions(unsigned e_machine,
                                                    const std::vector<std::uint8_t>& code);

class ElfResolver;

// The instructions of the function at ELF address `vaddr`, `size` bytes long, read from the
// file `elf` was opened from (at most to the end of its PT_LOAD segment's file bytes).
// Instruction offsets are from `vaddr`. Errors: the address has no file bytes (EINVAL),
// the file cannot be read (errno), and decodeInstructions' errors.
Result<std::vector<Instruction>> decodeFunction(const ElfResolver& elf, std::uint64_t vaddr,
                                                std::uint64_t size);

// Checks that `offset` bytes into a function (`name`, whose decoded instructions are `insns`)
// starts an instruction. Error EILSEQ (as the kernel's kprobe check) naming the instruction
// it falls in and the nearest valid offsets before and after it, spelled "name+0x4".
// Offsets past the last decoded instruction are not refused here.
Result<void> checkInstructionBoundary(const std::vector<Instruction>& insns,
                                      const std::string& name, std::uint64_t offset);

// The valid offsets around `offset`: "name+0x0, name+0x4" (the one before and after).
std::string nearestBoundaries(const std::vector<Instruction>& insns, const std::string& name,
                              std::uint64_t offset);

}  // namespace probectl
