#include "output/strace_names.hpp"

#include <asm/prctl.h>
#include <fmt/format.h>
#include <linux/fcntl.h>
#include <linux/futex.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace probectl::strace_names {

namespace {

// The name is the macro's own spelling, so a table cannot pair a value with another name.
#define PROBECTL_NAME(x)                  \
    Name {                                \
        static_cast<std::uint64_t>(x), #x \
    }

// Multi-bit entries (O_SYNC contains O_DSYNC, O_TMPFILE contains O_DIRECTORY) come before
// their parts so the whole is printed once.
constexpr Name kOpenFlags[] = {
    PROBECTL_NAME(O_CREAT),         PROBECTL_NAME(O_EXCL),     PROBECTL_NAME(O_NOCTTY),
    PROBECTL_NAME(O_TRUNC),         PROBECTL_NAME(O_APPEND),   PROBECTL_NAME(O_NONBLOCK),
    {__O_SYNC | O_DSYNC, "O_SYNC"}, PROBECTL_NAME(O_DSYNC),    PROBECTL_NAME(O_DIRECT),
    PROBECTL_NAME(O_LARGEFILE),     PROBECTL_NAME(O_NOFOLLOW), PROBECTL_NAME(O_NOATIME),
    PROBECTL_NAME(O_CLOEXEC),       PROBECTL_NAME(O_PATH),     PROBECTL_NAME(O_TMPFILE),
    PROBECTL_NAME(O_DIRECTORY),     PROBECTL_NAME(FASYNC),
};

// strace's names for the standard signals (SIGIO, not glibc's abbreviation POLL).
constexpr Name kSignals[] = {
    PROBECTL_NAME(SIGHUP),    PROBECTL_NAME(SIGINT),    PROBECTL_NAME(SIGQUIT),
    PROBECTL_NAME(SIGILL),    PROBECTL_NAME(SIGTRAP),   PROBECTL_NAME(SIGABRT),
    PROBECTL_NAME(SIGBUS),    PROBECTL_NAME(SIGFPE),    PROBECTL_NAME(SIGKILL),
    PROBECTL_NAME(SIGUSR1),   PROBECTL_NAME(SIGSEGV),   PROBECTL_NAME(SIGUSR2),
    PROBECTL_NAME(SIGPIPE),   PROBECTL_NAME(SIGALRM),   PROBECTL_NAME(SIGTERM),
    PROBECTL_NAME(SIGSTKFLT), PROBECTL_NAME(SIGCHLD),   PROBECTL_NAME(SIGCONT),
    PROBECTL_NAME(SIGSTOP),   PROBECTL_NAME(SIGTSTP),   PROBECTL_NAME(SIGTTIN),
    PROBECTL_NAME(SIGTTOU),   PROBECTL_NAME(SIGURG),    PROBECTL_NAME(SIGXCPU),
    PROBECTL_NAME(SIGXFSZ),   PROBECTL_NAME(SIGVTALRM), PROBECTL_NAME(SIGPROF),
    PROBECTL_NAME(SIGWINCH),  PROBECTL_NAME(SIGIO),     PROBECTL_NAME(SIGPWR),
    PROBECTL_NAME(SIGSYS),
};
// The kernel's first real-time signal (<asm/signal.h>'s SIGRTMIN; glibc's SIGRTMIN is
// later, past the ones it keeps for itself). strace names it SIGRTMIN, the next SIGRT_1...
constexpr std::int64_t kKernelRtMin = 32;

constexpr Name kAccessModes[] = {
    PROBECTL_NAME(R_OK),
    PROBECTL_NAME(W_OK),
    PROBECTL_NAME(X_OK),
};

constexpr Name kFaccessatFlags[] = {
    PROBECTL_NAME(AT_SYMLINK_NOFOLLOW),
    PROBECTL_NAME(AT_EACCESS),
    PROBECTL_NAME(AT_EMPTY_PATH),
};

constexpr Name kAtFlags[] = {
    PROBECTL_NAME(AT_SYMLINK_NOFOLLOW), PROBECTL_NAME(AT_REMOVEDIR),
    PROBECTL_NAME(AT_SYMLINK_FOLLOW),   PROBECTL_NAME(AT_NO_AUTOMOUNT),
    PROBECTL_NAME(AT_EMPTY_PATH),       PROBECTL_NAME(AT_RECURSIVE),
};

constexpr Name kSeek[] = {
    PROBECTL_NAME(SEEK_SET),  PROBECTL_NAME(SEEK_CUR),  PROBECTL_NAME(SEEK_END),
    PROBECTL_NAME(SEEK_DATA), PROBECTL_NAME(SEEK_HOLE),
};

constexpr Name kCloexec[] = {PROBECTL_NAME(O_CLOEXEC)};
constexpr Name kFdFlags[] = {PROBECTL_NAME(FD_CLOEXEC)};

constexpr Name kArchPrctlCodes[] = {
    PROBECTL_NAME(ARCH_SET_GS),
    PROBECTL_NAME(ARCH_SET_FS),
    PROBECTL_NAME(ARCH_GET_FS),
    PROBECTL_NAME(ARCH_GET_GS),
    PROBECTL_NAME(ARCH_GET_CPUID),
    PROBECTL_NAME(ARCH_SET_CPUID),
    PROBECTL_NAME(ARCH_GET_XCOMP_SUPP),
    PROBECTL_NAME(ARCH_GET_XCOMP_PERM),
    PROBECTL_NAME(ARCH_REQ_XCOMP_PERM),
    PROBECTL_NAME(ARCH_GET_XCOMP_GUEST_PERM),
    PROBECTL_NAME(ARCH_REQ_XCOMP_GUEST_PERM),
    PROBECTL_NAME(ARCH_MAP_VDSO_X32),
    PROBECTL_NAME(ARCH_MAP_VDSO_32),
    PROBECTL_NAME(ARCH_MAP_VDSO_64),
};

constexpr Name kRlimitResources[] = {
    PROBECTL_NAME(RLIMIT_CPU),      PROBECTL_NAME(RLIMIT_FSIZE),  PROBECTL_NAME(RLIMIT_DATA),
    PROBECTL_NAME(RLIMIT_STACK),    PROBECTL_NAME(RLIMIT_CORE),   PROBECTL_NAME(RLIMIT_RSS),
    PROBECTL_NAME(RLIMIT_NPROC),    PROBECTL_NAME(RLIMIT_NOFILE), PROBECTL_NAME(RLIMIT_MEMLOCK),
    PROBECTL_NAME(RLIMIT_AS),       PROBECTL_NAME(RLIMIT_LOCKS),  PROBECTL_NAME(RLIMIT_SIGPENDING),
    PROBECTL_NAME(RLIMIT_MSGQUEUE), PROBECTL_NAME(RLIMIT_NICE),   PROBECTL_NAME(RLIMIT_RTPRIO),
    PROBECTL_NAME(RLIMIT_RTTIME),
};

constexpr Name kSigprocmaskHow[] = {
    PROBECTL_NAME(SIG_BLOCK),
    PROBECTL_NAME(SIG_UNBLOCK),
    PROBECTL_NAME(SIG_SETMASK),
};

constexpr Name kFcntlCommands[] = {
    PROBECTL_NAME(F_DUPFD),
    PROBECTL_NAME(F_GETFD),
    PROBECTL_NAME(F_SETFD),
    PROBECTL_NAME(F_GETFL),
    PROBECTL_NAME(F_SETFL),
    PROBECTL_NAME(F_GETLK),
    PROBECTL_NAME(F_SETLK),
    PROBECTL_NAME(F_SETLKW),
    PROBECTL_NAME(F_SETOWN),
    PROBECTL_NAME(F_GETOWN),
    PROBECTL_NAME(F_SETSIG),
    PROBECTL_NAME(F_GETSIG),
    PROBECTL_NAME(F_SETOWN_EX),
    PROBECTL_NAME(F_GETOWN_EX),
    PROBECTL_NAME(F_GETOWNER_UIDS),
    PROBECTL_NAME(F_OFD_GETLK),
    PROBECTL_NAME(F_OFD_SETLK),
    PROBECTL_NAME(F_OFD_SETLKW),
    PROBECTL_NAME(F_SETLEASE),
    PROBECTL_NAME(F_GETLEASE),
    PROBECTL_NAME(F_NOTIFY),
    PROBECTL_NAME(F_CANCELLK),
    PROBECTL_NAME(F_DUPFD_CLOEXEC),
    PROBECTL_NAME(F_SETPIPE_SZ),
    PROBECTL_NAME(F_GETPIPE_SZ),
    PROBECTL_NAME(F_ADD_SEALS),
    PROBECTL_NAME(F_GET_SEALS),
    PROBECTL_NAME(F_GET_RW_HINT),
    PROBECTL_NAME(F_SET_RW_HINT),
    PROBECTL_NAME(F_GET_FILE_RW_HINT),
    PROBECTL_NAME(F_SET_FILE_RW_HINT),
};

constexpr Name kLeases[] = {
    PROBECTL_NAME(F_RDLCK),
    PROBECTL_NAME(F_WRLCK),
    PROBECTL_NAME(F_UNLCK),
};

constexpr Name kNotify[] = {
    PROBECTL_NAME(DN_ACCESS),    PROBECTL_NAME(DN_MODIFY), PROBECTL_NAME(DN_CREATE),
    PROBECTL_NAME(DN_DELETE),    PROBECTL_NAME(DN_RENAME), PROBECTL_NAME(DN_ATTRIB),
    PROBECTL_NAME(DN_MULTISHOT),
};

constexpr Name kSeals[] = {
    PROBECTL_NAME(F_SEAL_SEAL),  PROBECTL_NAME(F_SEAL_SHRINK),       PROBECTL_NAME(F_SEAL_GROW),
    PROBECTL_NAME(F_SEAL_WRITE), PROBECTL_NAME(F_SEAL_FUTURE_WRITE),
};

// AF_UNIX, not AF_LOCAL or AF_FILE; AF_NETLINK, not AF_ROUTE (strace's choices).
constexpr Name kDomains[] = {
    PROBECTL_NAME(AF_UNSPEC),     PROBECTL_NAME(AF_UNIX),      PROBECTL_NAME(AF_INET),
    PROBECTL_NAME(AF_AX25),       PROBECTL_NAME(AF_IPX),       PROBECTL_NAME(AF_APPLETALK),
    PROBECTL_NAME(AF_NETROM),     PROBECTL_NAME(AF_BRIDGE),    PROBECTL_NAME(AF_ATMPVC),
    PROBECTL_NAME(AF_X25),        PROBECTL_NAME(AF_INET6),     PROBECTL_NAME(AF_ROSE),
    PROBECTL_NAME(AF_DECnet),     PROBECTL_NAME(AF_NETBEUI),   PROBECTL_NAME(AF_SECURITY),
    PROBECTL_NAME(AF_KEY),        PROBECTL_NAME(AF_NETLINK),   PROBECTL_NAME(AF_PACKET),
    PROBECTL_NAME(AF_ASH),        PROBECTL_NAME(AF_ECONET),    PROBECTL_NAME(AF_ATMSVC),
    PROBECTL_NAME(AF_RDS),        PROBECTL_NAME(AF_SNA),       PROBECTL_NAME(AF_IRDA),
    PROBECTL_NAME(AF_PPPOX),      PROBECTL_NAME(AF_WANPIPE),   PROBECTL_NAME(AF_LLC),
    PROBECTL_NAME(AF_IB),         PROBECTL_NAME(AF_MPLS),      PROBECTL_NAME(AF_CAN),
    PROBECTL_NAME(AF_TIPC),       PROBECTL_NAME(AF_BLUETOOTH), PROBECTL_NAME(AF_IUCV),
    PROBECTL_NAME(AF_RXRPC),      PROBECTL_NAME(AF_ISDN),      PROBECTL_NAME(AF_PHONET),
    PROBECTL_NAME(AF_IEEE802154), PROBECTL_NAME(AF_CAIF),      PROBECTL_NAME(AF_ALG),
    PROBECTL_NAME(AF_NFC),        PROBECTL_NAME(AF_VSOCK),     PROBECTL_NAME(AF_KCM),
    PROBECTL_NAME(AF_QIPCRTR),    PROBECTL_NAME(AF_SMC),       PROBECTL_NAME(AF_XDP),
    PROBECTL_NAME(AF_MCTP),
};

constexpr Name kSocketTypes[] = {
    PROBECTL_NAME(SOCK_STREAM), PROBECTL_NAME(SOCK_DGRAM),     PROBECTL_NAME(SOCK_RAW),
    PROBECTL_NAME(SOCK_RDM),    PROBECTL_NAME(SOCK_SEQPACKET), PROBECTL_NAME(SOCK_DCCP),
    PROBECTL_NAME(SOCK_PACKET),
};
// The kernel's SOCK_TYPE_MASK (<linux/net.h>, not exported to user space).
constexpr std::uint64_t kSocketTypeMask = 0xf;

constexpr Name kSocketTypeFlags[] = {
    PROBECTL_NAME(SOCK_CLOEXEC),
    PROBECTL_NAME(SOCK_NONBLOCK),
};

// IPv4's and IPv6's protocols: strace prints 0 as IPPROTO_IP for both.
constexpr Name kInetProtocols[] = {
    PROBECTL_NAME(IPPROTO_IP),       PROBECTL_NAME(IPPROTO_ICMP),    PROBECTL_NAME(IPPROTO_IGMP),
    PROBECTL_NAME(IPPROTO_IPIP),     PROBECTL_NAME(IPPROTO_TCP),     PROBECTL_NAME(IPPROTO_EGP),
    PROBECTL_NAME(IPPROTO_PUP),      PROBECTL_NAME(IPPROTO_UDP),     PROBECTL_NAME(IPPROTO_IDP),
    PROBECTL_NAME(IPPROTO_TP),       PROBECTL_NAME(IPPROTO_DCCP),    PROBECTL_NAME(IPPROTO_IPV6),
    PROBECTL_NAME(IPPROTO_RSVP),     PROBECTL_NAME(IPPROTO_GRE),     PROBECTL_NAME(IPPROTO_ESP),
    PROBECTL_NAME(IPPROTO_AH),       PROBECTL_NAME(IPPROTO_MTP),     PROBECTL_NAME(IPPROTO_BEETPH),
    PROBECTL_NAME(IPPROTO_ENCAP),    PROBECTL_NAME(IPPROTO_PIM),     PROBECTL_NAME(IPPROTO_COMP),
    PROBECTL_NAME(IPPROTO_SCTP),     PROBECTL_NAME(IPPROTO_UDPLITE), PROBECTL_NAME(IPPROTO_MPLS),
    PROBECTL_NAME(IPPROTO_ETHERNET), PROBECTL_NAME(IPPROTO_RAW),     PROBECTL_NAME(IPPROTO_MPTCP),
};

constexpr Name kNetlinkProtocols[] = {
    PROBECTL_NAME(NETLINK_ROUTE),      PROBECTL_NAME(NETLINK_UNUSED),
    PROBECTL_NAME(NETLINK_USERSOCK),   PROBECTL_NAME(NETLINK_FIREWALL),
    PROBECTL_NAME(NETLINK_SOCK_DIAG),  PROBECTL_NAME(NETLINK_NFLOG),
    PROBECTL_NAME(NETLINK_XFRM),       PROBECTL_NAME(NETLINK_SELINUX),
    PROBECTL_NAME(NETLINK_ISCSI),      PROBECTL_NAME(NETLINK_AUDIT),
    PROBECTL_NAME(NETLINK_FIB_LOOKUP), PROBECTL_NAME(NETLINK_CONNECTOR),
    PROBECTL_NAME(NETLINK_NETFILTER),  PROBECTL_NAME(NETLINK_IP6_FW),
    PROBECTL_NAME(NETLINK_DNRTMSG),    PROBECTL_NAME(NETLINK_KOBJECT_UEVENT),
    PROBECTL_NAME(NETLINK_GENERIC),    PROBECTL_NAME(NETLINK_SCSITRANSPORT),
    PROBECTL_NAME(NETLINK_ECRYPTFS),   PROBECTL_NAME(NETLINK_RDMA),
    PROBECTL_NAME(NETLINK_CRYPTO),     PROBECTL_NAME(NETLINK_SMC),
};

constexpr Name kGetrandomFlags[] = {
    PROBECTL_NAME(GRND_NONBLOCK),
    PROBECTL_NAME(GRND_RANDOM),
    PROBECTL_NAME(GRND_INSECURE),
};

// In strace's order; WUNTRACED is WSTOPPED, the name strace prints.
constexpr Name kWaitOptions[] = {
    PROBECTL_NAME(WNOHANG),    PROBECTL_NAME(WEXITED),     PROBECTL_NAME(WSTOPPED),
    PROBECTL_NAME(WCONTINUED), PROBECTL_NAME(WNOWAIT),     PROBECTL_NAME(__WCLONE),
    PROBECTL_NAME(__WALL),     PROBECTL_NAME(__WNOTHREAD),
};

// The whole operation values strace names (a command, _PRIVATE, and FUTEX_CLOCK_REALTIME
// where the kernel takes it); any other prints as a number.
constexpr std::uint64_t kRt = FUTEX_CLOCK_REALTIME;
constexpr Name kFutexOps[] = {
    PROBECTL_NAME(FUTEX_WAIT),
    PROBECTL_NAME(FUTEX_WAIT_PRIVATE),
    {FUTEX_WAIT | kRt, "FUTEX_WAIT|FUTEX_CLOCK_REALTIME"},
    {FUTEX_WAIT_PRIVATE | kRt, "FUTEX_WAIT_PRIVATE|FUTEX_CLOCK_REALTIME"},
    PROBECTL_NAME(FUTEX_WAKE),
    PROBECTL_NAME(FUTEX_WAKE_PRIVATE),
    PROBECTL_NAME(FUTEX_FD),
    {FUTEX_FD | FUTEX_PRIVATE_FLAG, "FUTEX_FD|FUTEX_PRIVATE_FLAG"},
    PROBECTL_NAME(FUTEX_REQUEUE),
    PROBECTL_NAME(FUTEX_REQUEUE_PRIVATE),
    PROBECTL_NAME(FUTEX_CMP_REQUEUE),
    PROBECTL_NAME(FUTEX_CMP_REQUEUE_PRIVATE),
    PROBECTL_NAME(FUTEX_WAKE_OP),
    PROBECTL_NAME(FUTEX_WAKE_OP_PRIVATE),
    PROBECTL_NAME(FUTEX_LOCK_PI),
    PROBECTL_NAME(FUTEX_LOCK_PI_PRIVATE),
    PROBECTL_NAME(FUTEX_UNLOCK_PI),
    PROBECTL_NAME(FUTEX_UNLOCK_PI_PRIVATE),
    PROBECTL_NAME(FUTEX_TRYLOCK_PI),
    PROBECTL_NAME(FUTEX_TRYLOCK_PI_PRIVATE),
    PROBECTL_NAME(FUTEX_WAIT_BITSET),
    PROBECTL_NAME(FUTEX_WAIT_BITSET_PRIVATE),
    {FUTEX_WAIT_BITSET | kRt, "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME"},
    {FUTEX_WAIT_BITSET_PRIVATE | kRt, "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME"},
    PROBECTL_NAME(FUTEX_WAKE_BITSET),
    PROBECTL_NAME(FUTEX_WAKE_BITSET_PRIVATE),
    PROBECTL_NAME(FUTEX_WAIT_REQUEUE_PI),
    PROBECTL_NAME(FUTEX_WAIT_REQUEUE_PI_PRIVATE),
    {FUTEX_WAIT_REQUEUE_PI | kRt, "FUTEX_WAIT_REQUEUE_PI|FUTEX_CLOCK_REALTIME"},
    {FUTEX_WAIT_REQUEUE_PI_PRIVATE | kRt, "FUTEX_WAIT_REQUEUE_PI_PRIVATE|FUTEX_CLOCK_REALTIME"},
    PROBECTL_NAME(FUTEX_CMP_REQUEUE_PI),
    PROBECTL_NAME(FUTEX_CMP_REQUEUE_PI_PRIVATE),
    PROBECTL_NAME(FUTEX_LOCK_PI2),
    PROBECTL_NAME(FUTEX_LOCK_PI2_PRIVATE),
};

constexpr Name kFutexWakeOps[] = {
    PROBECTL_NAME(FUTEX_OP_SET),  PROBECTL_NAME(FUTEX_OP_ADD), PROBECTL_NAME(FUTEX_OP_OR),
    PROBECTL_NAME(FUTEX_OP_ANDN), PROBECTL_NAME(FUTEX_OP_XOR),
};

constexpr Name kFutexWakeCmps[] = {
    PROBECTL_NAME(FUTEX_OP_CMP_EQ), PROBECTL_NAME(FUTEX_OP_CMP_NE), PROBECTL_NAME(FUTEX_OP_CMP_LT),
    PROBECTL_NAME(FUTEX_OP_CMP_LE), PROBECTL_NAME(FUTEX_OP_CMP_GT), PROBECTL_NAME(FUTEX_OP_CMP_GE),
};

#undef PROBECTL_NAME

template <std::size_t N>
const char* lookup(std::uint64_t v, const Name (&table)[N]) {
    for (const auto& n : table)
        if (n.value == v)
            return n.name;
    return nullptr;
}

// One value of a set, as strace prints it: the name, or "0x9 /* SEEK_??? */".
template <std::size_t N>
std::string value(std::uint64_t v, const Name (&table)[N], const char* unknown) {
    const char* n = lookup(v, table);
    return n ? n : unknownValue(v, unknown);
}

std::uint32_t low32(std::uint64_t v) {
    return static_cast<std::uint32_t>(v);
}

std::string hexOrZero(std::uint64_t v) {
    return v == 0 ? "0" : fmt::format("{:#x}", v);
}

}  // namespace

void appendRest(std::string& out, std::uint64_t rest) {
    if (rest == 0)
        return;
    if (!out.empty())
        out += '|';
    out += fmt::format("{:#x}", rest);
}

std::string unknownValue(std::uint64_t v, const char* unknown) {
    return fmt::format("{:#x} /* {} */", v, unknown);
}

std::uint64_t appendOpenFlags(std::string& out, std::uint64_t v) {
    return appendFlags(out, v, kOpenFlags);
}

std::string signal(std::int64_t sig) {
    const auto s = static_cast<std::int32_t>(sig);
    if (const char* n = s > 0 ? lookup(static_cast<std::uint64_t>(s), kSignals) : nullptr)
        return n;
    if (s == kKernelRtMin)
        return "SIGRTMIN";
    if (s > kKernelRtMin && s < _NSIG)
        return fmt::format("SIGRT_{}", s - kKernelRtMin);
    return fmt::format("{}", s);
}

std::string umode(std::uint64_t mode) {
    // umode_t is 16 bits: strace drops the rest; at least three digits ("000", "0644").
    return fmt::format("0{:02o}", mode & 0xffff);
}

std::string accessMode(std::uint64_t mode) {
    const std::uint32_t m = low32(mode);
    return m == F_OK ? "F_OK" : flags(m, kAccessModes, "?_OK");
}

std::string faccessatFlags(std::uint64_t v) {
    return flags(low32(v), kFaccessatFlags, "AT_???");
}

std::string atFlags(std::uint64_t v) {
    return flags(low32(v), kAtFlags, "AT_???");
}

std::string seekWhence(std::uint64_t v) {
    return value(low32(v), kSeek, "SEEK_???");
}

std::string cloexecFlags(std::uint64_t v) {
    return flags(low32(v), kCloexec, "O_???");
}

std::string pipeFlags(std::uint64_t v) {
    const std::uint32_t f = low32(v);
    if (f == 0)
        return "0";
    std::string out;
    const std::uint64_t rest = appendOpenFlags(out, f);
    if (out.empty())
        return unknownValue(rest, "O_???");
    appendRest(out, rest);
    return out;
}

std::string archPrctlCode(std::uint64_t v) {
    return value(low32(v), kArchPrctlCodes, "ARCH_???");
}

std::string rlimitResource(std::uint64_t v) {
    return value(low32(v), kRlimitResources, "RLIMIT_???");
}

std::string sigprocmaskHow(std::uint64_t v) {
    return value(low32(v), kSigprocmaskHow, "SIG_???");
}

std::string socketDomain(std::uint64_t v) {
    return value(low32(v), kDomains, "AF_???");
}

std::string socketType(std::uint64_t v) {
    // A known type, then the flags; an unknown one goes into the flags' rest.
    std::uint64_t rest = low32(v);
    std::string out;
    if (const char* n = lookup(rest & kSocketTypeMask, kSocketTypes)) {
        out = n;
        rest &= ~kSocketTypeMask;
        if (rest == 0)
            return out;
        out += '|';
    }
    return out + flags(rest, kSocketTypeFlags, "SOCK_???");
}

std::string socketProtocol(std::uint64_t domain, std::uint64_t proto) {
    const std::uint32_t p = low32(proto);
    switch (low32(domain)) {
        case AF_INET:
        case AF_INET6:
            return value(p, kInetProtocols, "IPPROTO_???");
        case AF_NETLINK:
            return value(p, kNetlinkProtocols, "NETLINK_???");
        default:
            return fmt::format("{}", static_cast<std::int32_t>(p));
    }
}

std::string getrandomFlags(std::uint64_t v) {
    return flags(low32(v), kGetrandomFlags, "GRND_???");
}

std::string waitOptions(std::uint64_t v) {
    return flags(low32(v), kWaitOptions, "W???");
}

std::string waitStatus(int st) {
    std::string out;
    auto s = static_cast<unsigned>(st);
    if (WIFSTOPPED(st)) {
        const int sig = WSTOPSIG(st);
        out = fmt::format("{{WIFSTOPPED(s) && WSTOPSIG(s) == {}{}}}", signal(sig & 0x7f),
                          sig & 0x80 ? " | 0x80" : "");
        s &= ~static_cast<unsigned>((sig << 8) | 0x7f);
    } else if (WIFSIGNALED(st)) {
        out = fmt::format("{{WIFSIGNALED(s) && WTERMSIG(s) == {}{}}}", signal(WTERMSIG(st)),
                          WCOREDUMP(st) ? " && WCOREDUMP(s)" : "");
        s &= ~static_cast<unsigned>(WTERMSIG(st) | WCOREFLAG);
    } else if (WIFEXITED(st)) {
        out = fmt::format("{{WIFEXITED(s) && WEXITSTATUS(s) == {}}}", WEXITSTATUS(st));
        s &= ~static_cast<unsigned>(WEXITSTATUS(st) << 8);
    } else if (WIFCONTINUED(st)) {
        out = "{WIFCONTINUED(s)}";
        s &= ~0xffffu;
    } else {
        return fmt::format("{:#x}", s);
    }
    // What no macro above took: a ptrace event (bits 16..), other bits.
    if (const unsigned event = s >> 16) {
        out += fmt::format(" | {:#x} /* PTRACE_EVENT_??? */ << 16", event);
        s &= 0xffff;
    }
    if (s)
        out += fmt::format(" | {:#x}", s);
    return out;
}

std::string futexOp(std::uint64_t v) {
    return value(low32(v), kFutexOps, "FUTEX_???");
}

std::string futexBitset(std::uint64_t v) {
    const std::uint32_t b = low32(v);
    return b == FUTEX_BITSET_MATCH_ANY ? "FUTEX_BITSET_MATCH_ANY" : hexOrZero(b);
}

std::string futexWakeOp(std::uint64_t v) {
    // <linux/futex.h>: op (3 bits) << 28, oparg << 12, cmp << 24, cmparg, and
    // FUTEX_OP_OPARG_SHIFT (8) << 28 for an oparg that is a shift count.
    const std::uint32_t w = low32(v);
    std::string out;
    if (w & (FUTEX_OP_OPARG_SHIFT << 28))
        out = "FUTEX_OP_OPARG_SHIFT<<28|";
    const std::uint32_t op = (w >> 28) & 7, cmp = (w >> 24) & 0xf;
    const char* op_name = lookup(op, kFutexWakeOps);
    out +=
        op_name ? fmt::format("{}<<28", op_name) : fmt::format("{:#x}<<28 /* FUTEX_OP_??? */", op);
    out += fmt::format("|{}<<12|", hexOrZero((w >> 12) & 0xfff));
    const char* cmp_name = lookup(cmp, kFutexWakeCmps);
    out += cmp_name ? fmt::format("{}<<24", cmp_name)
                    : fmt::format("{:#x}<<24 /* FUTEX_OP_CMP_??? */", cmp);
    return out + "|" + hexOrZero(w & 0xfff);
}

std::string fcntlCommand(std::uint64_t cmd) {
    return value(low32(cmd), kFcntlCommands, "F_???");
}

bool fcntlArgument(std::uint64_t cmd, std::uint64_t arg, std::string& out) {
    switch (low32(cmd)) {
        case F_GETFD:
        case F_GETFL:
        case F_GETOWN:
        case F_GETSIG:
        case F_GETLEASE:
        case F_GETPIPE_SZ:
        case F_GET_SEALS:
            return false;
        case F_DUPFD:
        case F_DUPFD_CLOEXEC:
        case F_SETPIPE_SZ:
            out = fmt::format("{}", arg);
            return true;
        case F_SETOWN:
            out = fmt::format("{}", static_cast<std::int32_t>(low32(arg)));
            return true;
        case F_SETFD:
            out = flags(arg, kFdFlags, "FD_???");
            return true;
        case F_SETFL: {
            // With the access mode first, as strace prints it (O_RDONLY|O_APPEND).
            const std::uint64_t acc = arg & O_ACCMODE;
            out = acc == O_RDONLY   ? "O_RDONLY"
                  : acc == O_WRONLY ? "O_WRONLY"
                  : acc == O_RDWR   ? "O_RDWR"
                                    : "O_ACCMODE";
            appendRest(out, appendOpenFlags(out, arg & ~static_cast<std::uint64_t>(O_ACCMODE)));
            return true;
        }
        case F_SETSIG:
            out = signal(static_cast<std::int64_t>(arg));
            return true;
        case F_SETLEASE:
            out = value(low32(arg), kLeases, "F_???");
            return true;
        case F_NOTIFY:
            out = flags(arg, kNotify, "DN_???");
            return true;
        case F_ADD_SEALS:
            out = flags(arg, kSeals, "F_SEAL_???");
            return true;
        case F_GETLK:
        case F_SETLK:
        case F_SETLKW:
        case F_OFD_GETLK:
        case F_OFD_SETLK:
        case F_OFD_SETLKW:
        case F_SETOWN_EX:
        case F_GETOWN_EX:
        case F_GETOWNER_UIDS:
        case F_GET_RW_HINT:
        case F_SET_RW_HINT:
        case F_GET_FILE_RW_HINT:
        case F_SET_FILE_RW_HINT:
            // Structures strace decodes; here their address.
            out = arg == 0 ? "NULL" : fmt::format("{:#x}", arg);
            return true;
        default:
            out = hexOrZero(arg);
            return true;
    }
}

std::string fcntlReturn(std::uint64_t cmd, std::int64_t ret) {
    if (ret < 0)
        return {};
    const auto r = static_cast<std::uint64_t>(ret);
    switch (low32(cmd)) {
        case F_GETFD:
            if (r == 0)
                return {};
            return fmt::format("{:#x} (flags {})", r, flags(r, kFdFlags, "FD_???"));
        case F_GETFL: {
            std::string f;
            fcntlArgument(F_SETFL, r, f);
            return fmt::format("{} (flags {})", hexOrZero(r), f);
        }
        case F_GETSIG:
            if (r == 0)
                return {};
            return fmt::format("{} ({})", r, signal(ret));
        case F_GETLEASE:
            return fmt::format("{:#x} ({})", r, value(r, kLeases, "F_???"));
        default:
            return {};
    }
}

}  // namespace probectl::strace_names
