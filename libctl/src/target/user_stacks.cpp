// User stacks: process addresses to "function+offset (file)" through the process's maps (a
// maps source's, else /proc/TGID/maps) and the mapped file's ELF symbols.
#include "probectl/user_stacks.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "elf/call_sites.hpp"
#include "elf/source_lines.hpp"
#include "target/dwarf_unwind.hpp"

namespace probectl {

UserSymbolizer::UserSymbolizer(std::string proc) : proc_(std::move(proc)) {}
UserSymbolizer::UserSymbolizer(UserSymbolizer&&) noexcept = default;
UserSymbolizer& UserSymbolizer::operator=(UserSymbolizer&&) noexcept = default;
UserSymbolizer::~UserSymbolizer() = default;

namespace {

std::optional<ProcMaps> readMaps(const std::string& proc, pid_t tgid) {
    std::ifstream in(fmt::format("{}/{}/maps", proc, tgid));
    if (!in)
        return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    auto maps = ProcMaps::parse(text.str());
    // A process that exited between open and read leaves an empty file: not its maps.
    if (!maps || maps->mappings().empty())
        return std::nullopt;
    return std::move(*maps);
}

bool sameMapping(const ProcMapping& a, const ProcMapping& b) {
    return a.start == b.start && a.end == b.end && a.offset == b.offset &&
           a.dev_major == b.dev_major && a.dev_minor == b.dev_minor && a.inode == b.inode &&
           a.path == b.path;
}

// Whether `now` is the address space `before` was read from, with mappings added or removed
// since: its program's first mapping and its [vdso] (placed anew at each exec) are where
// they were. Without either to compare, it cannot be told: no.
bool sameAddressSpace(const ProcMaps& before, const ProcMaps& now) {
    std::size_t compared = 0;
    const ProcMapping* program = nullptr;
    for (const auto& m : before.mappings())
        if (m.isFile()) {
            program = &m;
            break;
        }
    for (const auto& m : before.mappings()) {
        if (&m != program && m.path != "[vdso]")
            continue;
        const ProcMapping* there = now.containing(m.start);
        if (!there || !sameMapping(m, *there))
            return false;
        compared++;
    }
    return compared == 2;
}

// Pages refreshMissing reads the maps again for, per image, at most: past them, a process
// whose stacks are full of bad frames is not read again at each.
constexpr std::size_t kMaxLookedFor = 256;

}  // namespace

void SnapshotWalks::count(const std::vector<std::string>& lines, bool snapshot_filled) {
    static const std::string kStopped = "[unwind stopped: ";
    const bool stop = !lines.empty() && lines.back().starts_with(kStopped);
    unwound++;
    filled += snapshot_filled;
    stopped += stop;
    cut +=
        stop && std::string_view(lines.back()).substr(kStopped.size()).starts_with(kSnapshotEnded);
}

bool UserSymbolizer::capture(UserImage image) {
    return hasMaps(image) || refresh(image);
}

void UserSymbolizer::setMapsSource(MapsSource source) {
    source_ = std::move(source);
}

bool UserSymbolizer::fromSource(UserImage image) {
    if (!source_)
        return false;
    auto text = source_(image);
    if (!text)
        return false;
    auto maps = ProcMaps::parse(*text);
    if (!maps || maps->mappings().empty())
        return false;
    setMaps(image, std::move(*maps));
    return true;
}

bool UserSymbolizer::refresh(UserImage image) {
    if (fromSource(image))
        return true;
    // A kept address space's maps stay: the process may have exec'd since.
    if (image.maps_seq && hasMaps(image))
        return true;
    if (auto maps = readMaps(proc_, image.tgid)) {
        // Never the maps of another program that exec'd under the same tgid: a frame named
        // from them would be a wrong name, worse than [unknown].
        auto old = maps_.find(image);
        if (old == maps_.end() || sameAddressSpace(old->second, *maps))
            setMaps(image, std::move(*maps));
    }
    return hasMaps(image);
}

bool UserSymbolizer::refreshMissing(UserImage image, std::span<const std::uint64_t> addrs) {
    auto m = maps_.find(image);
    if (m == maps_.end())
        return false;
    auto& looked = looked_for_[image];
    bool missing = false;
    for (auto addr : addrs) {
        // A return address may end its mapping: the call is the byte before.
        if (m->second.containing(addr) || (addr && m->second.containing(addr - 1)))
            continue;
        if (looked.size() < kMaxLookedFor && looked.insert(addr >> 12).second)
            missing = true;
    }
    if (!missing)
        return false;
    refresh(image);
    return true;
}

void UserSymbolizer::setMaps(UserImage image, ProcMaps maps) {
    maps_.insert_or_assign(image, std::move(maps));
    unwinders_.erase(image);
}

bool UserSymbolizer::hasMaps(UserImage image) const {
    return maps_.contains(image);
}

const ElfResolver* UserSymbolizer::elf(const std::string& path) {
    auto it = elfs_.find(path);
    if (it == elfs_.end()) {
        auto r = ElfResolver::open(path);
        it =
            elfs_.emplace(path, r ? std::optional<ElfResolver>(std::move(*r)) : std::nullopt).first;
    }
    return it->second ? &*it->second : nullptr;
}

std::string UserSymbolizer::frameText(UserImage image, std::uint64_t addr, bool caller) {
    auto m = maps_.find(image);
    const ProcMapping* map = m == maps_.end() ? nullptr : m->second.containing(addr);
    if (!map)
        return fmt::format("{:#x} [unknown]", addr);
    const std::string where = map->path.empty() ? std::string("[anon]") : map->path;
    const std::uint64_t look = caller && addr > map->start ? addr - 1 : addr;
    const ElfResolver* file = map->isFile() ? elf(map->path) : nullptr;
    if (file) {
        if (auto at = file->elfAddress(map->fileOffset(look)); at) {
            const std::uint64_t elf_addr = *at + (addr - look);
            if (const ElfSymbol* sym = file->functionAt(*at)) {
                const std::uint64_t off = elf_addr - sym->value;
                return off ? fmt::format("{}+{:#x} ({})", sym->displayName(), off, where)
                           : fmt::format("{} ({})", sym->displayName(), where);
            }
            // The run-time address changes with every run (ASLR); the ELF address is what
            // addr2line -e, objdump and a uprobe's elf= take.
            return fmt::format("{}+{:#x}", where, elf_addr);
        }
    }
    if (map->isFile())
        return fmt::format("{}+{:#x} (file offset)", where, map->fileOffset(addr));
    // The vDSO is linked at 0, so its offset is its ELF address.
    if (map->path == "[vdso]")
        return fmt::format("[vdso]+{:#x}", addr - map->start);
    return fmt::format("{:#x} ({})", addr, where);
}

SourceLines* UserSymbolizer::sourceLines(const std::string& path, const ElfResolver& file) {
    auto it = lines_.find(path);
    if (it == lines_.end())
        it = lines_
                 .emplace(path,
                          SourceLines::open(file.debugFile().empty() ? path : file.debugFile()))
                 .first;
    return it->second.get();
}

const ElfResolver* UserSymbolizer::fileAt(UserImage image, std::uint64_t addr, bool caller,
                                          const ProcMapping** map, std::uint64_t* elf_addr) {
    auto m = maps_.find(image);
    *map = m == maps_.end() ? nullptr : m->second.containing(addr);
    if (!*map || !(*map)->isFile())
        return nullptr;
    const ElfResolver* file = elf((*map)->path);
    if (!file)
        return nullptr;
    const std::uint64_t look = caller && addr > (*map)->start ? addr - 1 : addr;
    auto at = file->elfAddress((*map)->fileOffset(look));
    if (!at)
        return nullptr;
    *elf_addr = *at;
    return file;
}

namespace {

std::string where(const SourceFrame& f) {
    return f.line ? fmt::format(" at {}:{}", f.file, f.line) : std::string();
}

}  // namespace

std::vector<std::string> UserSymbolizer::frameLines(UserImage image, std::uint64_t addr,
                                                    bool caller) {
    std::vector<std::string> out{frameText(image, addr, caller)};
    const ProcMapping* map = nullptr;
    std::uint64_t at = 0;
    const ElfResolver* file = fileAt(image, addr, caller, &map, &at);
    SourceLines* src = file ? sourceLines(map->path, *file) : nullptr;
    if (!src)
        return out;
    const std::vector<SourceFrame>& frames = src->at(at);
    if (frames.empty())
        return out;
    std::string own = std::move(out.back());
    out.clear();
    for (std::size_t i = 0; i + 1 < frames.size(); i++)
        out.push_back(fmt::format("{} (inlined){}", frames[i].inlined, where(frames[i])));
    out.push_back(own + where(frames.back()));
    return out;
}

CallSites* UserSymbolizer::callSites(const std::string& path, const ElfResolver& file) {
    auto it = calls_.find(path);
    if (it != calls_.end())
        return it->second.get();
    SourceLines* src = sourceLines(path, file);
    // Callees only declared in the caller's unit are found by their symbol; an ifunc's
    // symbol is its resolver, not the function.
    auto entry = [&file](std::string_view name) -> std::optional<std::uint64_t> {
        const auto syms = file.functionsNamed(name);
        if (syms.size() != 1 || syms[0]->isIfunc())
            return std::nullopt;
        return syms[0]->value;
    };
    return calls_.emplace(path, src ? std::make_unique<CallSites>(src->dwarf(), entry) : nullptr)
        .first->second.get();
}

std::vector<std::string> UserSymbolizer::tailCallLines(UserImage image, std::uint64_t inner,
                                                       bool inner_caller, std::uint64_t outer) {
    const ProcMapping* outer_map = nullptr;
    std::uint64_t look = 0;
    const ElfResolver* file = fileAt(image, outer, true, &outer_map, &look);
    CallSites* calls = file ? callSites(outer_map->path, *file) : nullptr;
    if (!calls)
        return {};
    InnerFrame in;
    const ProcMapping* inner_map = nullptr;
    const ElfResolver* inner_file = fileAt(image, inner, inner_caller, &inner_map, &in.addr);
    const ElfSymbol* inner_sym = inner_file ? inner_file->functionAt(in.addr) : nullptr;
    if (inner_sym)
        in.symbol = inner_sym->name;
    in.same_file = inner_file == file;
    const TailGap& gap = calls->between(look + 1, in);
    if (!gap.gone)
        return {};
    std::vector<std::string> out;
    if (gap.chain.empty()) {
        const ElfSymbol* caller = file->functionAt(look);
        out.push_back(
            fmt::format("[{} called {}; the frames from it to {} were not kept (tail calls)]",
                        caller ? caller->displayName() : fmt::format("{:#x}", outer), gap.callee,
                        inner_sym ? inner_sym->displayName() : fmt::format("{:#x}", inner)));
        return out;
    }
    SourceLines* src = sourceLines(outer_map->path, *file);
    for (auto f = gap.chain.rbegin(); f != gap.chain.rend(); ++f) {
        const std::vector<SourceFrame>& frames = src->at(f->jump);
        for (std::size_t i = 0; i + 1 < frames.size(); i++)
            out.push_back(fmt::format("{} (inlined){}", frames[i].inlined, where(frames[i])));
        out.push_back(fmt::format("{} (tail call: its frame is gone){}", f->function,
                                  frames.empty() ? std::string() : where(frames.back())));
    }
    return out;
}

std::vector<std::string> UserSymbolizer::snapshotLines(UserImage image,
                                                       std::span<const std::uint8_t> snapshot,
                                                       bool truncated, std::size_t max_frames) {
    if (snapshot.empty())
        return {"[no user stack]"};
    auto m = maps_.find(image);
    DwarfUnwinder* unwinder = nullptr;
    if (m != maps_.end()) {
        auto it = unwinders_.find(image);
        if (it == unwinders_.end())
            it = unwinders_.emplace(image, DwarfUnwinder::create(image.tgid, m->second)).first;
        unwinder = it->second.get();
    }
    std::vector<std::string> out;
    if (!unwinder) {
        // Without modules only the probed instruction is known.
        DwarfUnwind none = DwarfUnwinder::registersOnly(snapshot);
        for (const auto& f : none.frames)
            for (auto& l : frameLines(image, f.pc, false))
                out.push_back(std::move(l));
        out.push_back(fmt::format("[unwind stopped: {}]", m == maps_.end()
                                                              ? "no maps of the process"
                                                              : "its files could not be read"));
        return out;
    }
    DwarfUnwind u = unwinder->unwind(snapshot, truncated, max_frames);
    // A frame in code mapped since the maps were read (a dlopen()ed library): the walk
    // stops there, without its CFI. Once more with the maps read again.
    std::vector<std::uint64_t> pcs;
    for (const auto& f : u.frames)
        pcs.push_back(f.pc);
    // (setMaps drops the unwinder of maps it replaces.)
    if (refreshMissing(image, pcs) && !unwinders_.contains(image)) {
        m = maps_.find(image);
        auto it = unwinders_.emplace(image, DwarfUnwinder::create(image.tgid, m->second)).first;
        if (it->second)
            u = it->second->unwind(snapshot, truncated, max_frames);
    }
    out.reserve(u.frames.size() + 1);
    for (std::size_t i = 0; i < u.frames.size(); i++) {
        const auto& f = u.frames[i];
        if (i > 0 && !f.activation)
            for (auto& l :
                 tailCallLines(image, u.frames[i - 1].pc, !u.frames[i - 1].activation, f.pc))
                out.push_back(std::move(l));
        for (auto& l : frameLines(image, f.pc, !f.activation))
            out.push_back(std::move(l));
    }
    if (u.cut)
        out.emplace_back("...");
    else if (!u.stopped.empty())
        out.push_back(fmt::format("[unwind stopped: {}]", u.stopped));  // SnapshotWalks
    return out;
}

}  // namespace probectl
