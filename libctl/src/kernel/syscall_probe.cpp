#include "probectl/syscall_probe.hpp"
#include "probectl/probe_kinds.hpp"
#include "uapi/probectl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

namespace probectl {

namespace {

// execve's argv strings go through load-exec, whose operand reaches this many.
static_assert(kExecArgvMax <= PROBECTL_FETCH_EXEC_ARGS);

// When the kernel reads a hint's memory. A probe handler must not fault, so memory the
// task never touched yet (a string literal on a page not yet read in) cannot be read at
// the entry; by the return the syscall itself has copied it in, so paths and input
// buffers, which the call never writes, are read there too. Read at entry: execve's path
// (after a successful exec the address belongs to a new program), and an input struct the
// call may write over before it returns: a sleep's request is often its remaining time
// too (coreutils' sleep), which an interrupted sleep overwrites; a struct the caller just
// filled in is on a present page. (strace reads at entry with process_vm_readv, which may
// fault pages in; the ptrace backend does the same.) execve's path and argv strings are
// read through load-exec (execReread), which the kernel reads again at the return when the
// entry's read faulted.
bool atEntry(std::string_view syscall, const SyscallMemHint& h) {
    if (syscall == "execve")
        return true;  // path, argv and envp: the old program's memory
    if (h.kind == SyscallMemHint::Kind::Timespec)
        return true;
    return h.kind == SyscallMemHint::Kind::Path && syscall == "execveat";
}

// Generated arguments go through the same parser as the user's, so the compiler and the
// kernel's validator see nothing they would not see from a hand-written spec.
FetchArg planArg(const SyscallMemHint& h, std::size_t pos, bool at_entry, bool exec) {
    using K = SyscallMemHint::Kind;
    const std::size_t argn = h.arg + 1;
    std::string text;
    if (h.kind == K::Path)
        text = fmt::format("a{}=+0($arg{}):ustring", argn, argn);
    else if (h.kind == K::PtrArray)
        text = fmt::format("p{}=+u0($arg{}):u64[{}]", argn, argn, h.len_arg);
    else if (h.kind == K::ArrayString)
        text = fmt::format("a{}_{}=+0(+u{}($arg{})):ustring", argn, h.len_arg, 8 * h.len_arg, argn);
    else if (h.kind == K::Timespec || h.kind == K::TimespecOut)
        text = fmt::format("a{}=+u0($arg{}):s64[2]", argn, argn);
    else if (h.kind == K::FdPair)
        text = fmt::format("a{}=+u0($arg{}):s32[2]", argn, argn);
    else if (h.kind == K::Int)
        text = fmt::format("a{}=+u0($arg{}):s32[1]", argn, argn);
    else
        text = fmt::format("a{}=+u0($arg{}):u8[{}]", argn, argn, kSyscallBufferMax);
    FetchOptions fo;
    fo.is_return = !at_entry;
    auto a = parseFetchArg(text, pos, fo);
    // A fixed text: a parse failure is a bug here, not an input error.
    if (!a)
        throw std::logic_error(
            fmt::format("syscall plan argument '{}': {}", text, a.error().message));
    if (exec && (h.kind == K::Path || h.kind == K::ArrayString)) {
        // The same string, at the address load-exec gives: +0(<execve path>) or
        // +0(<execve argv[N]>), a user string.
        auto load = std::make_shared<FetchSource>();
        load->kind = FetchSource::Kind::Exec;
        load->index = h.kind == K::Path ? 0 : static_cast<std::uint32_t>(h.len_arg + 1);
        auto at = std::make_shared<FetchSource>(*a->source);
        at->inner = std::move(load);
        a->source = std::move(at);
    }
    return std::move(*a);
}

// The name a spec's text probes ("mmap" of "syscall:mmap len=$arg2") when the text is a
// spec of kind `want`; "" for any other text.
std::string_view specNameOfKind(std::string_view spec, SpecKind want) {
    const std::size_t colon = spec.find(':');
    if (colon == std::string_view::npos)
        return {};
    const KindInfo* kind = findKind(spec.substr(0, colon));
    if (!kind || kind->kind != want)
        return {};
    const std::string_view rest = spec.substr(colon + 1);
    return rest.substr(0, rest.find(' '));
}

}  // namespace

bool syscallNeverReturns(std::string_view name) {
    return name == "exit" || name == "exit_group";
}

std::string_view specSyscall(std::string_view spec) {
    return specNameOfKind(spec, SpecKind::Syscall);
}

std::string_view specReturnSyscall(std::string_view spec) {
    if (const auto name = specSyscall(spec); !name.empty())
        return name;
    const std::string_view symbol = specNameOfKind(spec, SpecKind::Kretprobe);
    for (const std::string_view prefix :
         {kSyscallWrapperPrefix, std::string_view("__ia32_sys_"), std::string_view("__se_sys_"),
          std::string_view("__do_sys_")})
        if (symbol.size() > prefix.size() && symbol.starts_with(prefix))
            return symbol.substr(prefix.size());
    return {};
}

SyscallPlan syscallPlan(std::string_view name, const SyscallInfo* info) {
    SyscallPlan plan;
    plan.name = std::string(name);
    plan.returns = !syscallNeverReturns(name);
    plan.hints = syscallMemHints(name, info);
    auto entry = [&](const SyscallMemHint& h) { return !plan.returns || atEntry(name, h); };
    std::stable_partition(plan.hints.begin(), plan.hints.end(), entry);
    for (std::size_t i = 0; i < plan.hints.size(); ++i) {
        const bool at_entry = entry(plan.hints[i]);
        plan.args.push_back(planArg(plan.hints[i], i + 1, at_entry, name == "execve"));
        if (at_entry)
            plan.entry_args++;
    }
    return plan;
}

std::size_t syscallValueIndex(const SyscallPlan& plan, std::size_t hint) {
    return hint < plan.entry_args ? hint : hint + plan.entry_extra;
}

std::size_t syscallArgIndex(const SyscallPlan& plan, std::size_t arg) {
    if (plan.hints.empty())
        return arg;
    return arg < plan.entry_extra ? plan.entry_args + arg : plan.hints.size() + arg;
}

SyscallRecord syscallRecord(const Event& ev, const SyscallPlan& plan, bool returned) {
    SyscallRecord r;
    r.name = plan.name;
    r.args = ev.args;
    if (returned)
        r.retval = static_cast<std::int64_t>(ev.retval);
    // execve's argv and envp: pointer arrays (NULL ends them) and argv's strings.
    std::map<std::size_t, std::vector<std::uint64_t>> arrays;
    std::map<std::size_t, const Event::RawValue*> strings;
    for (std::size_t i = 0; i < plan.hints.size(); ++i) {
        const std::size_t at = syscallValueIndex(plan, i);
        if (at >= ev.fetched.size())
            break;
        const SyscallMemHint& h = plan.hints[i];
        const Event::RawValue& v = ev.fetched[at];
        if (h.arg >= r.mem.size())
            continue;
        if (h.kind == SyscallMemHint::Kind::PtrArray) {
            if (!(v.flags & PROBECTL_FETCH_V_FAULT)) {
                std::vector<std::uint64_t> ptrs(v.bytes.size() / 8);
                std::memcpy(ptrs.data(), v.bytes.data(), ptrs.size() * 8);
                arrays[h.arg] = std::move(ptrs);
            }
            continue;
        }
        if (h.kind == SyscallMemHint::Kind::ArrayString) {
            strings[h.len_arg] = &v;
            continue;
        }
        FetchedBytes fb;
        if (v.flags & PROBECTL_FETCH_V_FAULT) {
            fb.faulted = true;
            fb.error = v.error;
            r.mem[h.arg] = fb;
            continue;
        }
        const auto* p = reinterpret_cast<const char*>(v.bytes.data());
        std::size_t n = v.bytes.size();
        if (h.kind == SyscallMemHint::Kind::Path) {
            n = strnlen(p, n);  // the stored NUL is not part of the path
            fb.truncated = v.flags & PROBECTL_FETCH_V_TRUNCATED;
        } else if (h.kind == SyscallMemHint::Kind::Timespec ||
                   h.kind == SyscallMemHint::Kind::TimespecOut) {
            fb.truncated = n < 16;
        } else if (h.kind == SyscallMemHint::Kind::FdPair) {
            fb.truncated = n < 8;
        } else if (h.kind == SyscallMemHint::Kind::Int) {
            fb.truncated = n < 4;
        } else {
            // The buffer's real length: the count at entry, the return value after it.
            std::int64_t want = h.kind == SyscallMemHint::Kind::InBuffer
                                    ? static_cast<std::int64_t>(ev.args[h.len_arg])
                                    : (r.retval ? *r.retval : 0);
            if (want < 0)
                want = 0;
            const auto len = static_cast<std::size_t>(want);
            fb.truncated = len > n;
            n = std::min(n, len);
        }
        fb.bytes.assign(p, n);
        r.mem[h.arg] = std::move(fb);
    }
    if (auto a = arrays.find(1); a != arrays.end() && plan.name == "execve") {
        const auto& p = a->second;
        const std::size_t argc = std::find(p.begin(), p.end(), 0) - p.begin();
        // A string that faulted at entry was read again at the return (V_REREAD): after a
        // failed exec at its own address, after a successful one from the new program's
        // argv, which is the caller's only when exec did not rewrite it (a script's
        // interpreter goes first). The slot past argc tells: its entry read was of NULL,
        // its second read finds no string there unless argv grew. Past kExecArgvMax
        // strings nothing tells, and such strings stay unread.
        const bool exec_ok = returned && r.retval && *r.retval == 0;
        bool new_argv_same = false;
        if (exec_ok && argc < kExecArgvMax) {
            const auto s = strings.find(argc);
            new_argv_same = s != strings.end() && (s->second->flags & PROBECTL_FETCH_V_FAULT);
        }
        std::vector<std::string> argv;
        for (std::size_t i = 0; i < argc && i < kExecArgvMax; ++i) {
            const auto s = strings.find(i);
            if (s == strings.end() || (s->second->flags & PROBECTL_FETCH_V_FAULT))
                break;
            if ((s->second->flags & PROBECTL_FETCH_V_REREAD) && exec_ok && !new_argv_same)
                break;
            const auto* c = reinterpret_cast<const char*>(s->second->bytes.data());
            argv.emplace_back(c, strnlen(c, s->second->bytes.size()));
        }
        // All shown or none: a string that could not be read leaves the pointer.
        if (argv.size() == std::min(argc, kExecArgvMax)) {
            r.argv = std::move(argv);
            r.argv_more = argc > kExecArgvMax;
        }
    }
    if (auto e = arrays.find(2); e != arrays.end() && plan.name == "execve") {
        const auto& p = e->second;
        r.envc = static_cast<std::size_t>(std::find(p.begin(), p.end(), 0) - p.begin());
        r.envc_more = *r.envc == p.size();
    }
    // A read that failed has no buffer to show: strace prints the pointer.
    for (const SyscallMemHint& h : plan.hints)
        if (h.kind == SyscallMemHint::Kind::OutBuffer && r.retval && *r.retval < 0)
            r.mem[h.arg].reset();
    return r;
}

const SyscallTable& systemSyscallTable() {
    static const SyscallTable table = SyscallTable::load();
    return table;
}

}  // namespace probectl
