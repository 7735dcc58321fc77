// Opening files with libelf: one place for the elf_version() handshake and the errors.
#include "elf/elf_handle.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace probectl {

namespace {

std::mutex g_opens_mu;
std::map<std::string, std::size_t, std::less<>> g_opens;

}  // namespace

std::size_t elfOpensOf(const std::string& path) {
    const std::lock_guard lock(g_opens_mu);
    const auto it = g_opens.find(path);
    return it == g_opens.end() ? 0 : it->second;
}

Result<ElfHandle> ElfHandle::open(const std::string& path) {
    // libelf refuses every call until the caller states the ELF version it understands.
    static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
    if (!initialised)
        return makeError(ENOEXEC, fmt::format("libelf: {}", elf_errmsg(-1)));
    {
        const std::lock_guard lock(g_opens_mu);
        ++g_opens[path];
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno, fmt::format("{}: {}", path, std::strerror(errno)));
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf) {
        const std::string why = elf_errmsg(-1);
        ::close(fd);
        return makeError(ENOEXEC, fmt::format("{}: not readable as ELF: {}", path, why));
    }
    ElfHandle h(fd, elf);
    if (elf_kind(elf) != ELF_K_ELF)
        return makeError(ENOEXEC, fmt::format("{}: not an ELF file", path));
    return h;
}

ElfHandle::~ElfHandle() {
    if (elf_)
        elf_end(elf_);
    if (fd_ >= 0)
        ::close(fd_);
}

std::string sectionName(Elf* elf, Elf_Scn* scn) {
    std::size_t shstrndx = 0;
    GElf_Shdr shdr;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0 || !gelf_getshdr(scn, &shdr))
        return {};
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    return name ? name : "";
}

Elf_Scn* findSection(Elf* elf, std::string_view name) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn))
        if (sectionName(elf, scn) == name)
            return scn;
    return nullptr;
}

}  // namespace probectl
