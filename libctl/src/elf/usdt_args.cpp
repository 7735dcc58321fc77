// USDT argument specs ("-4@%edi", "8@-8(%rbp)", "4@$5", "8@(%rbx,%rax,8)", "-4@glob(%rip)"):
// GNU as AT&T operands behind the N@ size prefix that <sys/sdt.h> emits
// (STAP_PROBE_ASM_OPERANDS, "%n[...]@%[...]").
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <optional>

#include "probectl/usdt.hpp"

namespace probectl {

namespace {

struct RegName {
    std::string_view name;
    std::string_view reg64;
    unsigned bits;
};

// Every x86-64 general-purpose register name GNU as accepts, by width.
constexpr RegName kRegs[] = {
    {"rax", "rax", 64}, {"eax", "rax", 32},  {"ax", "rax", 16},   {"al", "rax", 8},
    {"rbx", "rbx", 64}, {"ebx", "rbx", 32},  {"bx", "rbx", 16},   {"bl", "rbx", 8},
    {"rcx", "rcx", 64}, {"ecx", "rcx", 32},  {"cx", "rcx", 16},   {"cl", "rcx", 8},
    {"rdx", "rdx", 64}, {"edx", "rdx", 32},  {"dx", "rdx", 16},   {"dl", "rdx", 8},
    {"rsi", "rsi", 64}, {"esi", "rsi", 32},  {"si", "rsi", 16},   {"sil", "rsi", 8},
    {"rdi", "rdi", 64}, {"edi", "rdi", 32},  {"di", "rdi", 16},   {"dil", "rdi", 8},
    {"rbp", "rbp", 64}, {"ebp", "rbp", 32},  {"bp", "rbp", 16},   {"bpl", "rbp", 8},
    {"rsp", "rsp", 64}, {"esp", "rsp", 32},  {"sp", "rsp", 16},   {"spl", "rsp", 8},
    {"r8", "r8", 64},   {"r8d", "r8", 32},   {"r8w", "r8", 16},   {"r8b", "r8", 8},
    {"r9", "r9", 64},   {"r9d", "r9", 32},   {"r9w", "r9", 16},   {"r9b", "r9", 8},
    {"r10", "r10", 64}, {"r10d", "r10", 32}, {"r10w", "r10", 16}, {"r10b", "r10", 8},
    {"r11", "r11", 64}, {"r11d", "r11", 32}, {"r11w", "r11", 16}, {"r11b", "r11", 8},
    {"r12", "r12", 64}, {"r12d", "r12", 32}, {"r12w", "r12", 16}, {"r12b", "r12", 8},
    {"r13", "r13", 64}, {"r13d", "r13", 32}, {"r13w", "r13", 16}, {"r13b", "r13", 8},
    {"r14", "r14", 64}, {"r14d", "r14", 32}, {"r14w", "r14", 16}, {"r14b", "r14", 8},
    {"r15", "r15", 64}, {"r15d", "r15", 32}, {"r15w", "r15", 16}, {"r15b", "r15", 8},
    {"rip", "rip", 64},
};

const RegName* findReg(std::string_view name) {
    for (const auto& r : kRegs)
        if (r.name == name)
            return &r;
    return nullptr;
}

Error bad(std::string_view text, std::string_view why) {
    return makeError(EINVAL, fmt::format("USDT argument '{}': {}", text, why));
}

// A signed decimal or 0x-hex integer filling all of `s`.
std::optional<std::int64_t> integer(std::string_view s) {
    bool neg = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    return neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
}

// "%reg" -> the register, or an error naming it.
Result<const RegName*> reg(std::string_view text, std::string_view operand) {
    if (!operand.starts_with('%'))
        return bad(text, fmt::format("expected a register (%name), got '{}'", operand));
    const std::string_view name = operand.substr(1);
    if (name == "ah" || name == "bh" || name == "ch" || name == "dh")
        return bad(text, fmt::format("high-byte register %{} is not supported", name));
    if (const RegName* r = findReg(name))
        return r;
    return bad(text, fmt::format("unknown x86-64 register %{}", name));
}

bool symbolStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '$';
}

bool symbolChar(char c) {
    return symbolStart(c) || (c >= '0' && c <= '9');
}

// An assembler symbol filling all of `s` ("glob", "counter.0", "_ZN2ns1vE").
bool isSymbol(std::string_view s) {
    if (s.empty() || !symbolStart(s[0]))
        return false;
    for (char c : s)
        if (!symbolChar(c))
            return false;
    return true;
}

struct Displacement {
    std::int64_t number = 0;
    std::string symbol;
};

// DISP of DISP(...): NUMBER, SYMBOL, SYMBOL+NUMBER, SYMBOL-NUMBER or NUMBER+SYMBOL (gcc
// writes "pair+4" in non-PIE code and "4+pair" in PIE code).
std::optional<Displacement> displacement(std::string_view s) {
    if (auto v = integer(s))
        return Displacement{*v, {}};
    if (isSymbol(s))
        return Displacement{0, std::string(s)};
    // SYMBOL+-NUMBER: the first + or - after the symbol's first character
    if (auto at = s.find_first_of("+-", 1);
        at != std::string_view::npos && isSymbol(s.substr(0, at))) {
        if (auto v = integer(s.substr(at)))
            return Displacement{*v, std::string(s.substr(0, at))};
    }
    // NUMBER+SYMBOL
    if (auto at = s.rfind('+');
        at != std::string_view::npos && at > 0 && isSymbol(s.substr(at + 1))) {
        if (auto v = integer(s.substr(0, at)))
            return Displacement{*v, std::string(s.substr(at + 1))};
    }
    return std::nullopt;
}

std::string signedHex(std::int64_t v) {
    return v < 0 ? fmt::format("-{:#x}", 0 - static_cast<std::uint64_t>(v))
                 : fmt::format("{:#x}", v);
}

// (BASE), (BASE,INDEX), (BASE,INDEX,SCALE), (,INDEX) or (,INDEX,SCALE) into `a`.
Result<void> memoryRegisters(std::string_view text, std::string_view inside, UsdtArg& a) {
    std::vector<std::string_view> parts;
    for (std::size_t from = 0;;) {
        const auto comma = inside.find(',', from);
        parts.push_back(
            inside.substr(from, comma == std::string_view::npos ? comma : comma - from));
        if (comma == std::string_view::npos)
            break;
        from = comma + 1;
    }
    if (parts.size() > 3)
        return bad(text, fmt::format("'({})' has more than BASE,INDEX,SCALE", inside));
    if (!parts[0].empty()) {
        auto r = reg(text, parts[0]);
        if (!r)
            return std::move(r).error();
        if ((*r)->bits != 64)
            return bad(text, fmt::format("base register {} is not a 64-bit register", parts[0]));
        a.reg = std::string((*r)->reg64);
    } else if (parts.size() == 1) {
        return bad(text, "'()' names no register");
    }
    if (parts.size() == 1)
        return {};
    auto r = reg(text, parts[1]);
    if (!r)
        return std::move(r).error();
    if ((*r)->bits != 64)
        return bad(text, fmt::format("index register {} is not a 64-bit register", parts[1]));
    if ((*r)->reg64 == "rsp" || (*r)->reg64 == "rip")
        return bad(text, fmt::format("{} cannot be an index register", parts[1]));
    if (a.reg == "rip")
        return bad(text, "%rip cannot be a base with an index register");
    a.index = std::string((*r)->reg64);
    a.scale = 1;
    if (parts.size() == 3) {
        auto n = integer(parts[2]);
        if (!n || (*n != 1 && *n != 2 && *n != 4 && *n != 8))
            return bad(text, fmt::format("scale '{}' is not 1, 2, 4 or 8", parts[2]));
        a.scale = static_cast<unsigned>(*n);
    }
    return {};
}

}  // namespace

std::string UsdtArg::str() const {
    const std::string type = fmt::format("{}{}", is_signed ? 's' : 'u', size * 8);
    switch (kind) {
        case Kind::Register:
            return fmt::format("{} %{}", type, reg);
        case Kind::Memory: {
            std::string disp = symbol;
            if (!symbol.empty() && symbol_addend != 0)
                disp +=
                    symbol_addend < 0 ? signedHex(symbol_addend) : "+" + signedHex(symbol_addend);
            else if (symbol.empty() && (offset != 0 || index.empty()))
                disp = signedHex(offset);
            const std::string base = reg.empty() ? "" : "%" + reg;
            return index.empty() ? fmt::format("{} {}({})", type, disp, base)
                                 : fmt::format("{} {}({},%{},{})", type, disp, base, index, scale);
        }
        case Kind::Constant:
            return fmt::format("{} ${}", type, value);
    }
    return type;
}

Result<UsdtArg> parseUsdtArg(std::string_view text) {
    UsdtArg a;
    a.text = std::string(text);
    std::string_view op = text;
    if (auto at = op.find('@'); at != std::string_view::npos) {
        auto n = integer(op.substr(0, at));
        if (!n || (*n != 1 && *n != 2 && *n != 4 && *n != 8 && *n != -1 && *n != -2 && *n != -4 &&
                   *n != -8))
            return bad(text, fmt::format("size '{}' is not 1, 2, 4 or 8 (negative: signed)",
                                         op.substr(0, at)));
        a.is_signed = *n < 0;
        a.size = static_cast<unsigned>(*n < 0 ? -*n : *n);
        op.remove_prefix(at + 1);
    }
    if (op.empty())
        return bad(text, "no operand");
    if (const auto colon = op.find(':'); colon != std::string_view::npos && op[0] == '%')
        return bad(text, fmt::format("segment register {} (thread-local storage) is not "
                                     "supported",
                                     op.substr(0, colon + 1)));
    if (op[0] == '%') {
        auto r = reg(text, op);
        if (!r)
            return std::move(r).error();
        a.kind = UsdtArg::Kind::Register;
        a.reg = std::string((*r)->reg64);
        a.reg_bits = (*r)->bits;
        return a;
    }
    if (op[0] == '$') {
        auto v = integer(op.substr(1));
        if (!v)
            return bad(text, fmt::format("constant '{}' is not a number (symbolic constants are "
                                         "not supported)",
                                         op));
        a.kind = UsdtArg::Kind::Constant;
        a.value = *v;
        return a;
    }
    const auto open = op.find('(');
    if (open == std::string_view::npos || !op.ends_with(')'))
        return bad(text, "expected %REG, $CONSTANT or DISPLACEMENT(%BASE,%INDEX,SCALE)");
    const std::string_view disp = op.substr(0, open);
    if (!disp.empty()) {
        auto d = displacement(disp);
        if (!d)
            return bad(text, fmt::format("displacement '{}' is not NUMBER, SYMBOL, SYMBOL+NUMBER "
                                         "or NUMBER+SYMBOL",
                                         disp));
        a.offset = d->number;
        a.symbol = std::move(d->symbol);
        if (!a.symbol.empty())
            a.symbol_addend = d->number;
    }
    a.kind = UsdtArg::Kind::Memory;
    if (auto r = memoryRegisters(text, op.substr(open + 1, op.size() - open - 2), a); !r)
        return std::move(r).error();
    return a;
}

Result<std::vector<UsdtArg>> parseUsdtArgs(std::string_view args) {
    std::vector<UsdtArg> out;
    std::size_t i = 0;
    while (i < args.size()) {
        if (args[i] == ' ' || args[i] == '\t') {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < args.size() && args[end] != ' ' && args[end] != '\t')
            ++end;
        auto a = parseUsdtArg(args.substr(i, end - i));
        if (!a) {
            Error e = std::move(a).error();
            e.message = fmt::format("argument {}: {}", out.size() + 1, e.message);
            return e;
        }
        out.push_back(std::move(*a));
        i = end;
    }
    return out;
}

}  // namespace probectl
