// Kernel stacks: STACK_GET replies decoded, frames symbolized from kallsyms, folded lines.
#include "probectl/kernel_stacks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/entry_stack.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/kernel_maps.hpp"
#include "probectl/predicate.hpp"
#include "uapi/probectl.h"

namespace probectl {

Result<void> decodeKernelStacks(std::span<const std::uint8_t> entries,
                                std::vector<KernelStack>& out) {
    std::size_t off = 0;
    while (off < entries.size()) {
        probectl_stack hdr{};
        if (entries.size() - off < sizeof(hdr))
            return makeError(EBADMSG, fmt::format("stack entries: {} stray bytes at offset {}",
                                                  entries.size() - off, off));
        std::memcpy(&hdr, entries.data() + off, sizeof(hdr));
        const std::size_t len = sizeof(hdr) + std::size_t{hdr.nr} * sizeof(std::uint64_t);
        if (entries.size() - off < len || hdr.nr > PROBECTL_STACK_MAX_DEPTH)
            return makeError(EBADMSG, fmt::format("stack entries: stack {} of {} frames runs "
                                                  "past the end at offset {}",
                                                  hdr.id, hdr.nr, off));
        KernelStack s;
        s.id = hdr.id;
        s.truncated = (hdr.flags & PROBECTL_STACK_F_TRUNCATED) != 0;
        s.user = (hdr.flags & PROBECTL_STACK_F_USER) != 0;
        s.tgid = hdr.tgid;
        s.maps_seq = hdr.maps_seq;
        s.frames.resize(hdr.nr);
        std::memcpy(s.frames.data(), entries.data() + off + sizeof(hdr),
                    hdr.nr * sizeof(std::uint64_t));
        out.push_back(std::move(s));
        off += len;
    }
    return {};
}

std::string kernelFrameText(const KernelSymbols* symbols, std::uint64_t addr) {
    const KernelSymbol* sym = symbols ? symbols->symbolAt(addr) : nullptr;
    if (!sym)
        return fmt::format("{:#x}", addr);
    std::string out = sym->name;
    if (addr != sym->addr)
        out += fmt::format("+{:#x}", addr - sym->addr);
    if (!sym->module.empty())
        out += fmt::format(" [{}]", sym->module);
    return out;
}

std::string foldedStack(std::span<const std::string> frames, std::uint64_t count) {
    std::string out;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        if (it != frames.rbegin())
            out += ';';
        for (char c : *it)
            out += c == ';' ? ':' : c;
    }
    out += fmt::format(" {}", count);
    return out;
}

std::vector<std::string> kernelStackLines(const KernelSymbols* symbols, const KernelStack& stack) {
    std::vector<std::string> out;
    out.reserve(stack.frames.size() + 1);
    for (auto addr : stack.frames)
        out.push_back(kernelFrameText(symbols, addr));
    if (stack.truncated)
        out.emplace_back("...");
    return out;
}

std::vector<std::string> userStackLines(UserSymbolizer& symbols, const KernelStack& stack) {
    std::vector<std::string> out;
    if (stack.frames.empty())
        return {"[no user stack]"};
    const UserImage tgid(static_cast<pid_t>(stack.tgid), stack.maps_seq);
    (void)symbols.capture(tgid);
    // A library loaded after the maps were captured: read them again (the kernel keeps the
    // address space again for such a hit, else /proc while the process lives).
    (void)symbols.refreshMissing(tgid, stack.frames);
    out.reserve(stack.frames.size() + 1);
    for (std::size_t i = 0; i < stack.frames.size(); i++) {
        if (i > 0)
            for (auto& l : symbols.tailCallLines(tgid, stack.frames[i - 1], i > 1, stack.frames[i]))
                out.push_back(std::move(l));
        for (auto& l : symbols.frameLines(tgid, stack.frames[i], i > 0))
            out.push_back(std::move(l));
    }
    if (stack.truncated)
        out.emplace_back("...");
    return out;
}

void markUserStackEntry(ProbeRequest& req) {
    if (req.kind != ProbeKind::Uprobe || !req.function_entry)
        return;
    for (auto& in : req.fetch)
        if (in.op == static_cast<std::uint8_t>(FetchOpcode::LoadUstack))
            in.flags |= kFetchFlagFuncEntry;
}

namespace detail {

bool stackAtEntry(const ProbeRequest& req) {
    return req.kind == ProbeKind::Kretprobe && (req.flags & kProbeFlagSyscall);
}

namespace {

bool isStore(std::uint8_t op) {
    switch (static_cast<FetchOpcode>(op)) {
        case FetchOpcode::StoreInt:
        case FetchOpcode::StoreString:
        case FetchOpcode::StoreArray:
        case FetchOpcode::StoreComm:
        case FetchOpcode::StoreUstackSnapshot:
            return true;
        default:
            return false;
    }
}

}  // namespace

std::size_t programCount(const std::vector<FetchInsn>& insns) {
    return static_cast<std::size_t>(std::count_if(
        insns.begin(), insns.end(), [](const FetchInsn& in) { return isStore(in.op); }));
}

std::size_t insertEntryArg(ProbeRequest& req, std::vector<FetchArg>& args, FetchArg arg,
                           const std::vector<FetchInsn>& prog) {
    // A strace plan's values are the request's programs that `args` does not describe; its
    // entry reads are then all the entry programs so far (nothing of `args` is read there).
    const bool plan = programCount(req.fetch) > args.size();
    const std::size_t at = req.fetch_entry;  // the value's place in the record
    const std::size_t own = plan ? 0 : at;   // ... and in `args`
    auto insn = req.fetch.begin();
    for (std::size_t stores = 0; stores < at && insn != req.fetch.end(); ++insn)
        stores += isStore(insn->op);
    req.fetch.insert(insn, prog.begin(), prog.end());
    req.fetch_entry++;
    for (auto& f : req.filter.insns)
        if (f.op == static_cast<std::uint8_t>(PredicateOpcode::Test) &&
            f.field_kind == static_cast<std::uint8_t>(PredicateFieldKind::Arg) && f.arg_index >= at)
            f.arg_index++;
    if (req.aggr) {
        for (std::uint8_t i = 0; i < req.aggr->nkeys; i++)
            if (req.aggr->keys[i] >= own)
                req.aggr->keys[i]++;
        if (req.aggr->value == AggrValue::Arg && req.aggr->value_arg >= own)
            req.aggr->value_arg++;
    }
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(own), std::move(arg));
    return own;
}

}  // namespace detail

namespace {

Error refuseStack(std::string msg) {
    Error e = makeError(EINVAL, std::move(msg));
    e.usage = true;
    return e;
}

// Whether `args` has room for one more argument called `name`.
Result<void> roomFor(const std::vector<FetchArg>& args, const std::string& name) {
    for (const auto& a : args)
        if (a.name == name)
            return refuseStack(fmt::format("a fetch argument is already named '{}'", name));
    if (args.size() >= kFetchMaxArgs)
        return refuseStack(
            fmt::format("more than {} fetch arguments with the stack", kFetchMaxArgs));
    return {};
}

// Compiles `arg` into the request's fetch program and appends it to `args` (`entry`: among
// the programs a syscall's kretprobe runs at the entry, detail::insertEntryArg).
Result<void> appendCompiled(ProbeRequest& req, std::vector<FetchArg>& args, FetchArg arg,
                            bool entry = false) {
    auto prog = compileFetchArg(arg);
    if (!prog)
        return prog.error();
    if (entry) {
        detail::insertEntryArg(req, args, std::move(arg), prog->insns);
        return {};
    }
    req.fetch.insert(req.fetch.end(), prog->insns.begin(), prog->insns.end());
    args.push_back(std::move(arg));
    return {};
}

// Appends the fetch argument NAME=$VARDEPTH that captures a stack (kstack or ustack).
Result<void> appendStackArg(ProbeRequest& req, std::vector<FetchArg>& args, const std::string& name,
                            bool return_probe, std::uint32_t depth) {
    if (auto r = roomFor(args, name); !r)
        return r;
    const std::string text =
        depth ? fmt::format("{}=${}{}", name, name, depth) : fmt::format("{}=${}", name, name);
    FetchOptions fo;
    fo.is_return = return_probe;
    fo.tracepoint = req.kind == ProbeKind::Tracepoint;
    auto arg = parseFetchArg(text, args.size() + 1, fo);
    if (!arg)
        return refuseStack(arg.error().message);
    return appendCompiled(req, args, std::move(*arg),
                          name == kKernelStackArg && detail::stackAtEntry(req));
}

}  // namespace

Result<void> appendUserStackArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                std::uint32_t depth) {
    auto r =
        appendStackArg(req, args, kUserStackArg,
                       req.kind == ProbeKind::Kretprobe || req.kind == ProbeKind::Uretprobe, depth);
    if (r.ok())
        markUserStackEntry(req);
    return r;
}

Result<void> appendUserStackSnapshotArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                        std::uint32_t bytes) {
    if (bytes > kUstackSnapshotMax)
        return refuseStack(fmt::format("a user stack snapshot takes 1..{} bytes, not {}",
                                       kUstackSnapshotMax, bytes));
    if (auto r = roomFor(args, kUserStackArg); !r)
        return r;
    auto src = std::make_shared<FetchSource>();
    src->kind = FetchSource::Kind::UStackSnapshot;
    src->index = bytes;
    FetchArg arg;
    arg.name = kUserStackArg;
    arg.source = std::move(src);
    return appendCompiled(req, args, std::move(arg));
}

Result<void> appendKernelStackArg(ProbeRequest& req, std::vector<FetchArg>& args,
                                  std::uint32_t depth) {
    if (req.kind != ProbeKind::Kprobe && req.kind != ProbeKind::Kretprobe &&
        req.kind != ProbeKind::Tracepoint)
        return refuseStack(
            "kernel stacks are taken at kprobes, kretprobes and tracepoints, not in user space");
    return appendStackArg(req, args, kKernelStackArg, req.kind == ProbeKind::Kretprobe, depth);
}

struct KernelStacks::Impl {
    explicit Impl(Client c) : client(std::move(c)), maps(client) {}
    Client client;
    KernelMapsSource maps;  // through `client`; its probe: the last read's
    const KernelSymbols* symbols = nullptr;
    std::optional<KernelSymbols> own_symbols;
    bool tried_load = false;
    std::unordered_map<std::uint32_t, KernelStack> stacks;
    std::unordered_map<std::uint32_t, std::vector<std::string>> lines;
    std::unordered_map<std::uint32_t, std::vector<std::string>> unnamed;  // ids not read: why
    UserSymbolizer user_symbols;
    bool has_user = false;
    std::uint32_t count = 0;
    std::uint64_t lost = 0;
    std::uint64_t truncated = 0;

    const KernelSymbols* syms() {
        if (!symbols && !tried_load) {
            tried_load = true;
            if (auto s = KernelSymbols::load(); s) {
                own_symbols = std::move(*s);
                symbols = &*own_symbols;
            }
        }
        return symbols;
    }
};

KernelStacks::KernelStacks(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelStacks::KernelStacks(KernelStacks&&) noexcept = default;
KernelStacks& KernelStacks::operator=(KernelStacks&&) noexcept = default;
KernelStacks::~KernelStacks() = default;

Result<KernelStacks> KernelStacks::open(const KernelSymbols* symbols) {
    auto c = Client::connect(ClientOptions::dumpsOnly());
    if (!c)
        return std::move(c).error();
    auto impl = std::make_unique<Impl>(std::move(*c));
    impl->symbols = symbols;
    // The address space the kernel kept for a process outlives it: preferred to /proc.
    impl->user_symbols.setMapsSource(impl->maps.source());
    return KernelStacks(std::move(impl));
}

Result<void> KernelStacks::read(std::uint32_t probe_id) {
    std::vector<KernelStack> got;
    auto r = impl_->client.dumpStacks(probe_id, [&](const StackReply& reply) -> Result<void> {
        impl_->count = reply.stack_count;
        impl_->lost = reply.stack_lost;
        impl_->truncated = reply.stack_truncated;
        return decodeKernelStacks(reply.stack_entries, got);
    });
    if (!r)
        return r;
    impl_->maps.setProbe(probe_id);
    for (auto& s : got) {
        impl_->has_user = impl_->has_user || s.user;
        impl_->stacks.try_emplace(s.id, std::move(s));
    }
    // The counter only: no address space is let go.
    if (impl_->has_user)
        impl_->maps.refreshUnpinned();
    return {};
}

void KernelStacks::captureProcess(pid_t tgid, std::uint32_t probe_id) {
    impl_->maps.setProbe(probe_id);
    if (tgid > 0)
        (void)impl_->user_symbols.capture(tgid);
}

Result<void> KernelStacks::readAndCapture(std::uint32_t probe_id) {
    auto r = read(probe_id);
    for (const auto& [id, s] : impl_->stacks) {
        const UserImage image(static_cast<pid_t>(s.tgid), s.maps_seq);
        if (s.user && s.tgid && !impl_->user_symbols.hasMaps(image))
            (void)impl_->user_symbols.capture(image);
    }
    return r;
}

bool KernelStacks::hasUserStacks() const {
    return impl_->has_user;
}

const std::vector<std::string>* KernelStacks::lines(std::uint32_t probe_id, std::uint32_t id) {
    if (id == 0)
        return nullptr;
    if (auto it = impl_->lines.find(id); it != impl_->lines.end())
        return &it->second;
    Result<void> r;
    if (!impl_->stacks.contains(id))
        r = read(probe_id);
    auto st = impl_->stacks.find(id);
    if (st == impl_->stacks.end()) {
        // Said in place of the frames, so that it does not pass for a stack the map did
        // not keep (id 0); not kept, so that a later read may still name it.
        auto& why = impl_->unnamed[id];
        why = {r ? fmt::format("[stack {} not in the session's stack map]", id)
                 : fmt::format("[stack {} not read: {}]", id, r.error().describe())};
        return &why;
    }
    const KernelStack& s = st->second;
    return &impl_->lines
                .emplace(id, s.user ? userStackLines(impl_->user_symbols, s)
                                    : kernelStackLines(impl_->syms(), s))
                .first->second;
}

const KernelStack* KernelStacks::stack(std::uint32_t id) const {
    auto it = impl_->stacks.find(id);
    return it == impl_->stacks.end() ? nullptr : &it->second;
}

std::uint32_t KernelStacks::count() const {
    return impl_->count;
}
std::uint64_t KernelStacks::lost() const {
    return impl_->lost;
}
std::uint64_t KernelStacks::truncated() const {
    return impl_->truncated;
}
std::uint64_t KernelStacks::unpinned() const {
    return impl_->maps.unpinned();
}

std::vector<StackRow> stackRows(const AggrTable& t, const StackLines& stack_lines) {
    // The stack columns: kstack, then ustack (the kernel's frames are the innermost).
    std::vector<std::size_t> at;
    for (const char* name : {kKernelStackArg, kUserStackArg})
        for (std::size_t i = 0; i < t.key_names.size(); i++)
            if (t.key_names[i] == name)
                at.push_back(i);
    std::vector<StackRow> rows;
    std::unordered_map<std::string, std::size_t> seen;  // keys and frames -> row
    for (const AggrEntry& e : t.entries) {
        StackRow r;
        r.count = e.count;
        for (std::size_t i = 0; i < e.key.size(); i++) {
            if (std::find(at.begin(), at.end(), i) != at.end())
                continue;
            r.keys.push_back(formatAggrKeyPart(t, i, e.key[i]));
        }
        std::size_t kept = 0;
        for (std::size_t i : at) {
            const std::uint32_t id =
                e.key[i].faulted ? 0 : static_cast<std::uint32_t>(e.key[i].raw);
            if (!r.id)
                r.id = id;
            if (const auto* lines = stack_lines(t.probe_id, id)) {
                r.lines.insert(r.lines.end(), lines->begin(), lines->end());
                kept++;
            } else if (at.size() > 1) {
                r.lines.emplace_back("[stack not kept]");
            }
        }
        if (!kept)
            r.lines.clear();
        std::string merge;
        for (const auto& k : r.keys)
            merge += k + '\n';
        merge += '\0';
        for (const auto& l : r.lines)
            merge += l + '\n';
        if (auto it = seen.find(merge); it != seen.end()) {
            rows[it->second].count += r.count;
            continue;
        }
        seen.emplace(std::move(merge), rows.size());
        rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const StackRow& a, const StackRow& b) {
        return a.count > b.count || (a.count == b.count && a.lines < b.lines);
    });
    return rows;
}

std::vector<std::string> stackRowKeyNames(const AggrTable& t) {
    std::vector<std::string> names;
    for (const auto& n : t.key_names)
        if (n != kKernelStackArg && n != kUserStackArg)
            names.push_back(n);
    return names;
}

namespace {

// "  CELL  CELL": the first cell (the count) right-aligned, the keys left-aligned.
std::string columnLine(const std::vector<std::string>& cells, const std::vector<std::size_t>& w) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); i++)
        line += i == 0 ? fmt::format("  {:>{}}", cells[i], w[i])
                       : fmt::format("  {:<{}}", cells[i], w[i]);
    while (!line.empty() && line.back() == ' ')
        line.pop_back();
    return line;
}

}  // namespace

std::string formatStackRows(const std::vector<StackRow>& rows, std::size_t top,
                            const std::vector<std::string>& key_names) {
    const std::size_t shown = top ? std::min(top, rows.size()) : rows.size();
    // With other keys each stack's count line is a row of columns under one header.
    std::vector<std::string> head;
    std::vector<std::size_t> w;
    if (!key_names.empty()) {
        head.emplace_back("COUNT");
        for (auto name : key_names) {
            std::transform(name.begin(), name.end(), name.begin(), ::toupper);
            head.push_back(std::move(name));
        }
        for (const auto& h : head)
            w.push_back(h.size());
        for (std::size_t i = 0; i < shown; i++) {
            w[0] = std::max(w[0], fmt::formatted_size("{}", rows[i].count));
            for (std::size_t k = 0; k < rows[i].keys.size() && k + 1 < w.size(); k++)
                w[k + 1] = std::max(w[k + 1], rows[i].keys[k].size());
        }
    }
    std::string out = head.empty() ? std::string() : columnLine(head, w) + '\n';
    for (std::size_t i = 0; i < shown; i++) {
        const StackRow& r = rows[i];
        if (r.lines.empty())
            out += "    [stack not kept: stack map full]\n";
        for (const auto& l : r.lines)
            out += fmt::format("    {}\n", l);
        std::vector<std::string> cells{fmt::format("{}", r.count)};
        cells.insert(cells.end(), r.keys.begin(), r.keys.end());
        if (head.empty())
            for (const auto& c : cells)
                out += "  " + c;
        else
            out += columnLine(cells, w);
        out += "\n\n";
    }
    return out;
}

std::vector<std::string> stackRowFrames(const StackRow& row) {
    std::vector<std::string> frames(row.lines.begin(), row.lines.end());
    if (frames.empty())
        frames.emplace_back("[stack not kept]");
    for (auto it = row.keys.rbegin(); it != row.keys.rend(); ++it)
        frames.push_back(*it);  // innermost first: the keys go last, outermost
    return frames;
}

std::string formatFoldedRows(const std::vector<StackRow>& rows, const std::string& root) {
    std::string out;
    for (const auto& r : rows) {
        auto frames = stackRowFrames(r);
        if (!root.empty())
            frames.push_back(root);
        out += foldedStack(frames, r.count) + '\n';
    }
    return out;
}

std::string unpinnedNote(std::uint64_t unpinned) {
    return unpinned ? fmt::format(
                          ", {} hit{} in processes whose maps were not kept (more than {} "
                          "at once, or more than {} that mapped code after their maps were "
                          "read: their stacks are symbolized only if they still run)",
                          unpinned, unpinned == 1 ? "" : "s", kMmPinSlots, kMmPinAgain)
                    : std::string();
}

std::string kernelStacksSummary(const KernelStacks& stacks) {
    return fmt::format(
               "{}: {} kept, {} truncated (deeper than --stack-depth), {} lost (stack map "
               "full)",
               stacks.hasUserStacks() ? "stacks" : "kernel stacks", stacks.count(),
               stacks.truncated(), stacks.lost()) +
           unpinnedNote(stacks.unpinned());
}

std::string userSnapshotSummary(const SnapshotWalks& walks, std::uint32_t bytes,
                                std::uint64_t unpinned) {
    return fmt::format(
               "user stacks (dwarf): {} unwound, {} stopped early, {} filled the {}-byte copy{}",
               walks.unwound, walks.stopped, walks.filled, bytes,
               walks.cut
                   ? fmt::format(", {} stopped at its end (--stack-size can take more)", walks.cut)
                   : "") +
           unpinnedNote(unpinned);
}

}  // namespace probectl
