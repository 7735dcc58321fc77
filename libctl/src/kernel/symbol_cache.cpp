// The kallsyms cache: key, file format, checks. See symbol_cache.hpp.
//
// File layout (native byte order: the file never leaves the machine that wrote it):
//   magic[8] "PRBKSYMS", u32 version, u32 key length, u64 symbol count, u64 module-names
//   length, u64 names length, u64 malformed lines,
//   key, module names ('\0'-terminated each), records (u64 addr, u32 name offset,
//   u16 name length, u16 module: 0 vmlinux, else index + 1), one type letter per symbol,
//   names (concatenated), u64 checksum of everything before it.
#include "kernel/symbol_cache.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/step_timing.hpp"

namespace probectl::detail {

namespace {

constexpr char kMagic[8] = {'P', 'R', 'B', 'K', 'S', 'Y', 'M', 'S'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeader = 8 + 4 + 4 + 8 * 4;
constexpr std::size_t kRecord = 8 + 4 + 2 + 2;
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

std::optional<CachedSymbols> readSymbolCache(const std::string& path, std::string_view key) {
    StepTimer timer("kallsyms: cache read");
    const std::string dir =
        path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
    if (!dir.empty() && !safeDir(dir))
        return std::nullopt;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return std::nullopt;
    struct stat st;
    std::string data;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && safeMode(st) &&
              static_cast<std::uint64_t>(st.st_size) >= kHeader + 8;
    if (ok) {
        data.resize(static_cast<std::size_t>(st.st_size));
        std::size_t used = 0;
        while (ok && used < data.size()) {
            const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
            if (n < 0 && errno == EINTR)
                continue;
            ok = n > 0;
            if (ok)
                used += static_cast<std::size_t>(n);
        }
    }
    ::close(fd);
    if (!ok)
        return std::nullopt;

    const char* p = data.data();
    const std::size_t size = data.size();
    if (std::memcmp(p, kMagic, 8) != 0 || get<std::uint32_t>(p + 8) != kVersion)
        return std::nullopt;
    const std::uint64_t key_len = get<std::uint32_t>(p + 12);
    const std::uint64_t count = get<std::uint64_t>(p + 16);
    const std::uint64_t mods_len = get<std::uint64_t>(p + 24);
    const std::uint64_t names_len = get<std::uint64_t>(p + 32);
    const std::uint64_t malformed = get<std::uint64_t>(p + 40);
    // Each part bounded by the file's size before adding, so no sum can wrap.
    if (key_len != key.size() || count > kMaxSymbols || mods_len > size || names_len > size ||
        kHeader + key_len + mods_len + count * (kRecord + 1) + names_len + 8 != size)
        return std::nullopt;
    if (checksum(p, size - 8) != get<std::uint64_t>(p + size - 8))
        return std::nullopt;
    std::size_t at = kHeader;
    if (std::string_view(p + at, key_len) != key)
        return std::nullopt;
    at += key_len;

    std::vector<std::string> modules;
    for (std::string_view m(p + at, mods_len); !m.empty();) {
        const std::size_t z = m.find('\0');
        if (z == std::string_view::npos)
            return std::nullopt;
        modules.emplace_back(m.substr(0, z));
        m.remove_prefix(z + 1);
    }
    at += mods_len;
    const char* records = p + at;
    const char* types = records + count * kRecord;
    const char* names = types + count;

    CachedSymbols out;
    out.malformed = malformed;
    out.symbols.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        const char* r = records + i * kRecord;
        const std::uint64_t off = get<std::uint32_t>(r + 8);
        const std::uint64_t len = get<std::uint16_t>(r + 12);
        const std::uint16_t mod = get<std::uint16_t>(r + 14);
        if (off + len > names_len || mod > modules.size())
            return std::nullopt;
        KernelSymbol& s = out.symbols[i];
        s.addr = get<std::uint64_t>(r);
        s.type = types[i];
        s.name.assign(names + off, len);
        if (mod)
            s.module = modules[mod - 1];
    }
    return out;
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
    std::string out;
    out.reserve(kHeader + key.size() + mods.size() + records.size() + types.size() + names.size() +
                8);
    out.append(kMagic, 8);
    put<std::uint32_t>(out, kVersion);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
    put<std::uint64_t>(out, kept);
    put<std::uint64_t>(out, mods.size());
    put<std::uint64_t>(out, names.size());
    put<std::uint64_t>(out, table.malformedLines());
    out += key;
    out += mods;
    out += records;
    out += types;
    out += names;
    put<std::uint64_t>(out, checksum(out.data(), out.size()));

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
