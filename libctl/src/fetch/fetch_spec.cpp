// Fetch-argument parser: a hand-written scanner so every error knows its column.
#include "probectl/fetch_spec.hpp"

#include "core/never_returns.hpp"
#include "fetch/parse_for_spec.hpp"
#include "fetch/scanner.hpp"
#include "output/json_text.hpp"
#include "probectl/fetch_program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <limits>
#include <optional>
#include <utility>

namespace probectl {

namespace {

struct TypeName {
    std::string_view name;
    FetchType type;
};
constexpr std::array<TypeName, 14> kTypes{{
    {"u8", FetchType::U8},
    {"u16", FetchType::U16},
    {"u32", FetchType::U32},
    {"u64", FetchType::U64},
    {"s8", FetchType::S8},
    {"s16", FetchType::S16},
    {"s32", FetchType::S32},
    {"s64", FetchType::S64},
    {"x8", FetchType::X8},
    {"x16", FetchType::X16},
    {"x32", FetchType::X32},
    {"x64", FetchType::X64},
    {"string", FetchType::String},
    {"ustring", FetchType::Ustring},
}};

constexpr std::array<std::string_view, kX86RegCount> kRegNames{
    "r15", "r14", "r13", "r12", "bp",      "bx", "r11", "r10",   "r9", "r8", "ax",
    "cx",  "dx",  "si",  "di",  "orig_ax", "ip", "cs",  "flags", "sp", "ss",
};

struct RegAlias {
    std::string_view name;
    X86Reg reg;
    bool reg32;
};
// Assembler spellings accepted besides the kernel's pt_regs names.
constexpr std::array<RegAlias, 28> kRegAliases{{
    {"rax", X86Reg::Ax, false},       {"rbx", X86Reg::Bx, false},
    {"rcx", X86Reg::Cx, false},       {"rdx", X86Reg::Dx, false},
    {"rsi", X86Reg::Si, false},       {"rdi", X86Reg::Di, false},
    {"rbp", X86Reg::Bp, false},       {"rsp", X86Reg::Sp, false},
    {"rip", X86Reg::Ip, false},       {"eax", X86Reg::Ax, true},
    {"ebx", X86Reg::Bx, true},        {"ecx", X86Reg::Cx, true},
    {"edx", X86Reg::Dx, true},        {"esi", X86Reg::Si, true},
    {"edi", X86Reg::Di, true},        {"ebp", X86Reg::Bp, true},
    {"esp", X86Reg::Sp, true},        {"r8d", X86Reg::R8, true},
    {"r9d", X86Reg::R9, true},        {"r10d", X86Reg::R10, true},
    {"r11d", X86Reg::R11, true},      {"r12d", X86Reg::R12, true},
    {"r13d", X86Reg::R13, true},      {"r14d", X86Reg::R14, true},
    {"r15d", X86Reg::R15, true},      {"eflags", X86Reg::Flags, false},
    {"rflags", X86Reg::Flags, false}, {"orig_rax", X86Reg::OrigAx, false},
}};

const char* const kSourceHint =
    "expected a fetch source: $argN, $retval, $comm, $pid, $tid, $uid, $cpu, $stackN, $kstack, "
    "$ustack, "
    "%REG, "
    "+OFFS(SOURCE), +uOFFS(SOURCE) or \\IMM";

bool isSpace(char c) {
    return c == ' ' || c == '\t';
}

std::optional<std::pair<X86Reg, bool>> lookupRegister(std::string_view name) {
    for (std::size_t i = 0; i < kRegNames.size(); ++i)
        if (kRegNames[i] == name)
            return std::pair{static_cast<X86Reg>(i), false};
    for (const auto& a : kRegAliases)
        if (a.name == name)
            return std::pair{a.reg, a.reg32};
    return std::nullopt;
}

// Parses the argument occupying input[begin, end).
class ArgParser : Scanner {
  public:
    ArgParser(std::string_view input, std::size_t begin, std::size_t end, const FetchOptions& o,
              std::string_view never_returns = {})
        : Scanner(input, begin, end), opts_(o), never_returns_(never_returns) {}

    Result<FetchArg, SpecError> run(std::size_t position) {
        FetchArg arg;
        arg.column = pos_ + 1;
        const std::size_t name_start = pos_;
        std::size_t i = pos_;
        while (i < end_ && isIdentChar(s_[i]))
            ++i;
        if (i < end_ && s_[i] == '=') {
            if (i == name_start || !isIdentStart(s_[name_start]))
                return fail(name_start, "an argument NAME starts with a letter or '_'");
            arg.name = std::string(s_.substr(name_start, i - name_start));
            pos_ = i + 1;
            if (atEnd())
                return fail(pos_, fmt::format("expected a fetch source after '{}='", arg.name));
        } else {
            arg.name = fmt::format("arg{}", position);
            arg.auto_named = true;
        }

        auto src = source(0);
        if (!src.ok())
            return std::move(src).error();
        arg.source = std::move(*src);

        std::size_t type_col = 0;
        if (!atEnd() && peek() == ':') {
            ++pos_;
            type_col = pos_;
            const std::size_t start = pos_;
            while (!atEnd() && isIdentChar(peek()))
                ++pos_;
            const std::string_view t = s_.substr(start, pos_ - start);
            if (t.empty())
                return fail(start,
                            "expected a TYPE after ':' (u8..u64, s8..s64, x8..x64, "
                            "string, ustring)");
            bool found = false;
            for (const auto& tn : kTypes)
                if (tn.name == t) {
                    arg.type = tn.type;
                    found = true;
                }
            if (!found)
                return fail(start, fmt::format("unknown type '{}' (expected u8..u64, s8..s64, "
                                               "x8..x64, string or ustring)",
                                               t));
            arg.type_given = true;
            if (!atEnd() && peek() == '[') {
                ++pos_;
                auto n = number(1, kFetchMaxArray, "array length");
                if (!n.ok())
                    return std::move(n).error();
                if (atEnd() || peek() != ']')
                    return fail(pos_, "expected ']' after the array length");
                ++pos_;
                arg.array_len = static_cast<std::uint32_t>(*n);
            }
        }
        if (!atEnd())
            return fail(pos_, fmt::format("unexpected {} after the fetch source", peekQuoted()));

        if (auto err = check(arg, type_col))
            return std::move(*err);
        return arg;
    }

  private:
    // A number at pos_ in min..max, never negative.
    Result<std::uint64_t, SpecError> number(std::uint64_t min, std::uint64_t max,
                                            std::string_view what) {
        auto n = Scanner::number(what, {.max = max, .min = min});
        if (!n.ok())
            return std::move(n).error();
        return n->magnitude;
    }

    Result<FetchSourcePtr, SpecError> source(std::size_t depth) {
        if (atEnd())
            return fail(pos_, kSourceHint);
        FetchSource node;
        node.column = pos_ + 1;
        const char c = peek();
        if (c == '$')
            return special(std::move(node));
        if (c == '%') {
            if (opts_.tracepoint)
                return fail(pos_, "a tracepoint has no probed registers: use $argN or args.NAME");
            ++pos_;
            const std::size_t start = pos_;
            while (!atEnd() && isIdentChar(peek()))
                ++pos_;
            const std::string_view name = s_.substr(start, pos_ - start);
            auto reg = lookupRegister(name);
            if (!reg)
                return fail(start, fmt::format("unknown x86-64 register '%{}'", name));
            node.kind = FetchSource::Kind::Reg;
            node.index = static_cast<std::uint32_t>(reg->first);
            node.reg32 = reg->second;
            return std::make_shared<const FetchSource>(std::move(node));
        }
        if (s_.substr(pos_, end_ - pos_).starts_with("args.")) {
            if (!opts_.tracepoint)
                return fail(pos_,
                            "args.NAME names a tracepoint parameter: tracepoint: probes "
                            "only (here: $argN)");
            return field(std::move(node));
        }
        if (c == '\\') {
            ++pos_;
            auto v = Scanner::number("immediate", {UINT64_MAX, std::uint64_t{1} << 63});
            if (!v.ok())
                return std::move(v).error();
            node.kind = FetchSource::Kind::Imm;
            node.imm = v->bits();
            return std::make_shared<const FetchSource>(std::move(node));
        }
        if (c == '+' || c == '-') {
            const std::size_t sign_at = pos_;
            ++pos_;
            if (!atEnd() && peek() == 'u') {
                node.user = true;
                ++pos_;
            }
            // A signed 32-bit displacement, its sign written before the 'u'.
            auto v = Scanner::number("offset", {INT32_MAX, std::uint64_t{1} << 31}, sign_at);
            if (!v.ok())
                return std::move(v).error();
            node.offset = static_cast<std::int64_t>(v->bits());
            if (atEnd() || peek() != '(')
                return fail(pos_, "expected '(' after the offset: +OFFS(SOURCE)");
            if (depth + 1 > kFetchMaxDepth)
                return fail(node.column - 1,
                            fmt::format("dereferences nest deeper than {} levels", kFetchMaxDepth));
            const std::size_t open = pos_;
            ++pos_;
            auto inner = source(depth + 1);
            if (!inner.ok())
                return std::move(inner).error();
            if ((*inner)->kind == FetchSource::Kind::Comm)
                return fail((*inner)->column - 1, "$comm cannot be dereferenced");
            if (atEnd() || peek() != ')')
                return fail(pos_,
                            fmt::format("expected ')' to close the '(' at column {}", open + 1));
            ++pos_;
            node.kind = FetchSource::Kind::Deref;
            node.inner = std::move(*inner);
            return std::make_shared<const FetchSource>(std::move(node));
        }
        return fail(pos_, kSourceHint);
    }

    // args.NAME[->FIELD]..., pos_ at "args.".
    Result<FetchSourcePtr, SpecError> field(FetchSource node) {
        pos_ += 5;
        for (;;) {
            const std::size_t start = pos_;
            if (atEnd() || !isIdentStart(peek()))
                return fail(pos_, node.path.empty() ? "expected a parameter name after 'args.'"
                                                    : "expected a member name after '->'");
            while (!atEnd() && isIdentChar(peek()))
                ++pos_;
            node.path.emplace_back(s_.substr(start, pos_ - start));
            if (s_.substr(pos_, end_ - pos_).starts_with("->")) {
                pos_ += 2;
                continue;
            }
            if (!atEnd() && peek() == '.')
                return fail(pos_, "members are reached with '->' (args.NAME->FIELD)");
            break;
        }
        node.kind = FetchSource::Kind::Field;
        return std::make_shared<const FetchSource>(std::move(node));
    }

    Result<FetchSourcePtr, SpecError> special(FetchSource node) {
        const std::size_t dollar = pos_;
        ++pos_;
        const std::size_t start = pos_;
        while (!atEnd() && (peek() >= 'a' && peek() <= 'z'))
            ++pos_;
        const std::string_view word = s_.substr(start, pos_ - start);
        using K = FetchSource::Kind;
        if (word == "kstack" || word == "ustack") {
            const bool kernel = word == "kstack";
            node.kind = kernel ? K::KStack : K::UStack;
            if (!atEnd() && peek() >= '0' && peek() <= '9') {
                auto n =
                    number(1, kStackMaxDepth, kernel ? "kernel stack depth" : "user stack depth");
                if (!n.ok())
                    return std::move(n).error();
                node.index = static_cast<std::uint32_t>(*n);
            }
            return std::make_shared<const FetchSource>(std::move(node));
        }
        if (word == "arg" || word == "stack") {
            const bool is_arg = word == "arg";
            if (!is_arg && opts_.tracepoint)
                return fail(dollar, "a tracepoint has no probed stack: use $argN or args.NAME");
            if (atEnd() || peek() < '0' || peek() > '9') {
                if (!is_arg) {  // kprobe_events' "$stack": the stack address
                    node.kind = K::Reg;
                    node.index = static_cast<std::uint32_t>(X86Reg::Sp);
                    return std::make_shared<const FetchSource>(std::move(node));
                }
                return fail(pos_, "expected the argument number after $arg (1..6)");
            }
            // $arg0 is a slip worth its own words; $arg00 and up get the range.
            if (is_arg && peek() == '0' && (pos_ + 1 >= end_ || !isIdentChar(s_[pos_ + 1])))
                return fail(pos_,
                            "$argN counts from 1, as in kprobe_events: $arg1 is the first "
                            "argument");
            auto n = is_arg ? number(1, kFetchMaxArgN, "argument number")
                            : number(0, kFetchMaxStackN, "stack slot");
            if (!n.ok())
                return std::move(n).error();
            if (is_arg && !opts_.at_function_entry)
                return fail(dollar, opts_.is_return
                                        ? "$argN is not available in a return probe: the "
                                          "argument registers are gone at return"
                                        : "$argN is only available at a function entry (offset "
                                          "0); use %REG or $stackN");
            node.kind = is_arg ? K::Arg : K::Stack;
            node.index = static_cast<std::uint32_t>(*n);
            return std::make_shared<const FetchSource>(std::move(node));
        }
        static constexpr std::array<std::pair<std::string_view, K>, 6> kWords{{
            {"retval", K::Retval},
            {"comm", K::Comm},
            {"pid", K::Pid},
            {"tid", K::Tid},
            {"uid", K::Uid},
            {"cpu", K::Cpu},
        }};
        for (const auto& [w, k] : kWords) {
            if (w != word)
                continue;
            if (!atEnd() && isIdentChar(peek()))
                break;
            if (k == K::Retval && !opts_.is_return)
                return fail(dollar, !never_returns_.empty()
                                        ? detail::neverReturnsRetval(never_returns_)
                                        : std::string("$retval is only available in return "
                                                      "probes (kretprobe:, uretprobe:, "
                                                      "syscall:)"));
            node.kind = k;
            return std::make_shared<const FetchSource>(std::move(node));
        }
        while (!atEnd() && isIdentChar(peek()))
            ++pos_;
        return fail(dollar, fmt::format("unknown variable '{}' ({})",
                                        s_.substr(dollar, pos_ - dollar), kSourceHint));
    }

    std::optional<SpecError> check(FetchArg& arg, std::size_t type_col) const {
        using K = FetchSource::Kind;
        const FetchSource& src = *arg.source;
        const std::size_t tcol = type_col > 0 ? type_col : src.column - 1;
        if (src.kind == K::Comm) {
            if (arg.type_given && arg.type != FetchType::String)
                return fail(tcol, "$comm is always a string: drop the type or write :string");
            if (arg.array_len != 0)
                return fail(tcol, "$comm cannot be an array");
            arg.type = FetchType::String;
            return std::nullopt;
        }
        if (src.kind == K::KStack || src.kind == K::UStack) {
            const char* name = src.kind == K::KStack ? "$kstack" : "$ustack";
            if (arg.type_given && arg.type != FetchType::U32)
                return fail(tcol,
                            fmt::format("{} is a stack id: drop the type or write :u32", name));
            if (arg.array_len != 0)
                return fail(tcol, fmt::format("{} cannot be an array", name));
            arg.type = FetchType::U32;
            return std::nullopt;
        }
        if (!arg.type_given) {
            if (src.kind == K::Pid || src.kind == K::Tid || src.kind == K::Uid ||
                src.kind == K::Cpu)
                arg.type = FetchType::U32;
            else if (src.kind == K::Reg && src.reg32)
                arg.type = FetchType::X32;
            else if (src.kind == K::Retval && opts_.signed_retval)
                arg.type = FetchType::S64;
            else
                arg.type = FetchType::X64;
        }
        if (isStringType(arg.type)) {
            if (arg.array_len != 0)
                return fail(tcol, "arrays of strings are not supported");
            const bool pointer_sized = src.kind == K::Deref || src.kind == K::Arg ||
                                       src.kind == K::Field || src.kind == K::Retval ||
                                       src.kind == K::Stack || (src.kind == K::Reg && !src.reg32);
            if (!pointer_sized)
                return fail(tcol, fmt::format("type {} needs an address: use a dereference "
                                              "(+0(SOURCE)) or a pointer-sized source",
                                              toString(arg.type)));
        }
        if (arg.array_len != 0 && src.kind != K::Deref)
            return fail(tcol,
                        "an array is read from memory: its source must be a dereference, "
                        "e.g. +0($arg1):u8[16]");
        return std::nullopt;
    }

    const FetchOptions& opts_;
    std::string_view never_returns_;  // detail::parseFetchArgsOf
};

}  // namespace

std::string_view toString(FetchType t) {
    for (const auto& tn : kTypes)
        if (tn.type == t)
            return tn.name;
    return "?";
}

std::uint8_t fetchTypeSize(FetchType t) {
    switch (t) {
        case FetchType::U8:
        case FetchType::S8:
        case FetchType::X8:
            return 1;
        case FetchType::U16:
        case FetchType::S16:
        case FetchType::X16:
            return 2;
        case FetchType::U32:
        case FetchType::S32:
        case FetchType::X32:
            return 4;
        case FetchType::U64:
        case FetchType::S64:
        case FetchType::X64:
            return 8;
        case FetchType::String:
        case FetchType::Ustring:
            return 0;
    }
    return 0;
}

bool isStringType(FetchType t) {
    return t == FetchType::String || t == FetchType::Ustring;
}
bool isSignedType(FetchType t) {
    return t == FetchType::S8 || t == FetchType::S16 || t == FetchType::S32 || t == FetchType::S64;
}
bool isHexType(FetchType t) {
    return t == FetchType::X8 || t == FetchType::X16 || t == FetchType::X32 || t == FetchType::X64;
}

std::string_view toString(X86Reg r) {
    const auto i = static_cast<std::size_t>(r);
    return i < kRegNames.size() ? kRegNames[i] : "?";
}

std::string FetchSource::str() const {
    switch (kind) {
        case Kind::Arg:
            return fmt::format("$arg{}", index);
        case Kind::Retval:
            return "$retval";
        case Kind::Comm:
            return "$comm";
        case Kind::Pid:
            return "$pid";
        case Kind::Tid:
            return "$tid";
        case Kind::Uid:
            return "$uid";
        case Kind::Cpu:
            return "$cpu";
        case Kind::Reg: {
            if (!reg32)
                return fmt::format("%{}", toString(static_cast<X86Reg>(index)));
            for (const auto& a : kRegAliases)
                if (a.reg32 && a.reg == static_cast<X86Reg>(index))
                    return fmt::format("%{}", a.name);
            return "%?";
        }
        case Kind::Stack:
            return fmt::format("$stack{}", index);
        case Kind::KStack:
            return index ? fmt::format("$kstack{}", index) : std::string("$kstack");
        case Kind::UStack:
            return index ? fmt::format("$ustack{}", index) : std::string("$ustack");
        case Kind::UStackSnapshot:
            return fmt::format("<ustack snapshot {}>", index ? index : kUstackSnapshotDefault);
        case Kind::Exec:
            return index ? fmt::format("<execve argv[{}]>", index - 1)
                         : std::string("<execve path>");
        case Kind::Deref: {
            const char* sign = offset < 0 ? "-" : "+";
            const std::uint64_t mag = offset < 0 ? static_cast<std::uint64_t>(-offset)
                                                 : static_cast<std::uint64_t>(offset);
            return fmt::format("{}{}{}({})", sign, user ? "u" : "",
                               mag < 10 ? fmt::format("{}", mag) : fmt::format("{:#x}", mag),
                               inner ? inner->str() : "?");
        }
        case Kind::Imm:
            return fmt::format("\\{:#x}", imm);
        case Kind::Field:
            return fmt::format("args.{}", fmt::join(path, "->"));
    }
    return "?";
}

std::size_t FetchSource::depth() const {
    return kind == Kind::Deref && inner ? 1 + inner->depth() : 0;
}

std::string FetchArg::str() const {
    std::string s = fmt::format("{}={}:{}", name, source ? source->str() : "?", toString(type));
    if (array_len != 0)
        s += fmt::format("[{}]", array_len);
    return s;
}

bool FetchArg::readsUserMemory() const {
    if (type == FetchType::Ustring)
        return true;
    for (const FetchSource* s = source.get(); s; s = s->inner.get())
        if (s->kind == FetchSource::Kind::Deref && s->user)
            return true;
    return false;
}

namespace {

// JSON output gives a string that is not valid UTF-8 a sibling NAME_bytes with its exact bytes
// (output/json_text.hpp): an argument of that name beside it would make one object hold the
// key twice, and readers keep only one of the two.
std::optional<std::string> bytesFieldClash(const std::vector<FetchArg>& args, const FetchArg& arg) {
    // `other` takes the name of string `str`'s bytes field.
    auto takes = [](const FetchArg& str, const FetchArg& other) {
        return isStringType(str.type) && other.name == str.name + std::string(json::kBytesSuffix);
    };
    for (const auto& prev : args) {
        const bool prev_is_str = takes(prev, arg);
        if (!prev_is_str && !takes(arg, prev))
            continue;
        const FetchArg& other = prev_is_str ? arg : prev;
        return fmt::format(
            "argument name '{}' clashes with the JSON field '{}' that carries the bytes of "
            "string '{}' when they are not UTF-8; rename one of them",
            other.name, other.name, prev_is_str ? prev.name : arg.name);
    }
    return std::nullopt;
}

}  // namespace

Result<std::vector<FetchArg>, SpecError> parseFetchArgs(std::string_view input, std::size_t begin,
                                                        const FetchOptions& opts) {
    return detail::parseFetchArgsOf(input, begin, opts, {});
}

Result<std::vector<FetchArg>, SpecError> detail::parseFetchArgsOf(std::string_view input,
                                                                  std::size_t begin,
                                                                  const FetchOptions& opts,
                                                                  std::string_view never_returns) {
    std::vector<FetchArg> args;
    std::size_t i = begin;
    while (true) {
        while (i < input.size() && isSpace(input[i]))
            ++i;
        if (i >= input.size())
            break;
        std::size_t end = i;
        while (end < input.size() && !isSpace(input[end]))
            ++end;
        if (args.size() == kFetchMaxArgs)
            return SpecError{fmt::format("too many fetch arguments (max {})", kFetchMaxArgs), i + 1,
                             std::string(input)};
        auto arg = ArgParser(input, i, end, opts, never_returns).run(args.size() + 1);
        if (!arg.ok())
            return std::move(arg).error();
        for (const auto& prev : args)
            if (prev.name == arg->name)
                return SpecError{fmt::format("duplicate argument name '{}' (first at column {})",
                                             arg->name, prev.column),
                                 arg->column, std::string(input)};
        if (auto clash = bytesFieldClash(args, *arg))
            return SpecError{*clash, arg->column, std::string(input)};
        args.push_back(std::move(*arg));
        i = end;
    }
    return args;
}

Result<FetchArg, SpecError> parseFetchArg(std::string_view text, std::size_t position,
                                          const FetchOptions& opts) {
    if (text.empty())
        return SpecError{kSourceHint, 1, std::string(text)};
    for (std::size_t i = 0; i < text.size(); ++i)
        if (isSpace(text[i]))
            return SpecError{"unexpected space inside a fetch argument", i + 1, std::string(text)};
    return ArgParser(text, 0, text.size(), opts).run(position);
}

}  // namespace probectl
