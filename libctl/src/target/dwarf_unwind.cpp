// User stack snapshots unwound by libdwfl: the process's modules come from its captured
// maps, its memory from the snapshot (and the mapped files beyond it).
#include "target/dwarf_unwind.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "probectl/fetch_program.hpp"

namespace probectl {

namespace {

char* g_debuginfo_path = nullptr;

const Dwfl_Callbacks kDwflCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &g_debuginfo_path,
};

std::uint64_t le64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, sizeof(v));  // x86-64 only: host order is the snapshot's
    return v;
}

}  // namespace

struct DwarfUnwinder::Impl {
    Dwfl* dwfl = nullptr;
    pid_t tgid = 0;
    ProcMaps maps;
    // The snapshot being unwound.
    Dwarf_Word regs[kUstackRegCount] = {};
    std::span<const std::uint8_t> stack;
    std::uint64_t stack_base = 0;
    std::uint64_t failed_read = 0;  // the last address memory_read could not read
    bool read_failed = false;
    // The walk's result.
    DwarfUnwind* out = nullptr;
    std::size_t max_frames = 0;

    ~Impl() {
        if (dwfl)
            dwfl_end(dwfl);
    }

    // Memory outside the snapshot that a file maps (read-only data the CFI may point at).
    bool readFile(std::uint64_t addr, Dwarf_Word* result) const {
        const ProcMapping* m = maps.containing(addr);
        if (!m || !m->isFile() || addr + sizeof(*result) > m->end)
            return false;
        const int fd = ::open(m->path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        const ssize_t n =
            ::pread(fd, result, sizeof(*result), static_cast<off_t>(m->fileOffset(addr)));
        ::close(fd);
        return n == static_cast<ssize_t>(sizeof(*result));
    }

    static pid_t nextThread(Dwfl*, void* arg, void** thread_argp) {
        if (*thread_argp)
            return 0;
        *thread_argp = arg;
        return static_cast<Impl*>(arg)->tgid;
    }

    static bool getThread(Dwfl*, pid_t tid, void* arg, void** thread_argp) {
        *thread_argp = arg;
        return tid == static_cast<Impl*>(arg)->tgid;
    }

    static bool memoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
        auto* self = static_cast<Impl*>(arg);
        if (addr >= self->stack_base && addr - self->stack_base <= self->stack.size() &&
            self->stack.size() - (addr - self->stack_base) >= sizeof(*result)) {
            *result = le64(self->stack.data() + (addr - self->stack_base));
            return true;
        }
        if (self->readFile(addr, result))
            return true;
        self->read_failed = true;
        self->failed_read = addr;
        return false;
    }

    static bool setInitialRegisters(Dwfl_Thread* thread, void* arg) {
        auto* self = static_cast<Impl*>(arg);
        return dwfl_thread_state_registers(thread, 0, kUstackRegCount, self->regs);
    }

    static int frame(Dwfl_Frame* state, void* arg) {
        auto* self = static_cast<Impl*>(arg);
        Dwarf_Addr pc = 0;
        bool activation = false;
        // Only a read that failed after the last frame ended the walk. dwfl_frame_pc
        // unwinds the next frame already (is this one a signal frame's caller?).
        self->read_failed = false;
        if (!dwfl_frame_pc(state, &pc, &activation)) {
            self->out->stopped = dwfl_errmsg(-1);
            return DWARF_CB_ABORT;
        }
        self->out->frames.push_back({pc, activation});
        if (self->out->frames.size() >= self->max_frames) {
            self->out->cut = true;
            return DWARF_CB_ABORT;
        }
        return DWARF_CB_OK;
    }
};

namespace {

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = DwarfUnwinder::Impl::nextThread,
    .get_thread = DwarfUnwinder::Impl::getThread,
    .memory_read = DwarfUnwinder::Impl::memoryRead,
    .set_initial_registers = DwarfUnwinder::Impl::setInitialRegisters,
    .detach = nullptr,
    .thread_detach = nullptr,
};

// The file mappings as /proc/PID/maps text, which libdwfl turns into modules.
std::string mapsText(const ProcMaps& maps) {
    std::string out;
    for (const auto& m : maps.mappings())
        if (m.isFile())
            fmt::format_to(std::back_inserter(out), "{:x}-{:x} {} {:08x} {:02x}:{:02x} {} {}\n",
                           m.start, m.end, m.perms.empty() ? "r--p" : m.perms, m.offset,
                           m.dev_major, m.dev_minor, m.inode, m.path);
    return out;
}

}  // namespace

DwarfUnwinder::DwarfUnwinder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwarfUnwinder::~DwarfUnwinder() = default;

std::unique_ptr<DwarfUnwinder> DwarfUnwinder::create(pid_t tgid, const ProcMaps& maps) {
    auto impl = std::make_unique<Impl>();
    impl->tgid = tgid;
    impl->maps = maps;
    impl->dwfl = dwfl_begin(&kDwflCallbacks);
    if (!impl->dwfl)
        return nullptr;
    std::string text = mapsText(maps);
    if (text.empty())
        return nullptr;
    FILE* f = ::fmemopen(text.data(), text.size(), "r");
    if (!f)
        return nullptr;
    dwfl_report_begin(impl->dwfl);
    const int r = dwfl_linux_proc_maps_report(impl->dwfl, f);
    std::fclose(f);
    if (r != 0 || dwfl_report_end(impl->dwfl, nullptr, nullptr) != 0)
        return nullptr;
    Impl* arg = impl.get();
    if (!dwfl_attach_state(impl->dwfl, nullptr, tgid, &kThreadCallbacks, arg))
        return nullptr;
    return std::unique_ptr<DwarfUnwinder>(new DwarfUnwinder(std::move(impl)));
}

DwarfUnwind DwarfUnwinder::registersOnly(std::span<const std::uint8_t> snapshot) {
    DwarfUnwind out;
    if (snapshot.size() >= kUstackRegsBytes)
        out.frames.push_back({le64(snapshot.data() + 16 * 8), true});
    return out;
}

DwarfUnwind DwarfUnwinder::unwind(std::span<const std::uint8_t> snapshot, bool truncated,
                                  std::size_t max_frames) {
    DwarfUnwind out;
    Impl& s = *impl_;
    if (snapshot.size() < kUstackRegsBytes || max_frames == 0) {
        out.stopped = "no registers";
        return out;
    }
    for (std::size_t i = 0; i < kUstackRegCount; i++)
        s.regs[i] = le64(snapshot.data() + i * 8);
    s.stack = snapshot.subspan(kUstackRegsBytes);
    s.stack_base = s.regs[7];  // DWARF register 7: rsp
    s.read_failed = false;
    s.out = &out;
    s.max_frames = max_frames;
    const int r = dwfl_getthread_frames(s.dwfl, s.tgid, Impl::frame, &s);
    s.out = nullptr;
    // libdwfl may end a walk whose memory ran out as if at the outermost frame: the failed
    // read says otherwise.
    if ((r == -1 || (r == 0 && s.read_failed)) && out.stopped.empty()) {
        const bool above = s.read_failed && s.failed_read >= s.stack_base + s.stack.size() &&
                           s.failed_read < s.stack_base + s.stack.size() + 65536;
        if (above && truncated)
            out.stopped = fmt::format("{} {} bytes", kSnapshotEnded, s.stack.size());
        else if (s.read_failed)
            out.stopped = fmt::format("cannot read {:#x}", s.failed_read);
        else
            out.stopped = dwfl_errmsg(-1);
    }
    // An unwinder that got nowhere still names the probed instruction.
    if (out.frames.empty())
        out.frames.push_back({s.regs[16], true});
    return out;
}

}  // namespace probectl
