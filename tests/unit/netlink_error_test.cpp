// Ack parsing on synthetic NLMSG_ERROR / NLMSG_DONE messages, as the kernel builds them.
#include "netlink/netlink_error.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

using namespace probectl;
using namespace probectl::detail;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Builds an NLMSG_ERROR for a request `req` with `err` (negative errno), optional extack
// message and missing-attribute TLVs; `capped` mimics NETLINK_CAP_ACK.
std::vector<unsigned char> errorMessage(int err, const std::string& msg, bool capped,
                                        int missing_attr = -1) {
    nlmsghdr req{};
    req.nlmsg_len = NLMSG_LENGTH(12);  // a request with 12 bytes of payload
    req.nlmsg_type = 0x20;
    req.nlmsg_seq = 77;
    std::vector<unsigned char> out(NLMSG_HDRLEN);
    auto put = [&](const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        out.insert(out.end(), b, b + n);
        out.resize(NLMSG_ALIGN(out.size()));
    };
    nlmsgerr e{};
    e.error = err;
    e.msg = req;
    put(&e, sizeof(e));
    if (!capped) {
        std::vector<unsigned char> payload(12, 0xab);
        put(payload.data(), payload.size());
    }
    auto tlv = [&](std::uint16_t type, const void* data, std::size_t n) {
        nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + n), type};
        const std::size_t at = out.size();
        out.resize(at + NLA_ALIGN(NLA_HDRLEN + n));
        std::memcpy(out.data() + at, &a, sizeof(a));
        std::memcpy(out.data() + at + NLA_HDRLEN, data, n);
    };
    if (!msg.empty())
        tlv(NLMSGERR_ATTR_MSG, msg.c_str(), msg.size() + 1);
    if (missing_attr >= 0) {
        std::uint32_t m = static_cast<std::uint32_t>(missing_attr);
        tlv(NLMSGERR_ATTR_MISS_TYPE, &m, sizeof(m));
    }
    nlmsghdr h{};
    h.nlmsg_len = static_cast<std::uint32_t>(out.size());
    h.nlmsg_type = NLMSG_ERROR;
    h.nlmsg_flags =
        (capped ? NLM_F_CAPPED : 0) | ((!msg.empty() || missing_attr >= 0) ? NLM_F_ACK_TLVS : 0);
    std::memcpy(out.data(), &h, sizeof(h));
    return out;
}

const nlmsghdr* hdr(const std::vector<unsigned char>& v) {
    return reinterpret_cast<const nlmsghdr*>(v.data());
}

}  // namespace

TEST(NetlinkAck, SuccessAck) {
    auto m = errorMessage(0, "", true);
    Ack a;
    ASSERT_TRUE(parseErrorMessage(hdr(m), a));
    EXPECT_EQ(a.error, 0);
    EXPECT_EQ(a.seq, 77u);
    EXPECT_TRUE(a.extack.empty());
}

TEST(NetlinkAck, CappedErrorWithExtack) {
    auto m = errorMessage(-EINVAL, "probectl: symbol not found", true);
    Ack a;
    ASSERT_TRUE(parseErrorMessage(hdr(m), a));
    EXPECT_EQ(a.error, EINVAL);
    EXPECT_EQ(a.extack, "probectl: symbol not found");
}

TEST(NetlinkAck, UncappedErrorSkipsTheEchoedRequest) {
    auto m = errorMessage(-ENOENT, "probe id 5 not found", false, 2);
    Ack a;
    ASSERT_TRUE(parseErrorMessage(hdr(m), a));
    EXPECT_EQ(a.error, ENOENT);
    EXPECT_EQ(a.extack, "probe id 5 not found");
    EXPECT_TRUE(a.has_missing_attr);
    EXPECT_EQ(a.missing_attr, 2u);
}

TEST(NetlinkAck, TruncatedMessageIsRejected) {
    auto m = errorMessage(-EINVAL, "", true);
    nlmsghdr h;
    std::memcpy(&h, m.data(), sizeof(h));
    h.nlmsg_len = NLMSG_HDRLEN + 4;
    std::memcpy(m.data(), &h, sizeof(h));
    Ack a;
    EXPECT_FALSE(parseErrorMessage(hdr(m), a));
}

TEST(NetlinkAck, DoneWithError) {
    std::vector<unsigned char> m(NLMSG_LENGTH(sizeof(int)));
    nlmsghdr h{};
    h.nlmsg_len = static_cast<std::uint32_t>(m.size());
    h.nlmsg_type = NLMSG_DONE;
    h.nlmsg_seq = 9;
    int err = -EPERM;
    std::memcpy(m.data(), &h, sizeof(h));
    std::memcpy(m.data() + NLMSG_HDRLEN, &err, sizeof(err));
    Ack a;
    ASSERT_TRUE(parseDoneMessage(hdr(m), a));
    EXPECT_EQ(a.error, EPERM);
    EXPECT_EQ(a.seq, 9u);
}

TEST(NetlinkAck, KernelErrorCarriesContextExtackAndHint) {
    Ack a;
    a.extack = "CAP_SYS_ADMIN or CAP_PERFMON required";
    Error e = kernelError(EPERM, "add kprobe vfs_read", a);
    EXPECT_EQ(e.err, EPERM);
    EXPECT_EQ(e.extack, a.extack);
    EXPECT_THAT(e.message, HasSubstr("add kprobe vfs_read: CAP_SYS_ADMIN or CAP_PERFMON"));
    // The extack already names the capabilities: the hint is not repeated.
    EXPECT_THAT(e.message, Not(HasSubstr("needs CAP_SYS_ADMIN")));
    // The kernel said why: libc's "Operation not permitted" adds nothing.
    EXPECT_EQ(e.describe(), "add kprobe vfs_read: CAP_SYS_ADMIN or CAP_PERFMON required");
    // Without extack (older module) the hint is the only explanation.
    Error bare = kernelError(EPERM, "add kprobe vfs_read", Ack{});
    EXPECT_THAT(bare.message, HasSubstr("needs CAP_SYS_ADMIN or CAP_PERFMON (run as root)"));
    Error plain = kernelError(ENOENT, "remove probe 5", Ack{});
    EXPECT_EQ(plain.message, "remove probe 5");
    EXPECT_EQ(plain.describe(), "remove probe 5 (No such file or directory)");
}

// The module's "probectl: " before its text once followed "probectl disable: disable probe 1: ".
TEST(NetlinkAck, KernelErrorDropsTheModulesNameFromTheExtack) {
    Ack a;
    a.extack = "probectl: probe id 1 not found";
    Error e = kernelError(ENOENT, "disable probe 1", a);
    EXPECT_EQ(e.message, "disable probe 1: probe id 1 not found");
    EXPECT_EQ(e.extack, a.extack) << "the kernel's own text is kept as it came";
    Ack only;
    only.extack = "probectl: ";
    EXPECT_EQ(kernelError(EINVAL, "add", only).message, "add");
    Ack inner;
    inner.extack = "bad value for probectl: x";
    EXPECT_EQ(kernelError(EINVAL, "add", inner).message, "add: bad value for probectl: x");
}

TEST(NetlinkAck, KernelErrorOverALimitSaysHowToRaiseIt) {
    Ack a;
    a.extack = "probectl: session holds 4096 probes (limit: max_probes)";
    Error e = kernelError(ENOSPC, "add kprobe vfs_read", a);
    EXPECT_EQ(e.err, ENOSPC);
    EXPECT_THAT(e.message, HasSubstr("(limit: max_probes); max_probes is a limit"));
    EXPECT_THAT(e.message, HasSubstr("/sys/module/probectl/parameters/max_probes"));
    // ENOSPC without the module's tag (a full ring, say) gets no parameter advice.
    Ack other;
    other.extack = "no room";
    EXPECT_THAT(kernelError(ENOSPC, "add", other).message, Not(HasSubstr("parameters")));
    Ack open;
    open.extack = "(limit: max_probes";
    EXPECT_THAT(kernelError(ENOSPC, "add", open).message, Not(HasSubstr("parameters")));
}

// The hints name the command for an installed probectl (modprobe) and the path that only
// exists in a source tree, said as such.
TEST(FamilyErrors, HintsFitAnInstalledProbectlAndASourceTree) {
    const Error missing = familyMissingError();
    EXPECT_EQ(missing.err, ENOENT);
    EXPECT_THAT(missing.message, HasSubstr("family 'probectl' not found: is probectl.ko loaded?"));
    EXPECT_THAT(missing.message, HasSubstr("sudo modprobe probectl"));
    EXPECT_THAT(missing.message, HasSubstr("in a source tree: sudo insmod kmod/probectl.ko"));
    const Error version = familyVersionError(9, 1);
    EXPECT_EQ(version.err, EPROTO);
    EXPECT_THAT(version.message, HasSubstr("speaks protocol version 9, this probectl (libctl) "
                                           "version 1"));
    EXPECT_THAT(version.message, HasSubstr("sudo rmmod probectl; sudo modprobe probectl, or in "
                                           "a source tree sudo insmod kmod/probectl.ko"));
}
