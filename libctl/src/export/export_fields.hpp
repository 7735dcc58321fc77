// What every trace writer shows of an event: its name, whether it is a slice, and its
// arguments as typed fields, visited without building a container per event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "probectl/event.hpp"

namespace probectl::exporter {

// The probe's location: the spec without fetch arguments or predicate ("probe#ID" when the
// event has no spec).
std::string_view eventName(const Event& ev, std::string& scratch);
// The probe kind, the spec's prefix ("kretprobe"), used as the category.
std::string_view eventKind(const Event& ev);
// A return (slice from timestamp - latency to timestamp) rather than an instant: a
// kretprobe's, a uretprobe's or a syscall's. Recordings of the ptrace backend's syscall
// events made before it set is_return on them have syscall_returned alone.
inline bool isSlice(const Event& ev) {
    return ev.is_return || (ev.syscall && ev.syscall_returned);
}
inline std::uint64_t sliceStart(const Event& ev) {
    return ev.latency_ns <= ev.timestamp_ns ? ev.timestamp_ns - ev.latency_ns : 0;
}

struct Field {
    enum class Kind { Unsigned, Signed, Hex, String, Fault };
    std::string_view name;
    Kind kind = Kind::Unsigned;
    std::uint64_t u = 0;   // Unsigned, Hex; Signed as two's complement
    std::string_view str;  // String (arrays: their text, "{1,2}"); Fault: "<fault>", or "?" for
                           // a value not known (retval)
    Kind type = Kind::Unsigned;  // the kind of the value when it is not faulted
    std::int64_t s() const { return static_cast<std::int64_t>(u); }
};

// Calls f(const Field&) for each argument in order: the fetched values (or arg1..arg6 for
// an entry without them), "call" (the strace line of a syscall probe), then "retval" and
// "latency_ns" for returns. `scratch` holds texts that are built (arrays, the strace line).
template <class F>
void forEachField(const Event& ev, std::string& scratch, F&& f);

// Helpers of forEachField.
Field fetchedField(const FetchedValue& v, std::string& scratch);
std::string_view syscallText(const Event& ev, std::string& scratch);

template <class F>
void forEachField(const Event& ev, std::string& scratch, F&& f) {
    // Numbered as $argN is, like the text and JSON output.
    static constexpr std::string_view kArgNames[] = {"arg1", "arg2", "arg3",
                                                     "arg4", "arg5", "arg6"};
    if (ev.syscall) {
        f(Field{"call", Field::Kind::String, 0, syscallText(ev, scratch), Field::Kind::String});
    } else if (!ev.values.empty()) {
        for (const auto& v : ev.values)
            f(fetchedField(v, scratch));
    } else if (!ev.is_return) {
        for (std::size_t i = 0; i < ev.args.size(); ++i)
            f(Field{kArgNames[i], Field::Kind::Hex, ev.args[i], {}, Field::Kind::Hex});
    }
    if (isSlice(ev)) {
        // A return whose value is not known (returnValueUnknown) has none, not 0.
        if (returnValueUnknown(ev))
            f(Field{"retval", Field::Kind::Fault, 0, "?", Field::Kind::Signed});
        else
            f(Field{"retval", Field::Kind::Signed, ev.retval, {}, Field::Kind::Signed});
        f(Field{"latency_ns", Field::Kind::Unsigned, ev.latency_ns, {}, Field::Kind::Unsigned});
    }
}

}  // namespace probectl::exporter
