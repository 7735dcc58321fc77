// Probe spec parser: a hand-written scanner so every error knows its column.
#include "probectl/probe_spec.hpp"
#include "probectl/predicate.hpp"
#include "probectl/syscall_probe.hpp"

#include "fetch/parse_for_spec.hpp"
#include "fetch/scanner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>

namespace probectl {

std::string_view toString(UserAddrKind kind) {
    switch (kind) {
        case UserAddrKind::None:
            return "";
        case UserAddrKind::FileOffset:
            return "file offset";
        case UserAddrKind::ElfAddress:
            return "ELF address";
        case UserAddrKind::ProcessAddress:
            return "process address";
    }
    return "";
}

namespace {

bool isUserSymbolChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '$' || c == '@';
}

// A field as the grammar reads it back: bare when `bare_ok`, else in the quote it lacks.
std::string quoteField(const std::string& v, bool bare_ok) {
    if (bare_ok && !v.empty())
        return v;
    const char q = v.find('\'') == std::string::npos ? '\'' : '"';
    return q + v + q;
}

std::string userStr(const ProbeSpec& p) {
    const bool path_bare = p.path.find_first_of(":'\" \t") == std::string::npos;
    std::string s = fmt::format("{}:{}:", toString(p.kind), quoteField(p.path, path_bare));
    if (p.kind == SpecKind::Usdt) {
        if (!p.provider.empty())
            s += p.provider + ':';
        return s + p.usdt_name;
    }
    if (p.has_addr) {
        const char* mark = "";
        if (p.user_addr == UserAddrKind::ProcessAddress)
            mark = "va=";
        else if (p.user_addr == UserAddrKind::ElfAddress)
            mark = "elf=";
        else if (p.user_addr_marked)
            mark = "off=";
        return s + fmt::format("{}{:#x}", mark, p.addr);
    }
    bool sym_bare =
        !p.symbol.empty() && !(p.symbol[0] >= '0' && p.symbol[0] <= '9') && p.symbol[0] != '@';
    for (char c : p.symbol)
        sym_bare = sym_bare && isUserSymbolChar(c);
    s += quoteField(p.symbol, sym_bare);
    if (p.offset != 0)
        s += fmt::format("+{:#x}", p.offset);
    return s;
}

}  // namespace

std::string ProbeSpec::str() const {
    std::string s = locationStr();
    for (const auto& a : fetch_args)
        s += ' ' + a.str();
    if (!predicate.empty())
        s += " if " + predicate;
    return s;
}

std::string ProbeSpec::locationStr() const {
    if (isUserSpace(kind))
        return userStr(*this);
    std::string s{toString(kind)};
    s += ':';
    if (kind == SpecKind::Tracepoint)
        return s + subsystem + ':' + symbol;
    if (has_addr)
        s += fmt::format("{:#x}", addr);
    else
        s += symbol;
    if (offset != 0)
        s += fmt::format("+{:#x}", offset);
    return s;
}

std::string SpecError::render() const {
    // `column` counts bytes; a terminal shows a UTF-8 character's bytes as one column, so
    // the caret and the number count characters (each byte but a continuation byte).
    const std::size_t bytes = std::min(column > 0 ? column - 1 : 0, input.size());
    std::size_t shown = column > input.size() + 1 ? column - 1 - input.size() : 0;
    for (std::size_t i = 0; i < bytes; i++)
        shown += (static_cast<unsigned char>(input[i]) & 0xc0) != 0x80;
    // The caret line lines up with the echoed input because both carry the same indent.
    std::string out = fmt::format("error: {} (column {})\n", message, shown + 1);
    out += "  " + input + "\n";
    out += "  " + std::string(shown, ' ') + "^";
    return out;
}

Error toError(const SpecError& e) {
    Error out = makeError(EINVAL, e.render());
    out.usage = true;
    return out;
}

namespace {

bool isSymbolStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}
bool isSymbolChar(char c) {
    return isSymbolStart(c) || (c >= '0' && c <= '9') || c == '$';
}
bool isGlobChar(char c) {
    return c == '*' || c == '?' || c == '[';
}
// A syscall: spec of exit or exit_group: its name (for the refusal of $retval), else "".
std::string neverReturningSyscall(const ProbeSpec& spec) {
    return spec.kind == SpecKind::Syscall && syscallNeverReturns(spec.symbol) ? spec.symbol
                                                                              : std::string();
}
// parsePredicate for `spec`: $retval at its return, and refused for exit and exit_group in
// words of their own.
Result<PredicateNodePtr, SpecError> parseSpecPredicate(std::string_view input,
                                                       const std::vector<FetchArg>& args,
                                                       const ProbeSpec& spec) {
    return detail::parsePredicateOf(input, args, spec.predicate_begin,
                                    PredicateOptions{firesAtReturn(spec)},
                                    neverReturningSyscall(spec));
}
class Parser : Scanner {
  public:
    explicit Parser(std::string_view text) : Scanner(text) {}

    Result<ProbeSpec, SpecError> run() {
        ProbeSpec spec;
        spec.text = std::string(s_);

        const std::size_t colon = s_.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            // Only blanks is what "$SPEC " leaves with SPEC unset: as empty as "".
            if (s_.find_first_not_of(" \t\n") == std::string_view::npos)
                return fail(0, fmt::format("empty probe spec{} (expected TYPE:LOCATION, TYPE one "
                                           "of {})",
                                           s_.empty() ? "" : " (only blanks)", kindNames()));
            return fail(0,
                        "expected TYPE:LOCATION, e.g. kprobe:do_sys_openat2 or "
                        "syscall:openat");
        }
        const std::string_view type = s_.substr(0, colon);
        const KindInfo* info = findKind(type);
        if (!info)
            return fail(0, fmt::format("unknown probe type '{}' (expected {})", type, kindNames()));
        spec.kind = info->kind;
        pos_ = colon + 1;
        if (info->family == KindFamily::Tracepoint || info->family == KindFamily::UserElf) {
            auto r =
                info->family == KindFamily::Tracepoint ? parseTracepoint(spec) : parseUser(spec);
            if (!r.ok())
                return r.error();
            if (auto t = trailing(spec); !t.ok())
                return t.error();
            return spec;
        }
        const std::string_view kind = toString(spec.kind);

        if (atEnd())
            return fail(pos_, fmt::format("expected a {} after '{}:'",
                                          spec.kind == SpecKind::Syscall ? "syscall name"
                                                                         : "symbol or 0xADDRESS",
                                          kind));

        if (atHexPrefix()) {
            if (spec.kind == SpecKind::Syscall)
                return fail(pos_, "syscall: takes a syscall name, not an address (use kprobe:)");
            const std::size_t start = pos_;
            auto v = number(std::numeric_limits<std::uint64_t>::max(), "address");
            if (!v.ok())
                return std::move(v).error();
            if (*v == 0)
                return fail(start, "address 0 cannot be probed");
            spec.addr = *v;
            spec.has_addr = true;
        } else if (isSymbolStart(peek()) || isGlobChar(peek())) {
            const std::size_t start = pos_;
            if (auto g = name(isSymbolChar); !g.ok())
                return std::move(g).error();
            spec.symbol = std::string(s_.substr(start, pos_ - start));
            if (spec.kind == SpecKind::Syscall && spec.symbol.starts_with("sys_"))
                return fail(start, fmt::format("syscall: takes the bare syscall name: syscall:{}",
                                               spec.symbol.substr(4)));
        } else {
            return fail(pos_, fmt::format("expected a {} after '{}:', got {}",
                                          spec.kind == SpecKind::Syscall ? "syscall name"
                                                                         : "symbol or 0xADDRESS",
                                          kind, peekQuoted()));
        }

        if (!atEnd() && peek() == '+') {
            if (isReturn(spec.kind))
                return fail(pos_, fmt::format("{}: probes the function's return; it takes no "
                                              "+OFFSET",
                                              kind));
            if (hasGlob(spec))
                return fail(pos_, "a glob takes no +OFFSET");
            if (spec.kind == SpecKind::Syscall)
                return fail(pos_, "syscall: takes no +OFFSET (use kprobe:SYMBOL+OFFSET)");
            if (spec.has_addr)
                return fail(pos_, "an address takes no +OFFSET: add it to the address");
            ++pos_;
            if (atEnd())
                return fail(pos_, "expected an offset after '+' (decimal or 0x hex)");
            auto v = number(std::numeric_limits<std::uint32_t>::max(), "offset");
            if (!v.ok())
                return std::move(v).error();
            spec.offset = static_cast<std::uint32_t>(*v);
        }

        if (auto r = trailing(spec); !r.ok())
            return r.error();
        return spec;
    }

  private:
    // After a complete location: fetch arguments, or nothing.
    Result<void, SpecError> trailing(ProbeSpec& spec) const {
        if (atEnd())
            return {};
        const char c = peek();
        if (c != ' ' && c != '\t')
            return fail(pos_, fmt::format("unexpected {} after the location", peekQuoted()));
        std::size_t i = pos_;
        while (i < s_.size() && (s_[i] == ' ' || s_[i] == '\t'))
            ++i;
        if (i == s_.size())
            return {};
        // The predicate starts after a word `if`; fetch arguments hold no spaces.
        std::size_t if_at = std::string_view::npos;
        for (std::size_t t = i; t < s_.size();) {
            std::size_t e = t;
            while (e < s_.size() && s_[e] != ' ' && s_[e] != '\t')
                ++e;
            if (s_.substr(t, e - t) == "if") {
                if_at = t;
                break;
            }
            while (e < s_.size() && (s_[e] == ' ' || s_[e] == '\t'))
                ++e;
            t = e;
        }
        if (if_at != std::string_view::npos) {
            std::size_t f = if_at + 2;
            while (f < s_.size() && (s_[f] == ' ' || s_[f] == '\t'))
                ++f;
            if (f == s_.size())
                return fail(if_at, "expected a predicate after 'if' (e.g. if fd == 3)");
            if (f == if_at + 2)
                return fail(f, "expected a space after 'if'");
            spec.predicate = std::string(s_.substr(f));
            spec.predicate_begin = f;
        }
        const std::string_view args_text = s_.substr(0, if_at);
        if (args_text.find_first_not_of(" \t", i) == std::string_view::npos) {
            // only a predicate: type-check it now, except usdt (arguments come from its note)
            // and tracepoints (arguments and types come from BTF when the probe is added)
            if (!spec.predicate.empty() && kindInfo(spec.kind).predicate_at_parse)
                if (auto r = parseSpecPredicate(s_, {}, spec); !r)
                    return std::move(r).error();
            return {};
        }
        if (!kindInfo(spec.kind).fetch_args)
            return fail(i,
                        "usdt probes take no fetch arguments: they record their own "
                        "(arg1..argN, from the probe's note)");
        FetchOptions opts;
        const KindInfo& info = kindInfo(spec.kind);
        opts.tracepoint = info.family == KindFamily::Tracepoint;
        opts.is_return = firesAtReturn(spec);
        opts.signed_retval = info.family == KindFamily::Syscall;
        opts.at_function_entry = opts.is_return || info.family == KindFamily::Syscall ||
                                 (spec.offset == 0 && spec.user_addr == UserAddrKind::None &&
                                  !(spec.has_addr && !isUserSpace(spec.kind)));
        auto args = detail::parseFetchArgsOf(args_text, pos_, opts, neverReturningSyscall(spec));
        if (!args.ok()) {
            SpecError e = std::move(args).error();
            e.input = std::string(s_);  // the whole spec, predicate included
            return e;
        }
        spec.fetch_args = std::move(*args);
        if (!spec.predicate.empty() && info.predicate_at_parse)
            if (auto r = parseSpecPredicate(s_, spec.fetch_args, spec); !r)
                return std::move(r).error();
        return {};
    }

    // SUBSYS ':' EVENT, pos_ just after "tracepoint:". Both are C identifiers, as tracefs
    // directory and tracepoint names are; SUBSYS may be `*` (not checked).
    Result<void, SpecError> parseTracepoint(ProbeSpec& spec) {
        auto ident = [&](std::string_view what) -> Result<std::string, SpecError> {
            const std::size_t start = pos_;
            while (!atEnd() && (isSymbolChar(peek()) && peek() != '$' && peek() != '.'))
                ++pos_;
            if (pos_ == start)
                return fail(pos_,
                            fmt::format("expected the tracepoint's {} ([A-Za-z0-9_]){}", what,
                                        atEnd() ? "" : fmt::format(", got {}", peekQuoted())));
            return std::string(s_.substr(start, pos_ - start));
        };
        if (!atEnd() && peek() == '*') {
            ++pos_;
            spec.subsystem = "*";
        } else {
            auto sub = ident("SUBSYS (e.g. sched)");
            if (!sub.ok())
                return std::move(sub).error();
            spec.subsystem = std::move(*sub);
        }
        if (atEnd() || peek() != ':')
            return fail(pos_,
                        "expected ':' and the EVENT after SUBSYS: tracepoint:SUBSYS:EVENT "
                        "(e.g. tracepoint:sched:sched_process_fork)");
        ++pos_;
        const std::size_t ev_start = pos_;
        if (auto g = name([](char c) { return isSymbolChar(c) && c != '$' && c != '.'; }); !g.ok())
            return std::move(g).error();
        if (pos_ == ev_start)
            return fail(pos_, fmt::format("expected the tracepoint's EVENT name ([A-Za-z0-9_]){}",
                                          atEnd() ? "" : fmt::format(", got {}", peekQuoted())));
        spec.symbol = std::string(s_.substr(ev_start, pos_ - ev_start));
        if (!atEnd() && peek() != ' ' && peek() != '\t')
            return fail(pos_, fmt::format("unexpected {} in the tracepoint name", peekQuoted()));
        return {};
    }

    // A quoted field at pos_ ('...' or "..."): its text, pos_ after the closing quote.
    Result<std::string, SpecError> quoted(std::string_view what) {
        const char q = peek();
        const std::size_t open = pos_;
        const std::size_t close = s_.find(q, open + 1);
        if (close == std::string_view::npos)
            return fail(open, fmt::format("unterminated {} quote in {} (no closing {})",
                                          q == '\'' ? "single" : "double", what, q));
        if (close == open + 1)
            return fail(open, fmt::format("empty {}", what));
        pos_ = close + 1;
        return std::string(s_.substr(open + 1, close - open - 1));
    }

    bool atQuote() const { return !atEnd() && (peek() == '\'' || peek() == '"'); }

    // Expects ':' at pos_ after `after`, then a non-empty rest.
    Result<void, SpecError> colonThen(std::string_view after, std::string_view expected) {
        if (atEnd())
            return fail(pos_, fmt::format("expected ':' and {} after {}", expected, after));
        if (peek() != ':')
            return fail(pos_, fmt::format("expected ':' after {}, got {}", after, peekQuoted()));
        ++pos_;
        if (atEnd())
            return fail(pos_, fmt::format("expected {} after ':'", expected));
        return {};
    }

    // PATH ':' ( location | [PROVIDER ':'] NAME ), pos_ just after "uprobe:" etc.
    Result<void, SpecError> parseUser(ProbeSpec& spec) {
        const std::string_view kind = toString(spec.kind);
        if (atEnd())
            return fail(pos_,
                        fmt::format("expected PATH after '{}:' (a file path or a library name "
                                    "such as libc)",
                                    kind));
        if (atQuote()) {
            auto q = quoted("PATH");
            if (!q.ok())
                return std::move(q).error();
            spec.path = std::move(*q);
        } else {
            const std::size_t start = pos_;
            while (!atEnd() && peek() != ':') {
                if (peek() == ' ' || peek() == '\t')
                    return fail(pos_, "unexpected space in PATH (quote a path that has one)");
                ++pos_;
            }
            if (pos_ == start)
                return fail(start, fmt::format("empty PATH after '{}:'", kind));
            spec.path = std::string(s_.substr(start, pos_ - start));
        }
        if (spec.kind == SpecKind::Usdt)
            return parseUsdt(spec);
        auto c = colonThen("PATH", "a symbol, 0xFILEOFFSET, off=N, elf=N or va=N");
        if (!c.ok())
            return c;
        return parseUserLocation(spec);
    }

    Result<void, SpecError> parseUsdt(ProbeSpec& spec) {
        auto c = colonThen("PATH", "PROVIDER:NAME or NAME");
        if (!c.ok())
            return c;
        auto ident = [&](std::string_view what) -> Result<std::string, SpecError> {
            const std::size_t start = pos_;
            while (!atEnd() && (isSymbolChar(peek()) && peek() != '$'))
                ++pos_;
            if (pos_ == start)
                return fail(pos_, fmt::format("expected a USDT {} ([A-Za-z0-9_.]), got {}", what,
                                              peekQuoted()));
            return std::string(s_.substr(start, pos_ - start));
        };
        auto first = ident("provider or name");
        if (!first.ok())
            return std::move(first).error();
        if (!atEnd() && peek() == ':') {
            ++pos_;
            if (atEnd())
                return fail(pos_, "expected the probe NAME after PROVIDER:");
            auto name = ident("probe name");
            if (!name.ok())
                return std::move(name).error();
            spec.provider = std::move(*first);
            spec.usdt_name = std::move(*name);
        } else {
            spec.usdt_name = std::move(*first);
        }
        return {};
    }

    Result<void, SpecError> parseUserLocation(ProbeSpec& spec) {
        const std::size_t start = pos_;
        // off=, elf=, va=: explicit address kinds. '=' never occurs in a symbol, so no name
        // is shadowed by these markers.
        struct Marker {
            std::string_view text;
            UserAddrKind kind;
        };
        for (const Marker m :
             {Marker{"off=", UserAddrKind::FileOffset}, Marker{"elf=", UserAddrKind::ElfAddress},
              Marker{"va=", UserAddrKind::ProcessAddress}}) {
            if (s_.substr(pos_).starts_with(m.text)) {
                pos_ += m.text.size();
                if (atEnd())
                    return fail(pos_, fmt::format("expected a number after '{}'", m.text));
                return userNumber(spec, m.kind, true);
            }
        }
        if (atHexPrefix())
            return userNumber(spec, UserAddrKind::FileOffset, false);
        if (atQuote()) {
            auto q = quoted("symbol");
            if (!q.ok())
                return std::move(q).error();
            spec.symbol = std::move(*q);
        } else {
            if (!isSymbolStart(peek()) && peek() != '$' && !isGlobChar(peek()))
                return fail(pos_, fmt::format("expected a symbol, 0xFILEOFFSET, off=N, elf=N or "
                                              "va=N, got {}",
                                              peekQuoted()));
            if (auto g = name(isUserSymbolChar); !g.ok())
                return std::move(g).error();
            if (!atEnd() && peek() == '/') {
                // PATH held a ':' and ended there ("uprobe:/d:c/app:f": PATH "/d", symbol "c").
                const std::size_t path_at = s_.find(':') + 1;
                const std::size_t end = std::min(s_.find_first_of(" \t", pos_), s_.size());
                const std::string_view loc = s_.substr(path_at, end - path_at);
                const std::size_t last = loc.rfind(':');
                return fail(pos_, fmt::format("a PATH that holds ':' must be quoted: "
                                              "\"{}:'{}':{}\"",
                                              toString(spec.kind), loc.substr(0, last),
                                              loc.substr(last + 1)));
            }
            if (!atEnd() && (peek() == ':' || peek() == '(' || peek() == '<'))
                // The outer quotes keep the shell from taking the inner ones.
                return fail(pos_, fmt::format("'{}' in a symbol: quote C++ names, e.g. "
                                              "\"{}:{}:'ns::f(int)'\"",
                                              peek(), toString(spec.kind), spec.path));
            if (!atEnd() && peek() == '=')
                return fail(start, fmt::format("unknown address marker '{}' (off=, elf= or va=)",
                                               s_.substr(start, pos_ - start + 1)));
            spec.symbol = std::string(s_.substr(start, pos_ - start));
        }
        if (!atEnd() && peek() == '+') {
            if (isReturn(spec.kind))
                return fail(pos_, fmt::format("{}: probes the function's return; it takes no "
                                              "+OFFSET",
                                              toString(spec.kind)));
            // A C++ signature's '*' is a pointer when the file has a function of that name
            // (decided once the file is read: SpecExpander, resolveSpec).
            if (hasGlob(spec) && spec.symbol.find('(') == std::string::npos)
                return fail(pos_, "a glob takes no +OFFSET");
            ++pos_;
            if (atEnd())
                return fail(pos_, "expected an offset after '+' (decimal or 0x hex)");
            auto v = number(std::numeric_limits<std::uint32_t>::max(), "offset");
            if (!v.ok())
                return std::move(v).error();
            spec.offset = static_cast<std::uint32_t>(*v);
        }
        return {};
    }

    Result<void, SpecError> userNumber(ProbeSpec& spec, UserAddrKind kind, bool marked) {
        const std::size_t start = pos_;
        auto v = number(std::numeric_limits<std::uint64_t>::max(),
                        kind == UserAddrKind::FileOffset ? "file offset" : "address");
        if (!v.ok())
            return std::move(v).error();
        if (*v == 0 && kind != UserAddrKind::FileOffset)
            return fail(start, "address 0 cannot be probed");
        if (!atEnd() && peek() == '+')
            return fail(pos_, "an address takes no +OFFSET: add it to the address");
        spec.addr = *v;
        spec.has_addr = true;
        spec.user_addr = kind;
        spec.user_addr_marked = marked;
        return {};
    }

    // A name of `is_char` characters and the glob characters * ? [...] at pos_.
    template <class IsChar>
    Result<void, SpecError> name(IsChar is_char) {
        while (!atEnd() && (is_char(peek()) || isGlobChar(peek()))) {
            if (peek() != '[') {
                ++pos_;
                continue;
            }
            const std::size_t close = s_.find(']', pos_ + 2);
            if (close == std::string_view::npos)
                return fail(pos_, "unterminated '[' in a glob (no closing ']')");
            pos_ = close + 1;
        }
        return {};
    }

    // A number at pos_ up to `max` (never negative in a location).
    Result<std::uint64_t, SpecError> number(std::uint64_t max, std::string_view what) {
        auto n = Scanner::number(what, {max});
        if (!n.ok())
            return std::move(n).error();
        return n->magnitude;
    }
};

}  // namespace

Result<ProbeSpec, SpecError> parseProbeSpec(std::string_view text) {
    return Parser(text).run();
}

std::string_view specLocation(std::string_view text) {
    // The grammar's fields are separated by ':'; one that starts with a quote runs to the
    // matching quote whatever it holds (spaces, ':'), and a quote elsewhere (in a bare PATH)
    // is an ordinary character. The location ends at the first space outside a field's quote.
    std::size_t i = 0;
    bool field_start = true;
    while (i < text.size()) {
        const char c = text[i];
        if (field_start && (c == '\'' || c == '"')) {
            const std::size_t close = text.find(c, i + 1);
            if (close == std::string_view::npos)
                return text;
            i = close + 1;
            field_start = false;
            continue;
        }
        if (c == ' ' || c == '\t')
            break;
        field_start = c == ':';
        ++i;
    }
    return text.substr(0, i);
}

bool hasGlob(const ProbeSpec& spec) {
    if (spec.kind == SpecKind::Usdt || spec.has_addr)
        return false;
    return spec.symbol.find_first_of("*?[") != std::string::npos;
}

bool firesAtReturn(const ProbeSpec& spec) {
    if (spec.kind == SpecKind::Syscall)
        return !syscallNeverReturns(spec.symbol);
    return kindInfo(spec.kind).is_return;
}

}  // namespace probectl
