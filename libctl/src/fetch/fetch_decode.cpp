// Fetched bytes -> typed values, and USDT argument specs -> fetch programs.
#include "probectl/fetch_decode.hpp"
#include "uapi/probectl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace probectl {

namespace {

std::uint64_t littleEndian(std::span<const std::uint8_t> b) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < b.size() && i < 8; i++)
        v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    return v;
}

// "rdi" -> pt_regs word of di; -1 when pt_regs has no such 64-bit register.
int ptRegsIndex(std::string_view reg) {
    std::string_view k = reg;
    if (k.size() == 3 && k[0] == 'r' && !(k[1] >= '0' && k[1] <= '9'))
        k.remove_prefix(1);  // rax -> ax, rbp -> bp; r8..r15 keep their name
    for (std::uint8_t i = 0; i < kX86RegCount; i++)
        if (toString(static_cast<X86Reg>(i)) == k)
            return i;
    return -1;
}

FetchType intType(unsigned size, bool is_signed) {
    switch (size) {
        case 1:
            return is_signed ? FetchType::S8 : FetchType::U8;
        case 2:
            return is_signed ? FetchType::S16 : FetchType::U16;
        case 4:
            return is_signed ? FetchType::S32 : FetchType::U32;
        default:
            return is_signed ? FetchType::S64 : FetchType::U64;
    }
}

}  // namespace

void decodeFetchedValue(FetchedValue& v, const FetchArg& arg, std::span<const std::uint8_t> bytes,
                        std::uint8_t flags) {
    v.name = arg.name;
    v.type = arg.type;
    v.array_len = arg.array_len;
    v.raw = 0;
    v.array.clear();
    v.str.clear();
    v.snapshot.clear();
    v.maps_seq = 0;
    v.truncated = flags & PROBECTL_FETCH_V_TRUNCATED;
    v.faulted = flags & PROBECTL_FETCH_V_FAULT;
    if (v.faulted)
        return;
    if (arg.source && arg.source->kind == FetchSource::Kind::UStackSnapshot) {
        if (bytes.size() < kUstackRegsBytes)
            v.faulted = true;
        else
            v.snapshot.assign(bytes.begin(), bytes.end());
        return;
    }
    if (isStringType(arg.type)) {
        const auto* s = reinterpret_cast<const char*>(bytes.data());
        v.str.assign(s, strnlen(s, bytes.size()));
        return;
    }
    const std::size_t width = fetchTypeSize(arg.type);
    std::size_t n = arg.array_len ? arg.array_len : 1;
    // An array that ran into an unreadable page keeps the elements before it.
    if (arg.array_len && v.truncated && width != 0)
        n = std::min(n, bytes.size() / width);
    if (width == 0 || n == 0 || bytes.size() < width * n) {
        v.faulted = true;
        return;
    }
    if (arg.array_len) {
        for (std::size_t i = 0; i < n; i++)
            v.array.push_back(littleEndian(bytes.subspan(i * width, width)));
    } else {
        v.raw = littleEndian(bytes.first(width));
    }
}

FetchedValue decodeFetchedValue(const FetchArg& arg, std::span<const std::uint8_t> bytes,
                                std::uint8_t flags) {
    FetchedValue v;
    decodeFetchedValue(v, arg, bytes, flags);
    return v;
}

Result<UsdtFetch> usdtFetch(const std::vector<UsdtArg>& usdt_args) {
    UsdtFetch out;
    for (std::size_t i = 0; i < usdt_args.size(); i++) {
        const UsdtArg& a = usdt_args[i];
        FetchArg fa;
        fa.name = fmt::format("arg{}", i + 1);
        fa.auto_named = true;
        fa.type = intType(a.size, a.is_signed);
        fa.type_given = true;
        const auto size = static_cast<std::uint8_t>(a.size);
        if (a.kind == UsdtArg::Kind::Constant) {
            const auto imm = static_cast<std::uint64_t>(a.value);
            out.insns.push_back({static_cast<std::uint8_t>(FetchOpcode::LoadImm), 8, 0,
                                 static_cast<std::int32_t>(imm >> 32),
                                 static_cast<std::uint32_t>(imm)});
        } else {
            auto regIndex = [&](const std::string& name) -> Result<std::uint8_t> {
                const int reg = ptRegsIndex(name);
                if (reg < 0)
                    return makeError(EINVAL, fmt::format("USDT argument {} ('{}'): register %{} "
                                                         "cannot be read by the kernel",
                                                         i + 1, a.text, name));
                return static_cast<std::uint8_t>(reg);
            };
            if (a.kind == UsdtArg::Kind::Memory && !a.symbol.empty() && a.symbol_address == 0)
                return makeError(EINVAL, fmt::format("USDT argument {} ('{}'): symbol '{}' was "
                                                     "not looked up in the file's symbol table",
                                                     i + 1, a.text, a.symbol));
            if (a.kind == UsdtArg::Kind::Memory && (a.offset < INT32_MIN || a.offset > INT32_MAX))
                return makeError(EINVAL, fmt::format("USDT argument {} ('{}'): displacement {:#x} "
                                                     "does not fit in 32 bits",
                                                     i + 1, a.text, a.offset));
            // The address's base: ip (the probe site, at a uprobe), a register, or none.
            const std::string base = a.ip_relative ? std::string("rip") : a.reg;
            if (a.kind == UsdtArg::Kind::Memory && !a.index.empty()) {
                auto index = regIndex(a.index);
                if (!index)
                    return std::move(index).error();
                std::uint8_t b = kFetchAddrNoBase;
                if (!base.empty()) {
                    auto r = regIndex(base);
                    if (!r)
                        return std::move(r).error();
                    b = *r;
                }
                out.insns.push_back({static_cast<std::uint8_t>(FetchOpcode::LoadAddr),
                                     static_cast<std::uint8_t>(a.scale), 0, 0,
                                     fetchAddrOperand(b, *index)});
            } else if (base.empty()) {
                return makeError(EINVAL, fmt::format("USDT argument {} ('{}'): a memory "
                                                     "operand without a register",
                                                     i + 1, a.text));
            } else {
                auto r = regIndex(base);
                if (!r)
                    return std::move(r).error();
                out.insns.push_back({static_cast<std::uint8_t>(FetchOpcode::LoadReg), 8, 0, 0, *r});
            }
            if (a.kind == UsdtArg::Kind::Memory)
                out.insns.push_back({static_cast<std::uint8_t>(FetchOpcode::Deref), size,
                                     kFetchFlagUser, static_cast<std::int32_t>(a.offset), 0});
        }
        out.insns.push_back({static_cast<std::uint8_t>(FetchOpcode::StoreInt), size, 0, 0, 0});
        out.args.push_back(std::move(fa));
    }
    return out;
}

}  // namespace probectl
