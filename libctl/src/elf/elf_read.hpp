// ElfResolver::open's reading of a file the caller keeps open, for readers that come back
// to the same file (its DWARF, its exception use): one open of each file. Internal to libctl.
#pragma once

#include <optional>
#include <string>

#include "elf/elf_handle.hpp"
#include "probectl/elf_resolver.hpp"

namespace probectl {

// `h`: the file `path`, open. The separate debug file whose .symtab was read
// (ElfResolver::debugFile()) is left open in `debug`.
Result<ElfResolver> readElfResolver(const ElfHandle& h, const std::string& path,
                                    const ElfOpenOptions& options, std::optional<ElfHandle>& debug);

}  // namespace probectl
