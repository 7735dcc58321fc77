// The kallsyms cache: key, file format, checks. See symbol_cache.hpp.
//
// File layout (native byte order: the file never leaves the machine that wrote it):
//   head: magic[8] "PRBKSYMS", u32 version, u32 key length, u64 symbol count, u64
//   module-names length, u64 names length, u64 malformed lines, u64 flags (1: addresses
//   hidden), u64 checksum of the body; key, module names ('\0'-terminated each), u64
//   checksum of the head so far.
//   body: records (u64 addr, u32 name offset, u16 name length, u16 module: 0 vmlinux, else
//   index + 1) in kallsyms order, one type letter per symbol, names (concatenated), then
//   the name index: u32 record positions sorted by (name, address, position).
#include "kernel/symbol_cache.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "core/step_timing.hpp"

namespace probectl::detail {

namespace {

constexpr char kMagic[8] = {'P', 'R', 'B', 'K', 'S', 'Y', 'M', 'S'};
constexpr std::uint32_t kVersion = 2;
constexpr std::size_t kHeader = 8 + 4 + 4 + 8 * 6;
constexpr std::size_t kRecord = 8 + 4 + 2 + 2;
constexpr std::size_t kIndexEntry = 4;
constexpr std::uint64_t kFlagHidden = 1;
// Far beyond any kernel (about 200k symbols): bounds what a damaged header can ask for.
constexpr std::uint64_t kMaxSymbols = 1u << 24;

// Small procfs and sysfs files, whole; nullopt when unreadable.
std::optional<std::string> readSmall(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

bool hasCapSyslog() {
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &hdr, data) != 0)
        return false;
    return (data[CAP_SYSLOG / 32].effective >> (CAP_SYSLOG % 32)) & 1;
}

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

// The words of one /proc/modules line: name size refcount users state address [taint].
std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ')
            ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ')
            ++i;
        if (i > start)
            out.push_back(line.substr(start, i - start));
    }
    return out;
}

// A checksum against a damaged or truncated file (not an attacker: the file's owner and
// mode are checked): 8 bytes a step, so a few megabytes cost little even under TCG.
std::uint64_t checksum(const char* p, std::size_t n) {
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, p + i, n - i);
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
T get(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Owned by the running uid and writable by no one else: what a cache file and its
// directory must be, so no other user can plant a table.
bool safeMode(const struct stat& st) {
    return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool safeDir(const std::string& dir) {
    struct stat st;
    return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && safeMode(st);
}

}  // namespace

bool isDynamic(const KernelSymbol& s) {
    return s.module == "bpf" || s.module.starts_with("__builtin__");
}

std::optional<std::string> symbolCacheKey(const SymbolCacheSources& src) {
    StepTimer timer("kallsyms: cache key");
    auto boot = readSmall(src.boot_id);
    auto modules = readSmall(src.modules);
    if (!boot || boot->empty() || !modules)
        return std::nullopt;
    std::string key = "boot " + *boot;
    if (key.back() != '\n')
        key += '\n';
    key += "euid " + std::to_string(::geteuid()) + (hasCapSyslog() ? " syslog\n" : "\n");
    // What kallsyms_show_value() decides by: missing files are keyed as missing.
    for (const auto* p : {&src.kptr_restrict, &src.perf_event_paranoid}) {
        auto v = readSmall(*p);
        key += *p + " " + (v ? *v : std::string("-\n"));
    }
    std::string_view rest = *modules;
    while (!rest.empty()) {
        const std::size_t nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        const auto w = words(line);
        if (w.empty())
            continue;
        // A module coming or going is mid-change: its symbols may be half there.
        if (w.size() < 6 || w[4] != "Live")
            return std::nullopt;
        key += "module";
        for (std::size_t i = 0; i < w.size(); ++i)
            if (i != 2 && i != 3) {  // use count and users change without the symbols
                key += ' ';
                key += w[i];
            }
        // A module unloaded and another build loaded at the same address with the same
        // size would leave the line as it was: the build id tells them apart.
        auto id = readSmall(src.sys_module + "/" + std::string(w[0]) + "/notes/.note.gnu.build-id");
        if (!id || id->empty())
            return std::nullopt;
        key += ' ' + hex(*id) + '\n';
    }
    return key;
}

std::string symbolCacheDir() {
    if (const char* v = std::getenv("PROBECTL_SYMBOL_CACHE"))
        return v;
    if (::geteuid() == 0)
        return "/run/probectl";
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
        return std::string(x) + "/probectl";
    if (const char* h = std::getenv("HOME"); h && *h == '/')
        return std::string(h) + "/.cache/probectl";
    return "";
}

// Checks on open: the owner and mode rules, the size against the head's counts, the head's
// checksum and the key. The body's checksum is checked only when the whole table is read
// (all()): checking it on every start would read all of the file's megabytes, the cost the
// index is there to avoid. What else could damage the body is ruled out otherwise: the file
// is written whole and renamed into place (a reader never sees a partial one), and only its
// owner could write it. A body damaged anyway (a disk error) cannot make a lookup read out
// of the mapping: every index entry and record is bounds-checked, and a lookup that finds
// nothing is answered from the whole, checked table (KernelSymbols::lookup).
std::shared_ptr<const MappedSymbolCache> MappedSymbolCache::open(const std::string& path,
                                                                 std::string_view key) {
    StepTimer timer("kallsyms: cache open");
    const std::string dir =
        path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
    if (!dir.empty() && !safeDir(dir))
        return nullptr;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return nullptr;
    struct stat st;
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && safeMode(st) &&
                    static_cast<std::uint64_t>(st.st_size) >= kHeader + 8;
    void* map =
        ok ? ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0)
           : MAP_FAILED;
    ::close(fd);
    if (map == MAP_FAILED)
        return nullptr;
    std::shared_ptr<MappedSymbolCache> m(new MappedSymbolCache);
    m->map_ = static_cast<const char*>(map);
    m->size_ = static_cast<std::size_t>(st.st_size);

    const char* p = m->map_;
    const std::size_t size = m->size_;
    if (std::memcmp(p, kMagic, 8) != 0 || get<std::uint32_t>(p + 8) != kVersion)
        return nullptr;
    const std::uint64_t key_len = get<std::uint32_t>(p + 12);
    const std::uint64_t count = get<std::uint64_t>(p + 16);
    const std::uint64_t mods_len = get<std::uint64_t>(p + 24);
    const std::uint64_t names_len = get<std::uint64_t>(p + 32);
    // Each part bounded by the file's size before adding, so no sum can wrap.
    if (key_len != key.size() || count > kMaxSymbols || mods_len > size || names_len > size ||
        kHeader + key_len + mods_len + 8 + count * (kRecord + 1 + kIndexEntry) + names_len != size)
        return nullptr;
    const std::size_t head = kHeader + key_len + mods_len;
    if (checksum(p, head) != get<std::uint64_t>(p + head))
        return nullptr;
    if (std::string_view(p + kHeader, key_len) != key)
        return nullptr;
    for (std::string_view mods(p + kHeader + key_len, mods_len); !mods.empty();) {
        const std::size_t z = mods.find('\0');
        if (z == std::string_view::npos)
            return nullptr;
        m->modules_.emplace_back(mods.substr(0, z));
        mods.remove_prefix(z + 1);
    }
    m->count_ = count;
    m->malformed_ = get<std::uint64_t>(p + 40);
    m->hidden_ = (get<std::uint64_t>(p + 48) & kFlagHidden) != 0;
    m->body_sum_ = get<std::uint64_t>(p + 56);
    m->body_ = p + head + 8;
    m->records_ = m->body_;
    m->types_ = m->records_ + count * kRecord;
    m->names_ = m->types_ + count;
    m->names_len_ = names_len;
    m->index_ = m->names_ + names_len;
    return m;
}

MappedSymbolCache::~MappedSymbolCache() {
    if (map_)
        ::munmap(const_cast<char*>(map_), size_);
}

std::optional<std::string_view> MappedSymbolCache::nameAt(std::uint32_t i) const {
    if (i >= count_)
        return std::nullopt;
    const char* r = records_ + std::size_t{i} * kRecord;
    const std::uint64_t off = get<std::uint32_t>(r + 8);
    const std::uint64_t len = get<std::uint16_t>(r + 12);
    if (off + len > names_len_)
        return std::nullopt;
    return std::string_view(names_ + off, len);
}

std::optional<KernelSymbol> MappedSymbolCache::symbol(std::uint32_t i) const {
    const auto name = nameAt(i);
    if (!name)
        return std::nullopt;
    const char* r = records_ + std::size_t{i} * kRecord;
    const std::uint16_t mod = get<std::uint16_t>(r + 14);
    if (mod > modules_.size())
        return std::nullopt;
    KernelSymbol s;
    s.addr = get<std::uint64_t>(r);
    s.type = types_[i];
    s.name = std::string(*name);
    if (mod)
        s.module = modules_[mod - 1];
    return s;
}

std::optional<std::vector<std::uint32_t>> MappedSymbolCache::find(std::string_view name) const {
    StepTimer timer("kallsyms: cache lookup");
    bool damaged = false;
    auto entry = [&](std::size_t k) { return get<std::uint32_t>(index_ + k * kIndexEntry); };
    auto nameOf = [&](std::size_t k) {
        const auto n = nameAt(entry(k));
        damaged |= !n;
        return n.value_or(std::string_view{});
    };
    // The first index entry whose name is not below `name`.
    std::size_t lo = 0, hi = count_;
    while (lo < hi && !damaged) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (nameOf(mid) < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    std::vector<std::uint32_t> out;
    for (std::size_t k = lo; k < count_ && !damaged && nameOf(k) == name; ++k)
        out.push_back(entry(k));
    if (damaged)
        return std::nullopt;
    return out;
}

std::optional<CachedSymbols> MappedSymbolCache::all() const {
    if (checksum(body_, static_cast<std::size_t>(map_ + size_ - body_)) != body_sum_)
        return std::nullopt;
    CachedSymbols out;
    out.malformed = malformed_;
    out.symbols.resize(count_);
    for (std::size_t i = 0; i < count_; ++i) {
        auto s = symbol(static_cast<std::uint32_t>(i));
        if (!s)
            return std::nullopt;
        out.symbols[i] = std::move(*s);
    }
    return out;
}

std::optional<CachedSymbols> readSymbolCache(const std::string& path, std::string_view key) {
    StepTimer timer("kallsyms: cache read");
    const auto m = MappedSymbolCache::open(path, key);
    if (!m)
        return std::nullopt;
    return m->all();
}

bool writeSymbolCache(const std::string& dir, std::string_view key, const KernelSymbols& table) {
    StepTimer timer("kallsyms: cache write");
    if (dir.empty() || key.size() > UINT32_MAX)
        return false;
    // Only the last part is created (0700): /run, $XDG_CACHE_HOME or $HOME/.cache exist.
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return false;
    if (!safeDir(dir))
        return false;

    const auto& syms = table.symbols();
    std::string mods, names;
    std::unordered_map<std::string_view, std::uint16_t> mod_index;
    std::string records;
    records.reserve(syms.size() * kRecord);
    std::string types;
    types.reserve(syms.size());
    std::size_t kept = 0;
    for (const KernelSymbol& s : syms) {
        if (isDynamic(s))
            continue;
        ++kept;
        std::uint16_t mod = 0;
        if (!s.module.empty()) {
            auto [it, fresh] =
                mod_index.emplace(s.module, static_cast<std::uint16_t>(mod_index.size() + 1));
            if (fresh) {
                if (mod_index.size() > UINT16_MAX)
                    return false;
                mods += s.module;
                mods += '\0';
            }
            mod = it->second;
        }
        if (s.name.size() > UINT16_MAX || names.size() + s.name.size() > UINT32_MAX)
            return false;
        put<std::uint64_t>(records, s.addr);
        put<std::uint32_t>(records, static_cast<std::uint32_t>(names.size()));
        put<std::uint16_t>(records, static_cast<std::uint16_t>(s.name.size()));
        put<std::uint16_t>(records, mod);
        types += s.type;
        names += s.name;
    }
    // The name index: positions sorted by name, then address, then position (the order
    // lookup() answers in).
    std::vector<std::uint32_t> order(kept);
    std::iota(order.begin(), order.end(), 0u);
    auto nameOf = [&](std::uint32_t i) {
        return std::string_view(names).substr(
            get<std::uint32_t>(records.data() + i * kRecord + 8),
            get<std::uint16_t>(records.data() + i * kRecord + 12));
    };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto na = nameOf(a), nb = nameOf(b);
        if (na != nb)
            return na < nb;
        const auto aa = get<std::uint64_t>(records.data() + a * kRecord);
        const auto ab = get<std::uint64_t>(records.data() + b * kRecord);
        return aa != ab ? aa < ab : a < b;
    });
    std::string index;
    index.reserve(kept * kIndexEntry);
    for (std::uint32_t i : order)
        put<std::uint32_t>(index, i);

    std::string out;
    out.reserve(kHeader + key.size() + mods.size() + 8 + records.size() + types.size() +
                names.size() + index.size());
    out.append(kMagic, 8);
    put<std::uint32_t>(out, kVersion);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
    put<std::uint64_t>(out, kept);
    put<std::uint64_t>(out, mods.size());
    put<std::uint64_t>(out, names.size());
    put<std::uint64_t>(out, table.malformedLines());
    put<std::uint64_t>(out, table.addressesHidden() ? kFlagHidden : 0);
    const std::size_t body_sum_at = out.size();
    put<std::uint64_t>(out, 0);
    out += key;
    out += mods;
    put<std::uint64_t>(out, 0);  // the head's checksum, which covers the body's: set below
    const std::size_t body_at = out.size();
    out += records;
    out += types;
    out += names;
    out += index;
    const std::uint64_t body_sum = checksum(out.data() + body_at, out.size() - body_at);
    std::memcpy(out.data() + body_sum_at, &body_sum, 8);
    const std::uint64_t head_sum = checksum(out.data(), body_at - 8);
    std::memcpy(out.data() + body_at - 8, &head_sum, 8);

    std::string tmp = dir + "/." + std::string(kSymbolCacheFile) + ".XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0)
        return false;
    std::size_t done = 0;
    bool ok = true;
    while (ok && done < out.size()) {
        const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        if (ok)
            done += static_cast<std::size_t>(n);
    }
    ok = ::close(fd) == 0 && ok;
    // rename(2) replaces the old file in one step: a reader sees the old one or the new one.
    if (!ok || ::rename(tmp.c_str(), (dir + "/" + std::string(kSymbolCacheFile)).c_str()) != 0) {
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace probectl::detail
