// Predicates over a probe's fetched values (a spec's `if` clause), evaluated in the kernel
// before a record is reserved.
//
// Grammar (C precedence: ! binds tightest, then comparisons, then &&, then ||):
//
//   expr     := and ( '||' and )*
//   and      := unary ( '&&' unary )*
//   unary    := '!' unary | '(' expr ')' | test
//   test     := FIELD OP LITERAL | LITERAL OP FIELD | FIELD '&' INT | FIELD
//   OP       := == != < <= > >=   (integers)     == != ~ !~   (strings)
//   FIELD    := a fetch argument NAME, or $pid $tid $uid $cpu $comm (no fetch needed), or
//               $retval (s64) in return probes: kretprobe, uretprobe, syscall
//   LITERAL  := INT (decimal, 0x hex, optionally negative) | "string" (escapes \" \\ \n \t
//               \xHH)
//
// Strings: `==`/`!=` compare exactly unless the literal holds a glob character (* ? [),
// then they glob-match as ftrace's event filters do; `~`/`!~` always glob-match. Globs are
// shell globs (* ? [abc] [a-z] [!x]) as globMatch() in kernel_symbols.hpp and the kernel's
// glob_match(). `FIELD & INT` is true when any bit of INT is set; a bare integer FIELD is
// true when non-zero.
//
// Type rules: strings compare with strings, integers with integers; an integer literal
// must fit the field's type (u8 takes 0..255, s8 -128..127, $pid..$cpu are u32); ordering
// comparisons on s* fields are signed. Arrays cannot be filtered on.
//
// In the kernel a comparison that reads a faulted field is false, whatever the operator
// (so `!(x == 1)` keeps a faulted x: write predicates positively).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/fetch_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/spec_error.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

enum class PredicateCmp : std::uint8_t { Eq = 0, Ne, Lt, Le, Gt, Ge, Glob, NotGlob, Mask };
// "==", "!=", "<", "<=", ">", ">=", "~", "!~", "&"
std::string_view toString(PredicateCmp c);

// Where a compared value comes from.
enum class PredicateFieldKind : std::uint8_t {
    Arg = 0,  // a fetched argument, by 0-based index in the probe's fetch list
    Pid,      // task tgid
    Tid,      // task pid
    Uid,      // current uid
    Cpu,      // processor id
    Comm,     // current->comm (string)
    Retval,   // the return value (s64), return probes only
};

struct PredicateNode;
using PredicateNodePtr = std::shared_ptr<const PredicateNode>;

struct PredicateNode {
    enum class Kind : std::uint8_t { Test, And, Or, Not };
    Kind kind = Kind::Test;
    // Test
    PredicateFieldKind field = PredicateFieldKind::Arg;
    std::uint16_t arg_index = 0;  // Arg: index into the fetch list
    std::string field_name;       // as written: "fd", "$comm"
    PredicateCmp cmp = PredicateCmp::Ne;
    bool is_string = false;
    bool is_signed = false;   // integer comparison is signed
    std::uint8_t width = 8;   // integer field width in bytes
    std::uint64_t value = 0;  // integer literal (two's complement), or mask
    std::string text;         // string literal
    // And / Or: lhs, rhs; Not: lhs
    PredicateNodePtr lhs, rhs;
    std::size_t column = 0;  // 1-based column of the node's first character

    // Canonical text, fully parenthesised: "((fd == 3) && ($comm ~ \"ba*\"))".
    std::string str() const;
};

// Parses and type-checks the predicate found in `input` from byte `begin` on, against the
// probe's fetch arguments (names and types). Errors (SpecError, 1-based column into
// `input`): syntax (unexpected token, unbalanced parenthesis, unterminated string, bad
// escape), unknown field (the message lists the fetched names), type mismatch, literal out
// of the field's range, ordering or '&' on a string, comparison of two fields or two
// literals, array field, nesting deeper than 16 parentheses/negations.
Result<PredicateNodePtr, SpecError> parsePredicate(std::string_view input,
                                                   const std::vector<FetchArg>& args,
                                                   std::size_t begin = 0);

struct PredicateOptions {
    // The probe fires at a return (kretprobe, uretprobe, a syscall that returns): $retval.
    bool is_return = false;
};
// parsePredicate for a probe described by `opts`; the overload above has no $retval.
Result<PredicateNodePtr, SpecError> parsePredicate(std::string_view input,
                                                   const std::vector<FetchArg>& args,
                                                   std::size_t begin, const PredicateOptions& opts);

// ---- compiled form ----------------------------------------------------------------------
//
// A postfix program over a stack of booleans, evaluated left to right without recursion:
//   Test     push the result of one comparison
//   And, Or  pop two, push the result
//   Not      replace the top with its negation
// A well-formed program leaves exactly one value, the verdict (true: keep the hit).

enum class PredicateOpcode : std::uint8_t { Test = 1, And = 2, Or = 3, Not = 4 };

inline constexpr std::uint8_t kFilterFlagSigned = 1u << 0;  // Test: signed integer compare
inline constexpr std::uint8_t kFilterFlagString = 1u << 1;  // Test: string compare

// 16 bytes, no padding: u8 op, u8 cmp, u8 field kind, u8 flags, u16 arg index, u16 width,
// u64 value (integer literal or mask; for strings an index into FilterProgram::strings).
struct FilterInsn {
    std::uint8_t op = 0;          // PredicateOpcode
    std::uint8_t cmp = 0;         // PredicateCmp (Test)
    std::uint8_t field_kind = 0;  // PredicateFieldKind (Test)
    std::uint8_t flags = 0;       // kFilterFlag*
    std::uint16_t arg_index = 0;  // Test on PredicateFieldKind::Arg
    std::uint16_t width = 0;      // integer width in bytes (1, 2, 4, 8); 0 for strings
    std::uint64_t value = 0;

    friend bool operator==(const FilterInsn&, const FilterInsn&) = default;
};
// The wire form is struct probectl_filter_insn: same layout, same numbering, same limits
// (checked in src/core/uapi_checks.cpp).
inline constexpr std::size_t kFilterMaxInsns = 32;
inline constexpr std::size_t kFilterMaxStack = 8;
inline constexpr std::size_t kFilterMaxStrings = 8;
inline constexpr std::size_t kFilterMaxStringLen = 255;  // no NUL

struct FilterProgram {
    std::vector<FilterInsn> insns;
    std::vector<std::string> strings;  // string literals, referenced by Test.value
};

// Compiles a parsed predicate. Errors (EINVAL, message names the limit): more than
// kFilterMaxInsns instructions, a stack deeper than kFilterMaxStack, more than
// kFilterMaxStrings string literals or one longer than kFilterMaxStringLen.
Result<FilterProgram> compilePredicate(const PredicateNode& root);

// PROBECTL_A_PROBE_FILTER_STRINGS: the literals, each followed by its NUL, back to back.
// A literal holding a NUL byte cannot travel (EINVAL naming it).
Result<std::string> encodeFilterStrings(const FilterProgram& prog);

// Kernel-side rules, here so both sides agree: length 1..kFilterMaxInsns, known opcodes,
// comparisons and field kinds; Test flags consistent with the field (strings only for
// string fields: Comm, or an Arg the kernel knows is a string: `arg_is_string[i]`); string
// index in range; integer widths 1/2/4/8; Arg index < arg_is_string.size(); the stack
// never underflows, never exceeds kFilterMaxStack, and ends with exactly one value.
Result<void> validatePredicateProgram(const FilterProgram& prog,
                                      std::span<const bool> arg_is_string);

// Evaluates a program on host-side values: the reference semantics the kernel interpreter
// must match, used by tests and by the ptrace backend. `ints[i]`/`strs[i]` hold argument i
// (raw bytes zero-extended into u64; the interpreter sign-extends by width when signed);
// `faulted[i]` marks a failed fetch. Specials come from `pid`.. `comm`. `prog` must have
// passed validatePredicateProgram (the evaluator does no bounds checks of its own).
struct PredicateValues {
    std::vector<std::uint64_t> ints;
    std::vector<std::string> strs;
    std::vector<bool> faulted;
    std::uint32_t pid = 0, tid = 0, uid = 0, cpu = 0;
    std::string comm;
    std::uint64_t retval = 0;
};
bool evalPredicate(const FilterProgram& prog, const PredicateValues& v);

}  // namespace probectl
#pragma GCC visibility pop
