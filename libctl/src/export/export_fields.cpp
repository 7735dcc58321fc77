#include "export/export_fields.hpp"

#include "probectl/probe_spec.hpp"
#include "probectl/strace_format.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl::exporter {

std::string_view eventName(const Event& ev, std::string& scratch) {
    if (ev.spec.empty()) {
        scratch = "probe#" + std::to_string(ev.probe_id);
        return scratch;
    }
    return specLocation(ev.spec);
}

std::string_view eventKind(const Event& ev) {
    const auto colon = ev.spec.find(':');
    return colon == std::string_view::npos ? std::string_view("probe") : ev.spec.substr(0, colon);
}

Field fetchedField(const FetchedValue& v, std::string& scratch) {
    Field f{v.name, Field::Kind::Unsigned, v.raw, {}, Field::Kind::Unsigned};
    if (v.array_len || isStringType(v.type))
        f.type = Field::Kind::String;
    else if (isSignedType(v.type))
        f.type = Field::Kind::Signed;
    else if (isHexType(v.type))
        f.type = Field::Kind::Hex;
    if (v.faulted) {
        f.kind = Field::Kind::Fault;
        f.str = "<fault>";
        f.u = 0;
    } else if (v.array_len || isStringType(v.type)) {
        f.kind = Field::Kind::String;
        if (v.array_len) {
            scratch = formatFetchedValue(v);
            f.str = scratch;
        } else {
            f.str = v.str;
        }
    } else if (isSignedType(v.type)) {
        f.kind = Field::Kind::Signed;
        f.u = static_cast<std::uint64_t>(fetchedSigned(v.type, v.raw));
    } else if (isHexType(v.type)) {
        f.kind = Field::Kind::Hex;
    }
    return f;
}

std::string_view syscallText(const Event& ev, std::string& scratch) {
    StraceOptions so;
    so.align = false;  // a field, not a column: JSON's "syscall" is unpadded too
    scratch = formatSyscall(syscallRecord(ev, *ev.syscall, ev.syscall_returned),
                            systemSyscallTable().find(ev.syscall->name), so);
    if (returnValueUnknown(ev))
        scratch += kReturnUnknownNote;
    return scratch;
}

}  // namespace probectl::exporter
