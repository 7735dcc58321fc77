// Private: netlink acknowledgements (NLMSG_ERROR / NLMSG_DONE) and their extended-ack
// TLVs, and errno -> Error with a hint. Kept apart from the socket code so it can be tested
// on synthetic messages.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "probectl/result.hpp"

namespace probectl::detail {

struct Ack {
    int error = 0;                   // positive errno, 0 for success
    std::uint32_t seq = 0;           // sequence number of the request acknowledged
    std::string extack;              // NLMSGERR_ATTR_MSG
    std::uint32_t missing_attr = 0;  // NLMSGERR_ATTR_MISS_TYPE (kernel >= 6.0), 0 if none
    bool has_missing_attr = false;
};

// Parses an NLMSG_ERROR message of `len` readable bytes starting at `h` (which may exceed
// h->nlmsg_len; only nlmsg_len is used). Returns false if truncated.
bool parseErrorMessage(const nlmsghdr* h, Ack& out);
// Parses an NLMSG_DONE message (payload: int error, optional TLVs).
bool parseDoneMessage(const nlmsghdr* h, Ack& out);

// Error for a failed command: message = "<context>: <extack>" plus a hint for common
// errnos (EPERM: capabilities, EOPNOTSUPP: module version, ...).
Error kernelError(int err, std::string_view context, const Ack& ack);

// Client::connect's errors when the family is missing (ENOENT) or speaks another protocol
// version (EPROTO). Their hint fits an installed probectl (modprobe) and a source tree
// (insmod kmod/probectl.ko) alike.
Error familyMissingError();
Error familyVersionError(std::uint32_t module_version, std::uint32_t our_version);

// The module parameter a refusal names as "(limit: NAME)" (kmod/limits.c), or "" when the
// text names none.
std::string_view moduleLimit(std::string_view text);

}  // namespace probectl::detail
