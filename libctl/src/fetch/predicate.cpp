// Predicates: tokenizer, recursive-descent parser with type checks, postfix compiler,
// validator and the reference evaluator.
#include "probectl/predicate.hpp"

#include "core/comm_glob.hpp"
#include "core/never_returns.hpp"
#include "fetch/parse_for_spec.hpp"
#include "fetch/scanner.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <limits>
#include <optional>

#include "probectl/glob.hpp"

namespace probectl {

namespace {

constexpr std::size_t kMaxNesting = 16;

struct Token {
    enum class Kind { End, Ident, Special, Int, Str, Op, LParen, RParen, AndAnd, OrOr, Bang };
    Kind kind = Kind::End;
    std::size_t pos = 0;  // 0-based index into the input
    std::string_view text;
    std::uint64_t num = 0;  // Int magnitude
    bool negative = false;  // Int had a leading '-'
    std::string str;        // Str, unescaped
    PredicateCmp cmp = PredicateCmp::Eq;
};

bool hasGlobChar(std::string_view s) {
    return s.find_first_of("*?[") != std::string_view::npos;
}

class Parser : Scanner {
  public:
    Parser(std::string_view input, std::size_t begin, const std::vector<FetchArg>& args,
           const PredicateOptions& opts, std::string_view never_returns)
        : Scanner(input, begin), args_(args), opts_(opts), never_returns_(never_returns) {}

    Result<PredicateNodePtr, SpecError> run() {
        auto t = next();
        if (!t.ok())
            return std::move(t).error();
        if (tok_.kind == Token::Kind::End)
            return fail(tok_.pos, "empty filter: expected a test such as fd == 3");
        auto e = orExpr(0);
        if (!e.ok())
            return e;
        if (tok_.kind != Token::Kind::End)
            return fail(tok_.pos,
                        tok_.kind == Token::Kind::RParen
                            ? std::string("unbalanced ')'")
                            : fmt::format("unexpected '{}': expected && or ||", tok_.text));
        return e;
    }

  private:
    // Reads the next token into tok_.
    Result<void, SpecError> next() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t'))
            ++pos_;
        Token t;
        t.pos = pos_;
        if (pos_ >= s_.size()) {
            tok_ = t;
            return {};
        }
        const char c = s_[pos_];
        const char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
        auto two = [&](Token::Kind k) {
            t.kind = k;
            t.text = s_.substr(pos_, 2);
            pos_ += 2;
        };
        auto op = [&](PredicateCmp cmp, std::size_t len) {
            t.kind = Token::Kind::Op;
            t.cmp = cmp;
            t.text = s_.substr(pos_, len);
            pos_ += len;
        };
        if (c == '&' && n == '&') {
            two(Token::Kind::AndAnd);
        } else if (c == '|' && n == '|') {
            two(Token::Kind::OrOr);
        } else if (c == '=' && n == '=') {
            op(PredicateCmp::Eq, 2);
        } else if (c == '!' && n == '=') {
            op(PredicateCmp::Ne, 2);
        } else if (c == '!' && n == '~') {
            op(PredicateCmp::NotGlob, 2);
        } else if (c == '<' && n == '=') {
            op(PredicateCmp::Le, 2);
        } else if (c == '>' && n == '=') {
            op(PredicateCmp::Ge, 2);
        } else if (c == '<') {
            op(PredicateCmp::Lt, 1);
        } else if (c == '>') {
            op(PredicateCmp::Gt, 1);
        } else if (c == '~') {
            op(PredicateCmp::Glob, 1);
        } else if (c == '&') {
            op(PredicateCmp::Mask, 1);
        } else if (c == '!') {
            t.kind = Token::Kind::Bang;
            t.text = s_.substr(pos_++, 1);
        } else if (c == '(' || c == ')') {
            t.kind = c == '(' ? Token::Kind::LParen : Token::Kind::RParen;
            t.text = s_.substr(pos_++, 1);
        } else if (c == '=') {
            return fail(pos_, "'=' assigns; compare with '=='");
        } else if (c == '|') {
            return fail(pos_, "'|' is not an operator here; did you mean '||'?");
        } else if (c == '"') {
            auto r = stringLiteral(t);
            if (!r.ok())
                return r;
        } else if ((c >= '0' && c <= '9') || (c == '-' && n >= '0' && n <= '9')) {
            auto r = intLiteral(t);
            if (!r.ok())
                return r;
        } else if (isIdentStart(c) || (c == '$' && isIdentStart(n))) {
            t.kind = c == '$' ? Token::Kind::Special : Token::Kind::Ident;
            const std::size_t start = pos_++;
            while (pos_ < s_.size() && isIdentChar(s_[pos_]))
                ++pos_;
            // $retval:s32: a variable's type, as in fetch arguments
            if (t.kind == Token::Kind::Special && pos_ + 1 < s_.size() && s_[pos_] == ':' &&
                isIdentStart(s_[pos_ + 1])) {
                pos_ += 2;
                while (pos_ < s_.size() && isIdentChar(s_[pos_]))
                    ++pos_;
            }
            t.text = s_.substr(start, pos_ - start);
        } else {
            return fail(pos_, fmt::format("unexpected {} in the predicate", peekQuoted()));
        }
        tok_ = std::move(t);
        return {};
    }

    // A 64-bit integer: compared as the field's type, so both signs' whole range is taken.
    Result<void, SpecError> intLiteral(Token& t) {
        const std::size_t start = pos_;
        auto n = Scanner::number("integer", {UINT64_MAX, std::uint64_t{1} << 63});
        if (!n.ok())
            return std::move(n).error();
        t.kind = Token::Kind::Int;
        t.num = n->magnitude;
        t.negative = n->negative;
        t.text = s_.substr(start, pos_ - start);
        return {};
    }

    Result<void, SpecError> stringLiteral(Token& t) {
        const std::size_t start = pos_++;
        t.kind = Token::Kind::Str;
        while (true) {
            if (pos_ >= s_.size())
                return fail(start, "unterminated string: missing closing '\"'");
            const char c = s_[pos_];
            if (c == '"')
                break;
            if (c != '\\') {
                t.str += c;
                ++pos_;
                continue;
            }
            const std::size_t esc = pos_;
            if (++pos_ >= s_.size())
                return fail(esc, "unterminated string: missing closing '\"'");
            const char e = s_[pos_++];
            switch (e) {
                case '"':
                case '\\':
                    t.str += e;
                    break;
                case 'n':
                    t.str += '\n';
                    break;
                case 't':
                    t.str += '\t';
                    break;
                case 'x': {
                    const int h = pos_ < s_.size() ? hexDigit(s_[pos_]) : -1;
                    const int l = pos_ + 1 < s_.size() ? hexDigit(s_[pos_ + 1]) : -1;
                    if (h < 0 || l < 0)
                        return fail(esc, "\\x takes two hex digits");
                    const char byte = static_cast<char>(h * 16 + l);
                    if (byte == '\0')
                        return fail(esc, "a string cannot contain \\x00");
                    t.str += byte;
                    pos_ += 2;
                    break;
                }
                default:
                    return fail(esc, fmt::format("unknown escape '\\{}' (use \\\" \\\\ \\n \\t "
                                                 "\\xHH)",
                                                 e));
            }
        }
        ++pos_;
        t.text = s_.substr(start, pos_ - start);
        if (t.str.size() > kFilterMaxStringLen)
            return fail(start, fmt::format("string longer than {} bytes", kFilterMaxStringLen));
        return {};
    }

    Result<PredicateNodePtr, SpecError> orExpr(std::size_t depth) {
        auto lhs = andExpr(depth);
        if (!lhs.ok())
            return lhs;
        PredicateNodePtr node = std::move(*lhs);
        while (tok_.kind == Token::Kind::OrOr) {
            auto n = next();
            if (!n.ok())
                return std::move(n).error();
            auto rhs = andExpr(depth);
            if (!rhs.ok())
                return rhs;
            node = binary(PredicateNode::Kind::Or, node, std::move(*rhs));
        }
        return node;
    }

    Result<PredicateNodePtr, SpecError> andExpr(std::size_t depth) {
        auto lhs = unary(depth);
        if (!lhs.ok())
            return lhs;
        PredicateNodePtr node = std::move(*lhs);
        while (tok_.kind == Token::Kind::AndAnd) {
            auto n = next();
            if (!n.ok())
                return std::move(n).error();
            auto rhs = unary(depth);
            if (!rhs.ok())
                return rhs;
            node = binary(PredicateNode::Kind::And, node, std::move(*rhs));
        }
        return node;
    }

    static PredicateNodePtr binary(PredicateNode::Kind k, PredicateNodePtr l, PredicateNodePtr r) {
        PredicateNode n;
        n.kind = k;
        n.column = l->column;
        n.lhs = std::move(l);
        n.rhs = std::move(r);
        return std::make_shared<const PredicateNode>(std::move(n));
    }

    Result<PredicateNodePtr, SpecError> unary(std::size_t depth) {
        if (tok_.kind == Token::Kind::Bang || tok_.kind == Token::Kind::LParen) {
            if (depth + 1 > kMaxNesting)
                return fail(tok_.pos,
                            fmt::format("filter nests deeper than {} levels", kMaxNesting));
        }
        if (tok_.kind == Token::Kind::Bang) {
            const std::size_t at = tok_.pos;
            auto n = next();
            if (!n.ok())
                return std::move(n).error();
            auto inner = unary(depth + 1);
            if (!inner.ok())
                return inner;
            PredicateNode node;
            node.kind = PredicateNode::Kind::Not;
            node.column = at + 1;
            node.lhs = std::move(*inner);
            return std::make_shared<const PredicateNode>(std::move(node));
        }
        if (tok_.kind == Token::Kind::LParen) {
            const std::size_t open = tok_.pos;
            auto n = next();
            if (!n.ok())
                return std::move(n).error();
            auto inner = orExpr(depth + 1);
            if (!inner.ok())
                return inner;
            if (tok_.kind != Token::Kind::RParen)
                return fail(tok_.pos,
                            fmt::format("expected ')' to close the '(' at column {}", open + 1));
            auto m = next();
            if (!m.ok())
                return std::move(m).error();
            return inner;
        }
        return test();
    }

    bool isArgName(std::string_view name) const {
        for (const auto& a : args_)
            if (a.name == name)
                return true;
        return false;
    }

    bool isOperand(const Token& t) const {
        return t.kind == Token::Kind::Ident || t.kind == Token::Kind::Special ||
               t.kind == Token::Kind::Int || t.kind == Token::Kind::Str;
    }

    std::string describe(const Token& t) const {
        return t.kind == Token::Kind::End ? "the end of the predicate"
                                          : fmt::format("'{}'", t.text);
    }

    Result<PredicateNodePtr, SpecError> test() {
        if (!isOperand(tok_))
            return fail(tok_.pos, fmt::format("expected a field, a number or a string, got {}",
                                              describe(tok_)));
        Token left = tok_;
        auto n = next();
        if (!n.ok())
            return std::move(n).error();
        const bool left_is_field =
            left.kind == Token::Kind::Ident || left.kind == Token::Kind::Special;
        if (tok_.kind != Token::Kind::Op) {
            // A bare field: true when non-zero.
            if (!left_is_field)
                return fail(left.pos, fmt::format("a literal alone is not a test: compare it "
                                                  "with a field, e.g. fd == {}",
                                                  left.text));
            if (isOperand(tok_))
                return fail(tok_.pos, fmt::format("expected an operator (== != < <= > >= & ~ "
                                                  "!~) or && ||, got {}",
                                                  describe(tok_)));
            Token zero;
            zero.kind = Token::Kind::Int;
            zero.pos = left.pos;
            return build(left, PredicateCmp::Ne, zero, left.pos, false);
        }
        const Token op = tok_;
        auto m = next();
        if (!m.ok())
            return std::move(m).error();
        if (!isOperand(tok_))
            return fail(tok_.pos, fmt::format("expected a value after '{}', got {}", op.text,
                                              describe(tok_)));
        Token right = tok_;
        auto k = next();
        if (!k.ok())
            return std::move(k).error();
        const bool right_is_field =
            right.kind == Token::Kind::Ident || right.kind == Token::Kind::Special;
        if (left_is_field && right_is_field) {
            // `$comm == cat`: a bare word that names no fetch argument meant a string.
            for (const Token* t : {&right, &left})
                if (t->kind == Token::Kind::Ident && !isArgName(t->text))
                    return fail(t->pos, fmt::format("'{}' is no field: string literals need "
                                                    "double quotes, \"{}\" (inside the spec's "
                                                    "single quotes)",
                                                    t->text, t->text));
            return fail(right.pos,
                        "compare a field with a literal: two fields cannot be "
                        "compared in the kernel");
        }
        if (!left_is_field && !right_is_field)
            return fail(left.pos, "compare a field with a literal: neither side is a field");
        if (left_is_field)
            return build(left, op.cmp, right, op.pos, true);
        // LITERAL OP FIELD: mirror the comparison so the field is on the left.
        PredicateCmp mirrored = op.cmp;
        switch (op.cmp) {
            case PredicateCmp::Lt:
                mirrored = PredicateCmp::Gt;
                break;
            case PredicateCmp::Le:
                mirrored = PredicateCmp::Ge;
                break;
            case PredicateCmp::Gt:
                mirrored = PredicateCmp::Lt;
                break;
            case PredicateCmp::Ge:
                mirrored = PredicateCmp::Le;
                break;
            case PredicateCmp::Glob:
            case PredicateCmp::NotGlob:
            case PredicateCmp::Mask:
                return fail(op.pos, fmt::format("'{}' takes the field on its left", op.text));
            default:
                break;
        }
        return build(right, mirrored, left, op.pos, true, left.pos);
    }

    // Resolves the field token and checks the literal against its type.
    Result<PredicateNodePtr, SpecError> build(const Token& field, PredicateCmp cmp,
                                              const Token& lit, std::size_t op_pos,
                                              bool explicit_op,
                                              std::optional<std::size_t> column = std::nullopt) {
        PredicateNode node;
        node.kind = PredicateNode::Kind::Test;
        node.column = (column ? *column : field.pos) + 1;
        node.field_name = std::string(field.text);
        node.cmp = cmp;
        bool field_is_string = false;
        if (field.kind == Token::Kind::Special) {
            static constexpr std::array<std::pair<std::string_view, PredicateFieldKind>, 6>
                kSpecials{{
                    {"$pid", PredicateFieldKind::Pid},
                    {"$tid", PredicateFieldKind::Tid},
                    {"$uid", PredicateFieldKind::Uid},
                    {"$cpu", PredicateFieldKind::Cpu},
                    {"$comm", PredicateFieldKind::Comm},
                    {"$retval", PredicateFieldKind::Retval},
                }};
            const std::string_view whole = field.text;
            const std::string_view name_only = whole.substr(0, whole.find(':'));
            const std::string_view type_name =
                name_only.size() < whole.size() ? whole.substr(name_only.size() + 1) : "";
            bool found = false;
            for (const auto& [name, kind] : kSpecials)
                if (name == name_only) {
                    node.field = kind;
                    found = true;
                }
            if (!found)
                return fail(field.pos, fmt::format("unknown variable '{}' (filters know $pid "
                                                   "$tid $uid $cpu $comm, $retval in return "
                                                   "probes, and fetched names)",
                                                   name_only));
            if (node.field == PredicateFieldKind::Retval && !opts_.is_return)
                return fail(field.pos, !never_returns_.empty()
                                           ? detail::neverReturnsRetval(never_returns_)
                                           : std::string("$retval is only available in return "
                                                         "probes (kretprobe:, uretprobe:, "
                                                         "syscall:)"));
            field_is_string = node.field == PredicateFieldKind::Comm;
            node.width = field_is_string ? 0 : 4;
            if (node.field == PredicateFieldKind::Retval) {
                node.width = 8;
                node.is_signed = true;
            }
            if (!type_name.empty()) {
                // A function's C type is not known here: an int's -3 is 4294967293 in 64 bits.
                std::optional<FetchType> type;
                for (auto t : {FetchType::U8, FetchType::U16, FetchType::U32, FetchType::U64,
                               FetchType::S8, FetchType::S16, FetchType::S32, FetchType::S64,
                               FetchType::X8, FetchType::X16, FetchType::X32, FetchType::X64})
                    if (toString(t) == type_name)
                        type = t;
                if (node.field != PredicateFieldKind::Retval)
                    return fail(field.pos,
                                fmt::format("only $retval takes a type, not {}", name_only));
                if (!type)
                    return fail(field.pos + name_only.size() + 1,
                                fmt::format("$retval:{}: the type is one of u8 u16 u32 u64 s8 "
                                            "s16 s32 s64 x8 x16 x32 x64",
                                            type_name));
                node.width = fetchTypeSize(*type);
                node.is_signed = isSignedType(*type);
            }
        } else {
            std::size_t i = 0;
            for (; i < args_.size(); ++i)
                if (args_[i].name == field.text)
                    break;
            if (i == args_.size()) {
                std::string names;
                for (const auto& a : args_)
                    names += (names.empty() ? "" : ", ") + a.name;
                return fail(field.pos, fmt::format("unknown field '{}' ({})", field.text,
                                                   names.empty() ? "this probe fetches no arguments"
                                                                 : "fetched: " + names));
            }
            const FetchArg& a = args_[i];
            if (a.array_len != 0)
                return fail(field.pos, fmt::format("'{}' is an array: filters compare scalars "
                                                   "and strings",
                                                   field.text));
            node.field = PredicateFieldKind::Arg;
            node.arg_index = static_cast<std::uint16_t>(i);
            field_is_string = isStringType(a.type);
            node.width = fetchTypeSize(a.type);
            node.is_signed = isSignedType(a.type);
        }
        node.is_string = field_is_string;

        const bool lit_is_string = lit.kind == Token::Kind::Str;
        if (field_is_string) {
            if (cmp != PredicateCmp::Eq && cmp != PredicateCmp::Ne && cmp != PredicateCmp::Glob &&
                cmp != PredicateCmp::NotGlob)
                return fail(
                    explicit_op ? op_pos : field.pos,
                    fmt::format("strings compare with == != ~ !~, not '{}'", toString(cmp)));
            if (!lit_is_string)
                return fail(lit.pos, fmt::format("'{}' is a string: compare it with a \"quoted\" "
                                                 "string",
                                                 field.text));
            if (cmp == PredicateCmp::Eq && hasGlobChar(lit.str))
                node.cmp = PredicateCmp::Glob;
            if (cmp == PredicateCmp::Ne && hasGlobChar(lit.str))
                node.cmp = PredicateCmp::NotGlob;
            if ((node.cmp == PredicateCmp::Glob || node.cmp == PredicateCmp::NotGlob)) {
                const std::string why = globError(lit.str);
                if (!why.empty())
                    return fail(lit.pos, fmt::format("bad glob: {}", why));
            }
            if (node.field == PredicateFieldKind::Comm) {
                const std::string why = detail::commGlobNeverMatches(lit.str, "the $comm literal");
                if (!why.empty())
                    return fail(lit.pos, why);
            }
            node.text = lit.str;
            return std::make_shared<const PredicateNode>(std::move(node));
        }
        if (cmp == PredicateCmp::Glob || cmp == PredicateCmp::NotGlob)
            return fail(op_pos, "'~' and '!~' match strings; use == or != for numbers");
        if (lit_is_string)
            return fail(lit.pos,
                        fmt::format("'{}' is an integer: compare it with a number", field.text));
        auto r = fitLiteral(node, lit, cmp == PredicateCmp::Mask);
        if (!r.ok())
            return std::move(r).error();
        return std::make_shared<const PredicateNode>(std::move(node));
    }

    Result<void, SpecError> fitLiteral(PredicateNode& node, const Token& lit, bool mask) {
        const unsigned bits = node.width * 8u;
        const std::string type = node.field == PredicateFieldKind::Arg
                                     ? std::string(toString(args_[node.arg_index].type))
                                 : node.field == PredicateFieldKind::Retval
                                     ? fmt::format("{}{}", node.is_signed ? 's' : 'u', bits)
                                     : "u32";
        if (lit.negative) {
            if (!node.is_signed || mask)
                return fail(lit.pos, fmt::format("{} is negative but '{}' is {}{}", lit.text,
                                                 node.field_name, type,
                                                 mask ? " (a mask is unsigned)" : ""));
            const std::uint64_t min_mag = std::uint64_t{1} << (bits - 1);
            if (lit.num > min_mag)
                return fail(lit.pos, fmt::format("{} is out of range for {} '{}'", lit.text, type,
                                                 node.field_name));
            node.value = ~lit.num + 1;
            return {};
        }
        const std::uint64_t max = node.is_signed && !mask
                                      ? (std::uint64_t{1} << (bits - 1)) - 1
                                      : (bits == 64 ? std::numeric_limits<std::uint64_t>::max()
                                                    : (std::uint64_t{1} << bits) - 1);
        if (lit.num > max)
            return fail(lit.pos, fmt::format("{} is out of range for {} '{}' (max {})", lit.text,
                                             type, node.field_name, max));
        node.value = lit.num;
        return {};
    }

    const std::vector<FetchArg>& args_;
    PredicateOptions opts_;
    std::string_view never_returns_;  // detail::parsePredicateOf
    Token tok_;
};

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out + "\"";
}

struct Compiler {
    FilterProgram prog;
    std::size_t depth = 0;
    std::size_t max_depth = 0;

    Result<void> emit(const PredicateNode& n) {
        switch (n.kind) {
            case PredicateNode::Kind::Test: {
                FilterInsn in;
                in.op = static_cast<std::uint8_t>(PredicateOpcode::Test);
                in.cmp = static_cast<std::uint8_t>(n.cmp);
                in.field_kind = static_cast<std::uint8_t>(n.field);
                in.arg_index = n.arg_index;
                if (n.is_string) {
                    in.flags = kFilterFlagString;
                    if (prog.strings.size() == kFilterMaxStrings)
                        return makeError(EINVAL, fmt::format("filter has more than {} strings",
                                                             kFilterMaxStrings));
                    if (n.text.size() > kFilterMaxStringLen)
                        return makeError(EINVAL, "filter string too long");
                    in.value = prog.strings.size();
                    prog.strings.push_back(n.text);
                } else {
                    in.flags = n.is_signed ? kFilterFlagSigned : 0;
                    in.width = n.width;
                    in.value = n.value;
                }
                return push(in, +1);
            }
            case PredicateNode::Kind::Not: {
                auto r = emit(*n.lhs);
                if (!r.ok())
                    return r;
                FilterInsn in;
                in.op = static_cast<std::uint8_t>(PredicateOpcode::Not);
                return push(in, 0);
            }
            case PredicateNode::Kind::And:
            case PredicateNode::Kind::Or: {
                auto l = emit(*n.lhs);
                if (!l.ok())
                    return l;
                auto r = emit(*n.rhs);
                if (!r.ok())
                    return r;
                FilterInsn in;
                in.op = static_cast<std::uint8_t>(n.kind == PredicateNode::Kind::And
                                                      ? PredicateOpcode::And
                                                      : PredicateOpcode::Or);
                return push(in, -1);
            }
        }
        return makeError(EINVAL, "filter: unknown node");
    }

    Result<void> push(const FilterInsn& in, int delta) {
        if (prog.insns.size() == kFilterMaxInsns)
            return makeError(EINVAL, fmt::format("filter compiles to more than {} instructions",
                                                 kFilterMaxInsns));
        prog.insns.push_back(in);
        depth = static_cast<std::size_t>(static_cast<long>(depth) + delta);
        if (depth > kFilterMaxStack)
            return makeError(EINVAL, fmt::format("filter needs a stack deeper than {}: nest "
                                                 "fewer parentheses on the right of && and ||",
                                                 kFilterMaxStack));
        return {};
    }
};

std::int64_t signExtend(std::uint64_t v, unsigned width) {
    if (width >= 8)
        return static_cast<std::int64_t>(v);
    const unsigned shift = 64 - width * 8;
    return static_cast<std::int64_t>(v << shift) >> shift;
}

std::uint64_t truncate(std::uint64_t v, unsigned width) {
    return width >= 8 ? v : v & ((std::uint64_t{1} << (width * 8)) - 1);
}

template <class T>
bool compare(PredicateCmp c, T a, T b) {
    switch (c) {
        case PredicateCmp::Eq:
            return a == b;
        case PredicateCmp::Ne:
            return a != b;
        case PredicateCmp::Lt:
            return a < b;
        case PredicateCmp::Le:
            return a <= b;
        case PredicateCmp::Gt:
            return a > b;
        case PredicateCmp::Ge:
            return a >= b;
        default:
            return false;
    }
}

}  // namespace

std::string_view toString(PredicateCmp c) {
    switch (c) {
        case PredicateCmp::Eq:
            return "==";
        case PredicateCmp::Ne:
            return "!=";
        case PredicateCmp::Lt:
            return "<";
        case PredicateCmp::Le:
            return "<=";
        case PredicateCmp::Gt:
            return ">";
        case PredicateCmp::Ge:
            return ">=";
        case PredicateCmp::Glob:
            return "~";
        case PredicateCmp::NotGlob:
            return "!~";
        case PredicateCmp::Mask:
            return "&";
    }
    return "?";
}

std::string PredicateNode::str() const {
    switch (kind) {
        case Kind::Test:
            if (is_string)
                return fmt::format("({} {} {})", field_name, toString(cmp), quote(text));
            if (is_signed && cmp != PredicateCmp::Mask)
                return fmt::format("({} {} {})", field_name, toString(cmp),
                                   signExtend(value, width));
            return fmt::format("({} {} {:#x})", field_name, toString(cmp), value);
        case Kind::Not:
            return "!" + lhs->str();
        case Kind::And:
            return fmt::format("({} && {})", lhs->str(), rhs->str());
        case Kind::Or:
            return fmt::format("({} || {})", lhs->str(), rhs->str());
    }
    return "?";
}

Result<PredicateNodePtr, SpecError> parsePredicate(std::string_view input,
                                                   const std::vector<FetchArg>& args,
                                                   std::size_t begin) {
    return parsePredicate(input, args, begin, PredicateOptions{});
}

Result<PredicateNodePtr, SpecError> parsePredicate(std::string_view input,
                                                   const std::vector<FetchArg>& args,
                                                   std::size_t begin,
                                                   const PredicateOptions& opts) {
    return Parser(input, begin, args, opts, {}).run();
}

namespace detail {

Result<PredicateNodePtr, SpecError> parsePredicateOf(std::string_view input,
                                                     const std::vector<FetchArg>& args,
                                                     std::size_t begin,
                                                     const PredicateOptions& opts,
                                                     std::string_view never_returns) {
    return Parser(input, begin, args, opts, never_returns).run();
}

}  // namespace detail

Result<FilterProgram> compilePredicate(const PredicateNode& root) {
    Compiler c;
    auto r = c.emit(root);
    if (!r.ok())
        return r.error();
    return std::move(c.prog);
}

Result<std::string> encodeFilterStrings(const FilterProgram& prog) {
    std::string out;
    for (const auto& lit : prog.strings) {
        if (lit.find('\0') != std::string::npos)
            return makeError(EINVAL, fmt::format("filter string {} holds a NUL byte: the kernel "
                                                 "compares C strings",
                                                 quote(lit)));
        out += lit;
        out += '\0';
    }
    return out;
}

Result<void> validatePredicateProgram(const FilterProgram& prog,
                                      std::span<const bool> arg_is_string) {
    auto bad = [](std::size_t i, std::string what) {
        return makeError(EINVAL, fmt::format("filter insn {}: {}", i, what));
    };
    if (prog.insns.empty() || prog.insns.size() > kFilterMaxInsns)
        return makeError(EINVAL, fmt::format("filter has {} instructions (1..{})",
                                             prog.insns.size(), kFilterMaxInsns));
    if (prog.strings.size() > kFilterMaxStrings)
        return makeError(EINVAL, fmt::format("filter has {} strings (max {})", prog.strings.size(),
                                             kFilterMaxStrings));
    std::size_t depth = 0;
    for (std::size_t i = 0; i < prog.insns.size(); ++i) {
        const FilterInsn& in = prog.insns[i];
        switch (static_cast<PredicateOpcode>(in.op)) {
            case PredicateOpcode::Test: {
                if (in.cmp > static_cast<std::uint8_t>(PredicateCmp::Mask))
                    return bad(i, fmt::format("unknown comparison {}", in.cmp));
                if (in.field_kind > static_cast<std::uint8_t>(PredicateFieldKind::Retval))
                    return bad(i, fmt::format("unknown field kind {}", in.field_kind));
                if ((in.flags & ~(kFilterFlagSigned | kFilterFlagString)) != 0)
                    return bad(i, fmt::format("unknown flags {:#x}", in.flags));
                const auto kind = static_cast<PredicateFieldKind>(in.field_kind);
                if (kind == PredicateFieldKind::Arg && in.arg_index >= arg_is_string.size())
                    return bad(i, fmt::format("argument {} does not exist", in.arg_index));
                const bool is_string =
                    kind == PredicateFieldKind::Comm ||
                    (kind == PredicateFieldKind::Arg && arg_is_string[in.arg_index]);
                const bool wants_string = (in.flags & kFilterFlagString) != 0;
                if (is_string != wants_string)
                    return bad(i, is_string ? "integer comparison on a string field"
                                            : "string comparison on an integer field");
                const auto cmp = static_cast<PredicateCmp>(in.cmp);
                if (is_string) {
                    if (cmp != PredicateCmp::Eq && cmp != PredicateCmp::Ne &&
                        cmp != PredicateCmp::Glob && cmp != PredicateCmp::NotGlob)
                        return bad(i, "strings compare with == != ~ !~ only");
                    if (in.value >= prog.strings.size())
                        return bad(i, fmt::format("string {} does not exist", in.value));
                    if (prog.strings[in.value].size() > kFilterMaxStringLen)
                        return bad(i, "string too long");
                } else {
                    if (cmp == PredicateCmp::Glob || cmp == PredicateCmp::NotGlob)
                        return bad(i, "glob comparison on an integer");
                    if (in.width != 1 && in.width != 2 && in.width != 4 && in.width != 8)
                        return bad(i, fmt::format("width {} is not 1, 2, 4 or 8", in.width));
                }
                if (++depth > kFilterMaxStack)
                    return bad(i, fmt::format("stack deeper than {}", kFilterMaxStack));
                break;
            }
            case PredicateOpcode::And:
            case PredicateOpcode::Or:
                if (depth < 2)
                    return bad(i, "stack underflow");
                --depth;
                break;
            case PredicateOpcode::Not:
                if (depth < 1)
                    return bad(i, "stack underflow");
                break;
            default:
                return bad(i, fmt::format("unknown opcode {}", in.op));
        }
    }
    if (depth != 1)
        return makeError(EINVAL, fmt::format("filter leaves {} values, not 1", depth));
    return {};
}

bool evalPredicate(const FilterProgram& prog, const PredicateValues& v) {
    bool stack[kFilterMaxStack] = {};
    std::size_t sp = 0;
    for (const FilterInsn& in : prog.insns) {
        switch (static_cast<PredicateOpcode>(in.op)) {
            case PredicateOpcode::Test: {
                const auto kind = static_cast<PredicateFieldKind>(in.field_kind);
                const auto cmp = static_cast<PredicateCmp>(in.cmp);
                bool result = false;
                const bool faulted = kind == PredicateFieldKind::Arg &&
                                     in.arg_index < v.faulted.size() && v.faulted[in.arg_index];
                if (faulted) {
                    result = false;
                } else if (in.flags & kFilterFlagString) {
                    const std::string& s =
                        kind == PredicateFieldKind::Comm ? v.comm : v.strs.at(in.arg_index);
                    const std::string& lit = prog.strings.at(in.value);
                    if (cmp == PredicateCmp::Eq)
                        result = s == lit;
                    else if (cmp == PredicateCmp::Ne)
                        result = s != lit;
                    else if (cmp == PredicateCmp::Glob)
                        result = globMatch(lit, s);
                    else
                        result = !globMatch(lit, s);
                } else {
                    std::uint64_t raw = 0;
                    switch (kind) {
                        case PredicateFieldKind::Pid:
                            raw = v.pid;
                            break;
                        case PredicateFieldKind::Tid:
                            raw = v.tid;
                            break;
                        case PredicateFieldKind::Uid:
                            raw = v.uid;
                            break;
                        case PredicateFieldKind::Cpu:
                            raw = v.cpu;
                            break;
                        case PredicateFieldKind::Retval:
                            raw = v.retval;
                            break;
                        default:
                            raw = v.ints.at(in.arg_index);
                    }
                    raw = truncate(raw, in.width);
                    if (cmp == PredicateCmp::Mask)
                        result = (raw & in.value) != 0;
                    else if (in.flags & kFilterFlagSigned)
                        result =
                            compare(cmp, signExtend(raw, in.width), signExtend(in.value, in.width));
                    else
                        result = compare(cmp, raw, truncate(in.value, in.width));
                }
                stack[sp++] = result;
                break;
            }
            case PredicateOpcode::And:
                --sp;
                stack[sp - 1] = stack[sp - 1] && stack[sp];
                break;
            case PredicateOpcode::Or:
                --sp;
                stack[sp - 1] = stack[sp - 1] || stack[sp];
                break;
            case PredicateOpcode::Not:
                stack[sp - 1] = !stack[sp - 1];
                break;
        }
    }
    return sp == 1 && stack[0];
}

}  // namespace probectl
