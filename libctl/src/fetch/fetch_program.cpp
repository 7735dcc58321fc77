// FetchArg -> FetchProgram, and the validator the kernel mirrors.
#include "probectl/fetch_program.hpp"
#include "uapi/probectl.h"

#include <fmt/format.h>

#include <cerrno>

namespace probectl {

namespace {

bool validWidth(std::uint8_t size) {
    return size == 1 || size == 2 || size == 4 || size == 8;
}

FetchInsn insn(FetchOpcode op, std::uint8_t size, std::uint16_t flags = 0, std::int32_t offset = 0,
               std::uint32_t operand = 0) {
    return FetchInsn{static_cast<std::uint8_t>(op), size, flags, offset, operand};
}

// Emits the instructions leaving `src`'s value, read `width` bytes wide, in the accumulator.
Result<void> emitSource(const FetchSource& src, std::uint8_t width, std::vector<FetchInsn>& out) {
    using K = FetchSource::Kind;
    switch (src.kind) {
        case K::Arg:
            out.push_back(insn(FetchOpcode::LoadArg, 8, 0, 0, src.index));
            return {};
        case K::Reg:
            out.push_back(insn(FetchOpcode::LoadReg, src.reg32 ? 4 : 8, 0, 0, src.index));
            return {};
        case K::Stack:
            out.push_back(insn(FetchOpcode::LoadStack, 8, 0, 0, src.index));
            return {};
        case K::Retval:
            out.push_back(insn(FetchOpcode::LoadRetval, 8));
            return {};
        case K::Pid:
            out.push_back(insn(FetchOpcode::LoadPid, 4));
            return {};
        case K::Tid:
            out.push_back(insn(FetchOpcode::LoadTid, 4));
            return {};
        case K::Uid:
            out.push_back(insn(FetchOpcode::LoadUid, 4));
            return {};
        case K::Cpu:
            out.push_back(insn(FetchOpcode::LoadCpu, 4));
            return {};
        case K::KStack:
            out.push_back(
                insn(FetchOpcode::LoadKstack, 4, 0, 0, src.index ? src.index : kStackDefaultDepth));
            return {};
        case K::UStack:
            out.push_back(
                insn(FetchOpcode::LoadUstack, 4, 0, 0, src.index ? src.index : kStackDefaultDepth));
            return {};
        case K::Imm:
            out.push_back(insn(FetchOpcode::LoadImm, 8, 0,
                               static_cast<std::int32_t>(static_cast<std::uint32_t>(src.imm >> 32)),
                               static_cast<std::uint32_t>(src.imm)));
            return {};
        case K::Deref: {
            if (!src.inner)
                return makeError(EINVAL, "fetch: dereference without a source");
            // Inner levels read addresses: always pointer-sized.
            auto r = emitSource(*src.inner, 8, out);
            if (!r.ok())
                return r;
            out.push_back(insn(FetchOpcode::Deref, width, src.user ? kFetchFlagUser : 0,
                               static_cast<std::int32_t>(src.offset)));
            return {};
        }
        case K::Exec:
            out.push_back(insn(FetchOpcode::LoadExec, 8, 0, 0, src.index));
            return {};
        case K::Comm:
            return makeError(EINVAL, "fetch: $comm is only valid as a whole argument");
        case K::UStackSnapshot:
            return makeError(EINVAL, "fetch: a user stack snapshot is a whole argument");
        case K::Field:
            return makeError(EINVAL, fmt::format("fetch: {} is resolved from the kernel's BTF "
                                                 "first (resolveTracepointArgs)",
                                                 src.str()));
    }
    return makeError(EINVAL, "fetch: unknown source kind");
}

}  // namespace

Result<FetchProgram> compileFetchArg(const FetchArg& arg, const FetchCompileOptions& opts) {
    if (opts.max_string < kFetchMinString || opts.max_string > kFetchMaxString)
        return makeError(EINVAL, fmt::format("string length bound {} is outside {}..{}",
                                             opts.max_string, kFetchMinString, kFetchMaxString));
    if (!arg.source)
        return makeError(EINVAL, fmt::format("fetch argument '{}' has no source", arg.name));
    if (arg.source->depth() > kFetchMaxDepth)
        return makeError(EINVAL, fmt::format("fetch argument '{}' nests deeper than {}", arg.name,
                                             kFetchMaxDepth));
    if (arg.array_len > kFetchMaxArray)
        return makeError(EINVAL, fmt::format("fetch argument '{}': array longer than {}", arg.name,
                                             kFetchMaxArray));
    using K = FetchSource::Kind;
    const FetchSource& src = *arg.source;
    FetchProgram p;
    if (src.kind == K::Comm) {
        p.insns.push_back(insn(FetchOpcode::StoreComm, 0, 0, 0, kFetchCommLen));
        p.max_bytes = kFetchCommLen;
    } else if (src.kind == K::UStackSnapshot) {
        const std::uint32_t bytes = src.index ? src.index : kUstackSnapshotDefault;
        p.insns.push_back(insn(FetchOpcode::StoreUstackSnapshot, 0, 0, 0, bytes));
        p.max_bytes = kUstackRegsBytes + bytes;
    } else if (isStringType(arg.type) || arg.array_len != 0) {
        // The outermost dereference names where the data lies rather than a value to load
        // (kprobe_events: "+0(%si):string" is the string at %si+0).
        const bool deref = src.kind == K::Deref;
        std::uint16_t flags = deref && src.user ? kFetchFlagUser : 0;
        if (arg.type == FetchType::Ustring)
            flags |= kFetchFlagUser;
        auto r = emitSource(deref ? *src.inner : src, 8, p.insns);
        if (!r.ok())
            return r.error();
        const auto offset = deref ? static_cast<std::int32_t>(src.offset) : 0;
        if (arg.array_len != 0) {
            if (isStringType(arg.type))
                return makeError(EINVAL, "fetch: arrays of strings are not supported");
            if (!deref)
                return makeError(EINVAL, "fetch: an array needs a dereference");
            const std::uint8_t w = fetchTypeSize(arg.type);
            p.insns.push_back(insn(FetchOpcode::StoreArray, w, flags, offset, arg.array_len));
            p.max_bytes = w * arg.array_len;
        } else {
            p.insns.push_back(insn(FetchOpcode::StoreString, 0, flags, offset, opts.max_string));
            p.max_bytes = opts.max_string;
        }
    } else {
        const std::uint8_t w = fetchTypeSize(arg.type);
        auto r = emitSource(src, w, p.insns);
        if (!r.ok())
            return r.error();
        p.insns.push_back(insn(FetchOpcode::StoreInt, w));
        p.max_bytes = w;
    }
    auto v = validateFetchProgram(p.insns);
    if (!v.ok())
        return v.error();
    return p;
}

Result<std::vector<FetchProgram>> compileFetchArgs(const std::vector<FetchArg>& args,
                                                   const FetchCompileOptions& opts) {
    if (args.size() > kFetchMaxArgs)
        return makeError(EINVAL,
                         fmt::format("{} fetch arguments, at most {}", args.size(), kFetchMaxArgs));
    std::vector<FetchProgram> out;
    out.reserve(args.size());
    for (const auto& a : args) {
        auto p = compileFetchArg(a, opts);
        if (!p.ok())
            return p.error();
        out.push_back(std::move(*p));
    }
    return out;
}

Result<void> validateFetchProgram(std::span<const FetchInsn> insns) {
    auto bad = [](std::size_t i, std::string what) {
        return makeError(EINVAL, fmt::format("fetch insn {}: {}", i, what));
    };
    if (insns.empty())
        return makeError(EINVAL, "fetch program is empty");
    if (insns.size() > kFetchMaxInsns)
        return makeError(EINVAL, fmt::format("fetch program has {} instructions, max {}",
                                             insns.size(), kFetchMaxInsns));
    bool loaded = false;
    std::size_t derefs = 0;
    for (std::size_t i = 0; i < insns.size(); ++i) {
        const FetchInsn& in = insns[i];
        const bool last = i + 1 == insns.size();
        if ((in.flags & ~(kFetchFlagUser | kFetchFlagErrno | kFetchFlagFuncEntry)) != 0)
            return bad(i, fmt::format("unknown flags {:#x}", in.flags));
        const auto op = static_cast<FetchOpcode>(in.op);
        switch (op) {
            case FetchOpcode::LoadArg:
            case FetchOpcode::LoadReg:
            case FetchOpcode::LoadStack:
            case FetchOpcode::LoadRetval:
            case FetchOpcode::LoadPid:
            case FetchOpcode::LoadTid:
            case FetchOpcode::LoadUid:
            case FetchOpcode::LoadCpu:
            case FetchOpcode::LoadKstack:
            case FetchOpcode::LoadUstack:
            case FetchOpcode::LoadExec:
            case FetchOpcode::LoadAddr:
            case FetchOpcode::LoadImm: {
                if (i != 0)
                    return bad(i, "a load must be the first instruction");
                if (in.flags != 0 &&
                    !(op == FetchOpcode::LoadRetval && in.flags == kFetchFlagErrno) &&
                    !(op == FetchOpcode::LoadUstack && in.flags == kFetchFlagFuncEntry))
                    return bad(i,
                               "a load takes no flags (but $retval the errno flag, $ustack the "
                               "function-entry flag)");
                const bool task = op == FetchOpcode::LoadPid || op == FetchOpcode::LoadTid ||
                                  op == FetchOpcode::LoadUid || op == FetchOpcode::LoadCpu ||
                                  op == FetchOpcode::LoadKstack || op == FetchOpcode::LoadUstack;
                const bool size_ok =
                    task ? in.size == 4
                    : op == FetchOpcode::LoadAddr
                        ? validWidth(in.size)
                        : (in.size == 8 || (op == FetchOpcode::LoadReg && in.size == 4));
                if (!size_ok)
                    return bad(i, fmt::format("load size {} is invalid", in.size));
                if (op == FetchOpcode::LoadArg && (in.operand < 1 || in.operand > kFetchMaxArgN))
                    return bad(
                        i, fmt::format("argument {} is outside 1..{}", in.operand, kFetchMaxArgN));
                if (op == FetchOpcode::LoadReg && in.operand >= kX86RegCount)
                    return bad(i, fmt::format("register {} is outside 0..{}", in.operand,
                                              kX86RegCount - 1));
                if ((op == FetchOpcode::LoadKstack || op == FetchOpcode::LoadUstack) &&
                    (in.operand < 1 || in.operand > kStackMaxDepth))
                    return bad(i, fmt::format("stack depth {} is outside 1..{}", in.operand,
                                              kStackMaxDepth));
                if (op == FetchOpcode::LoadAddr) {
                    const unsigned base = in.operand & 0xff, index = (in.operand >> 8) & 0xff;
                    if ((in.operand >> 16) != 0 || in.offset != 0)
                        return bad(i, "an address load takes no offset and only two registers");
                    if ((base != kFetchAddrNoBase && base >= kX86RegCount) || index >= kX86RegCount)
                        return bad(i, fmt::format("address registers {} and {} are outside 0..{}",
                                                  base, index, kX86RegCount - 1));
                }
                if (op == FetchOpcode::LoadExec && in.operand > PROBECTL_FETCH_EXEC_ARGS)
                    return bad(i, fmt::format("exec argument {} is outside 0..{}", in.operand,
                                              PROBECTL_FETCH_EXEC_ARGS));
                if (op == FetchOpcode::LoadStack && in.operand > kFetchMaxStackN)
                    return bad(
                        i, fmt::format("stack slot {} is above {}", in.operand, kFetchMaxStackN));
                loaded = true;
                break;
            }
            case FetchOpcode::Deref:
                if (!loaded)
                    return bad(i, "a dereference needs a loaded value");
                if (!validWidth(in.size))
                    return bad(i, fmt::format("dereference size {} is not 1, 2, 4 or 8", in.size));
                if (++derefs > kFetchMaxDepth)
                    return bad(i, fmt::format("more than {} dereferences", kFetchMaxDepth));
                break;
            case FetchOpcode::StoreInt:
            case FetchOpcode::StoreString:
            case FetchOpcode::StoreArray:
                if (!loaded)
                    return bad(i, "a store needs a loaded value");
                if (!last)
                    return bad(i, "a store must be the last instruction");
                if (op == FetchOpcode::StoreInt && in.flags != 0)
                    return bad(i, "an integer store takes no flags");
                if (op != FetchOpcode::StoreString && !validWidth(in.size))
                    return bad(i, fmt::format("store size {} is not 1, 2, 4 or 8", in.size));
                if (op == FetchOpcode::StoreString &&
                    (in.operand < kFetchMinString || in.operand > kFetchMaxString))
                    return bad(i, fmt::format("string bound {} is outside {}..{}", in.operand,
                                              kFetchMinString, kFetchMaxString));
                if (op == FetchOpcode::StoreArray &&
                    (in.operand < 1 || in.operand > kFetchMaxArray))
                    return bad(i, fmt::format("array count {} is outside 1..{}", in.operand,
                                              kFetchMaxArray));
                return {};
            case FetchOpcode::StoreComm:
                if (i != 0 || !last)
                    return bad(i, "comm is stored alone");
                if (in.operand != kFetchCommLen || in.flags != 0)
                    return bad(i, fmt::format("comm store operand must be {}", kFetchCommLen));
                return {};
            case FetchOpcode::StoreUstackSnapshot:
                if (i != 0 || !last)
                    return bad(i, "a user stack snapshot is stored alone");
                if (in.operand < 1 || in.operand > kUstackSnapshotMax || in.flags != 0)
                    return bad(i, fmt::format("user stack snapshot bytes {} are outside 1..{}",
                                              in.operand, kUstackSnapshotMax));
                return {};
            default:
                return bad(i, fmt::format("unknown opcode {}", in.op));
        }
    }
    return makeError(EINVAL, "fetch program does not end with a store");
}

std::string toString(const FetchInsn& in) {
    const char* u = (in.flags & kFetchFlagUser) ? ".u" : "";
    switch (static_cast<FetchOpcode>(in.op)) {
        case FetchOpcode::LoadArg:
            return fmt::format("load.arg {}", in.operand);
        case FetchOpcode::LoadReg:
            return fmt::format("load.reg {} s{}", toString(static_cast<X86Reg>(in.operand)),
                               in.size);
        case FetchOpcode::LoadStack:
            return fmt::format("load.stack {}", in.operand);
        case FetchOpcode::LoadRetval:
            return (in.flags & kFetchFlagErrno) ? "load.retval.errno" : "load.retval";
        case FetchOpcode::LoadPid:
            return "load.pid";
        case FetchOpcode::LoadTid:
            return "load.tid";
        case FetchOpcode::LoadUid:
            return "load.uid";
        case FetchOpcode::LoadCpu:
            return "load.cpu";
        case FetchOpcode::LoadImm:
            return fmt::format(
                "load.imm {:#x}",
                (std::uint64_t{static_cast<std::uint32_t>(in.offset)} << 32) | in.operand);
        case FetchOpcode::Deref:
            return fmt::format("deref{} s{} {:+#x}", u, in.size, in.offset);
        case FetchOpcode::StoreInt:
            return fmt::format("store.int s{}", in.size);
        case FetchOpcode::StoreString:
            return fmt::format("store.str{} {:+#x} max {}", u, in.offset, in.operand);
        case FetchOpcode::StoreArray:
            return fmt::format("store.array{} s{} {:+#x} n {}", u, in.size, in.offset, in.operand);
        case FetchOpcode::StoreComm:
            return fmt::format("store.comm {}", in.operand);
        case FetchOpcode::StoreUstackSnapshot:
            return fmt::format("store.usnapshot {}", in.operand);
        case FetchOpcode::LoadKstack:
            return fmt::format("load.kstack {}", in.operand);
        case FetchOpcode::LoadUstack:
            return fmt::format("load.ustack{} {}", in.flags & kFetchFlagFuncEntry ? ".entry" : "",
                               in.operand);
        case FetchOpcode::LoadExec:
            return fmt::format("load.exec {}", in.operand);
        case FetchOpcode::LoadAddr: {
            const unsigned base = in.operand & 0xff, index = (in.operand >> 8) & 0xff;
            return fmt::format("load.addr {}+{}*{}",
                               base == kFetchAddrNoBase
                                   ? std::string("0")
                                   : std::string(toString(static_cast<X86Reg>(base))),
                               toString(static_cast<X86Reg>(index)), in.size);
        }
    }
    return fmt::format("op{}?", in.op);
}

}  // namespace probectl
