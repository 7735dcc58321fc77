// Kernel text from /proc/kcore: an ELF core file whose PT_LOAD segments map kernel virtual
// addresses (the ones /proc/kallsyms prints to root) to file offsets.
#include "kernel_code.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <vector>

#include "probectl/insn_boundary.hpp"

namespace probectl {

namespace {

// `len` bytes of kernel memory at `addr`, or empty.
std::vector<std::uint8_t> readKernel(std::uint64_t addr, std::size_t len) {
    std::vector<std::uint8_t> out;
    if (addr == 0 || elf_version(EV_CURRENT) == EV_NONE)
        return out;
    int fd = ::open("/proc/kcore", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return out;
    if (Elf* e = elf_begin(fd, ELF_C_READ, nullptr)) {
        std::size_t n = 0;
        elf_getphdrnum(e, &n);
        for (std::size_t i = 0; i < n; ++i) {
            GElf_Phdr ph;
            if (!gelf_getphdr(e, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD ||
                addr < ph.p_vaddr || addr + len > ph.p_vaddr + ph.p_filesz)
                continue;
            out.resize(len);
            if (::pread(fd, out.data(), len, static_cast<off_t>(ph.p_offset + addr - ph.p_vaddr)) !=
                static_cast<ssize_t>(len))
                out.clear();
            break;
        }
        elf_end(e);
    }
    ::close(fd);
    return out;
}

}  // namespace

std::string kprobeBoundaryHint(const std::string& symbol, std::uint64_t fn_addr,
                               std::uint64_t offset) {
    // Enough to reach the instruction after the offset (x86 instructions are <= 15 bytes).
    auto code = readKernel(fn_addr, offset + 16);
    if (code.empty())
        return "";
#if defined(__aarch64__)
    auto insns = decodeInstructions(EM_AARCH64, code);
#else
    auto insns = decodeInstructions(EM_X86_64, code);
#endif
    if (!insns || insns->empty())
        return "";
    auto r = checkInstructionBoundary(*insns, symbol, offset);
    if (!r)
        return r.error().message;
    return "";
}

}  // namespace probectl
