// Glob specs -> one spec per name (expand.hpp). Each name is vetted the way a single spec
// would be (blacklist, data, duplicates) so that the kernel is asked only about names that
// can work; what it still refuses is skipped too.
#include "probectl/expand.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <elf.h>
#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include "netlink/netlink_error.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/glob.hpp"
#include "probectl/syscall_meta.hpp"
#include "probectl/syscall_probe.hpp"
#include "probectl/user_target.hpp"
#include "target/no_dwarf_note.hpp"
#include "target/user_resolve_cache.hpp"

namespace probectl {

namespace {

constexpr std::string_view kPadding = "__pfx_";
constexpr std::string_view kSyscallPrefixes[] = {kSyscallWrapperPrefix, "sys_"};

// Where the location ends in a spec's text: the first blank outside quotes.
std::size_t locationEnd(std::string_view text) {
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); i++) {
        const char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ' ' || c == '\t') {
            return i;
        }
    }
    return text.size();
}

// The glob spec with `name` for its location (and `subsystem` for a tracepoint), its fetch
// arguments and predicate as written: parsed again so columns and checks are the spec's own.
Result<ProbeSpec> respell(const ProbeSpec& glob, const std::string& name,
                          const std::string& subsystem = {}) {
    ProbeSpec loc = glob;
    loc.symbol = name;
    if (!subsystem.empty())
        loc.subsystem = subsystem;
    const std::string text = glob.text.empty() ? glob.str() : glob.text;
    auto parsed = parseProbeSpec(loc.locationStr() + text.substr(locationEnd(text)));
    if (!parsed)
        return toError(parsed.error());
    parsed->maxactive = glob.maxactive;
    return std::move(*parsed);
}

Error noMatch(const ProbeSpec& spec, std::string_view what) {
    return makeError(ENOENT, fmt::format("{}: the glob matches no {}", spec.text, what));
}

struct Candidate {
    std::string name;
    std::string subsystem;
    std::optional<SkippedName> skip;
    // Functions only: where it is (0: unknown), and its symbol with the symbol binding's
    // rank (global first) to choose which of the names of one address is probed.
    std::uint64_t addr = 0;
    std::string symbol;
    int bind_rank = 0;
};

// Names of one address (C aliases, memcpy/__memcpy, a C++ destructor's D1/D2) are one
// function: probing each would report every call once per name. The one kept has the fewest
// leading underscores (the name a library documents: malloc, not __libc_malloc), then is
// global rather than weak or local, then the shortest.
void skipAliases(std::vector<Candidate>& cands) {
    auto rank = [](const Candidate& c) {
        const std::size_t under = c.symbol.find_first_not_of('_');
        return std::make_tuple(under == std::string::npos ? c.symbol.size() : under, c.bind_rank,
                               c.symbol.size(), std::string_view(c.symbol));
    };
    std::map<std::uint64_t, const Candidate*> kept;
    for (const Candidate& c : cands) {
        if (c.skip || c.addr == 0)
            continue;
        auto [it, fresh] = kept.emplace(c.addr, &c);
        if (!fresh && rank(c) < rank(*it->second))
            it->second = &c;
    }
    for (Candidate& c : cands)
        if (!c.skip && c.addr != 0 && kept.at(c.addr) != &c)
            c.skip = SkippedName{c.name, "alias", "same address as " + kept.at(c.addr)->name};
}

Result<Expansion> build(const ProbeSpec& spec, std::vector<Candidate> cands,
                        std::string_view what) {
    if (cands.empty())
        return noMatch(spec, what);
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return std::tie(a.subsystem, a.name) < std::tie(b.subsystem, b.name);
    });
    Expansion x;
    for (Candidate& c : cands) {
        if (c.skip) {
            x.skipped.push_back(std::move(*c.skip));
            continue;
        }
        auto s = respell(spec, c.name, c.subsystem);
        if (!s)
            return std::move(s).error();
        x.specs.push_back(std::move(*s));
    }
    return x;
}

std::optional<SkippedName> kernelVerdict(const KernelSymbols& ks, const std::string& name) {
    const KernelSymbol* fn = nullptr;
    for (const KernelSymbol* s : ks.lookup(name))
        if (s->isFunction()) {
            fn = s;
            break;
        }
    if (!fn)
        return SkippedName{name, "data", ""};
    switch (ks.probeability(*fn)) {
        case Probeability::Ok:
            return std::nullopt;
        case Probeability::Blacklisted:
            return SkippedName{name, "blacklisted", ""};
        case Probeability::Duplicate:
            return SkippedName{name, "duplicate", ""};
        case Probeability::NotText:
            return SkippedName{name, "data", ""};
        case Probeability::InitText:
            return SkippedName{name, "init code", "freed after boot"};
        case Probeability::Padding:
        case Probeability::Unknown:
            break;
    }
    return SkippedName{name, "padding", ""};
}

Result<Expansion> kernelFunctions(const ProbeSpec& spec, const KernelSymbols& ks) {
    std::vector<Candidate> cands;
    std::set<std::string_view> seen;
    for (const KernelSymbol* s : ks.match(spec.symbol)) {
        // Padding is no function: not a name the glob means.
        if (std::string_view(s->name).starts_with(kPadding) || !seen.insert(s->name).second)
            continue;
        // kallsyms letters: upper case global, lower case local.
        const bool global = s->type >= 'A' && s->type <= 'Z';
        cands.push_back(
            {s->name, {}, kernelVerdict(ks, s->name), s->addr, s->name, global ? 0 : 1});
    }
    skipAliases(cands);
    return build(spec, std::move(cands), "kernel symbol");
}

// The x86-64 syscalls by name: the build's table, and the running kernel's syscall trace
// events (which exist only for its x86-64 table's entries; names newer than the build).
std::set<std::string, std::less<>> x64SyscallNames(const std::string& tracefs) {
    std::set<std::string, std::less<>> names;
    for (const SyscallName& n : builtinSyscallNames())
        names.emplace(n.name);
    constexpr std::string_view kEnter = "sys_enter_";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(tracefs + "/events/syscalls", ec)) {
        const std::string f = e.path().filename().string();
        if (f.starts_with(kEnter))
            names.emplace(syscallX64Name(std::string_view(f).substr(kEnter.size())));
    }
    return names;
}

// The x86-64 syscall a kernel function (its name without the prefix) is the entry of,
// if any. kallsyms also lists the wrappers of 32-bit syscalls (chown16, *_time32, ia32_*)
// and the old functions of renamed syscalls (sys_uname; x86-64's uname is sys_newuname),
// which 64-bit programs never call.
std::optional<std::string_view> x64Syscall(std::string_view kernel_name,
                                           const std::set<std::string, std::less<>>& x64) {
    if (syscallKernelName(kernel_name) != kernel_name)
        return std::nullopt;
    const std::string_view name = syscallX64Name(kernel_name);
    if (!x64.contains(name))
        return std::nullopt;
    return name;
}

Result<Expansion> syscalls(const ProbeSpec& spec, const KernelSymbols& ks,
                           const std::set<std::string, std::less<>>& x64) {
    for (std::string_view prefix : kSyscallPrefixes) {
        std::vector<Candidate> cands;
        std::set<std::string_view> seen;
        bool any = false;
        for (const KernelSymbol& s : ks.symbols()) {
            if (!s.isFunction() || !std::string_view(s.name).starts_with(prefix))
                continue;
            any = true;
            const auto x64_name = x64Syscall(std::string_view(s.name).substr(prefix.size()), x64);
            if (!x64_name)
                continue;
            const std::string_view name = *x64_name;
            if (!globMatch(spec.symbol, name) || !seen.insert(name).second)
                continue;
            Candidate c{std::string(name), {}, std::nullopt, 0, {}, 0};
            if (ks.blacklisted(s.name))
                c.skip = SkippedName{c.name, "blacklisted", ""};
            cands.push_back(std::move(c));
        }
        if (any)
            return build(spec, std::move(cands), "syscall");
    }
    return noMatch(spec, "syscall");
}

Result<Expansion> tracepoints(const ProbeSpec& spec, const Tracepoints& tps) {
    std::vector<Candidate> cands;
    for (const TracepointInfo* tp : tps.match(spec.subsystem, spec.symbol)) {
        Candidate c{tp->name,     tp->subsystem.empty() ? spec.subsystem : tp->subsystem,
                    std::nullopt, 0,
                    {},           0};
        if (!tp->module.empty())
            c.skip = SkippedName{tp->name, "module", tp->module};
        cands.push_back(std::move(c));
    }
    return build(spec, std::move(cands), "tracepoint");
}

// A C++ function is named as a user writes it ("ns::f(int)", quoted in the spec text), not
// by its mangled symbol, when that name means this function alone; else by the symbol. A
// name with * ? [ (a pointer parameter, operator[]) is that function too: a name that
// names a function exactly is no glob (userFunctions).
std::string userSpecName(const ElfResolver& elf, const ElfSymbol& s) {
    if (s.demangled == s.name)
        return s.name;
    std::string readable = withoutReturnType(s.demangled);
    const auto named = elf.functionsNamed(readable);
    if (named.size() == 1 && named[0]->value == s.value)
        return readable;
    return s.name;
}

// `cache`: where the file is read once for the command (null: read here).
Result<Expansion> userFunctions(const ProbeSpec& spec, pid_t pid, UserResolveCache* cache) {
    UserResolveOptions ro;
    ro.pid = pid;
    auto file = findUserFileVia(cache, spec.path, ro);
    if (!file)
        return makeError(file.error().err, fmt::format("{}: {}", spec.text, file.error().message));
    ElfOpenOptions eo;
    eo.debug_dir = file->root + eo.debug_dir;
    eo.root = file->root;
    auto kept = readKeptElf(cache, file->path, eo);
    if (!kept)
        return makeError(kept.error().err, fmt::format("{}: {}", spec.text, kept.error().message));
    const ElfResolver* elf = &(*kept)->elf();
    // A C++ signature with a pointer ("ns::g(char*)") or operator[] names the function it
    // spells: read as a glob, "ns::g(char*)" also matched "ns::g(char const*)".
    if (!elf->functionsNamed(spec.symbol).empty()) {
        Expansion x;
        x.exact = true;
        x.specs.push_back(spec);
        return x;
    }
    // A C++ signature of no function whose name has overloads ("ns::f(int*)", a glob that
    // matches none of them, or "S::operator[](int)", no glob at all): those are what was meant.
    const auto overloads = elf->overloadsOf(spec.symbol);
    auto noSuchOverload = [&] {
        return makeError(ENOENT,
                         fmt::format("{}: {}", spec.text,
                                     noSuchOverloadMessage(spec.symbol, file->path, overloads)));
    };
    if (auto e = globError(spec.symbol); !e.empty())
        return overloads.empty() ? makeError(EINVAL, fmt::format("{}: {}", spec.text, e))
                                 : noSuchOverload();
    if (spec.offset != 0)
        return makeError(EINVAL, fmt::format("{}: a glob takes no +OFFSET, and no function of {} "
                                             "is named '{}'",
                                             spec.text, file->path, spec.symbol));
    std::vector<Candidate> cands;
    std::set<std::string_view> seen;
    for (const ElfSymbol& s : elf->symbols()) {
        if (!s.isFunction() || s.hidden_version || !s.matchesGlob(spec.symbol) ||
            !seen.insert(s.name).second)
            continue;
        const int bind_rank = s.bind == STB_GLOBAL ? 0 : s.bind == STB_WEAK ? 1 : 2;
        Candidate c{userSpecName(*elf, s), {}, std::nullopt, s.value, s.name, bind_rank};
        if (s.isIfunc())
            c.skip = SkippedName{s.name, "ifunc", ""};
        else if (elf->functionsNamed(s.name).size() > 1)
            c.skip = SkippedName{s.name, "duplicate", ""};
        cands.push_back(std::move(c));
    }
    if (cands.empty() && !overloads.empty())
        return noSuchOverload();
    skipAliases(cands);
    return build(spec, std::move(cands), fmt::format("function of {}", file->path));
}

}  // namespace

namespace {

// The reason of a syscall refused because it never returns (exit, exit_group): latency,
// $retval or $errno asked of it. Not the kernel's refusal: probectl's, before it asks.
constexpr std::string_view kNeverReturns = "never returns";

}  // namespace

std::string AttachReport::summary() const {
    std::string s = fmt::format("{}: attached {} of {}", spec, ids.size(), matched);
    if (stopped)
        s += fmt::format("; stopped: {} not tried", matched - ids.size() - skipped.size());
    std::map<std::string, std::size_t> by_reason;
    for (const SkippedName& n : skipped)
        by_reason[n.reason]++;
    // An alias is not refused: its function is probed, under another name.
    if (const auto alias = by_reason.extract("alias"))
        s += fmt::format("; {} alias{} (same address as another name, probed once)", alias.mapped(),
                         alias.mapped() == 1 ? "" : "es");
    if (by_reason.empty())
        return s;
    std::size_t refused = 0;
    for (const auto& [reason, n] : by_reason)
        refused += n;
    std::vector<std::pair<std::size_t, std::string>> order;
    for (const auto& [reason, n] : by_reason)
        order.emplace_back(n, reason);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> parts;
    for (const auto& [n, reason] : order) {
        if (reason != kNeverReturns) {
            parts.push_back(fmt::format("{} {}", n, reason));
            continue;
        }
        // exit and exit_group: named, as the reason is theirs alone.
        std::vector<std::string> names;
        for (const SkippedName& k : skipped)
            if (k.reason == reason)
                names.push_back(k.name);
        parts.push_back(
            fmt::format("{} never return{} ({})", n, n == 1 ? "s" : "", fmt::join(names, ", ")));
    }
    return s + fmt::format("; {} refused: {}", refused, fmt::join(parts, ", "));
}

std::string AttachReport::details() const {
    std::string s;
    for (const SkippedName& n : skipped) {
        // The refusal of exit and exit_group says "never returns" itself: once is enough.
        if (n.reason == kNeverReturns && !n.detail.empty())
            s += fmt::format("  {}: {}\n", n.name, n.detail);
        else
            s += fmt::format("  {}: {}{}\n", n.name, n.reason,
                             n.detail.empty() ? std::string() : ": " + n.detail);
    }
    return s;
}

struct SpecExpander::Impl {
    pid_t pid = 0;
    const KernelSymbols* given = nullptr;
    std::optional<KernelSymbols> own;
    bool symbols_tried = false;
    std::optional<Result<Tracepoints>> tps;
    std::set<std::string> attached;  // locations attach() added
    std::string failed_details;      // failedDetails()
    std::function<bool()> stop;      // stopWhen()
    std::optional<std::set<std::string, std::less<>>> x64_syscalls;
    std::shared_ptr<UserResolveCache> cache;
};

SpecExpander::SpecExpander(pid_t pid, const KernelSymbols* symbols,
                           std::shared_ptr<UserResolveCache> cache)
    : impl_(std::make_unique<Impl>()) {
    impl_->pid = pid;
    impl_->given = symbols;
    impl_->cache = std::move(cache);
}
SpecExpander::SpecExpander(SpecExpander&&) noexcept = default;
SpecExpander& SpecExpander::operator=(SpecExpander&&) noexcept = default;
SpecExpander::~SpecExpander() = default;

const KernelSymbols* SpecExpander::symbols() {
    if (impl_->given)
        return impl_->given;
    if (!impl_->symbols_tried) {
        impl_->symbols_tried = true;
        if (auto ks = KernelSymbols::loadCurrent())
            impl_->own = std::move(*ks);
    }
    return impl_->own ? &*impl_->own : nullptr;
}

Result<Expansion> SpecExpander::expand(const ProbeSpec& spec_in) {
    ProbeSpec spec = spec_in;
    if (spec.text.empty())
        spec.text = spec.str();
    if (!hasGlob(spec)) {
        Expansion x;
        x.specs.push_back(std::move(spec));
        return x;
    }
    // A user-space name may name a function exactly whatever its brackets
    // ("S::operator[](unsigned long)"): userFunctions reads the file first.
    if (auto e = globError(spec.symbol);
        !e.empty() && kindInfo(spec.kind).family != KindFamily::UserElf)
        return makeError(EINVAL, fmt::format("{}: {}", spec.text, e));
    switch (kindInfo(spec.kind).family) {
        case KindFamily::KernelSymbol:
        case KindFamily::Syscall: {
            const KernelSymbols* ks = symbols();
            if (!ks)
                return makeError(ENOENT, fmt::format("{}: a glob needs /proc/kallsyms", spec.text));
            if (kindInfo(spec.kind).family == KindFamily::KernelSymbol)
                return kernelFunctions(spec, *ks);
            if (!impl_->x64_syscalls)
                impl_->x64_syscalls = x64SyscallNames("/sys/kernel/tracing");
            return syscalls(spec, *ks, *impl_->x64_syscalls);
        }
        case KindFamily::Tracepoint:
            if (!impl_->tps)
                impl_->tps = Tracepoints::load();
            if (!*impl_->tps)
                return makeError(impl_->tps->error().err,
                                 fmt::format("{}: {}", spec.text, impl_->tps->error().message));
            return tracepoints(spec, **impl_->tps);
        case KindFamily::UserElf:
            if (!impl_->cache)
                return userFunctions(spec, impl_->pid, nullptr);
            return impl_->cache->impl().get<Expansion>(
                impl_->cache->impl().expansions,
                userResolveKey(spec, impl_->pid, ElfOpenOptions().debug_dir),
                [&] { return userFunctions(spec, impl_->pid, impl_->cache.get()); });
    }
    return makeError(EINVAL, fmt::format("{}: no glob for this kind", spec.text));
}

namespace {

// A module limit (its refusal names the parameter as "(limit: NAME)") is said in the
// summary: "408 over the module's max_map_kb limit", where "refused by the kernel" hid it.
std::string refusalReason(const Error& e, const std::string& otherwise) {
    const auto name = detail::moduleLimit(e.message);
    return name.empty() ? otherwise : fmt::format("over the module's {} limit", name);
}

}  // namespace

Result<AttachReport> SpecExpander::attach(Tracer& tracer, const ProbeSpec& spec) {
    impl_->failed_details.clear();
    auto x = expand(spec);
    if (!x)
        return std::move(x).error();
    AttachReport r;
    r.spec = spec.text.empty() ? spec.str() : spec.text;
    r.glob = hasGlob(spec) && !x->exact;
    r.matched = x->matched();
    r.skipped = std::move(x->skipped);
    if (!r.glob) {
        // Added all the same (its arguments or predicate may differ), but said: two probes
        // on one location report every hit twice.
        const std::string where = x->specs.front().locationStr();
        auto id = tracer.add(x->specs.front());
        if (!id)
            return std::move(id).error();
        r.ids.push_back(*id);
        r.notes = tracer.takeNotes();
        if (!impl_->attached.insert(where).second)
            r.notes.push_back(fmt::format(
                "{}: an earlier spec probes {} as well: each hit there is reported once per spec",
                r.spec, where == r.spec ? std::string("it") : where));
        return r;
    }
    std::optional<Error> first;
    const std::string refused =
        fmt::format("refused by {}", tracer.backend() == "kernel" ? std::string("the kernel")
                                                                  : std::string(tracer.backend()));
    // Who refused: a usage error is probectl's own judgement of the spec, made before any
    // kernel was asked (latency of a call that never returns, a key the backend cannot
    // fill); the rest are the backend's.
    auto why = [&](const ProbeSpec& s, const Error& e) {
        if (!e.usage)
            return refusalReason(e, refused);
        if (kindInfo(s.kind).family == KindFamily::Syscall && syscallNeverReturns(s.symbol) &&
            e.message.find(" never returns") != std::string::npos)
            return std::string(kNeverReturns);
        return std::string("refused by probectl");
    };
    for (const ProbeSpec& s : x->specs) {
        if (impl_->stop && impl_->stop()) {
            r.stopped = true;
            break;
        }
        const std::string where = s.locationStr();
        if (impl_->attached.count(where)) {
            r.skipped.push_back({s.symbol, "attached twice", ""});
            continue;
        }
        auto id = tracer.add(s);
        if (!id) {
            if (!first)
                first = id.error();
            r.skipped.push_back({s.symbol, why(s, id.error()), id.error().message});
            continue;
        }
        impl_->attached.insert(where);
        r.ids.push_back(*id);
        for (std::string& n : tracer.takeNotes())
            r.notes.push_back(std::move(n));
    }
    mergeNoDwarfNotes(r.notes, r.spec);
    // Stopped: nothing is wrong with the glob, the run is ending.
    if (r.ids.empty() && !r.stopped) {
        impl_->failed_details = r.details();
        Error e = first ? *first : makeError(ENOENT, "");
        e.message =
            fmt::format("{}: none attached ({}){}", r.spec, r.summary().substr(r.spec.size() + 2),
                        first ? "; first refusal: " + first->message : std::string());
        return e;
    }
    return r;
}

void SpecExpander::stopWhen(std::function<bool()> stop) {
    impl_->stop = std::move(stop);
}

const std::string& SpecExpander::failedDetails() const {
    return impl_->failed_details;
}

}  // namespace probectl
