// ElfResolver queries: address <-> file offset through PT_LOAD, and symbol lookups.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gelf.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "probectl/elf_resolver.hpp"

namespace probectl {

const LoadSegment* ElfResolver::segmentForAddress(std::uint64_t elf_addr) const {
    for (const auto& s : segments_)
        if (s.containsAddress(elf_addr))
            return &s;
    return nullptr;
}

Result<std::uint64_t> ElfResolver::fileOffset(std::uint64_t elf_addr) const {
    if (const LoadSegment* s = segmentForAddress(elf_addr))
        return elf_addr - s->vaddr + s->offset;
    for (const auto& s : segments_)
        if (elf_addr >= s.vaddr && elf_addr - s.vaddr < s.memsz)
            return makeError(EINVAL, fmt::format("{}: ELF address {:#x} is in the zero-filled "
                                                 "(.bss) part of PT_LOAD[{}]: no file bytes",
                                                 path_, elf_addr, s.index));
    return makeError(
        EINVAL, fmt::format("{}: ELF address {:#x} is in no PT_LOAD segment", path_, elf_addr));
}

Result<std::uint64_t> ElfResolver::elfAddress(std::uint64_t file_offset) const {
    for (const auto& s : segments_)
        if (s.containsOffset(file_offset))
            return file_offset - s.offset + s.vaddr;
    return makeError(
        EINVAL, fmt::format("{}: file offset {:#x} is in no PT_LOAD segment", path_, file_offset));
}

const ElfSymbol* ElfResolver::functionAt(std::uint64_t elf_addr) const {
    // symbols_ is sorted by value: candidates are at or before the address. Sizes differ, so
    // walk back over the few symbols that start below it.
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), elf_addr,
                               [](std::uint64_t a, const ElfSymbol& s) { return a < s.value; });
    const ElfSymbol* best = nullptr;
    for (auto i = it; i != symbols_.begin();) {
        --i;
        if (!i->isFunction())
            continue;
        if (i->contains(elf_addr)) {
            // Same start address: globals sort first; keep the first one found at this value.
            if (!best || i->value > best->value ||
                (i->value == best->value && i->bind != STB_LOCAL))
                best = &*i;
        }
        // Functions are rarely larger than 1 MiB; stop scanning once far below.
        if (elf_addr - i->value > (1u << 20))
            break;
    }
    return best;
}

namespace {

// normalizeCxxName's word characters: a word of a normalized name is one of the name's own.
bool isNameWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// The words normalizeCxxName may write that the name did not spell so (builtin types).
bool isBuiltinTypeWord(std::string_view w) {
    return w == "signed" || w == "unsigned" || w == "short" || w == "long" || w == "int" ||
           w == "char" || w == "double";
}

std::size_t hashOf(std::string_view s) {
    return std::hash<std::string_view>{}(s);
}

}  // namespace

// Where functionsNamed looks, so that a glob's N names cost N lookups, not N scans of the
// table. Every entry is a candidate only (a hash): functionsNamed's own test decides.
struct ElfResolver::NameIndex {
    std::once_flag built;
    // A function by its name and its demangled name.
    std::unordered_multimap<std::size_t, std::uint32_t> exact;
    // A C++ function (demangled name != name) by each word of its demangled name: a C++ form
    // functionsNamed accepts has the wanted function's last identifier among those words.
    std::unordered_multimap<std::size_t, std::uint32_t> cxx_words;
    std::vector<std::uint32_t> cxx;  // every C++ function, for a name without such a word
};

ElfResolver::ElfResolver() : names_(std::make_shared<NameIndex>()) {}

const ElfResolver::NameIndex& ElfResolver::nameIndex() const {
    std::call_once(names_->built, [this] {
        NameIndex& x = *names_;
        std::vector<std::size_t> words;
        for (std::uint32_t i = 0; i < symbols_.size(); ++i) {
            const ElfSymbol& s = symbols_[i];
            if (!s.isFunction())
                continue;
            x.exact.emplace(hashOf(s.name), i);
            if (s.demangled == s.name)
                continue;
            x.exact.emplace(hashOf(s.demangled), i);
            x.cxx.push_back(i);
            words.clear();
            const std::string_view d = s.demangled;
            for (std::size_t a = 0; a < d.size();) {
                if (!isNameWordChar(d[a])) {
                    ++a;
                    continue;
                }
                std::size_t b = a;
                while (b < d.size() && isNameWordChar(d[b]))
                    ++b;
                words.push_back(hashOf(d.substr(a, b - a)));
                a = b;
            }
            std::sort(words.begin(), words.end());
            words.erase(std::unique(words.begin(), words.end()), words.end());
            for (std::size_t w : words)
                x.cxx_words.emplace(w, i);
        }
    });
    return *names_;
}

std::vector<const ElfSymbol*> ElfResolver::functionsNamed(std::string_view name) const {
    std::string_view base = name;
    std::string_view want_version;
    bool want_hidden = false;
    // name@@V / name@V (C++ names contain no '@', so this never splits a demangled name).
    if (auto at = name.find('@'); at != std::string_view::npos && at > 0) {
        base = name.substr(0, at);
        want_hidden = !name.substr(at).starts_with("@@");
        want_version = name.substr(at + (want_hidden ? 1 : 2));
    }
    const bool has_params = hasParameterList(base);
    // C++ names compare in one spelling of blanks and cv-qualifiers: "f(const char *)" is the
    // demangler's "f(char const*)".
    const std::string want = normalizeCxxName(base);
    const std::string_view key = cxxNameKey(want);
    // The symbols that can match, in table order.
    const NameIndex& index = nameIndex();
    std::vector<std::uint32_t> candidates;
    for (auto [it, end] = index.exact.equal_range(hashOf(base)); it != end; ++it)
        candidates.push_back(it->second);
    if (!index.cxx.empty()) {
        // The key's last identifier is a word of every C++ name that matches, unless the
        // normalizing wrote it (a builtin type) or there is none.
        const auto colon = key.rfind(':');
        const std::string_view last = colon == std::string_view::npos ? key : key.substr(colon + 1);
        if (last.empty() || isBuiltinTypeWord(last))
            candidates.insert(candidates.end(), index.cxx.begin(), index.cxx.end());
        else
            for (auto [it, end] = index.cxx_words.equal_range(hashOf(last)); it != end; ++it)
                candidates.push_back(it->second);
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<const ElfSymbol*> out;
    for (std::uint32_t i : candidates) {
        const ElfSymbol& s = symbols_[i];
        if (!s.isFunction())
            continue;
        // Every C++ form compared is spelled with the name's last scoped identifier before
        // its parameters or template arguments: most symbols go no further.
        bool match = s.name == base || s.demangled == base;
        if (!match && s.demangled != s.name && s.demangled.find(key) != std::string::npos)
            match = cxxNameMatches(s.demangled, want, has_params);
        if (!match)
            continue;
        if (want_version.empty() ? s.hidden_version
                                 : (s.version != want_version || s.hidden_version != want_hidden))
            continue;
        // One entry per address: aliases of one function are one function.
        if (std::none_of(out.begin(), out.end(),
                         [&](const ElfSymbol* o) { return o->value == s.value; }))
            out.push_back(&s);
    }
    return out;
}

std::vector<std::string> ElfResolver::overloadsOf(std::string_view signature) const {
    std::vector<std::string> out;
    if (!hasParameterList(signature))
        return out;
    for (const ElfSymbol* s : functionsNamed(withoutParameters(signature))) {
        std::string n = withoutReturnType(s->demangled);
        if (std::find(out.begin(), out.end(), n) == out.end())
            out.push_back(std::move(n));
    }
    return out;
}

std::string noSuchOverloadMessage(std::string_view signature, std::string_view file,
                                  const std::vector<std::string>& overloads) {
    return fmt::format("no function '{}' in {}; the functions named '{}' take other parameters: {}",
                       signature, file, withoutParameters(signature), fmt::join(overloads, ", "));
}

std::vector<const ElfSymbol*> ElfResolver::ifuncImplementations(const ElfSymbol& ifunc) const {
    const std::string prefixes[] = {"__" + ifunc.name + "_", ifunc.name + "_"};
    // Longer IFUNC names sharing the prefix own their own variants: __memcpy_chk's
    // __memcpy_chk_avx_unaligned is not a memcpy.
    std::vector<std::string> other_ifuncs;
    for (const auto& s : symbols_)
        if (s.isIfunc() && s.name != ifunc.name)
            other_ifuncs.push_back(s.name + "_");
    std::vector<const ElfSymbol*> out;
    for (const auto& s : symbols_) {
        if (s.type != STT_FUNC || s.value == ifunc.value)
            continue;
        if (std::none_of(std::begin(prefixes), std::end(prefixes),
                         [&](const std::string& p) { return s.name.starts_with(p); }))
            continue;
        if (std::any_of(other_ifuncs.begin(), other_ifuncs.end(), [&](const std::string& p) {
                return p.size() > ifunc.name.size() + 1 && s.name.starts_with(p);
            }))
            continue;
        if (std::none_of(out.begin(), out.end(),
                         [&](const ElfSymbol* o) { return o->name == s.name; }))
            out.push_back(&s);
    }
    std::sort(out.begin(), out.end(),
              [](const ElfSymbol* a, const ElfSymbol* b) { return a->name < b->name; });
    return out;
}

}  // namespace probectl
