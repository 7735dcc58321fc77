// Syscall metadata: format-file parser, argument classification, the merged table.
#include "probectl/syscall_meta.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "core/step_timing.hpp"
#include "core/trim.hpp"

namespace probectl {

namespace {

constexpr SyscallName kBuiltinNames[] = {
#include "syscall_names.inc"
};

// Why `dir` (tracefs's events/syscalls) cannot be read: tracefs is root's alone on most
// systems, so a permission error is not a missing mount.
std::string missingEventsProblem(const std::filesystem::path& dir, const std::error_code& ec) {
    if (ec == std::errc::permission_denied)
        return fmt::format("{}: cannot read the syscall trace events ({}): run as root "
                           "(or with sudo) for syscall arguments",
                           dir.string(), ec.message());
    return fmt::format("{}: no syscall trace events (is tracefs mounted?)", dir.string());
}

struct SyscallRename {
    std::string_view x64, kernel;
};
// Where syscall_64.tbl's entry point differs from the syscall's name.
constexpr SyscallRename kRenames[] = {
    {"stat", "newstat"},        {"fstat", "newfstat"}, {"lstat", "newlstat"},
    {"sendfile", "sendfile64"}, {"uname", "newuname"}, {"umount2", "umount"},
};

template <class T>
bool parseNumber(std::string_view s, T& out) {
    s = trimBlanks(s);
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

Error badLine(std::size_t line, std::string what) {
    return makeError(EBADMSG, fmt::format("format line {}: {}", line, what));
}

// "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;"
Result<TraceField> parseField(std::string_view line, std::size_t lineno) {
    TraceField f;
    std::string_view rest = trimBlanks(line);
    auto take = [&](std::string_view key, std::string_view& value) -> bool {
        if (!rest.starts_with(key))
            return false;
        const auto semi = rest.find(';');
        if (semi == std::string_view::npos)
            return false;
        value = rest.substr(key.size(), semi - key.size());
        rest = trimBlanks(rest.substr(semi + 1));
        return true;
    };
    std::string_view decl, off, size, sign;
    if (!take("field:", decl))
        return badLine(lineno, "expected 'field:TYPE NAME;'");
    if (!take("offset:", off) || !parseNumber(off, f.offset))
        return badLine(lineno, "expected 'offset:N;'");
    if (!take("size:", size) || !parseNumber(size, f.size))
        return badLine(lineno, "expected 'size:N;'");
    // Kernels before 2.6.32 had no signed: column; every kernel we support has it.
    unsigned s = 0;
    if (!take("signed:", sign) || !parseNumber(sign, s) || s > 1)
        return badLine(lineno, "expected 'signed:0;' or 'signed:1;'");
    f.is_signed = s == 1;

    decl = trimBlanks(decl);
    // Dynamic fields ("__data_loc char[] __filename_val", kernel 6.19+'s syscall events with
    // user strings) hold a 4-byte offset/length word; their "[]" has no length.
    for (std::string_view loc : {"__data_loc ", "__rel_loc "})
        if (decl.starts_with(loc)) {
            f.dynamic = true;
            decl = trimBlanks(decl.substr(loc.size()));
        }
    if (decl.ends_with(']')) {
        const auto open = decl.rfind('[');
        const std::string_view len =
            open == std::string_view::npos ? "" : decl.substr(open + 1, decl.size() - open - 2);
        if (open == std::string_view::npos ||
            (!(len.empty() && f.dynamic) && !parseNumber(len, f.array_len)))
            return badLine(lineno, "bad array declaration");
        decl = trimBlanks(decl.substr(0, open));
    }
    // "char[] name": the array brackets follow the type, not the name.
    if (f.dynamic && decl.find("[]") != std::string_view::npos) {
        std::string d(decl);
        d.erase(d.find("[]"), 2);
        const auto sp = d.find_last_of(" *");
        if (sp == std::string::npos || sp + 1 == d.size())
            return badLine(lineno, "expected 'TYPE NAME' after field:");
        f.name = d.substr(sp + 1);
        f.type = std::string(trimBlanks(std::string_view(d).substr(0, sp + 1))) + "[]";
        return f;
    }
    const auto space = decl.find_last_of(" *");
    if (space == std::string_view::npos || space + 1 == decl.size())
        return badLine(lineno, "expected 'TYPE NAME' after field:");
    f.name = std::string(decl.substr(space + 1));
    f.type = std::string(trimBlanks(decl.substr(0, space + 1)));
    return f;
}

std::string readFile(const std::filesystem::path& p, bool& ok) {
    std::ifstream in(p);
    ok = static_cast<bool>(in);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

Result<TraceEventFormat> parseEventFormat(std::string_view text) {
    TraceEventFormat ev;
    bool have_name = false, have_id = false, in_format = false, past_common = false;
    std::size_t lineno = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lineno;
        const std::string_view t = trimBlanks(line);
        if (t.starts_with("print fmt:")) {
            ev.print_fmt = std::string(trimBlanks(t.substr(10)));
            in_format = false;
            continue;
        }
        if (in_format) {
            if (t.empty()) {
                past_common = past_common || !ev.common.empty();
                continue;
            }
            auto f = parseField(line, lineno);
            if (!f.ok())
                return f.error();
            // The blank line separates common fields; the name prefix is the fallback.
            const bool common = !past_common && f->name.starts_with("common_");
            (common ? ev.common : ev.fields).push_back(std::move(*f));
            continue;
        }
        if (t.empty())
            continue;
        if (t.starts_with("name:")) {
            ev.name = std::string(trimBlanks(t.substr(5)));
            have_name = !ev.name.empty();
        } else if (t.starts_with("ID:")) {
            if (!parseNumber(t.substr(3), ev.id))
                return badLine(lineno, "bad ID");
            have_id = true;
        } else if (t == "format:") {
            in_format = true;
        } else {
            return badLine(lineno, fmt::format("unexpected '{}'", t));
        }
    }
    if (!have_name)
        return makeError(EBADMSG, "format: no 'name:' line");
    if (!have_id)
        return makeError(EBADMSG, "format: no 'ID:' line");
    if (ev.common.empty() && ev.fields.empty())
        return makeError(EBADMSG, "format: no fields");
    return ev;
}

SyscallArg classifySyscallArg(std::string name, std::string type, std::uint32_t size) {
    SyscallArg a;
    a.name = std::move(name);
    a.size = size;
    // Normalise spacing the way the kernel prints it ("const char *const *").
    std::string t;
    for (char c : type)
        if (!(c == ' ' && (t.empty() || t.back() == ' ')))
            t += c;
    while (!t.empty() && t.back() == ' ')
        t.pop_back();
    a.type = t;
    // Without qualifiers or spaces: "char*", "char**" ("const char *const *").
    std::string bare = t;
    for (std::string_view q : {"const", "__user"})
        for (auto at = bare.find(q); at != std::string::npos; at = bare.find(q))
            bare.erase(at, q.size());
    std::erase(bare, ' ');
    a.is_pointer = !t.empty() && t.back() == '*';
    a.is_string = bare == "char*";
    a.is_string_array = bare == "char**";
    return a;
}

std::string_view syscallKernelName(std::string_view x64_name) {
    for (const SyscallRename& r : kRenames)
        if (r.x64 == x64_name)
            return r.kernel;
    return x64_name;
}

std::string_view syscallX64Name(std::string_view kernel_name) {
    for (const SyscallRename& r : kRenames)
        if (r.kernel == kernel_name)
            return r.x64;
    return kernel_name;
}

std::string syscallKernelNameMisuse(std::string_view name) {
    const std::string_view x64 = syscallX64Name(name);
    if (x64 == name)
        return "";
    return fmt::format("'{}' is the kernel's name of the x86-64 syscall '{}': use syscall:{}", name,
                       x64, x64);
}

Result<SyscallInfo> syscallFromFormats(const TraceEventFormat& enter,
                                       const TraceEventFormat* exit) {
    constexpr std::string_view kEnter = "sys_enter_";
    if (!enter.name.starts_with(kEnter))
        return makeError(EINVAL, fmt::format("{} is not a sys_enter_ event", enter.name));
    SyscallInfo info;
    info.name = syscallX64Name(std::string_view(enter.name).substr(kEnter.size()));
    info.enter_id = enter.id;
    info.has_args = true;
    bool have_nr = false;
    for (const auto& f : enter.fields) {
        if (f.name == "__syscall_nr") {
            have_nr = true;
            continue;
        }
        // A copy of user memory the kernel appends after the arguments, not an argument.
        if (f.dynamic)
            continue;
        info.args.push_back(classifySyscallArg(f.name, f.type, f.size));
    }
    if (!have_nr)
        return makeError(EINVAL, fmt::format("{}: no __syscall_nr field", enter.name));
    if (info.args.size() > 6)
        return makeError(EINVAL,
                         fmt::format("{}: {} arguments (max 6)", enter.name, info.args.size()));
    if (exit)
        info.exit_id = exit->id;
    return info;
}

std::span<const SyscallName> builtinSyscallNames() {
    return kBuiltinNames;
}

void SyscallTable::add(SyscallInfo info) {
    auto it =
        std::lower_bound(syscalls_.begin(), syscalls_.end(), info.name,
                         [](const SyscallInfo& s, const std::string& n) { return s.name < n; });
    if (it != syscalls_.end() && it->name == info.name) {
        if (info.nr < 0)
            info.nr = it->nr;
        *it = std::move(info);
    } else {
        syscalls_.insert(it, std::move(info));
    }
}

SyscallTable SyscallTable::builtin() {
    SyscallTable t;
    for (const auto& n : builtinSyscallNames()) {
        SyscallInfo info;
        info.name = n.name;
        info.nr = n.nr;
        t.add(std::move(info));
    }
    return t;
}

Result<SyscallTable> SyscallTable::fromTracefs(const std::string& tracefs) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(tracefs) / "events" / "syscalls";
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return makeError(ec ? ec.value() : ENOENT, missingEventsProblem(dir, ec));
    SyscallTable t = builtin();
    std::vector<fs::path> enters;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().starts_with("sys_enter_"))
            enters.push_back(e.path());
    if (ec)
        return makeError(ec.value(), fmt::format("{}: {}", dir.string(), ec.message()));
    std::sort(enters.begin(), enters.end());
    for (const auto& p : enters) {
        bool ok = false;
        const std::string text = readFile(p / "format", ok);
        if (!ok)
            continue;
        auto ev = parseEventFormat(text);
        if (!ev.ok()) {
            // One format this parser does not know must not cost every syscall its arguments.
            t.problems_.push_back(
                fmt::format("{}: {}", (p / "format").string(), ev.error().message));
            continue;
        }
        const std::string name = p.filename().string().substr(10);
        // The old function of a renamed syscall (32-bit only) has no x86-64 event; were
        // one listed, it must not take the x86-64 syscall's place.
        if (syscallKernelName(name) != name)
            continue;
        std::optional<TraceEventFormat> exit;
        bool exit_ok = false;
        const std::string exit_text = readFile(dir / ("sys_exit_" + name) / "format", exit_ok);
        if (exit_ok) {
            auto x = parseEventFormat(exit_text);
            if (x.ok())
                exit = std::move(*x);
        }
        auto info = syscallFromFormats(*ev, exit ? &*exit : nullptr);
        if (!info.ok()) {
            t.problems_.push_back(
                fmt::format("{}: {}", (p / "format").string(), info.error().message));
            continue;
        }
        t.add(std::move(*info));
        t.has_args_ = true;
    }
    return t;
}

// A load() table's state, shared by its copies: `base` is builtin() whose entries are
// filled in place (their addresses never change) the first time find() reaches them.
struct SyscallTable::Lazy {
    std::filesystem::path dir;
    std::mutex mu;
    SyscallTable base = builtin();
    std::vector<char> loaded = std::vector<char>(base.syscalls_.size(), 0);
    // Names builtin() lacks (newer than the build's headers): nullptr when tracefs lacks them.
    std::deque<SyscallInfo> extra;
    std::unordered_map<std::string, const SyscallInfo*> extra_by_name;
    bool all_loaded = false;

    // Reads sys_enter_NAME (and sys_exit_NAME) into `into`; false when there is no such
    // event. A format that does not parse leaves `into` as it was and is a problem.
    bool read(const std::string& name, SyscallInfo& into) {
        detail::StepTimer timer("tracefs: formats of " + name);
        bool ok = false;
        const std::string event(syscallKernelName(name));
        const auto enter_path = dir / ("sys_enter_" + event) / "format";
        const std::string text = readFile(enter_path, ok);
        if (!ok)
            return false;
        auto ev = parseEventFormat(text);
        if (!ev.ok()) {
            base.problems_.push_back(
                fmt::format("{}: {}", enter_path.string(), ev.error().message));
            return true;
        }
        std::optional<TraceEventFormat> exit;
        bool exit_ok = false;
        const std::string exit_text = readFile(dir / ("sys_exit_" + event) / "format", exit_ok);
        if (exit_ok)
            if (auto x = parseEventFormat(exit_text); x.ok())
                exit = std::move(*x);
        auto info = syscallFromFormats(*ev, exit ? &*exit : nullptr);
        if (!info.ok()) {
            base.problems_.push_back(
                fmt::format("{}: {}", enter_path.string(), info.error().message));
            return true;
        }
        if (info->nr < 0)
            info->nr = into.nr;
        into = std::move(*info);
        base.has_args_ = true;
        return true;
    }

    const SyscallInfo* find(std::string_view name) {
        auto it =
            std::lower_bound(base.syscalls_.begin(), base.syscalls_.end(), name,
                             [](const SyscallInfo& s, std::string_view n) { return s.name < n; });
        if (it != base.syscalls_.end() && it->name == name) {
            const auto i = static_cast<std::size_t>(it - base.syscalls_.begin());
            if (!loaded[i]) {
                loaded[i] = 1;
                read(std::string(it->name), *it);
            }
            return &*it;
        }
        // A kernel function's name ("newuname") is no x86-64 syscall name.
        if (syscallX64Name(name) != name)
            return nullptr;
        const std::string key(name);
        if (auto e = extra_by_name.find(key); e != extra_by_name.end())
            return e->second;
        SyscallInfo info;
        info.name = key;
        const SyscallInfo* found = nullptr;
        if (read(key, info) && info.has_args) {
            extra.push_back(std::move(info));
            found = &extra.back();
        }
        extra_by_name.emplace(key, found);
        return found;
    }
};

SyscallTable SyscallTable::load(const std::string& tracefs) {
    SyscallTable t;
    t.lazy_ = std::make_shared<Lazy>();
    t.lazy_->dir = std::filesystem::path(tracefs) / "events" / "syscalls";
    std::error_code ec;
    if (!std::filesystem::is_directory(t.lazy_->dir, ec)) {
        t.lazy_->base.problems_.push_back(missingEventsProblem(t.lazy_->dir, ec));
        // Nothing to read: every entry stays as builtin() made it.
        std::fill(t.lazy_->loaded.begin(), t.lazy_->loaded.end(), 1);
        t.lazy_->all_loaded = true;
    }
    return t;
}

std::vector<std::string> SyscallTable::problems() const {
    if (!lazy_)
        return problems_;
    std::lock_guard lock(lazy_->mu);
    return lazy_->base.problems_;
}

bool SyscallTable::hasArgs() const {
    if (!lazy_)
        return has_args_;
    std::lock_guard lock(lazy_->mu);
    return lazy_->base.has_args_;
}

std::string SyscallTable::fallbackNote() const {
    const std::vector<std::string> problems = this->problems();
    if (problems.empty())
        return "";
    if (!hasArgs())
        return fmt::format("syscall arguments are unknown (names and return values only): {}",
                           problems.front());
    return fmt::format(
        "{} syscall{} without argument metadata (names and return values "
        "only): {}{}",
        problems.size(), problems.size() == 1 ? "" : "s", problems.front(),
        problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : std::string());
}

const SyscallInfo* SyscallTable::findLoaded(std::string_view name) const {
    auto it = std::lower_bound(syscalls_.begin(), syscalls_.end(), name,
                               [](const SyscallInfo& s, std::string_view n) { return s.name < n; });
    return it != syscalls_.end() && it->name == name ? &*it : nullptr;
}

const SyscallInfo* SyscallTable::find(std::string_view name) const {
    if (!lazy_)
        return findLoaded(name);
    std::lock_guard lock(lazy_->mu);
    return lazy_->find(name);
}

const SyscallInfo* SyscallTable::find(int nr) const {
    if (!lazy_) {
        for (const auto& s : syscalls_)
            if (s.nr == nr)
                return &s;
        return nullptr;
    }
    std::lock_guard lock(lazy_->mu);
    for (const auto& s : lazy_->base.syscalls_)
        if (s.nr == nr)
            return lazy_->find(s.name);
    return nullptr;
}

const std::vector<SyscallInfo>& SyscallTable::all() const {
    if (!lazy_)
        return syscalls_;
    std::lock_guard lock(lazy_->mu);
    if (!lazy_->all_loaded) {
        for (const auto& s : lazy_->base.syscalls_)
            lazy_->find(s.name);
        lazy_->all_loaded = true;
    }
    return lazy_->base.syscalls_;
}

}  // namespace probectl
