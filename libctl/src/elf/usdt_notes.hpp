// Reading .note.stapsdt (usdt.hpp describes the format). Internal to libctl.
#pragma once

#include <libelf.h>

#include <vector>

#include "probectl/elf_resolver.hpp"
#include "probectl/result.hpp"
#include "probectl/usdt.hpp"

namespace probectl {

// The USDT probes of `elf`, in note order. `file` supplies the path (for errors) and the
// PT_LOAD segments that turn the notes' ELF addresses into file offsets. Errors (EINVAL,
// naming file, provider and probe): a truncated note, a probe or semaphore outside any
// PT_LOAD segment, a semaphore in a read-only segment. Undecodable argument specs and
// symbols of arguments (UsdtArg::symbol) the file's symbol table lacks are not errors here:
// the probe keeps them in args_error.
Result<std::vector<UsdtProbe>> readUsdtNotes(Elf* elf, const ElfResolver& file);

}  // namespace probectl
