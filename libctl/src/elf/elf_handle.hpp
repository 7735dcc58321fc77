// RAII for a libelf handle on a file opened read-only: the fd and the Elf* close together.
// Internal to libctl (the public API never exposes libelf types).
#pragma once

#include <libelf.h>

#include <cstddef>
#include <string>

#include "probectl/result.hpp"

namespace probectl {

class ElfHandle {
  public:
    // Opens `path` and runs elf_begin on it. Errors: errno of open(); ENOEXEC when libelf
    // cannot read it (message with elf_errmsg) or it is not an ELF file (an archive, text).
    static Result<ElfHandle> open(const std::string& path);

    ElfHandle(ElfHandle&& o) noexcept : fd_(o.fd_), elf_(o.elf_) {
        o.fd_ = -1;
        o.elf_ = nullptr;
    }
    ElfHandle& operator=(ElfHandle&&) = delete;
    ElfHandle(const ElfHandle&) = delete;
    ~ElfHandle();

    Elf* get() const { return elf_; }

  private:
    ElfHandle(int fd, Elf* elf) : fd_(fd), elf_(elf) {}
    int fd_ = -1;
    Elf* elf_ = nullptr;
};

// How many times ElfHandle::open opened `path` in this process: for tests that check a
// command reads a file once however many of its names it resolves.
std::size_t elfOpensOf(const std::string& path);

// The name of section `scn` ("" when it has none).
std::string sectionName(Elf* elf, Elf_Scn* scn);
// The first section called `name`, or nullptr.
Elf_Scn* findSection(Elf* elf, std::string_view name);

}  // namespace probectl
