// Instruction decoding for boundary checks (insn_boundary.hpp), with Debian's libcapstone,
// loaded with dlopen on the first decode: linked in, its ~77k load-time relocations cost
// every probectl command about 20 ms of start-up in the test VM, and only uprobe offset
// checks use it. So ldd does not show it: packages and the VM image name it themselves.
#include "probectl/insn_boundary.hpp"

#include "probectl/elf_resolver.hpp"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace probectl {

namespace {

// The capstone functions used here, from the library dlopen found (PROBECTL_CAPSTONE_SONAME,
// set by the build from the capstone it compiled against; PROBECTL_CAPSTONE_LIBRARY in the
// environment names another file, for tests).
struct CapstoneApi {
    decltype(&cs_open) open = nullptr;
    decltype(&cs_close) close = nullptr;
    decltype(&cs_malloc) malloc = nullptr;
    decltype(&cs_free) free = nullptr;
    decltype(&cs_disasm_iter) disasm_iter = nullptr;
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    return f != nullptr;
}

// Loaded once per process; a failure is kept too (the library will not appear later).
Result<const CapstoneApi*> capstone() {
    static std::once_flag once;
    static CapstoneApi api;
    static std::string error;
    std::call_once(once, [] {
        const char* env = std::getenv("PROBECTL_CAPSTONE_LIBRARY");
        const std::string name = env && *env ? env : PROBECTL_CAPSTONE_SONAME;
        void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = ::dlerror();
            // Ends in dlerror's text in parentheses: describe() adds no errno text to it.
            error = fmt::format(
                "checking instruction boundaries needs the capstone disassembler library, "
                "{} (Debian package libcapstone{}), which could not be loaded ({})",
                name, PROBECTL_CAPSTONE_MAJOR, why ? why : "no reason given");
            return;
        }
        if (!bind(lib, "cs_open", api.open) || !bind(lib, "cs_close", api.close) ||
            !bind(lib, "cs_malloc", api.malloc) || !bind(lib, "cs_free", api.free) ||
            !bind(lib, "cs_disasm_iter", api.disasm_iter)) {
            error = fmt::format("{}: not the capstone library expected ({})", name, ::dlerror());
            api = {};
            ::dlclose(lib);
        }
    });
    if (!error.empty())
        return makeError(ELIBACC, error);
    return &api;
}

class Capstone {
  public:
    Capstone(const CapstoneApi& api, cs_arch arch, cs_mode mode) : api_(api) {
        ok_ = api_.open(arch, mode, &h_) == CS_ERR_OK;
    }
    ~Capstone() {
        if (ok_)
            api_.close(&h_);
    }
    Capstone(const Capstone&) = delete;
    Capstone& operator=(const Capstone&) = delete;
    bool ok() const { return ok_; }
    csh handle() const { return h_; }

  private:
    const CapstoneApi& api_;
    csh h_ = 0;
    bool ok_ = false;
};

}  // namespace

Result<std::vector<Instruction>> decodeInstructions(unsigned e_machine,
                                                    const std::vector<std::uint8_t>& code) {
    cs_arch arch;
    cs_mode mode;
    switch (e_machine) {
        case EM_X86_64:
            arch = CS_ARCH_X86, mode = CS_MODE_64;
            break;
        case EM_386:
            arch = CS_ARCH_X86, mode = CS_MODE_32;
            break;
        case EM_AARCH64:
            arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
            break;
        default:
            return makeError(ENOTSUP,
                             fmt::format("no instruction decoder for ELF machine {}", e_machine));
    }
    auto api = capstone();
    if (!api)
        return std::move(api).error();
    const CapstoneApi& cs_api = **api;
    Capstone cs(cs_api, arch, mode);
    if (!cs.ok())
        return makeError(EINVAL, "capstone: cannot open a decoder");
    cs_insn* insn = cs_api.malloc(cs.handle());
    if (!insn)
        return makeError(ENOMEM, "capstone: out of memory");
    std::vector<Instruction> out;
    const std::uint8_t* p = code.data();
    std::size_t left = code.size();
    std::uint64_t at = 0;
    while (left > 0 && cs_api.disasm_iter(cs.handle(), &p, &left, &at, insn)) {
        std::string text = insn->mnemonic;
        if (insn->op_str[0])
            text += std::string(" ") + insn->op_str;
        out.push_back({insn->address, insn->size, std::move(text)});
    }
    cs_api.free(insn, 1);
    return out;
}

std::string nearestBoundaries(const std::vector<Instruction>& insns, const std::string& name,
                              std::uint64_t offset) {
    auto after =
        std::lower_bound(insns.begin(), insns.end(), offset,
                         [](const Instruction& i, std::uint64_t o) { return i.offset < o; });
    std::vector<std::string> near;
    if (after != insns.begin())
        near.push_back(fmt::format("{}+{:#x}", name, std::prev(after)->offset));
    if (after != insns.end())
        near.push_back(fmt::format("{}+{:#x}", name, after->offset));
    return fmt::format("{}", fmt::join(near, ", "));
}

Result<void> checkInstructionBoundary(const std::vector<Instruction>& insns,
                                      const std::string& name, std::uint64_t offset) {
    auto in = std::upper_bound(insns.begin(), insns.end(), offset,
                               [](std::uint64_t o, const Instruction& i) { return o < i.offset; });
    if (in == insns.begin())
        return {};
    const Instruction& i = *std::prev(in);
    if (i.offset == offset || offset >= i.offset + i.size)
        return {};
    return makeError(EILSEQ,
                     fmt::format("{}+{:#x} is inside the {}-byte instruction at {}+{:#x} ({}): a "
                                 "breakpoint there would corrupt it (the program would die of "
                                 "SIGILL or silently compute something else); the nearest "
                                 "instruction boundaries are {}",
                                 name, offset, i.size, name, i.offset, i.text,
                                 nearestBoundaries(insns, name, offset)));
}

Result<std::vector<Instruction>> decodeFunction(const ElfResolver& elf, std::uint64_t vaddr,
                                                std::uint64_t size) {
    auto off = elf.fileOffset(vaddr);
    if (!off)
        return std::move(off).error();
    // Only the file-backed bytes of the segment holding the entry are code.
    const LoadSegment* seg = elf.segmentForAddress(vaddr);
    size = std::min<std::uint64_t>({size, seg->vaddr + seg->filesz - vaddr, 1u << 20});
    int fd = ::open(elf.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno, fmt::format("{}: cannot open: {}", elf.path(), strerror(errno)));
    std::vector<std::uint8_t> code(size);
    unsigned char ident[EI_NIDENT + 4] = {};
    const bool got =
        ::pread(fd, ident, sizeof(ident), 0) == sizeof(ident) &&
        ::pread(fd, code.data(), size, static_cast<off_t>(*off)) == static_cast<ssize_t>(size);
    const int err = errno;
    ::close(fd);
    if (!got)
        return makeError(err ? err : EIO, fmt::format("{}: cannot read code at file offset {:#x}",
                                                      elf.path(), *off));
    // e_machine follows e_ident and e_type in both ELF classes.
    const unsigned machine = ident[EI_DATA] == ELFDATA2MSB
                                 ? (ident[EI_NIDENT + 2] << 8 | ident[EI_NIDENT + 3])
                                 : (ident[EI_NIDENT + 2] | ident[EI_NIDENT + 3] << 8);
    return decodeInstructions(machine, code);
}

}  // namespace probectl
