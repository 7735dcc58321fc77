// KernelSymbols: /proc/kallsyms and kprobes-blacklist parsing and lookups.
#include "probectl/kernel_symbols.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>

#include "core/step_timing.hpp"
#include "core/trim.hpp"
#include "kernel/symbol_cache.hpp"
#include "probectl/syscall_meta.hpp"

namespace probectl {

namespace detail {

// A table from the cache file (KernelSymbols::fromCacheFile). Symbols found by name are made
// one by one and kept, so the pointers lookup() returns stay valid as long as the table;
// the whole table is built on first need. Shared by copies of the table.
struct LazySymbols {
    std::shared_ptr<const MappedSymbolCache> map;
    std::string blacklist;
    std::string kallsyms_path;
    std::mutex mu;
    std::unordered_map<std::uint32_t, std::unique_ptr<KernelSymbol>> found;
    std::optional<KernelSymbols> whole;
};

}  // namespace detail

bool KernelSymbol::isFunction() const {
    // kallsyms letters (man nm): T/t text, W/w weak (text on x86 kernels).
    return type == 'T' || type == 't' || type == 'W' || type == 'w';
}

std::string_view KernelSymbol::kindName() const {
    switch (type) {
        case 'T':
        case 't':
            return "function";
        case 'W':
        case 'w':
            return "weak";
        case 'D':
        case 'd':
            return "data";
        case 'R':
        case 'r':
            return "rodata";
        case 'B':
        case 'b':
            return "bss";
        case 'A':
        case 'a':
            return "absolute";
        default:
            return "other";
    }
}

std::string_view toString(Probeability p) {
    switch (p) {
        case Probeability::Ok:
            return "yes";
        case Probeability::Unknown:
            return "no: unknown symbol";
        case Probeability::Duplicate:
            return "no: duplicate name (use kprobe:0xADDR)";
        case Probeability::Blacklisted:
            return "no: kprobes blacklist";
        case Probeability::NotText:
            return "no: not a function";
        case Probeability::Padding:
            return "no: padding before a function";
        case Probeability::InitText:
            return "no: init code (freed after boot)";
    }
    return "?";
}

namespace {

// Function padding symbols (CONFIG_FUNCTION_PADDING_ALIGNMENT, >= 6.2) share the text type
// letter but mark NOPs in front of the function they name.
constexpr std::string_view kPaddingPrefix = "__pfx_";

// Up to five fields split on spaces and tabs (empty ones dropped); `count` says how many
// were found, up to 5 even if there are more. Fixed storage: this runs once per kallsyms
// line.
struct Fields {
    std::array<std::string_view, 5> f;
    std::size_t count = 0;
    std::size_t size() const { return count; }
    std::string_view operator[](std::size_t i) const { return f[i]; }
    bool empty() const { return count == 0; }
};

Fields fields(std::string_view line) {
    Fields out;
    std::size_t i = 0;
    while (i < line.size() && out.count < out.f.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            ++i;
        if (i > start)
            out.f[out.count++] = line.substr(start, i - start);
    }
    return out;
}

bool parseHex(std::string_view s, std::uint64_t& out) {
    if (s.starts_with("0x") || s.starts_with("0X"))
        s.remove_prefix(2);
    if (s.empty())
        return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    return ec == std::errc() && p == s.data() + s.size();
}

template <class F>
void forEachLine(std::string_view text, F&& f) {
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        f(text.substr(0, nl));
        if (nl == std::string_view::npos)
            break;
        text.remove_prefix(nl + 1);
    }
}

Result<std::string> readFile(const std::string& path) {
    // read(2) straight into the string: kallsyms is megabytes, and a stream copies it twice.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot read {}", path));
    std::string out;
    std::size_t used = 0;
    for (;;) {
        if (out.size() - used < 65536)
            out.resize(std::max<std::size_t>(out.size() * 2, used + 65536));
        const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return makeError(err, fmt::format("error reading {}", path));
        }
        if (n == 0)
            break;
        used += static_cast<std::size_t>(n);
    }
    ::close(fd);
    out.resize(used);
    return out;
}

}  // namespace

Result<KernelSymbols> KernelSymbols::fromText(std::string_view kallsyms,
                                              std::string_view blacklist) {
    KernelSymbols ks;
    ks.symbols_.reserve(
        static_cast<std::size_t>(std::count(kallsyms.begin(), kallsyms.end(), '\n')) + 1);
    bool any_line = false;
    forEachLine(kallsyms, [&](std::string_view line) {
        line = trimBlanks(line);
        if (line.empty())
            return;
        any_line = true;
        const auto f = fields(line);
        KernelSymbol sym;
        if (f.size() < 3 || f.size() > 4 || f[1].size() != 1 || !parseHex(f[0], sym.addr)) {
            ++ks.malformed_;
            return;
        }
        sym.type = f[1][0];
        sym.name = std::string(f[2]);
        if (f.size() == 4) {
            std::string_view mod = f[3];
            if (mod.size() < 3 || mod.front() != '[' || mod.back() != ']') {
                ++ks.malformed_;
                return;
            }
            sym.module = std::string(mod.substr(1, mod.size() - 2));
        }
        ks.symbols_.push_back(std::move(sym));
    });
    if (any_line && ks.symbols_.empty())
        return makeError(EINVAL,
                         "no kallsyms line could be parsed (expected \"ADDRESS TYPE "
                         "NAME [MODULE]\")");

    ks.addBlacklist(blacklist);
    ks.index();
    return ks;
}

void KernelSymbols::addBlacklist(std::string_view text) {
    forEachLine(text, [&](std::string_view line) {
        line = trimBlanks(line);
        if (line.empty())
            return;
        has_blacklist_ = true;
        // "0xSTART-0xEND<TAB>SYMBOL[ [MODULE]]"
        const std::size_t dash = line.find('-');
        const std::size_t tab = line.find_first_of(" \t");
        if (dash == std::string_view::npos || tab == std::string_view::npos || dash > tab)
            return;
        BlacklistEntry e;
        if (!parseHex(line.substr(0, dash), e.start) ||
            !parseHex(line.substr(dash + 1, tab - dash - 1), e.end))
            return;
        const auto rest = fields(line.substr(tab));
        if (rest.empty())
            return;
        e.symbol = std::string(rest[0]);
        blacklist_by_name_.emplace(e.symbol, blacklist_.size());
        blacklist_.push_back(std::move(e));
    });
}

KernelSymbols KernelSymbols::fromSymbols(std::vector<KernelSymbol> symbols,
                                         std::string_view blacklist, std::size_t malformed) {
    KernelSymbols ks;
    ks.symbols_ = std::move(symbols);
    ks.malformed_ = malformed;
    ks.addBlacklist(blacklist);
    ks.index();
    return ks;
}

namespace {

std::string readBlacklist(const std::string& path) {
    if (path.empty())
        return {};
    detail::StepTimer timer("kallsyms: read blacklist");
    // Needs debugfs mounted and root; without it the kernel still refuses blacklisted
    // locations, just with less helpful text.
    auto b = readFile(path);
    return b ? std::move(*b) : std::string();
}

}  // namespace

Result<KernelSymbols> KernelSymbols::load(const std::string& kallsyms_path,
                                          const std::string& blacklist_path) {
    detail::StepTimer read_timer("kallsyms: read " + kallsyms_path);
    auto text = readFile(kallsyms_path);
    if (!text)
        return std::move(text).error();
    read_timer.done();
    const std::string bl = readBlacklist(blacklist_path);
    detail::StepTimer parse_timer("kallsyms: parse, index");
    auto ks = fromText(*text, bl);
    if (ks && !bl.empty())
        ks->has_blacklist_ = true;
    return ks;
}

std::optional<KernelSymbols> KernelSymbols::fromCacheFile(const std::string& path,
                                                          std::string_view key,
                                                          std::string_view blacklist,
                                                          const std::string& kallsyms_path) {
    auto map = detail::MappedSymbolCache::open(path, key);
    if (!map)
        return std::nullopt;
    KernelSymbols ks;
    ks.malformed_ = map->malformed();
    ks.hidden_ = map->addressesHidden();
    ks.complete_ = false;
    ks.addBlacklist(blacklist);
    ks.lazy_ = std::make_shared<detail::LazySymbols>();
    ks.lazy_->map = std::move(map);
    ks.lazy_->blacklist = std::string(blacklist);
    ks.lazy_->kallsyms_path = kallsyms_path;
    return ks;
}

const KernelSymbols& KernelSymbols::whole() const {
    if (!lazy_)
        return *this;
    std::lock_guard lock(lazy_->mu);
    if (!lazy_->whole) {
        detail::StepTimer timer("kallsyms: whole table from the cache");
        if (auto all = lazy_->map->all()) {
            lazy_->whole = fromSymbols(std::move(all->symbols), lazy_->blacklist, all->malformed);
        } else {
            // A body damaged past its bounds checks: the kernel's own text, as without a cache.
            auto text = readFile(lazy_->kallsyms_path);
            auto parsed =
                text ? fromText(*text, lazy_->blacklist) : Result<KernelSymbols>(KernelSymbols());
            lazy_->whole = parsed ? std::move(*parsed) : KernelSymbols();
        }
        lazy_->whole->complete_ = false;
    }
    return *lazy_->whole;
}

std::size_t KernelSymbols::size() const {
    return whole().symbols_.size();
}

const std::vector<KernelSymbol>& KernelSymbols::symbols() const {
    return whole().symbols_;
}

Result<KernelSymbols> KernelSymbols::loadCurrent() {
    const std::string kallsyms = "/proc/kallsyms";
    const std::string blacklist = "/sys/kernel/debug/kprobes/blacklist";
    const std::string dir = detail::symbolCacheDir();
    if (dir.empty())
        return load(kallsyms, blacklist);
    const std::string file = dir + "/" + std::string(detail::kSymbolCacheFile);
    const auto key = detail::symbolCacheKey();
    if (key) {
        const std::string bl = readBlacklist(blacklist);
        if (auto ks = fromCacheFile(file, *key, bl, kallsyms))
            return std::move(*ks);
    }
    // No blacklist in the cached part: it is read afresh on every use.
    auto ks = load(kallsyms, blacklist);
    // Written only when the key is the same after the read as before it: a module loaded
    // or unloaded meanwhile would have put a table under a key it does not match.
    if (ks && key && detail::symbolCacheKey() == key)
        (void)detail::writeSymbolCache(dir, *key, *ks);
    return ks;
}

void KernelSymbols::index() {
    hidden_ = !symbols_.empty();
    // A chained hash over the names: building it is one pass, where sorting ~150k names was
    // most of the start-up cost under QEMU TCG.
    std::size_t buckets = 1;
    while (buckets < symbols_.size() * 2)
        buckets <<= 1;
    name_heads_.assign(buckets, 0);
    name_next_.assign(symbols_.size(), 0);
    // Backwards, so each chain is in table order.
    for (std::size_t i = symbols_.size(); i-- > 0;) {
        const auto& s = symbols_[i];
        if (s.addr != 0)
            hidden_ = false;
        std::uint32_t& head = name_heads_[std::hash<std::string_view>{}(s.name) & (buckets - 1)];
        name_next_[i] = head;
        head = static_cast<std::uint32_t>(i + 1);
    }
    for (std::size_t i = 0; i < symbols_.size(); ++i)
        if (symbols_[i].addr != 0)
            by_addr_.push_back(i);
    // kallsyms lists vmlinux in address order: usually only the modules' part needs sorting.
    auto by_addr = [&](std::size_t a, std::size_t b) {
        return symbols_[a].addr != symbols_[b].addr ? symbols_[a].addr < symbols_[b].addr : a < b;
    };
    if (!std::is_sorted(by_addr_.begin(), by_addr_.end(), by_addr))
        std::sort(by_addr_.begin(), by_addr_.end(), by_addr);
}

std::vector<const KernelSymbol*> KernelSymbols::lookup(std::string_view name) const {
    std::vector<const KernelSymbol*> out;
    if (lazy_) {
        // A name the index does not have is looked for in the whole, checked table: a
        // "no such symbol" never rests on a body whose checksum was not checked.
        auto at = lazy_->map->find(name);
        if (!at || at->empty())
            return whole().lookup(name);
        std::lock_guard lock(lazy_->mu);
        for (std::uint32_t i : *at) {
            auto& slot = lazy_->found[i];
            if (!slot) {
                auto s = lazy_->map->symbol(i);
                if (!s)
                    break;
                slot = std::make_unique<KernelSymbol>(std::move(*s));
            }
            out.push_back(slot.get());
        }
        if (out.size() == at->size())
            return out;
        out.clear();
    }
    if (lazy_)
        return whole().lookup(name);  // a damaged record: the whole table decides
    if (name_heads_.empty())
        return out;
    const std::size_t b = std::hash<std::string_view>{}(name) & (name_heads_.size() - 1);
    for (std::uint32_t i = name_heads_[b]; i != 0; i = name_next_[i - 1])
        if (symbols_[i - 1].name == name)
            out.push_back(&symbols_[i - 1]);
    // Chains are in table order; callers want address order (table order breaks ties).
    std::stable_sort(out.begin(), out.end(), [](const KernelSymbol* a, const KernelSymbol* b) {
        return a->addr < b->addr;
    });
    return out;
}

namespace {

// Section end markers share the text letter but no code starts there (what follows them is
// usually rodata or padding).
bool isEndMarker(std::string_view name) {
    return name == "_etext" || name == "_einittext" ||
           (name.starts_with("__") && name.ends_with("_end"));
}

}  // namespace

const KernelSymbol* KernelSymbols::symbolAt(std::uint64_t addr) const {
    if (hidden_ || addr == 0)
        return nullptr;
    if (lazy_)
        return whole().symbolAt(addr);
    auto it =
        std::upper_bound(by_addr_.begin(), by_addr_.end(), addr,
                         [&](std::uint64_t a, std::size_t i) { return a < symbols_[i].addr; });
    // Nothing below `addr`, or nothing above it: no symbol bounds the address.
    if (it == by_addr_.begin() || it == by_addr_.end())
        return nullptr;
    const std::uint64_t base = symbols_[*std::prev(it)].addr;
    // Among the symbols at that address (aliases, markers), the last text one; a data
    // symbol there means the address is in data.
    const KernelSymbol* text = nullptr;
    for (auto j = it; j != by_addr_.begin();) {
        --j;
        const KernelSymbol& s = symbols_[*j];
        if (s.addr != base)
            break;
        if (s.isFunction() && !isEndMarker(s.name) && (!text || text->name.starts_with("__pfx_")))
            text = &s;
    }
    return text;
}

Result<const KernelSymbol*> KernelSymbols::resolveFunction(std::string_view name) const {
    const auto all = lookup(name);
    if (all.empty()) {
        std::string msg = fmt::format("unknown kernel symbol '{}'", name);
        const auto near = suggest(name);
        if (!near.empty())
            msg += fmt::format("; did you mean: {}?", fmt::join(near, ", "));
        return makeError(ENOENT, std::move(msg));
    }
    if (name.starts_with(kPaddingPrefix))
        return makeError(EINVAL, fmt::format("'{}' is padding before a function, not code; "
                                             "probe '{}'",
                                             name, name.substr(kPaddingPrefix.size())));
    std::vector<const KernelSymbol*> funcs;
    for (const auto* s : all)
        if (s->isFunction())
            funcs.push_back(s);
    if (funcs.empty())
        return makeError(EINVAL, fmt::format("'{}' is a {} symbol, not a function", name,
                                             all.front()->kindName()));
    // Several entries at one address are aliases of one function, not a real duplicate.
    std::set<std::uint64_t> addrs;
    for (const auto* s : funcs)
        addrs.insert(s->addr);
    if (funcs.size() > 1 && (addrs.size() > 1 || hidden_)) {
        std::vector<std::string> cands;
        for (const auto* s : funcs)
            cands.push_back(fmt::format("{:#x} {} [{}]", s->addr, s->type,
                                        s->module.empty() ? "vmlinux" : s->module));
        std::string msg = fmt::format("'{}' names {} functions: {}; pick one with kprobe:0xADDR",
                                      name, funcs.size(), fmt::join(cands, ", "));
        if (hidden_)
            msg += " (addresses hidden: run as root / kptr_restrict)";
        return makeError(ENOTUNIQ, std::move(msg));
    }
    return funcs.front();
}

std::optional<BlacklistEntry> KernelSymbols::blacklisted(std::string_view name) const {
    auto it = blacklist_by_name_.find(std::string(name));
    if (it == blacklist_by_name_.end())
        return std::nullopt;
    return blacklist_[it->second];
}

std::optional<BlacklistEntry> KernelSymbols::blacklistedAddr(std::uint64_t addr) const {
    if (addr == 0)
        return std::nullopt;
    for (const auto& e : blacklist_)
        if (e.start != 0 && addr >= e.start && addr < e.end)
            return e;
    return std::nullopt;
}

Result<std::string> KernelSymbols::syscallSymbol(std::string_view syscall) const {
    // x86-64 since 4.17 (CONFIG_ARCH_HAS_SYSCALL_WRAPPER): __x64_sys_NAME takes pt_regs;
    // __se_sys_NAME is the sign-extending inner function; sys_NAME on older kernels.
    for (std::string_view prefix :
         {kSyscallWrapperPrefix, std::string_view("__se_sys_"), std::string_view("sys_")}) {
        const std::string cand = std::string(prefix) + std::string(syscallKernelName(syscall));
        for (const auto* s : lookup(cand))
            if (s->isFunction())
                return cand;
    }
    // Did-you-mean among syscall names only: suggesting arbitrary kernel functions for a
    // mistyped syscall would be noise.
    std::vector<std::string_view> names;
    for (const auto& s : symbols())
        if (s.isFunction() && s.name.starts_with(kSyscallWrapperPrefix))
            names.push_back(std::string_view(s.name).substr(kSyscallWrapperPrefix.size()));
    std::string msg = fmt::format("unknown syscall '{}' (no __x64_sys_{}, __se_sys_{} or sys_{})",
                                  syscall, syscall, syscall, syscall);
    msg += didYouMean(nearNames(syscall, names));
    return makeError(ENOENT, std::move(msg));
}

std::vector<std::string> KernelSymbols::suggest(std::string_view name, std::size_t max) const {
    if (name.empty() || max == 0)
        return {};
    std::vector<std::string> substr;
    std::vector<std::pair<std::size_t, std::string>> close;
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::unordered_set<std::string_view> seen;
    for (const KernelSymbol& sym : symbols()) {
        // Each name once: static functions repeat names.
        if (!seen.insert(sym.name).second)
            continue;
        const std::string& cand = sym.name;
        if (!sym.isFunction() || cand.starts_with(kPaddingPrefix))
            continue;
        if (cand.find(name) != std::string::npos) {
            substr.push_back(cand);
            continue;
        }
        const std::size_t dl =
            cand.size() > name.size() ? cand.size() - name.size() : name.size() - cand.size();
        if (dl > limit)
            continue;
        const std::size_t d = editDistance(name, cand);
        if (d <= limit)
            close.emplace_back(d, cand);
    }
    // Closest spelling first: a typo fix is likelier meant than a longer name containing it.
    std::sort(close.begin(), close.end());
    std::sort(substr.begin(), substr.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    std::vector<std::string> out;
    for (auto& [d, c] : close)
        if (out.size() < max)
            out.push_back(c);
    for (auto& c : substr)
        if (out.size() < max)
            out.push_back(c);
    return out;
}

std::vector<const KernelSymbol*> KernelSymbols::match(std::string_view glob) const {
    std::vector<const KernelSymbol*> out;
    for (const auto& s : symbols())
        if (globMatch(glob, s.name))
            out.push_back(&s);
    return out;
}

namespace {

// Whether `addr` is in [first's address, end's address); nullopt when either is unknown.
std::optional<bool> between(const KernelSymbols& ks, std::uint64_t addr, std::string_view first,
                            std::string_view end) {
    const auto a = ks.lookup(first), b = ks.lookup(end);
    if (a.empty() || b.empty() || !a.front()->addr || !b.front()->addr)
        return std::nullopt;
    return addr >= a.front()->addr && addr < b.front()->addr;
}

}  // namespace

bool KernelSymbols::inInitText(std::uint64_t addr) const {
    return addr && between(*this, addr, "_sinittext", "_einittext").value_or(false);
}

Probeability KernelSymbols::probeability(const KernelSymbol& sym) const {
    if (!sym.isFunction())
        return Probeability::NotText;
    // Some vmlinux symbols carry the text letter outside the text: 7.2 lists its syscall
    // metadata (data) as 't'. The kernel refuses those; they are data, as on older kernels.
    if (sym.module.empty())
        if (auto text = between(*this, sym.addr, "_stext", "_etext");
            text && !*text && !between(*this, sym.addr, "_sinittext", "_einittext").value_or(false))
            return Probeability::NotText;
    if (sym.name.starts_with(kPaddingPrefix))
        return Probeability::Padding;
    if (sym.module.empty() && inInitText(sym.addr))
        return Probeability::InitText;
    if (blacklisted(sym.name) || blacklistedAddr(sym.addr))
        return Probeability::Blacklisted;
    auto r = resolveFunction(sym.name);
    if (!r && r.error().err == ENOTUNIQ)
        return Probeability::Duplicate;
    return Probeability::Ok;
}

}  // namespace probectl
