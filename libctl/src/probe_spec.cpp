// Probe spec parser: a hand-written scanner so every error knows its column.
#include "probectl/probe_spec.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <limits>
#include <optional>

namespace probectl {

std::string_view toString(SpecKind kind) {
    switch (kind) {
        case SpecKind::Kprobe:
            return "kprobe";
        case SpecKind::Kretprobe:
            return "kretprobe";
        case SpecKind::Syscall:
            return "syscall";
    }
    return "unknown";
}

std::string ProbeSpec::str() const {
    std::string s{toString(kind)};
    s += ':';
    if (has_addr)
        s += fmt::format("{:#x}", addr);
    else
        s += symbol;
    if (offset != 0)
        s += fmt::format("+{:#x}", offset);
    return s;
}

std::string SpecError::render() const {
    // The caret line lines up with the echoed input because both carry the same indent.
    std::string out = fmt::format("error: {} (column {})\n", message, column);
    out += "  " + input + "\n";
    out += "  " + std::string(column > 0 ? column - 1 : 0, ' ') + "^";
    return out;
}

Error toError(const SpecError& e) {
    return makeError(EINVAL, e.render());
}

namespace {

bool isSymbolStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}
bool isSymbolChar(char c) {
    return isSymbolStart(c) || (c >= '0' && c <= '9') || c == '$';
}
int hexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

class Parser {
  public:
    explicit Parser(std::string_view text) : s_(text) {}

    Result<ProbeSpec, SpecError> run() {
        ProbeSpec spec;
        spec.text = std::string(s_);

        const std::size_t colon = s_.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            if (s_.empty())
                return fail(0, "empty probe spec (expected kprobe:, kretprobe: or syscall:)");
            return fail(0,
                        "expected TYPE:LOCATION, e.g. kprobe:do_sys_openat2 or "
                        "syscall:openat");
        }
        const std::string_view type = s_.substr(0, colon);
        if (type == "kprobe" || type == "p")
            spec.kind = SpecKind::Kprobe;
        else if (type == "kretprobe" || type == "r")
            spec.kind = SpecKind::Kretprobe;
        else if (type == "syscall")
            spec.kind = SpecKind::Syscall;
        else if (type == "uprobe" || type == "uretprobe" || type == "usdt" || type == "tracepoint")
            return fail(
                0, fmt::format("'{}' probes are not supported by this kernel module yet", type));
        else
            return fail(0, fmt::format("unknown probe type '{}' (expected kprobe, kretprobe or "
                                       "syscall)",
                                       type));
        pos_ = colon + 1;
        const std::string_view kind = toString(spec.kind);

        if (atEnd())
            return fail(pos_, fmt::format("expected a {} after '{}:'",
                                          spec.kind == SpecKind::Syscall ? "syscall name"
                                                                         : "symbol or 0xADDRESS",
                                          kind));

        if (peekHexPrefix()) {
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
        } else if (isSymbolStart(peek())) {
            const std::size_t start = pos_;
            while (!atEnd() && isSymbolChar(peek()))
                ++pos_;
            spec.symbol = std::string(s_.substr(start, pos_ - start));
            if (spec.kind == SpecKind::Syscall && spec.symbol.starts_with("sys_"))
                return fail(start, fmt::format("syscall: takes the bare syscall name: syscall:{}",
                                               spec.symbol.substr(4)));
        } else {
            return fail(pos_, fmt::format("expected a {} after '{}:', got '{}'",
                                          spec.kind == SpecKind::Syscall ? "syscall name"
                                                                         : "symbol or 0xADDRESS",
                                          kind, peek()));
        }

        if (!atEnd() && peek() == '+') {
            if (spec.kind == SpecKind::Kretprobe)
                return fail(pos_, "kretprobe: probes the function's return; it takes no +OFFSET");
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

        if (!atEnd()) {
            const char c = peek();
            if ((c == ' ' || c == '\t') && looksLikeFetchArg(pos_))
                return fail(pos_,
                            "fetch arguments (NAME=SOURCE) are not supported by protocol "
                            "version 1; records carry the six argument registers");
            if (c == ' ' || c == '\t')
                return fail(pos_, "unexpected space after the location");
            return fail(pos_, fmt::format("unexpected '{}' after the location", c));
        }
        return spec;
    }

  private:
    // Whitespace at `i` followed by NAME=...: what a fetch argument looks like.
    bool looksLikeFetchArg(std::size_t i) const {
        while (i < s_.size() && (s_[i] == ' ' || s_[i] == '\t'))
            ++i;
        if (i >= s_.size() || !isSymbolStart(s_[i]))
            return false;
        while (i < s_.size() && isSymbolChar(s_[i]))
            ++i;
        return i < s_.size() && s_[i] == '=';
    }
    bool atEnd() const { return pos_ >= s_.size(); }
    char peek() const { return s_[pos_]; }
    bool peekHexPrefix() const {
        return pos_ + 1 < s_.size() && s_[pos_] == '0' &&
               (s_[pos_ + 1] == 'x' || s_[pos_ + 1] == 'X');
    }

    SpecError fail(std::size_t index, std::string message) const {
        return SpecError{std::move(message), index + 1, std::string(s_)};
    }

    // Decimal or 0x-hex number at pos_, up to `max`; stops at the first non-digit.
    Result<std::uint64_t, SpecError> number(std::uint64_t max, std::string_view what) {
        const std::size_t start = pos_;
        unsigned base = 10;
        if (peekHexPrefix()) {
            base = 16;
            pos_ += 2;
        }
        const std::size_t digits = pos_;
        std::uint64_t v = 0;
        while (!atEnd()) {
            const int d = base == 16 ? hexValue(peek())
                                     : (peek() >= '0' && peek() <= '9' ? peek() - '0' : -1);
            if (d < 0)
                break;
            if (v > (max - static_cast<unsigned>(d)) / base) {
                // Quote the whole number as written, not the digits read so far.
                std::size_t end = pos_;
                while (end < s_.size() &&
                       (base == 16 ? hexValue(s_[end]) >= 0 : (s_[end] >= '0' && s_[end] <= '9')))
                    ++end;
                return fail(start, fmt::format("{} {} is too large (max {:#x})", what,
                                               s_.substr(start, end - start), max));
            }
            v = v * base + static_cast<unsigned>(d);
            ++pos_;
        }
        if (pos_ == digits)
            return fail(pos_, fmt::format("expected {} digits{}", base == 16 ? "hex" : "decimal",
                                          atEnd() ? "" : fmt::format(", got '{}'", peek())));
        // A letter glued to a number ("12k", "0x1g") is a typo in the number, not trailing junk.
        if (!atEnd() && isSymbolChar(peek()))
            return fail(pos_, fmt::format("invalid digit '{}' in {} {}", peek(),
                                          base == 16 ? "hex" : "decimal", what));
        return v;
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

}  // namespace

Result<ProbeSpec, SpecError> parseProbeSpec(std::string_view text) {
    return Parser(text).run();
}

}  // namespace probectl
