// Tracepoints from kallsyms, tracefs and the kernel's BTF (libbpf): see tracepoints.hpp.
#include "probectl/tracepoints.hpp"

#include <bpf/btf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "core/step_timing.hpp"
#include "probectl/glob.hpp"
#include "probectl/kernel_symbols.hpp"
#include "uapi/probectl.h"

namespace probectl {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTpPrefix = "__tracepoint_";

bool isDir(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The tracefs mount to read events/ from: an existing one, else a fresh mount if allowed.
std::string findTracefs(const TracepointSources& src) {
    if (!src.tracefs.empty())
        return isDir(src.tracefs + "/events") ? src.tracefs : std::string();
    for (const char* p : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (isDir(std::string(p) + "/events"))
            return p;
    if (src.mount_tracefs && isDir("/sys/kernel/tracing") &&
        ::mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
        isDir("/sys/kernel/tracing/events"))
        return "/sys/kernel/tracing";
    return {};
}

// C spelling of a BTF type, short: typedef and struct names, '*' for pointers.
std::string typeName(const struct btf* b, std::uint32_t id, int depth = 0) {
    if (id == 0)
        return "void";
    const struct btf_type* t = btf__type_by_id(b, id);
    if (!t || depth > 16)
        return "?";
    const char* n = btf__name_by_offset(b, t->name_off);
    const std::string name = n ? n : "";
    switch (btf_kind(t)) {
        case BTF_KIND_INT:
        case BTF_KIND_FLOAT:
        case BTF_KIND_TYPEDEF:
            return name;
        case BTF_KIND_STRUCT:
            return "struct " + name;
        case BTF_KIND_UNION:
            return "union " + name;
        case BTF_KIND_ENUM:
        case BTF_KIND_ENUM64:
            return "enum " + name;
        case BTF_KIND_FWD:
            return (btf_kflag(t) ? "union " : "struct ") + name;
        case BTF_KIND_PTR: {
            const struct btf_type* to = btf__type_by_id(b, t->type);
            if (to && btf_is_func_proto(to))
                return "void (*)()";
            return typeName(b, t->type, depth + 1) + " *";
        }
        case BTF_KIND_CONST:
            return "const " + typeName(b, t->type, depth + 1);
        case BTF_KIND_VOLATILE:
            return "volatile " + typeName(b, t->type, depth + 1);
        case BTF_KIND_RESTRICT:
            return typeName(b, t->type, depth + 1);
        case BTF_KIND_ARRAY:
            return fmt::format("{}[{}]", typeName(b, btf_array(t)->type, depth + 1),
                               btf_array(t)->nelems);
        default:
            return name.empty() ? "?" : name;
    }
}

// The type behind typedefs and qualifiers.
const struct btf_type* resolved(const struct btf* b, std::uint32_t id, std::uint32_t* out_id) {
    const struct btf_type* t = btf__type_by_id(b, id);
    for (int i = 0; t && i < 32; i++) {
        if (!btf_is_typedef(t) && !btf_is_mod(t))
            break;
        id = t->type;
        t = btf__type_by_id(b, id);
    }
    if (out_id)
        *out_id = id;
    return t;
}

bool isCharInt(const struct btf_type* t) {
    return t && btf_is_int(t) && t->size == 1;
}

// What an integer/enum/pointer type reads as when no TYPE is given.
std::optional<FetchType> defaultFetchType(const struct btf* b, std::uint32_t id) {
    const struct btf_type* t = resolved(b, id, nullptr);
    if (!t)
        return std::nullopt;
    if (btf_is_ptr(t)) {
        if (isCharInt(resolved(b, t->type, nullptr)))
            return FetchType::String;
        return FetchType::X64;
    }
    bool is_signed = false;
    if (btf_is_int(t))
        is_signed = (btf_int_encoding(t) & BTF_INT_SIGNED) != 0;
    else if (btf_is_enum(t) || btf_is_enum64(t))
        is_signed = btf_kflag(t);
    else
        return std::nullopt;
    switch (t->size) {
        case 1:
            return is_signed ? FetchType::S8 : FetchType::U8;
        case 2:
            return is_signed ? FetchType::S16 : FetchType::U16;
        case 4:
            return is_signed ? FetchType::S32 : FetchType::U32;
        case 8:
            return is_signed ? FetchType::S64 : FetchType::U64;
        default:
            return std::nullopt;
    }
}

// Parameter names of a FUNC's prototype, without the leading void *data.
std::vector<std::string> paramNames(const struct btf* b, const struct btf_type* func) {
    std::vector<std::string> names;
    const struct btf_type* proto = btf__type_by_id(b, func->type);
    if (!proto || !btf_is_func_proto(proto))
        return names;
    const struct btf_param* p = btf_params(proto);
    for (int i = 1; i < btf_vlen(proto); i++) {
        const char* n = btf__name_by_offset(b, p[i].name_off);
        names.emplace_back(n ? n : "");
    }
    return names;
}

std::vector<std::uint32_t> paramTypes(const struct btf_type* proto) {
    std::vector<std::uint32_t> ids;
    const struct btf_param* p = btf_params(proto);
    for (int i = 1; i < btf_vlen(proto); i++)
        ids.push_back(p[i].type);
    return ids;
}

struct BtfIndex {
    std::unordered_map<std::string, std::uint32_t> typedefs;  // btf_trace_NAME -> proto id
    std::unordered_map<std::string, std::uint32_t> stubs;     // __probestub_NAME -> FUNC id
    // __bpf_trace_CLASS prototypes by parameter types: the names, or empty when two
    // classes with these types disagree on them.
    std::map<std::vector<std::uint32_t>, std::vector<std::string>> classes;
};

BtfIndex indexBtf(const struct btf* b) {
    BtfIndex ix;
    const std::uint32_t n = btf__type_cnt(b);
    for (std::uint32_t id = 1; id < n; id++) {
        const struct btf_type* t = btf__type_by_id(b, id);
        const char* cn = btf__name_by_offset(b, t->name_off);
        if (!cn || !*cn)
            continue;
        const std::string_view name = cn;
        if (btf_is_typedef(t) && name.starts_with("btf_trace_")) {
            const struct btf_type* ptr = btf__type_by_id(b, t->type);
            if (ptr && btf_is_ptr(ptr)) {
                const struct btf_type* proto = btf__type_by_id(b, ptr->type);
                if (proto && btf_is_func_proto(proto))
                    ix.typedefs.emplace(name.substr(10), ptr->type);
            }
        } else if (btf_is_func(t) && name.starts_with("__probestub_")) {
            ix.stubs.emplace(name.substr(12), id);
        } else if (btf_is_func(t) && name.starts_with("__bpf_trace_")) {
            ix.stubs.emplace(std::string(name.substr(12)), id);  // a class named as its event
            const struct btf_type* proto = btf__type_by_id(b, t->type);
            if (!proto || !btf_is_func_proto(proto))
                continue;
            auto names = paramNames(b, t);
            auto [it, fresh] = ix.classes.emplace(paramTypes(proto), names);
            if (!fresh && it->second != names)
                it->second.clear();
        }
    }
    return ix;
}

void fillParams(const struct btf* b, const BtfIndex& ix, TracepointInfo& tp) {
    auto td = ix.typedefs.find(tp.name);
    if (td == ix.typedefs.end())
        return;
    const struct btf_type* proto = btf__type_by_id(b, td->second);
    const auto types = paramTypes(proto);
    std::vector<std::string> names;
    if (auto s = ix.stubs.find(tp.name); s != ix.stubs.end())
        names = paramNames(b, btf__type_by_id(b, s->second));
    if (names.size() != types.size()) {
        auto c = ix.classes.find(types);
        names = c != ix.classes.end() ? c->second : std::vector<std::string>{};
    }
    tp.has_proto = true;
    std::string shifted;  // why every later argument is out of reach
    for (std::size_t i = 0; i < types.size(); i++) {
        TracepointParam p;
        p.btf_id = types[i];
        p.name = i < names.size() ? names[i] : "";
        p.type = typeName(b, types[i]);
        const long sz = btf__resolve_size(b, types[i]);
        p.size = sz > 0 ? static_cast<std::uint32_t>(sz) : 0;
        auto def = defaultFetchType(b, types[i]);
        if (i >= PROBECTL_NARGS)
            p.why_unreadable = fmt::format(
                "beyond the first {} arguments a tracepoint probe "
                "reads",
                PROBECTL_NARGS);
        else if (!shifted.empty())
            p.why_unreadable = shifted;
        else if (!def || p.size == 0 || p.size > 8)
            p.why_unreadable = fmt::format(
                "{} is not an integer, enum or pointer of at most 8 "
                "bytes",
                p.type);
        p.readable = p.why_unreadable.empty();
        if (!p.readable && shifted.empty() && i < PROBECTL_NARGS)
            shifted = fmt::format(
                "follows argument {} ({}), which moves the registers of every "
                "later one",
                i + 1, p.type);
        p.default_type = def.value_or(FetchType::X64);
        tp.params.push_back(std::move(p));
    }
}

// The member `name` of struct/union `t` (anonymous members searched too): its type id and
// byte offset; nullopt when absent. Errors for bitfields.
struct Member {
    std::uint32_t type = 0;
    std::uint32_t offset = 0;
    bool bitfield = false;
};
std::optional<Member> findMember(const struct btf* b, const struct btf_type* t,
                                 std::string_view name, int depth = 0) {
    if (!t || !btf_is_composite(t) || depth > 8)
        return std::nullopt;
    const struct btf_member* m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++) {
        const char* mn = btf__name_by_offset(b, m[i].name_off);
        const std::uint32_t bits = btf_member_bit_offset(t, i);
        if (mn && *mn) {
            if (name == mn)
                return Member{m[i].type, bits / 8,
                              btf_member_bitfield_size(t, i) != 0 || bits % 8 != 0};
            continue;
        }
        if (auto inner = findMember(b, resolved(b, m[i].type, nullptr), name, depth + 1)) {
            inner->offset += bits / 8;
            return inner;
        }
    }
    return std::nullopt;
}

FetchSourcePtr makeSource(FetchSource node) {
    return std::make_shared<const FetchSource>(std::move(node));
}

// tracefs's subsystems (events/ folders) within 2 edits of `subsys`, closest first.
std::vector<std::string> closeSubsystems(const std::string& tracefs, std::string_view subsys) {
    std::vector<std::pair<std::size_t, std::string>> close;
    std::error_code ec;
    for (const auto& sub : fs::directory_iterator(tracefs + "/events", ec))
        if (sub.is_directory(ec))
            if (auto d = editDistance(sub.path().filename().string(), subsys); d <= 2)
                close.emplace_back(d, sub.path().filename().string());
    std::sort(close.begin(), close.end());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < close.size() && i < 3; i++)
        out.push_back(close[i].second);
    return out;
}

}  // namespace

std::string TracepointInfo::spec() const {
    return fmt::format("tracepoint:{}:{}", subsystem.empty() ? "*" : subsystem, name);
}

std::string TracepointInfo::protoStr() const {
    if (!has_proto)
        return "?";
    std::string s;
    for (std::size_t i = 0; i < params.size(); i++) {
        if (i)
            s += ' ';
        s += fmt::format("{}:{}",
                         params[i].name.empty() ? fmt::format("arg{}", i + 1) : params[i].name,
                         params[i].type);
        if (!params[i].readable)
            s += "(unreadable)";
    }
    return s;
}

Result<Tracepoints> Tracepoints::load(const TracepointSources& src) {
    detail::StepTimer timer("tracepoints: list, BTF");
    Tracepoints t;
    std::unordered_map<std::string, std::size_t> at;  // name -> index in list_
    auto entry = [&](const std::string& name) -> TracepointInfo& {
        auto [it, fresh] = at.emplace(name, t.list_.size());
        if (fresh) {
            t.list_.emplace_back();
            t.list_.back().name = name;
        }
        return t.list_[it->second];
    };
    bool from_kallsyms = false;
    if (!src.kallsyms.empty()) {
        std::ifstream in(src.kallsyms);
        std::string line;
        while (std::getline(in, line)) {
            // "ADDR TYPE NAME[\t[MODULE]]"
            const auto s1 = line.find(' ');
            const auto s2 = s1 == std::string::npos ? s1 : line.find(' ', s1 + 1);
            if (s2 == std::string::npos)
                continue;
            const auto end = line.find_first_of(" \t", s2 + 1);
            std::string_view name(line.data() + s2 + 1,
                                  (end == std::string::npos ? line.size() : end) - s2 - 1);
            if (!name.starts_with(kTpPrefix))
                continue;
            from_kallsyms = true;
            std::string mod;
            if (auto lb = line.find('[', s2); lb != std::string::npos) {
                auto rb = line.find(']', lb);
                mod = line.substr(lb + 1, rb == std::string::npos ? rb : rb - lb - 1);
            }
            TracepointInfo& tp = entry(std::string(name.substr(kTpPrefix.size())));
            tp.module = mod;
        }
    }
    if (!src.btf.empty()) {
        struct btf* b = btf__parse(src.btf.c_str(), nullptr);
        if (b) {  // libbpf 1.x: NULL and errno on failure
            t.btf_.reset(b, btf__free);
            const BtfIndex ix = indexBtf(b);
            if (!from_kallsyms)  // BTF describes vmlinux's tracepoints only
                for (const auto& [name, id] : ix.typedefs)
                    (void)entry(name);
            for (auto& tp : t.list_)
                if (tp.module.empty())
                    fillParams(b, ix, tp);
        }
    }
    t.tracefs_ = findTracefs(src);
    if (!t.tracefs_.empty()) {
        std::error_code ec;
        for (const auto& sub : fs::directory_iterator(t.tracefs_ + "/events", ec)) {
            if (!sub.is_directory(ec))
                continue;
            const std::string subsys = sub.path().filename();
            for (const auto& ev : fs::directory_iterator(sub.path(), ec)) {
                if (!ev.is_directory(ec))
                    continue;
                auto it = at.find(ev.path().filename());
                if (it != at.end() && t.list_[it->second].subsystem.empty())
                    t.list_[it->second].subsystem = subsys;
            }
        }
    }
    if (t.list_.empty())
        return makeError(ENOENT,
                         fmt::format("no tracepoints found: no __tracepoint_* symbols "
                                     "in {} and no BTF at {}",
                                     src.kallsyms.empty() ? "(kallsyms skipped)" : src.kallsyms,
                                     src.btf.empty() ? "(skipped)" : src.btf));
    std::sort(t.list_.begin(), t.list_.end(), [](const auto& a, const auto& b) {
        return std::tie(a.subsystem, a.name) < std::tie(b.subsystem, b.name);
    });
    return t;
}

std::vector<const TracepointInfo*> Tracepoints::match(std::string_view subsys_glob,
                                                      std::string_view name_glob) const {
    std::vector<const TracepointInfo*> out;
    for (const auto& tp : list_) {
        const bool sub_ok =
            tp.subsystem.empty() ? subsys_glob == "*" : globMatch(subsys_glob, tp.subsystem);
        if (sub_ok && globMatch(name_glob, tp.name))
            out.push_back(&tp);
    }
    return out;
}

namespace {

// No tracepoint of any subsystem is within three edits of `name`: the events of `subsys`
// (which exists) near it, else all of them when they are few, else how to list them.
std::string subsystemHint(const std::vector<TracepointInfo>& list, const std::string& subsys,
                          std::string_view name) {
    std::vector<std::string_view> names;
    for (const auto& tp : list)
        if (tp.module.empty() && tp.subsystem == subsys)
            names.push_back(tp.name);
    if (names.empty())
        return {};
    auto specs = [&](const auto& events) {
        std::string out;
        for (const auto& e : events)
            out += fmt::format("{}tracepoint:{}:{}", out.empty() ? "" : ", ", subsys, e);
        return out;
    };
    if (auto near = nearNames(name, names, 3); !near.empty())
        return "; did you mean " + specs(near);
    if (names.size() <= 6)
        return fmt::format("; {} has: {}", subsys, specs(names));
    return fmt::format("; {} has {} events (list them with probectl symbols 'tracepoint:{}:*')",
                       subsys, names.size(), subsys);
}

}  // namespace

Result<const TracepointInfo*> Tracepoints::find(const ProbeSpec& spec) const {
    const std::string& name = spec.symbol;
    const std::string where = spec.locationStr();
    const TracepointInfo* hit = nullptr;
    for (const auto& tp : list_)
        if (tp.name == name)
            hit = &tp;
    if (!hit) {
        if (!tracefs_.empty() &&
            isDir(fmt::format("{}/events/{}/{}", tracefs_, spec.subsystem, name))) {
            if (spec.subsystem == "syscalls")
                return makeError(
                    EINVAL, fmt::format("{}: syscalls:{} is a trace event built on the "
                                        "raw_syscalls tracepoints, not a tracepoint: use "
                                        "syscall:{} or tracepoint:raw_syscalls:{}",
                                        where, name, name.substr(name.find('_', 4) + 1),
                                        name.starts_with("sys_exit") ? "sys_exit" : "sys_enter"));
            return makeError(EINVAL, fmt::format("{}: {}:{} is a trace event without a "
                                                 "tracepoint of that name (a kprobe, synthetic "
                                                 "or syscall event)",
                                                 where, spec.subsystem, name));
        }
        // A subsystem that does not exist: a tracepoint of the same name elsewhere would
        // not be what was meant, so say what is wrong with the subsystem.
        if (!tracefs_.empty() && spec.subsystem != "*" &&
            !isDir(fmt::format("{}/events/{}", tracefs_, spec.subsystem))) {
            const auto subs = closeSubsystems(tracefs_, spec.subsystem);
            // A kernel without syscall events (FTRACE_SYSCALLS) has no syscalls/ at all.
            const bool syscall = spec.subsystem == "syscalls" &&
                                 (name.starts_with("sys_enter_") || name.starts_with("sys_exit_"));
            return makeError(
                ENOENT,
                fmt::format("{}: no tracepoint subsystem '{}'{} (list them with probectl "
                            "symbols 'tracepoint:*'){}",
                            where, spec.subsystem,
                            subs.empty() ? std::string()
                                         : fmt::format("; did you mean {}", fmt::join(subs, ", ")),
                            syscall ? fmt::format("; for the syscall use syscall:{}",
                                                  name.substr(name.find('_', 4) + 1))
                                    : std::string()));
        }
        std::vector<std::pair<std::size_t, std::string>> close;
        for (const auto& tp : list_)
            if (tp.module.empty())
                if (auto d = editDistance(tp.name, name); d <= 3)
                    close.emplace_back(d, tp.spec());
        std::sort(close.begin(), close.end());
        std::string hint;
        for (std::size_t i = 0; i < close.size() && i < 3; i++)
            hint += (i ? ", " : "; did you mean ") + close[i].second;
        if (hint.empty() && !tracefs_.empty() && spec.subsystem != "*")
            hint = subsystemHint(list_, spec.subsystem, name);
        return makeError(ENOENT, fmt::format("{}: unknown tracepoint '{}'{}", where, name, hint));
    }
    if (!hit->module.empty())
        return makeError(0, fmt::format("{}: '{}' is a tracepoint of module {}: only "
                                        "vmlinux tracepoints can be probed",
                                        where, name, hit->module));
    if (spec.subsystem != "*" && !hit->subsystem.empty() && hit->subsystem != spec.subsystem)
        return makeError(0, fmt::format("{}: tracepoint '{}' is filed under '{}', not "
                                        "'{}': {}",
                                        where, name, hit->subsystem, spec.subsystem, hit->spec()));
    if (spec.subsystem != "*" && hit->subsystem.empty() && !tracefs_.empty())
        return makeError(EINVAL, fmt::format("{}: tracepoint '{}' has no trace event, so no "
                                             "subsystem: write tracepoint:*:{}",
                                             where, name, name));
    return hit;
}

namespace {

// The rewrite of one args.NAME->... node: a $argN/deref source and the value's BTF type.
struct Rewritten {
    FetchSourcePtr source;
    std::uint32_t type = 0;
    bool char_array = false;  // the value is a char[N] member: its address is the string
};

}  // namespace

Result<std::vector<FetchArg>> Tracepoints::resolveArgs(const TracepointInfo& tp,
                                                       std::vector<FetchArg> args) const {
    const struct btf* b = btf_.get();
    auto paramAt = [&](std::size_t i) -> const TracepointParam* {
        return tp.has_proto && i < tp.params.size() ? &tp.params[i] : nullptr;
    };
    // Checks $argN nodes and rewrites args.X nodes, depth first.
    std::function<Result<Rewritten>(const FetchArg&, const FetchSourcePtr&)> walk =
        [&](const FetchArg& a, const FetchSourcePtr& src) -> Result<Rewritten> {
        using K = FetchSource::Kind;
        const std::string ctx =
            fmt::format("{}: fetch argument '{}' (column {})", tp.spec(), a.name, src->column);
        if (src->kind == K::Arg) {
            if (tp.has_proto && src->index > tp.params.size())
                return makeError(EINVAL, fmt::format("{}: $arg{} does not exist: {} takes {} "
                                                     "argument{}",
                                                     ctx, src->index, tp.name, tp.params.size(),
                                                     tp.params.size() == 1 ? "" : "s"));
            if (const TracepointParam* p = paramAt(src->index - 1); p && !p->readable)
                return makeError(EINVAL, fmt::format("{}: $arg{} cannot be read: {}", ctx,
                                                     src->index, p->why_unreadable));
            const TracepointParam* p = paramAt(src->index - 1);
            return Rewritten{src, p ? p->btf_id : 0, false};
        }
        if (src->kind == K::Deref) {
            auto inner = walk(a, src->inner);
            if (!inner)
                return inner.error();
            FetchSource n = *src;
            n.inner = inner->source;
            return Rewritten{makeSource(std::move(n)), 0, false};
        }
        if (src->kind != K::Field)
            return Rewritten{src, 0, false};
        if (!b || !tp.has_proto)
            return makeError(0, fmt::format("{}: {} needs the kernel's BTF "
                                            "(/sys/kernel/btf/vmlinux) to know {}'s "
                                            "parameters: use $argN",
                                            ctx, src->str(), tp.name));
        std::size_t idx = tp.params.size();
        for (std::size_t i = 0; i < tp.params.size(); i++)
            if (tp.params[i].name == src->path[0])
                idx = i;
        if (idx == tp.params.size()) {
            std::string names;
            for (std::size_t i = 0; i < tp.params.size(); i++)
                names += (i ? ", " : "") + (tp.params[i].name.empty() ? fmt::format("${}", i + 1)
                                                                      : tp.params[i].name);
            return makeError(EINVAL, fmt::format("{}: {} has no parameter '{}' (it has: {})", ctx,
                                                 tp.name, src->path[0], names));
        }
        const TracepointParam& p = tp.params[idx];
        if (!p.readable)
            return makeError(EINVAL, fmt::format("{}: args.{} cannot be read: {}", ctx, p.name,
                                                 p.why_unreadable));
        FetchSource arg;
        arg.kind = K::Arg;
        arg.index = static_cast<std::uint32_t>(idx + 1);
        arg.column = src->column;
        Rewritten cur{makeSource(std::move(arg)), p.btf_id, false};
        std::string walked = "args." + src->path[0];
        for (std::size_t i = 1; i < src->path.size(); i++) {
            std::uint32_t pid = 0;
            const struct btf_type* ptr = resolved(b, cur.type, &pid);
            const struct btf_type* to =
                ptr && btf_is_ptr(ptr) ? resolved(b, ptr->type, nullptr) : nullptr;
            if (!to || !btf_is_composite(to))
                return makeError(EINVAL,
                                 fmt::format("{}: {} is {}, not a pointer to a struct "
                                             "or union: no '->{}'",
                                             ctx, walked, typeName(b, cur.type), src->path[i]));
            auto m = findMember(b, to, src->path[i]);
            if (!m)
                return makeError(EINVAL, fmt::format("{}: {} has no member '{}'", ctx,
                                                     typeName(b, ptr->type), src->path[i]));
            if (m->bitfield)
                return makeError(EINVAL, fmt::format("{}: {}->{} is a bitfield: not supported", ctx,
                                                     walked, src->path[i]));
            walked += "->" + src->path[i];
            if (i > 1 && cur.source->depth() + 1 > kFetchMaxDepth)
                return makeError(EINVAL, fmt::format("{}: {} dereferences deeper than {}", ctx,
                                                     walked, kFetchMaxDepth));
            FetchSource d;
            d.kind = K::Deref;
            d.offset = m->offset;
            d.inner = cur.source;
            d.column = src->column;
            const struct btf_type* mt = resolved(b, m->type, nullptr);
            cur = Rewritten{
                makeSource(std::move(d)), m->type,
                mt && btf_is_array(mt) && isCharInt(resolved(b, btf_array(mt)->type, nullptr))};
        }
        return cur;
    };

    for (FetchArg& a : args) {
        auto r = walk(a, a.source);
        if (!r)
            return r.error();
        const bool was_field = a.source->kind == FetchSource::Kind::Field;
        a.source = r->source;
        if (!was_field || !b)
            continue;
        const bool member = a.source->kind == FetchSource::Kind::Deref;
        std::optional<FetchType> def;
        if (r->char_array)
            def = FetchType::String;
        else
            def = defaultFetchType(b, r->type);
        if (!def && !a.type_given)
            return makeError(EINVAL,
                             fmt::format("{}: fetch argument '{}' (column {}) is {}: "
                                         "name one of its scalar members, or give a "
                                         "TYPE",
                                         tp.spec(), a.name, a.column, typeName(b, r->type)));
        if (!a.type_given)
            a.type = *def;
        // A char * member holds the string's address: read the string there, as
        // +0(+OFF(...)):string does. A char[N] member is the string itself.
        if (isStringType(a.type) && member && !r->char_array) {
            FetchSource z;
            z.kind = FetchSource::Kind::Deref;
            z.inner = a.source;
            z.column = a.source->column;
            a.source = makeSource(std::move(z));
        }
        if (!isStringType(a.type) && r->char_array)
            return makeError(EINVAL, fmt::format("{}: fetch argument '{}' is a char array: "
                                                 "read it as :string",
                                                 tp.spec(), a.name));
        if (a.source->depth() > kFetchMaxDepth)
            return makeError(EINVAL, fmt::format("{}: fetch argument '{}' dereferences deeper "
                                                 "than {}",
                                                 tp.spec(), a.name, kFetchMaxDepth));
    }
    return args;
}

std::vector<FetchArg> Tracepoints::defaultArgs(const TracepointInfo& tp) const {
    std::vector<FetchArg> out;
    if (!btf_ || !tp.has_proto)
        return out;
    for (std::size_t i = 0; i < tp.params.size() && out.size() < kFetchMaxArgs; i++) {
        const TracepointParam& p = tp.params[i];
        if (!p.readable)
            continue;
        FetchSource s;
        s.kind = FetchSource::Kind::Arg;
        s.index = static_cast<std::uint32_t>(i + 1);
        FetchArg a;
        a.name = p.name.empty() ? fmt::format("arg{}", i + 1) : p.name;
        a.source = makeSource(std::move(s));
        a.type = p.default_type;
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace probectl
