// ProbeSpec (uprobe/uretprobe/usdt) -> UserTarget: the policy half of ELF resolution.
// ElfResolver reports what the file holds; this file decides what may be probed, refuses
// anything ambiguous, and explains each number it computes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "elf/eh_use.hpp"
#include "elf/inlined_copies.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/insn_boundary.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/user_target.hpp"
#include "target/no_dwarf_note.hpp"
#include "target/user_resolve_cache.hpp"

namespace probectl {

namespace {

std::string segmentFlags(const LoadSegment& s) {
    return fmt::format("{}{}{}", s.flags & PF_R ? 'R' : '-', s.flags & PF_W ? 'W' : '-',
                       s.flags & PF_X ? 'X' : '-');
}

// The arithmetic of ElfResolver::fileOffset, written out.
std::string segmentStep(const LoadSegment& s, std::uint64_t vaddr) {
    return fmt::format(
        "PT_LOAD[{}] ({}, p_vaddr {:#x}, p_offset {:#x}): file offset = {:#x} - "
        "{:#x} + {:#x} = {:#x}",
        s.index, segmentFlags(s), s.vaddr, s.offset, vaddr, s.vaddr, s.offset,
        vaddr - s.vaddr + s.offset);
}

class Resolver {
  public:
    Resolver(const ProbeSpec& spec, const UserResolveOptions& o) : spec_(spec), o_(o) {}

    Result<std::vector<UserTarget>> run() {
        if (!isUserSpace(spec_.kind))
            return fail(EINVAL, fmt::format("{} is not a user-space probe ({})",
                                            toString(spec_.kind), kindNames(true)));
        auto f = findUserFileVia(o_.cache.get(), spec_.path, o_);
        if (!f)
            return fail(f.error().err, f.error().message);
        file_ = std::move(*f);
        ElfOpenOptions eo;
        if (!o_.debug_dir.empty())
            eo.debug_dir = file_.root + o_.debug_dir;
        else
            eo.debug_dir.clear();
        eo.root = file_.root;
        // With a cache, every name of the file is resolved from one reading of it.
        auto kept = readKeptElf(o_.cache.get(), file_.path, eo);
        if (!kept)
            return fail(kept.error().err, kept.error().message);
        kept_ = std::move(*kept);
        elf_ = &kept_->elf();

        if (spec_.kind == SpecKind::Usdt)
            return usdt();
        if (!spec_.has_addr && spec_.offset == 0)
            return functionSites();
        Result<UserTarget> t = spec_.has_addr ? address() : symbol();
        if (!t)
            return std::move(t).error();
        return std::vector<UserTarget>{std::move(*t)};
    }

  private:
    Error fail(int err, std::string_view message) const {
        return makeError(
            err, fmt::format("{}: {}", spec_.text.empty() ? spec_.str() : spec_.text, message));
    }

    UserTarget base() const {
        UserTarget t;
        t.kind = spec_.kind;
        t.is_return = isReturn(spec_.kind);
        t.path = file_.path;
        t.file = file_.file;
        t.how = "file: " + file_.how + "\n";
        if (t.is_return) {
            t.exception_use = kept_->exceptionUse();
            if (!t.exception_use.empty())
                t.how += "exceptions: " + t.exception_use + "\n";
        }
        return t;
    }

    // How the user writes a location of this file in a spec: PATH as they gave it.
    // `entry`: as a uprobe whatever the spec's kind.
    std::string specAt(std::string_view location, bool entry = false) const {
        ProbeSpec s;
        s.kind = spec_.kind == SpecKind::Usdt || entry ? SpecKind::Uprobe : spec_.kind;
        s.path = spec_.path;
        s.symbol = "x";  // str() quotes PATH as the grammar needs; the location replaces "x"
        std::string text = s.str();
        text.pop_back();
        return text + std::string(location);
    }

    // Executable code only: a uprobe elsewhere would never fire (or the kernel refuses it).
    // `what` names the location as the user wrote it; the ELF address is added unless that
    // is what they wrote.
    Result<void> checkExecutable(std::uint64_t vaddr, std::string_view what,
                                 bool what_is_elf_address = false) const {
        const std::string where = what_is_elf_address
                                      ? std::string(what)
                                      : fmt::format("{} (ELF address {:#x})", what, vaddr);
        const LoadSegment* seg = elf_->segmentForAddress(vaddr);
        if (!seg)
            return fail(EINVAL,
                        fmt::format("{} is in no PT_LOAD segment of {}", where, file_.path));
        if (!seg->executable())
            return fail(EINVAL, fmt::format("{} is in non-executable PT_LOAD[{}] ({}) of {}: not "
                                            "code",
                                            where, seg->index, segmentFlags(*seg), file_.path));
        return {};
    }

    // t.vaddr -> t.file_offset, with the arithmetic in t.how.
    Result<void> setFileOffset(UserTarget& t) const {
        auto off = elf_->fileOffset(t.vaddr);
        if (!off)
            return fail(EINVAL, off.error().message);
        t.file_offset = *off;
        t.how += segmentStep(*elf_->segmentForAddress(t.vaddr), t.vaddr) + "\n";
        return {};
    }

    // Names the function around `vaddr` and checks a uretprobe sits on an entry.
    Result<void> nameLocation(UserTarget& t) const {
        if (const ElfSymbol* s = elf_->functionAt(t.vaddr)) {
            t.symbol = s->displayName();
            t.symbol_offset = t.vaddr - s->value;
            t.how += fmt::format("in function {} (ELF address {:#x}, size {}, {}) +{:#x}\n",
                                 t.symbol, s->value, s->size, toString(s->table), t.symbol_offset);
            if (t.kind != SpecKind::Usdt)
                if (auto r = checkBoundary(*s, t.symbol_offset, t); !r)
                    return r.error();
        } else {
            t.how += "in no known function (no symbol covers this address)\n";
        }
        if (t.is_return && !t.symbol.empty() && t.symbol_offset != 0)
            return fail(EINVAL, fmt::format("a uretprobe must be at a function's entry: ELF "
                                            "address {:#x} is {}+{:#x}",
                                            t.vaddr, t.symbol, t.symbol_offset));
        return {};
    }

    // Where the function `s` ends: its size, or for a size-0 symbol (hand-written assembly)
    // the next symbol's address, since nothing else says where its code stops.
    std::uint64_t extent(const ElfSymbol& s) const {
        if (s.size != 0)
            return s.size;
        for (const auto& o : elf_->symbols())
            if (o.value > s.value)
                return o.value - s.value;
        const LoadSegment* seg = elf_->segmentForAddress(s.value);
        return seg ? seg->vaddr + seg->filesz - s.value : 0;
    }

    // A breakpoint inside an instruction corrupts it: refuse offsets off the boundaries.
    Result<void> checkBoundary(const ElfSymbol& s, std::uint64_t offset, UserTarget& t) const {
        if (offset == 0)
            return {};
        const std::uint64_t len = extent(s);
        if (s.size == 0 && offset >= len)
            return fail(EINVAL, fmt::format("offset {:#x} is past '{}': it has size 0 in the "
                                            "symbol table and the next symbol starts {:#x} "
                                            "bytes after it",
                                            offset, s.displayName(), len));
        auto insns = decodeFunction(*elf_, s.value, len);
        // Without the decoder the offset cannot be vetted: refuse rather than risk it.
        if (!insns && insns.error().err == ELIBACC)
            return fail(ELIBACC, insns.error().message);
        if (!insns) {
            t.how += fmt::format("instruction boundary not checked: {}\n", insns.error().message);
            return {};
        }
        if (auto r = checkInstructionBoundary(*insns, s.displayName(), offset); !r)
            return fail(r.error().err, r.error().message);
        t.how += fmt::format("{}+{:#x} starts an instruction ({} decoded in {} bytes{})\n",
                             s.displayName(), offset, insns->size(), len,
                             s.size ? "" : ", size 0: up to the next symbol");
        return {};
    }

    Result<UserTarget> address() const {
        UserTarget t = base();
        const std::uint64_t n = spec_.addr;
        switch (spec_.user_addr) {
            case UserAddrKind::FileOffset: {
                if (o_.pid > 0 && !spec_.user_addr_marked)
                    return fail(EINVAL, fmt::format("with a pid, {:#x} is ambiguous: write "
                                                    "off={:#x} for a file offset or va={:#x} for "
                                                    "an address in process {}",
                                                    n, n, n, o_.pid));
                auto v = elf_->elfAddress(n);
                if (!v)
                    return fail(EINVAL, v.error().message);
                t.file_offset = n;
                t.vaddr = *v;
                t.how += fmt::format("file offset {:#x} as given (ELF address {:#x})\n", n, *v);
                break;
            }
            case UserAddrKind::ElfAddress: {
                auto off = elf_->fileOffset(n);
                if (!off)
                    return fail(EINVAL, off.error().message);
                t.vaddr = n;
                t.file_offset = *off;
                t.how += fmt::format("ELF address {:#x} as given\n", n);
                t.how += segmentStep(*elf_->segmentForAddress(n), n) + "\n";
                break;
            }
            case UserAddrKind::ProcessAddress: {
                auto r = processAddress(t, n);
                if (!r)
                    return r.error();
                break;
            }
            case UserAddrKind::None:
                return fail(EINVAL, "no address in the spec");
        }
        if (auto r = checkExecutable(t.vaddr, fmt::format("{} {:#x}", toString(spec_.user_addr), n),
                                     spec_.user_addr == UserAddrKind::ElfAddress);
            !r)
            return r.error();
        if (auto r = nameLocation(t); !r)
            return r.error();
        return t;
    }

    // va=ADDR: the mapping holding ADDR in process pid tells the file offset directly.
    Result<void> processAddress(UserTarget& t, std::uint64_t addr) const {
        if (o_.pid <= 0)
            return fail(EINVAL, fmt::format("va={:#x} is an address in a running process: give "
                                            "its pid (-p PID), or write elf={:#x} for an address "
                                            "as readelf/objdump print it, or off={:#x} for a "
                                            "file offset",
                                            addr, addr, addr));
        auto maps = ProcMaps::read(o_.pid);
        if (!maps)
            return fail(maps.error().err, maps.error().message);
        const ProcMapping* m = maps->containing(addr);
        if (!m)
            return fail(EINVAL, fmt::format("va={:#x} is not mapped in process {}", addr, o_.pid));
        if (!m->isFile())
            return fail(EINVAL, fmt::format("va={:#x} is in an anonymous mapping '{}' of process "
                                            "{} (JIT code or heap?), not in a file",
                                            addr, m->path, o_.pid));
        struct stat st;
        const bool same_inode = ::stat(file_.path.c_str(), &st) == 0 && st.st_ino == m->inode;
        if (m->path != file_.file && !same_inode)
            return fail(EINVAL, fmt::format("va={:#x} is in {} in process {}, not in {}", addr,
                                            m->path, o_.pid, file_.file));
        t.file_offset = m->fileOffset(addr);
        auto v = elf_->elfAddress(t.file_offset);
        if (!v)
            return fail(EINVAL, v.error().message);
        t.vaddr = *v;
        t.how += fmt::format(
            "process {} maps {:x}-{:x} {} offset {:#x} {}: file offset = {:#x} - "
            "{:#x} + {:#x} = {:#x} (ELF address {:#x})\n",
            o_.pid, m->start, m->end, m->perms, m->offset, m->path, addr, m->start, m->offset,
            t.file_offset, t.vaddr);
        return {};
    }

    std::string candidateLine(const ElfSymbol& s) const {
        auto off = elf_->fileOffset(s.value);
        std::string where = s.section;
        if (!s.file.empty())
            where = s.file + (where.empty() ? "" : " " + where);
        return fmt::format("  {}  ELF address {:#x}, size {}, {}{}",
                           off ? specAt(fmt::format("off={:#x}", *off)) : std::string("?"), s.value,
                           s.size, s.bind == STB_LOCAL ? "local" : "global",
                           where.empty() ? "" : ", " + where);
    }

    Error notFound() const {
        // Data of that name, or only old versions, deserve their own explanation.
        for (const auto& s : elf_->symbols()) {
            if (s.name != spec_.symbol && s.demangled != spec_.symbol)
                continue;
            if (!s.isFunction())
                return fail(EINVAL, fmt::format("'{}' in {} is data (an object), not a function",
                                                spec_.symbol, file_.path));
            if (s.hidden_version)
                return fail(ENOENT, fmt::format("'{}' in {} exists only as the old version {}: "
                                                "name it with the version ({}@{})",
                                                spec_.symbol, file_.path, s.displayName(),
                                                spec_.symbol, s.version));
        }
        if (auto c = clones(); !c.empty())
            return fail(ENOENT, fmt::format("no function '{}' in {} (symbols from {}), only "
                                            "compiler clones of it (copies specialised by "
                                            "constant propagation, IPA-SRA or outlining, each "
                                            "called instead of the original from some call "
                                            "sites; a clone's arguments may differ from the "
                                            "source's); probe each to see every call:\n{}",
                                            spec_.symbol, file_.path, elf_->symbolSource(),
                                            fmt::join(c, "\n")));
        // A C++ signature of no function whose name has overloads: those are what was meant.
        if (auto o = elf_->overloadsOf(spec_.symbol); !o.empty())
            return fail(ENOENT, noSuchOverloadMessage(spec_.symbol,
                                                      fmt::format("{} (symbols from {})",
                                                                  file_.path, elf_->symbolSource()),
                                                      o));
        std::vector<std::pair<std::size_t, std::string>> close;
        for (const auto& s : elf_->symbols()) {
            if (!s.isFunction())
                continue;
            const std::string n = withoutParameters(withoutReturnType(s.demangled));
            const std::size_t d = editDistance(n, spec_.symbol);
            if (d <= std::max<std::size_t>(2, spec_.symbol.size() / 4) ||
                (spec_.symbol.size() >= 4 && n.find(spec_.symbol) != std::string::npos))
                close.emplace_back(d, s.displayName());
        }
        std::sort(close.begin(), close.end());
        close.erase(std::unique(close.begin(), close.end()), close.end());
        std::vector<std::string> names;
        for (std::size_t i = 0; i < close.size() && i < 5; ++i)
            names.push_back(close[i].second);
        // A stripped file keeps only its exported names: an address is the way in.
        const bool stripped = elf_->symbolSource().starts_with(".dynsym");
        return fail(
            ENOENT,
            fmt::format("no function '{}' in {} (symbols from {}){}{}", spec_.symbol, file_.path,
                        elf_->symbolSource(),
                        names.empty() ? std::string()
                                      : fmt::format("; similar: {}", fmt::join(names, ", ")),
                        stripped ? fmt::format("; the file is stripped: install its debug file, "
                                               "or find the address (objdump -d {}) and probe "
                                               "uprobe:{}:elf=0xADDR (an ELF address) or "
                                               "uprobe:{}:off=0xN (a file offset)",
                                               file_.path, file_.path, file_.path)
                                 : std::string()));
    }

    // The spec of function `name`, quoted as the grammar needs (a C++ name's ':' and blanks).
    std::string specOf(const std::string& name) const {
        ProbeSpec s;
        s.kind = spec_.kind == SpecKind::Usdt ? SpecKind::Uprobe : spec_.kind;
        s.path = spec_.path;
        s.symbol = name;
        return s.str();
    }

    // GCC's clones of the wanted function: NAME.constprop.N, NAME.isra.N, NAME.part.N (the
    // outlined rest of a partly inlined function), NAME.cold (its unlikely code, no entry).
    std::vector<std::string> clones() const {
        std::vector<std::string> out;
        const std::string prefix = spec_.symbol + ".";
        // A C++ function's clones carry its mangled name ("_ZNK2ns1K1mEi.isra.0"): a demangled
        // spelling finds them as it finds the function itself.
        const std::string want = normalizeCxxName(spec_.symbol);
        const bool has_params = hasParameterList(spec_.symbol);
        for (const auto& s : elf_->symbols()) {
            if (!s.isFunction())
                continue;
            std::string_view rest;
            if (s.name.starts_with(prefix)) {
                rest = std::string_view(s.name).substr(prefix.size());
            } else if (const std::size_t dot = s.name.find('.');
                       s.name.starts_with("_Z") && dot != std::string::npos &&
                       cxxNameMatches(demangle(std::string_view(s.name).substr(0, dot)), want,
                                      has_params)) {
                rest = std::string_view(s.name).substr(dot + 1);
            } else {
                continue;
            }
            const bool cold = rest == "cold" || rest.ends_with(".cold");
            if (!rest.starts_with("constprop") && !rest.starts_with("isra") &&
                !rest.starts_with("part") && !rest.starts_with("lto_priv") && !cold)
                continue;
            out.push_back(fmt::format("  {}  (ELF address {:#x}, size {}){}",
                                      specOf(s.displayName()), s.value, s.size,
                                      cold ? ": its cold part, not an entry" : ""));
        }
        return out;
    }

    Error ifunc(const ElfSymbol& s) const {
        auto impls = elf_->ifuncImplementations(s);
        std::string msg = fmt::format(
            "'{}' in {} is an IFUNC (STT_GNU_IFUNC): ELF address {:#x} is its resolver, which "
            "the dynamic linker calls once to choose an implementation for this CPU, so a "
            "probe there would not see calls to {}. ",
            s.displayName(), file_.path, s.value, s.name);
        if (impls.empty())
            return fail(EINVAL,
                        msg + fmt::format("No implementations named __{}_* or {}_* are in {}: "
                                          "install the file's debug symbols (e.g. libc6-dbg) to "
                                          "see them, or probe the address the process "
                                          "resolved with va=ADDR and -p PID",
                                          s.name, s.name, elf_->symbolSource()));
        std::vector<std::string> lines;
        for (const ElfSymbol* i : impls)
            lines.push_back(fmt::format("  {}  (ELF address {:#x}, size {})",
                                        specAt(i->displayName()), i->value, i->size));
        return fail(EINVAL, msg + fmt::format("Probe an implementation instead (which one runs "
                                              "depends on the CPU):\n{}",
                                              fmt::join(lines, "\n")));
    }

    Result<UserTarget> symbol() const { return symbol(spec_.symbol); }

    // The function ELF's symbol table calls `name` (the spec's name, or the linkage name
    // DWARF gives it).
    Result<UserTarget> symbol(const std::string& name) const {
        auto found = elf_->functionsNamed(name);
        if (found.empty())
            return notFound();
        if (found.size() > 1) {
            std::vector<std::string> lines;
            for (const ElfSymbol* s : found)
                lines.push_back(fmt::format("{}  {}", candidateLine(*s), s->displayName()));
            return fail(ENOTUNIQ, fmt::format("'{}' names {} functions in {}; pick one by its "
                                              "file offset{}:\n{}",
                                              spec_.symbol, found.size(), file_.path,
                                              found[0]->demangled != found[0]->name
                                                  ? " (or by its full C++ signature, quoted)"
                                                  : "",
                                              fmt::join(lines, "\n")));
        }
        const ElfSymbol& s = *found[0];
        if (s.isIfunc())
            return ifunc(s);
        if (s.size != 0 && spec_.offset >= s.size)
            return fail(EINVAL,
                        fmt::format("offset {:#x} is beyond '{}' ({} byte{} long)", spec_.offset,
                                    s.displayName(), s.size, s.size == 1 ? "" : "s"));
        UserTarget t = base();
        t.vaddr = s.value + spec_.offset;
        t.symbol = s.displayName();
        t.symbol_offset = spec_.offset;
        t.how +=
            fmt::format("symbol {} in {}: ELF address {:#x}, size {}, {}{}\n", s.displayName(),
                        elf_->symbolSource(), s.value, s.size, s.section.empty() ? "?" : s.section,
                        spec_.offset ? fmt::format(", +{:#x} = {:#x}", spec_.offset, t.vaddr) : "");
        if (auto r = checkExecutable(t.vaddr, fmt::format("'{}'", s.displayName())); !r)
            return r.error();
        if (auto r = checkBoundary(s, spec_.offset, t); !r)
            return r.error();
        if (auto r = setFileOffset(t); !r)
            return r.error();
        return t;
    }

    // A function's entry: its out-of-line copy and every copy the compiler inlined into a
    // caller (DWARF), or a probe would count only the calls that were not inlined.
    Result<std::vector<UserTarget>> functionSites() const {
        const auto found = elf_->functionsNamed(spec_.symbol);
        // The ELF symbols' mangled names join DWARF's copies to them: the two spell a C++
        // name differently ("tw<long>" and DWARF's "tw<long int>").
        std::vector<std::string> mangled;
        for (const ElfSymbol* s : found)
            mangled.push_back(s->name);
        const InlinedSearch inl = kept_->inlinedCopies(spec_.symbol, mangled);
        std::string elf_name = spec_.symbol;
        if (found.empty() && inl.functions.size() == 1 && !inl.functions[0].linkage.empty() &&
            !elf_->functionsNamed(inl.functions[0].linkage).empty())
            elf_name = inl.functions[0].linkage;
        if (inl.functions.size() > 1 || (found.size() == 1 && inl.functions.size() == 1 &&
                                         !sameFunction(*found[0], inl.functions[0])))
            return ambiguousInlined(found, inl);
        const bool out_of_line = !elf_->functionsNamed(elf_name).empty();
        std::vector<UserTarget> out;
        if (out_of_line || inl.copies.empty()) {
            auto t = symbol(elf_name);
            if (!t)
                return std::move(t).error();
            if (!inl.has_dwarf)
                t->note = noDwarfNoteFor(t->symbol);
            out.push_back(std::move(*t));
        }
        if (inl.copies.empty())
            return out;
        std::vector<UserTarget> copies;
        for (const InlinedCopy& c : inl.copies) {
            auto t = inlinedCopy(c, inl.source);
            if (!t)
                return std::move(t).error();
            copies.push_back(std::move(*t));
        }
        std::vector<std::string> lines;
        for (const UserTarget& t : copies)
            lines.push_back(fmt::format("  in {}+{:#x}{}  ({})", t.symbol, t.symbol_offset,
                                        t.call_site.empty() ? "" : ", called at " + t.call_site,
                                        specAt(fmt::format("elf={:#x}", t.vaddr), true)));
        const std::string where =
            fmt::format("{} inlined cop{} of '{}' (DWARF of {})", copies.size(),
                        copies.size() == 1 ? "y" : "ies", spec_.symbol, inl.source);
        const char* why = isReturn(spec_.kind)
                              ? "a return probe needs a call and a return, which an inlined "
                                "copy does not have"
                          : !spec_.fetch_args.empty()
                              ? "fetch arguments read the calling convention's registers and "
                                "stack, which an inlined copy does not follow"
                              : nullptr;
        if (why && out.empty())
            return fail(EINVAL,
                        fmt::format("'{}' has no out-of-line copy in {}, only {}; {}. "
                                    "Probe the copies without fetch arguments (uprobe:, "
                                    "not uretprobe:), or a location inside them:\n{}",
                                    spec_.symbol, file_.path, where, why, fmt::join(lines, "\n")));
        if (why) {
            out.front().note = fmt::format(
                "{} not probed ({}); the calls made there are not "
                "seen:\n{}",
                where, why, fmt::join(lines, "\n"));
            return out;
        }
        if (!out.empty())
            out.front().note =
                fmt::format("{} probed too (a probe each):\n{}", where, fmt::join(lines, "\n"));
        else
            copies.front().note = fmt::format("no out-of-line copy of '{}'; its {} probed:\n{}",
                                              spec_.symbol, where, fmt::join(lines, "\n"));
        for (UserTarget& t : copies)
            out.push_back(std::move(t));
        return out;
    }

    static bool sameFunction(const ElfSymbol& s, const InlinedFunction& f) {
        if (!f.linkage.empty())
            return s.name == f.linkage;
        return s.name == f.qualified ||
               withoutParameters(withoutReturnType(s.demangled)) == f.qualified;
    }

    // One name, several functions with inlined copies (overloads, or an out-of-line function
    // and another's copies): probing them all as one would add up different functions.
    Error ambiguousInlined(const std::vector<const ElfSymbol*>& found,
                           const InlinedSearch& inl) const {
        std::vector<std::string> lines;
        for (const ElfSymbol* s : found)
            lines.push_back(fmt::format("  {}  (out of line)", s->displayName()));
        for (const InlinedFunction& f : inl.functions) {
            if (std::any_of(found.begin(), found.end(),
                            [&](const ElfSymbol* s) { return sameFunction(*s, f); }))
                continue;
            lines.push_back(fmt::format("  {}  (inlined only{})",
                                        f.linkage.empty() ? f.qualified : demangle(f.linkage),
                                        f.linkage.empty() ? "" : ", " + f.linkage));
        }
        return fail(ENOTUNIQ, fmt::format("'{}' names {} functions in {} (inlined copies from "
                                          "the DWARF of {}); name one by its qualified name or "
                                          "full C++ signature, quoted, or its mangled name:\n{}",
                                          spec_.symbol, lines.size(), file_.path, inl.source,
                                          fmt::join(lines, "\n")));
    }

    Result<UserTarget> inlinedCopy(const InlinedCopy& c, const std::string& source) const {
        UserTarget t = base();
        // A copy has an entry only: a return probe's copies are listed, never probed.
        t.kind = SpecKind::Uprobe;
        t.is_return = false;
        t.exception_use.clear();
        t.vaddr = c.entry;
        t.inlined_from = spec_.symbol;
        if (!c.call_file.empty())
            t.call_site = fmt::format(
                "{}:{}", c.call_file.substr(c.call_file.find_last_of('/') + 1), c.call_line);
        t.how += fmt::format(
            "inlined copy of {} (DW_TAG_inlined_subroutine in the DWARF of {}): "
            "entry at ELF address {:#x}{}\n",
            spec_.symbol, source, c.entry, t.call_site.empty() ? "" : ", called at " + t.call_site);
        if (auto r = checkExecutable(
                t.vaddr, fmt::format("the inlined copy of '{}' at {:#x}", spec_.symbol, t.vaddr),
                true);
            !r)
            return r.error();
        if (auto r = setFileOffset(t); !r)
            return r.error();
        if (auto r = nameLocation(t); !r)
            return r.error();
        return t;
    }

    // Without DWARF nothing says where a function was inlined; a local (static) function is
    // the usual candidate, so say what it would take to see those calls.
    std::string noDwarfNoteFor(const std::string& name) const {
        for (const ElfSymbol* s : elf_->functionsNamed(spec_.symbol))
            if (s->bind == STB_LOCAL)
                return noDwarfNote(name, file_.path);
        return {};
    }

    Result<std::vector<UserTarget>> usdt() const {
        std::vector<const UsdtProbe*> hits;
        std::vector<std::string> providers;
        for (const auto& p : elf_->usdtProbes()) {
            if (p.name != spec_.usdt_name ||
                (!spec_.provider.empty() && p.provider != spec_.provider))
                continue;
            hits.push_back(&p);
            if (std::find(providers.begin(), providers.end(), p.provider) == providers.end())
                providers.push_back(p.provider);
        }
        const std::string want =
            spec_.provider.empty() ? spec_.usdt_name : spec_.provider + ":" + spec_.usdt_name;
        if (hits.empty()) {
            std::vector<std::string> all;
            for (const auto& p : elf_->usdtProbes())
                if (std::string n = p.provider + ":" + p.name;
                    std::find(all.begin(), all.end(), n) == all.end())
                    all.push_back(n);
            return fail(ENOENT, fmt::format("no USDT probe {} in {}{}", want, file_.path,
                                            all.empty() ? std::string(" (it has no .note.stapsdt)")
                                                        : fmt::format("; it has: {}",
                                                                      fmt::join(all, ", "))));
        }
        if (providers.size() > 1)
            return fail(ENOTUNIQ,
                        fmt::format("USDT name '{}' exists under several providers in "
                                    "{}: {}; write usdt:PATH:PROVIDER:NAME",
                                    spec_.usdt_name, file_.path, fmt::join(providers, ", ")));
        std::vector<UserTarget> out;
        for (std::size_t i = 0; i < hits.size(); ++i) {
            const UsdtProbe& p = *hits[i];
            if (!p.args_error.empty())
                return fail(EINVAL, fmt::format("USDT {}:{} in {}: {}", p.provider, p.name,
                                                file_.path, p.args_error));
            UserTarget t = base();
            t.usdt_provider = p.provider;
            t.usdt_name = p.name;
            t.usdt_args = p.decoded;
            t.vaddr = p.pc;
            t.file_offset = p.file_offset;
            t.ref_ctr_offset = p.semaphore_offset;
            t.semaphore_page_shared = p.semaphore_page_shared;
            t.how += fmt::format(
                "USDT note {}:{} (site {} of {}): pc {:#x}, .stapsdt.base "
                "recorded {:#x}, args '{}'\n",
                p.provider, p.name, i + 1, hits.size(), p.pc, p.base, p.args);
            t.how += segmentStep(*elf_->segmentForAddress(p.pc), p.pc) + "\n";
            for (std::size_t k = 0; k < p.decoded.size(); k++) {
                const UsdtArg& a = p.decoded[k];
                if (a.symbol.empty())
                    continue;
                t.how += fmt::format(
                    "argument {} '{}': {}{} at ELF address {:#x} ({}), read at {}\n", k + 1, a.text,
                    a.symbol,
                    a.symbol_addend ? fmt::format("{:+#x}", a.symbol_addend) : std::string(),
                    a.symbol_address, elf_->symbolSource(),
                    a.ip_relative ? fmt::format("the probe site's address {:+#x}{}", a.offset,
                                                a.index.empty() ? "" : " + the index")
                                  : fmt::format("{:#x} + %{}{}", a.offset, a.reg,
                                                a.index.empty() ? "" : " + the index"));
            }
            if (p.semaphore) {
                t.how += "semaphore: " +
                         segmentStep(*elf_->segmentForAddress(p.semaphore), p.semaphore) +
                         " = ref_ctr_offset\n";
                if (p.semaphore_page_shared)
                    t.how +=
                        "semaphore page: also mapped by an earlier writable segment "
                        "(RELRO); a command probectl starts gets it raised at its entry "
                        "point\n";
            } else {
                t.how += "semaphore: none (the probe's arguments are always evaluated)\n";
            }
            if (auto r = nameLocation(t); !r)
                return r.error();
            out.push_back(std::move(t));
        }
        return out;
    }

    const ProbeSpec& spec_;
    const UserResolveOptions& o_;
    UserFile file_;
    std::shared_ptr<KeptElf> kept_;
    const ElfResolver* elf_ = nullptr;  // kept_'s
};

}  // namespace

UserResolveCache::UserResolveCache() : impl_(std::make_unique<Impl>()) {}
UserResolveCache::~UserResolveCache() = default;

std::string userResolveKey(const ProbeSpec& spec, pid_t pid, const std::string& debug_dir) {
    return fmt::format("{}\n{}\n{}\n{}", spec.text, spec.str(), pid, debug_dir);
}

Result<std::vector<UserTarget>> resolveUserSpecAll(const ProbeSpec& spec,
                                                   const UserResolveOptions& options) {
    if (!options.cache)
        return Resolver(spec, options).run();
    return options.cache->impl().get<std::vector<UserTarget>>(
        options.cache->impl().targets, userResolveKey(spec, options.pid, options.debug_dir),
        [&] { return Resolver(spec, options).run(); });
}

Result<UserTarget> resolveUserSpec(const ProbeSpec& spec, const UserResolveOptions& options) {
    auto all = resolveUserSpecAll(spec, options);
    if (!all)
        return std::move(all).error();
    if (all->size() > 1) {
        std::vector<std::string> sites;
        for (const auto& t : *all)
            sites.push_back(fmt::format("  file offset {:#x}{}{}", t.file_offset,
                                        t.symbol.empty() ? "" : " in " + t.symbol,
                                        t.inlined_from.empty() ? "" : " (inlined copy)"));
        return makeError(ENOTUNIQ,
                         fmt::format("{}: {} has {} sites in {} (each needs "
                                     "its own uprobe; resolveUserSpecAll returns them "
                                     "all):\n{}",
                                     spec.text.empty() ? spec.str() : spec.text,
                                     spec.kind == SpecKind::Usdt ? "USDT probe" : "the function",
                                     all->size(), (*all)[0].path, fmt::join(sites, "\n")));
    }
    return std::move((*all)[0]);
}

}  // namespace probectl
