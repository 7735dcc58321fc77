#include "netlink/netlink_error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace probectl::detail {

namespace {

// Walks the TLVs after an ack payload (same layout as netlink attributes).
void parseTlvs(const unsigned char* p, std::size_t len, Ack& out) {
    while (len >= sizeof(nlattr)) {
        nlattr a;
        std::memcpy(&a, p, sizeof(a));
        if (a.nla_len < sizeof(nlattr) || a.nla_len > len)
            return;
        const unsigned char* data = p + NLA_HDRLEN;
        const std::size_t dlen = a.nla_len - NLA_HDRLEN;
        switch (a.nla_type & NLA_TYPE_MASK) {
            case NLMSGERR_ATTR_MSG:
                out.extack.assign(reinterpret_cast<const char*>(data),
                                  strnlen(reinterpret_cast<const char*>(data), dlen));
                break;
            case NLMSGERR_ATTR_MISS_TYPE:
                if (dlen >= sizeof(std::uint32_t)) {
                    std::memcpy(&out.missing_attr, data, sizeof(std::uint32_t));
                    out.has_missing_attr = true;
                }
                break;
            default:
                break;
        }
        const std::size_t step = NLA_ALIGN(a.nla_len);
        if (step >= len)
            return;
        p += step;
        len -= step;
    }
}

}  // namespace

bool parseErrorMessage(const nlmsghdr* h, Ack& out) {
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr)))
        return false;
    const auto* base = static_cast<const unsigned char*>(NLMSG_DATA(h));
    nlmsgerr e;
    std::memcpy(&e, base, sizeof(e));
    out.error = -e.error;
    out.seq = e.msg.nlmsg_seq;
    if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
        return true;
    // Unless NLM_F_CAPPED, the kernel echoes the whole request before the TLVs.
    std::size_t off = sizeof(nlmsgerr);
    if (!(h->nlmsg_flags & NLM_F_CAPPED) && e.msg.nlmsg_len > NLMSG_HDRLEN)
        off += e.msg.nlmsg_len - NLMSG_HDRLEN;
    off = NLMSG_ALIGN(off);
    const std::size_t payload = h->nlmsg_len - NLMSG_HDRLEN;
    if (off < payload)
        parseTlvs(base + off, payload - off, out);
    return true;
}

bool parseDoneMessage(const nlmsghdr* h, Ack& out) {
    out.seq = h->nlmsg_seq;
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
        return true;  // a DONE without payload is a plain end of dump
    const auto* base = static_cast<const unsigned char*>(NLMSG_DATA(h));
    int err = 0;
    std::memcpy(&err, base, sizeof(err));
    out.error = err < 0 ? -err : 0;
    if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
        const std::size_t off = NLMSG_ALIGN(sizeof(int));
        const std::size_t payload = h->nlmsg_len - NLMSG_HDRLEN;
        if (off < payload)
            parseTlvs(base + off, payload - off, out);
    }
    return true;
}

std::string_view moduleLimit(std::string_view text) {
    constexpr std::string_view tag = "(limit: ";
    const auto at = text.find(tag);
    const auto end = at == std::string_view::npos ? at : text.find(')', at);
    if (end == std::string_view::npos)
        return {};
    return text.substr(at + tag.size(), end - at - tag.size());
}

Error familyMissingError() {
    return makeError(ENOENT,
                     "family 'probectl' not found: is probectl.ko loaded? (sudo modprobe "
                     "probectl; in a source tree: sudo insmod kmod/probectl.ko)");
}

Error familyVersionError(std::uint32_t module_version, std::uint32_t our_version) {
    return makeError(EPROTO, fmt::format("the loaded probectl.ko speaks protocol version {}, "
                                         "this probectl (libctl) version {}: load the "
                                         "probectl.ko of the same release (sudo rmmod probectl; "
                                         "sudo modprobe probectl, or in a source tree sudo "
                                         "insmod kmod/probectl.ko), or install or rebuild both "
                                         "from one release",
                                         module_version, our_version));
}

Error kernelError(int err, std::string_view context, const Ack& ack) {
    std::string msg(context);
    // The module's texts start with its name (NL_SET_ERR_MSG_MOD): shown after probectl's
    // own "probectl CMD: CONTEXT: ", it would say probectl twice.
    std::string_view said = ack.extack;
    if (constexpr std::string_view mod = "probectl: "; said.starts_with(mod))
        said.remove_prefix(mod.size());
    if (!said.empty())
        msg += fmt::format(": {}", said);
    if (ack.has_missing_attr)
        msg += fmt::format(" (missing attribute {})", ack.missing_attr);
    switch (err) {
        case EPERM:
        case EACCES:
            // The module's extack usually says it already ("CAP_SYS_ADMIN or CAP_PERFMON
            // required"): only add the hint when it does not.
            if (ack.extack.find("CAP_") == std::string::npos)
                msg += "; needs CAP_SYS_ADMIN or CAP_PERFMON (run as root)";
            break;
        case ENOSPC: {
            // The advice does not fit the 80 bytes an extack message may hold, so it is added
            // here.
            if (const auto name = moduleLimit(ack.extack); !name.empty()) {
                msg += fmt::format(
                    "; {} is a limit of the probectl module: root can raise it with "
                    "'echo N > /sys/module/probectl/parameters/{}' or the module option {}=N",
                    name, name, name);
            }
            break;
        }
        case EOPNOTSUPP:
            msg += "; the loaded probectl.ko does not support this command (rebuild/reload it)";
            break;
        default:
            break;
    }
    return makeError(err, std::move(msg), ack.extack);
}

}  // namespace probectl::detail
