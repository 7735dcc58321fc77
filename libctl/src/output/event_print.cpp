// Event records through a Printer (formats in event_print.hpp and event_json.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "output/append_text.hpp"
#include "probectl/event_json.hpp"
#include "probectl/event_print.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl {

namespace {

// Keys and text formats of the raw argument registers: static, so no per-event building.
// Numbered from 1 like $arg1..$arg6, so a value read here is fetched by the same name.
constexpr std::string_view kArgKey[kEventArgs] = {"arg1", "arg2", "arg3", "arg4", "arg5", "arg6"};

// The text line of an event is built here without format strings (append_text.hpp): a
// runtime format string is parsed on every call, which was most of a line's cost.
std::string& textLine() {
    thread_local std::string line;  // reused: no allocation per event once grown
    line.clear();
    return line;
}

// s left-aligned in `width` columns, as fmt's {:<N} pads: ASCII counts one column a byte;
// anything else goes to fmt, which measures display width.
void appendPadded(std::string& out, std::string_view s, std::size_t width) {
    if (std::any_of(s.begin(), s.end(), [](char c) { return c & 0x80; })) {
        fmt::format_to(std::back_inserter(out), "{:<{}}", s, width);
        return;
    }
    out += s;
    if (s.size() < width)
        out.append(width - s.size(), ' ');
}

// TIME CPU COMM TID PROBE: the columns of printEventHeader.
void appendTextColumns(std::string& out, const Event& ev, const EventFormat& f,
                       std::string_view probe) {
    // Events from a probe armed before the last one can precede t0: shown negative rather
    // than clamped to 0.
    const bool early = ev.timestamp_ns < f.t0_ns;
    const std::uint64_t rel = early ? f.t0_ns - ev.timestamp_ns : ev.timestamp_ns - f.t0_ns;
    const std::uint64_t secs = rel / 1000000000;
    if (early)
        fmt::format_to(std::back_inserter(out), "{:>5}", fmt::format("-{}", secs));
    else
        appendDecimal(out, secs, 5);
    out += '.';
    appendDecimal(out, (rel % 1000000000) / 1000, 6, '0');
    out += " [";
    appendDecimal(out, ev.cpu, 3, '0');
    out += "] ";
    if (isShownAsIs(ev.comm)) {
        appendPadded(out, ev.comm, 16);
    } else {
        std::string quoted;
        appendShownName(quoted, ev.comm);
        appendPadded(out, quoted, 16);
    }
    out += ' ';
    appendDecimal(out, ev.pid, 7);
    out += ' ';
    if (ev.spec.empty()) {
        out += "probe#";
        appendDecimal(out, ev.probe_id);
    }
    appendShownName(out, probe);
}

void printLatency(Printer& p, std::string_view text_fmt, std::uint64_t ns) {
    p.u64(Show::Json, "latency_ns", {}, ns);
    if (!p.json())
        p.str(Show::Text, {}, text_fmt, formatLatency(ns));
}

// JSON: what fetchedValueToJson gives, through the printer's own calls (no tree built).
void printJsonValue(Printer& p, std::string_view key, FetchType t, std::uint64_t raw) {
    if (isHexType(t))
        p.hex(Show::Json, key, {}, raw);
    else if (isSignedType(t))
        p.s64(Show::Json, key, {}, fetchedSigned(t, raw));
    else
        p.u64(Show::Json, key, {}, raw);
}

void printJsonValue(Printer& p, const FetchedValue& v) {
    if (v.faulted) {
        p.null(Show::Json, v.name, {});
    } else if (isStringType(v.type)) {
        p.str(Show::Json, v.name, {}, v.str);
    } else if (v.array_len != 0) {
        p.beginArray(v.name);
        for (std::uint64_t x : v.array)
            printJsonValue(p, {}, v.type, x);
        p.end();
    } else {
        printJsonValue(p, v.name, v.type, v.raw);
    }
}

void printValues(Printer& p, std::span<const FetchedValue> values) {
    // Each back end builds only its own form of the values.
    if (!p.json()) {
        std::string& text = textLine();
        for (std::size_t i = 0; i < values.size(); ++i) {
            text += i ? " " : "  ";
            text += values[i].name;
            text += '=';
            appendFetchedValue(text, values[i]);
        }
        p.text(text);
        return;
    }
    p.beginObject("args");
    for (const FetchedValue& v : values)
        printJsonValue(p, v);
    p.end();
    auto names = [&](auto pick, std::string_view key) {
        bool any = false;
        for (const auto& v : values)
            any |= pick(v);
        if (!any)
            return;
        p.beginArray(key);
        for (const auto& v : values)
            if (pick(v))
                p.str(Show::Json, {}, {}, v.name);
        p.end();
    };
    names([](const FetchedValue& v) { return v.faulted; }, "faults");
    names([](const FetchedValue& v) { return !v.faulted && v.truncated; }, "truncated");
}

// JSON: the call's arguments as fields, each as the line decodes it, beside the raw register.
void printSyscallArgs(Printer& p, const Event& ev) {
    const SyscallPlan& plan = *ev.syscall;
    const SyscallInfo* info = systemSyscallTable().find(plan.name);
    const SyscallRecord rec = syscallRecord(ev, plan, ev.syscall_returned);
    p.beginArray("syscall_args");
    for (const StraceArg& a : straceArgs(rec, info)) {
        p.beginObject({});
        if (info && a.arg < info->args.size())
            p.str(Show::Json, "name", {}, info->args[a.arg].name);
        else
            p.str(Show::Json, "name", {}, kArgKey[a.arg]);
        p.u64(Show::Json, "value", {}, rec.args[a.arg]);
        p.str(Show::Json, "decoded", {}, a.text);
        p.end();
    }
    p.end();
}

bool isStackValue(const FetchedValue& v, std::string_view name) {
    return v.name == name && v.type == FetchType::U32 && v.array_len == 0 && !v.isSnapshot();
}

// A `ustack` snapshot that the format unwinds (a faulted one too: no user context).
bool isSnapshotValue(const FetchedValue& v, const EventFormat& f) {
    return f.user_snapshot && v.name == "ustack" && (v.isSnapshot() || v.faulted);
}

// The trailing $kstack and $ustack values (in that order) to print as stacks, when the
// format prints stacks: how many of the event's last values they are.
std::size_t stackValues(const Event& ev, const EventFormat& f,
                        std::array<const FetchedValue*, 2>& out) {
    out = {nullptr, nullptr};
    if ((!f.kernel_stack && !f.user_snapshot) || ev.values.empty())
        return 0;
    std::size_t n = ev.values.size();
    if ((f.kernel_stack && isStackValue(ev.values[n - 1], "ustack")) ||
        isSnapshotValue(ev.values[n - 1], f))
        out[1] = &ev.values[--n];
    if (f.kernel_stack && n > 0 && isStackValue(ev.values[n - 1], "kstack"))
        out[0] = &ev.values[--n];
    return ev.values.size() - n;
}

// One frame per line under the event (indented past the time column), or the JSON array
// `name` (kstack, ustack) and its id `name`_id.
void printStack(Printer& p, const Event& ev, const FetchedValue& v, const EventFormat& f) {
    if (isSnapshotValue(v, f)) {
        const std::vector<std::string> lines = f.user_snapshot(ev, v);
        p.beginArray(v.name);
        for (const auto& line : lines) {
            p.str(Show::Json, {}, {}, line);
            p.str(Show::Text, {}, "\n             {}", line);
        }
        p.end();
        return;
    }
    const auto id = static_cast<std::uint32_t>(v.raw);
    const std::vector<std::string>* lines = v.faulted ? nullptr : f.kernel_stack(ev.probe_id, id);
    const std::string name = v.name;
    p.u64(Show::Json, name + "_id", {}, v.faulted ? 0 : id);
    if (!lines) {
        const std::string why = v.faulted || id == 0
                                    ? std::string("<stack not kept: stack map full>")
                                    : fmt::format("<stack {} unknown>", id);
        p.null(Show::Json, name, {});
        p.str(Show::Text, {}, "\n             {}", why);
        return;
    }
    p.beginArray(name);
    for (const auto& line : *lines) {
        p.str(Show::Json, {}, {}, line);
        p.str(Show::Text, {}, "\n             {}", line);
    }
    p.end();
}

void printStraceLine(Printer& p, const Event& ev, const EventFormat& f) {
    p.beginRecord("event");
    if (f.pid_prefix)
        p.u64(Show::Text, "tid", "{:<5} ", ev.pid);
    p.text(formatSyscallEvent(ev, true));
    p.endRecord();
}

}  // namespace

std::optional<std::int32_t> int32Reading(std::uint64_t retval) {
    if (retval >> 32 || !(retval & 0x80000000u))
        return std::nullopt;
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(retval));
}

std::string formatLatency(std::uint64_t ns) {
    auto sig3 = [](double v, const char* unit) {
        if (v >= 100)
            return fmt::format("{:.0f}{}", v, unit);
        if (v >= 10)
            return fmt::format("{:.1f}{}", v, unit);
        return fmt::format("{:.2f}{}", v, unit);
    };
    if (ns < 1000)
        return fmt::format("{}ns", ns);
    if (ns < 1000000)
        return sig3(static_cast<double>(ns) / 1e3, "us");
    if (ns < 1000000000)
        return sig3(static_cast<double>(ns) / 1e6, "ms");
    return sig3(static_cast<double>(ns) / 1e9, "s");
}

std::string formatSyscallEvent(const Event& ev, bool align) {
    StraceOptions so;
    so.align = align;
    const SyscallPlan& plan = *ev.syscall;
    return formatSyscall(syscallRecord(ev, plan, ev.syscall_returned),
                         systemSyscallTable().find(plan.name), so);
}

void printEventHeader(Printer& p) {
    if (p.json())
        return;
    p.beginRecord("header");
    p.text(fmt::format("{:>12} {:>5} {:<16} {:>7} {}", "TIME(s)", "CPU", "COMM", "TID",
                       "PROBE  ARGS"));
    p.endRecord();
}

void printEvent(Printer& p, const Event& ev, const EventFormat& f) {
    std::array<const FetchedValue*, 2> stacks{};
    const std::size_t nstacks = stackValues(ev, f, stacks);
    // The stacks print under the event: the other values are the event's own.
    std::span<const FetchedValue> values = ev.values;
    values = values.first(values.size() - nstacks);
    if (f.strace && ev.syscall && values.empty() && !p.json() && !nstacks)
        return printStraceLine(p, ev, f);
    p.beginRecord("event");
    if (p.json()) {
        p.u64(Show::Json, "ts_ns", {}, ev.timestamp_ns);
        p.u64(Show::Json, "cpu", {}, ev.cpu);
        p.u64(Show::Json, "pid", {}, ev.tgid);
        p.u64(Show::Json, "tid", {}, ev.pid);
        p.str(Show::Json, "comm", {}, ev.comm);
        p.str(Show::Json, "probe", {}, ev.spec);
        p.u64(Show::Json, "probe_id", {}, ev.probe_id);
        p.hex(Show::Json, "ip", {}, ev.ip);
    } else {
        // With fetch arguments the spec's location names the probe in text and the values
        // replace the raw registers.
        std::string& line = textLine();
        appendTextColumns(line, ev, f, values.empty() ? ev.spec : specLocation(ev.spec));
        p.text(line);
    }
    if (ev.syscall && !values.empty()) {
        // The spec's own fetch arguments replace the decoded call; the return stays, as on
        // every syscall line.
        printValues(p, values);
        std::optional<std::int64_t> ret;
        const bool unknown = returnValueUnknown(ev);
        if (ev.syscall_returned) {
            ret = static_cast<std::int64_t>(ev.retval);
            p.s64(Show::Json, "retval", {}, *ret);
        } else if (unknown) {
            p.null(Show::Json, "retval", {});
        }
        p.str(Show::Text, {}, " {}",
              straceReturn(ev.syscall->name, ret) + (unknown ? kReturnUnknownNote : ""));
        if (ev.syscall_returned || unknown)
            printLatency(p, " lat={}", ev.latency_ns);
    } else if (ev.syscall) {
        // The strace line shows the values in text; JSON has them as args too.
        if (!values.empty() && p.json())
            printValues(p, values);
        // A return without a value (a killed thread's call) was timed all the same.
        const bool unknown = returnValueUnknown(ev);
        if (ev.syscall_returned) {
            p.s64(Show::Json, "retval", {}, static_cast<std::int64_t>(ev.retval));
            p.u64(Show::Json, "latency_ns", {}, ev.latency_ns);
        } else if (unknown) {
            p.null(Show::Json, "retval", {});
            p.u64(Show::Json, "latency_ns", {}, ev.latency_ns);
        }
        // strace's own lines (printStraceLine) keep its "= ?": its "+++ killed by ... +++"
        // line follows there; an event line says why itself.
        p.str(Show::Any, "syscall", "  {}",
              formatSyscallEvent(ev, false) + (unknown ? kReturnUnknownNote : ""));
        if (p.json())
            printSyscallArgs(p, ev);
    } else if (!values.empty()) {
        printValues(p, values);
        if (ev.is_return) {
            p.s64(Show::Json, "retval", {}, static_cast<std::int64_t>(ev.retval));
            printLatency(p, " lat={}", ev.latency_ns);
        }
    } else if (ev.is_return) {
        p.s64(Show::Any, "retval", "  ret={}", static_cast<std::int64_t>(ev.retval));
        p.hex(Show::Text, {}, " ({:#x}", ev.retval);
        // The function's C type is not known here. A 32-bit int return leaves the upper
        // half zero: -5 reads 4294967291, so its signed 32-bit reading is shown too.
        if (const auto s32 = int32Reading(ev.retval))
            p.s64(Show::Any, "retval_s32", ", int {}", *s32);
        p.text(")");
        printLatency(p, " lat={}", ev.latency_ns);
    } else {
        if (p.json()) {
            p.beginObject("args");
            for (std::size_t i = 0; i < ev.args.size(); ++i)
                p.hex(Show::Json, kArgKey[i], {}, ev.args[i]);
            p.end();
        } else {
            std::string& line = textLine();
            line += ' ';
            for (std::size_t i = 0; i < ev.args.size(); ++i) {
                line += ' ';
                line += kArgKey[i];
                line += '=';
                appendHex(line, ev.args[i]);
            }
            p.text(line);
        }
    }
    for (const FetchedValue* s : stacks)
        if (s)
            printStack(p, ev, *s, f);
    p.endRecord();
}

}  // namespace probectl
