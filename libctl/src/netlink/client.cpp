// Client: libnl builds and parses messages; the receive loop is our own so that EVENTS
// messages (sequence number 0, unicast at any time) can interleave with command replies
// without tripping libnl's sequence checks, and so they are never dropped.
#include "probectl/client.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <span>

#include "core/comm_glob.hpp"
#include "core/event_view_access.hpp"
#include "core/step_timing.hpp"
#include "netlink/attrs_gen.hpp"
#include "netlink/netlink_error.hpp"
#include "probectl/kernel_stacks.hpp"
#include "uapi/probectl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace probectl {

const char* toString(ProbeKind kind) {
    switch (kind) {
        case ProbeKind::Kprobe:
            return "kprobe";
        case ProbeKind::Kretprobe:
            return "kretprobe";
        case ProbeKind::Uprobe:
            return "uprobe";
        case ProbeKind::Uretprobe:
            return "uretprobe";
        case ProbeKind::Tracepoint:
            return "tracepoint";
    }
    return "unknown";
}

std::string ProbeInfo::location() const {
    if (isUserKind(kind)) {
        if (ref_ctr_offset)
            return fmt::format("{}:{:#x} (semaphore {:#x})", path, file_offset, ref_ctr_offset);
        return fmt::format("{}:{:#x}", path, file_offset);
    }
    if (symbol.empty())
        return fmt::format("{:#x}", addr);
    if (offset != 0)
        return fmt::format("{}+{:#x}", symbol, offset);
    return symbol;
}

namespace {

// Receive buffers below this lose records in ordinary bursts (the brief's floor).
constexpr int kMinRcvbuf = 32 * 1024;
constexpr std::size_t kInitialRx = 64 * 1024;

struct MsgDeleter {
    void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;

std::uint64_t getU64(const nlattr* a) {
    // Tolerate a u32 from an older/leaner kernel side.
    if (nla_len(a) >= 8)
        return nla_get_u64(const_cast<nlattr*>(a));
    if (nla_len(a) >= 4)
        return nla_get_u32(const_cast<nlattr*>(a));
    return 0;
}

std::int64_t nowMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// One command in flight: its sequence number and what to do with its replies.
struct Request {
    std::uint32_t seq = 0;
    std::string context;  // "PROBE_ADD kprobe:foo", prefixes errors
    std::function<Result<void>(const nlmsghdr*)> on_reply;
    bool done = false;
    std::optional<Error> error;
};

}  // namespace

struct Client::Impl {
    struct SockDeleter {
        void operator()(nl_sock* s) const { nl_socket_free(s); }
    };
    // One EVENTS message seen while a command waited for its ack.
    struct Pending {
        std::vector<std::vector<std::byte>> records;
        std::uint64_t lost = 0;
    };

    std::unique_ptr<nl_sock, SockDeleter> sock;
    int fd = -1;
    int family = 0;
    std::uint32_t version = 0;
    std::uint64_t overruns = 0;
    ClientOptions options;
    std::vector<std::byte> rx = std::vector<std::byte>(kInitialRx);
    // For a command's replies while `rx` holds a message being delivered (see transact).
    std::vector<std::byte> rx_nested;
    bool delivering = false;
    std::deque<Pending> pending;
    // An EVENTS message said the kernel's drain may have stopped for lack of room in our
    // receive buffer (EVENTS_MORE). Netlink does not tell the kernel when we free some, so
    // once the socket is empty we ask for the rest (kick) rather than wait for the next
    // drain while the ring fills.
    bool kick_wanted = false;

    MsgPtr newMessage(int type, std::uint8_t cmd, int flags, std::uint8_t version_ = 1) {
        MsgPtr m(nlmsg_alloc());
        if (m && !genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, type, 0, flags, cmd, version_))
            m.reset();
        return m;
    }
    MsgPtr newCommand(std::uint8_t cmd, int flags = 0) {
        return newMessage(family, cmd, flags, PROBECTL_GENL_VERSION);
    }

    // Reads one datagram into `buf`; returns its length, 0 when nothing is readable
    // (non-blocking). One read, no MSG_PEEK: the buffer holds the largest datagram the
    // kernel sends us (EVENTS and dump messages are 32 KiB skbs at most), so peeking each
    // one first only copied it twice. A larger one (a kernel that sends more) is reported,
    // not cut silently, and the buffer grows for the next.
    Result<std::size_t> recvDatagram(std::vector<std::byte>& buf) {
        for (;;) {
            sockaddr_nl from{};
            iovec iov{buf.data(), buf.size()};
            msghdr mh{};
            mh.msg_name = &from;
            mh.msg_namelen = sizeof(from);
            mh.msg_iov = &iov;
            mh.msg_iovlen = 1;
            const ssize_t n = recvmsg(fd, &mh, MSG_TRUNC | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    return std::size_t{0};
                if (errno == ENOBUFS) {
                    // The kernel could not queue a message for us: records (or a reply) lost.
                    ++overruns;
                    continue;
                }
                return makeError(errno, "netlink receive");
            }
            if (from.nl_pid != 0)
                continue;  // only the kernel speaks this protocol to us
            if (static_cast<std::size_t>(n) > buf.size()) {
                const std::size_t had = buf.size();
                buf.resize(static_cast<std::size_t>(n));
                return makeError(EMSGSIZE,
                                 fmt::format("netlink receive: a {}-byte message did not fit the "
                                             "{}-byte buffer and was cut (lost)",
                                             n, had));
            }
            return static_cast<std::size_t>(n);
        }
    }

    // Calls `on_records` with each RECORDS attribute of one EVENTS message (a view into
    // the message) and returns the sum of its LOST attributes.
    template <typename OnRecords>
    static std::uint64_t walkEvents(const nlmsghdr* h, const OnRecords& on_records) {
        std::uint64_t lost = 0;
        const auto* gh = static_cast<const genlmsghdr*>(nlmsg_data(h));
        nlattr* head = genlmsg_attrdata(gh, 0);
        const int len = genlmsg_attrlen(gh, 0);
        nlattr* a;
        int rem;
        nla_for_each_attr(a, head, len, rem) {
            switch (nla_type(a)) {
                case PROBECTL_A_RECORDS:
                    on_records(
                        std::span<const std::byte>(static_cast<const std::byte*>(nla_data(a)),
                                                   static_cast<std::size_t>(nla_len(a))));
                    break;
                case PROBECTL_A_LOST:
                    lost += getU64(a);
                    break;
                default:
                    break;
            }
        }
        return lost;
    }

    // One EVENTS message copied for later (it arrived while a command waited for its ack).
    static Pending queueEvents(const nlmsghdr* h) {
        Pending p;
        p.lost = walkEvents(h, [&p](std::span<const std::byte> recs) {
            p.records.emplace_back(recs.begin(), recs.end());
        });
        return p;
    }

    // One EVENTS message handed out straight from the receive buffer: no copy.
    static Result<std::size_t> deliverEvents(const nlmsghdr* h, const EventViewCallback& on_event,
                                             const LostCallback* on_lost) {
        std::size_t n = 0;
        std::optional<Error> failed;
        const std::uint64_t lost = walkEvents(h, [&](std::span<const std::byte> recs) {
            if (failed)
                return;
            auto r = decodeRecordViews(recs, on_event);
            if (!r)
                failed = std::move(r).error();
            else
                n += *r;
        });
        if (lost != 0 && on_lost && *on_lost)
            (*on_lost)(lost);
        if (failed)
            return *failed;
        return n;
    }

    static bool hasMore(const nlmsghdr* h) {
        const auto* gh = static_cast<const genlmsghdr*>(nlmsg_data(h));
        return nla_find(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), PROBECTL_A_EVENTS_MORE) !=
               nullptr;
    }

    // FLUSH without an ack: the kernel drains into our socket before send returns. A
    // refusal (EAGAIN, shutdown) still comes back as an error ack, which matches no
    // request and is skipped; the periodic drain covers a kick that failed to send.
    void kick() {
        kick_wanted = false;
        MsgPtr m = newCommand(PROBECTL_CMD_FLUSH);
        if (!m)
            return;
        nl_complete_msg(sock.get(), m.get());
        nlmsg_hdr(m.get())->nlmsg_flags &= ~NLM_F_ACK;
        nl_send(sock.get(), m.get());
    }

    bool isEvents(const nlmsghdr* h) const {
        if (h->nlmsg_type != family || h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
            return false;
        return static_cast<const genlmsghdr*>(nlmsg_data(h))->cmd == PROBECTL_CMD_EVENTS;
    }

    // Handles every message of one datagram. EVENTS are queued when a command is in
    // flight (`req`), delivered otherwise.
    Result<std::size_t> dispatch(std::byte* buf, std::size_t n, Request* req,
                                 const EventViewCallback* on_event, const LostCallback* on_lost) {
        std::size_t delivered = 0;
        int len = static_cast<int>(n);
        for (auto* h = reinterpret_cast<nlmsghdr*>(buf); nlmsg_ok(h, len);
             h = nlmsg_next(h, &len)) {
            if (isEvents(h)) {
                if (hasMore(h))
                    kick_wanted = true;
                if (req || !on_event) {
                    pending.push_back(queueEvents(h));
                    continue;
                }
                auto r = deliverEvents(h, *on_event, on_lost);
                if (!r)
                    return r;
                delivered += *r;
                continue;
            }
            if (!req)
                continue;  // a late reply to a request that already failed or timed out
            if (h->nlmsg_type == NLMSG_ERROR) {
                detail::Ack ack;
                if (!detail::parseErrorMessage(h, ack) || ack.seq != req->seq)
                    continue;
                req->done = true;
                if (ack.error != 0 && !req->error)
                    req->error = detail::kernelError(ack.error, req->context, ack);
                continue;
            }
            if (h->nlmsg_seq != req->seq)
                continue;
            if (h->nlmsg_type == NLMSG_DONE) {
                detail::Ack ack;
                detail::parseDoneMessage(h, ack);
                req->done = true;
                if (ack.error != 0 && !req->error)
                    req->error = detail::kernelError(ack.error, req->context, ack);
                continue;
            }
            if (h->nlmsg_type == NLMSG_NOOP || h->nlmsg_type == NLMSG_OVERRUN)
                continue;
            if (req->on_reply && !req->error) {
                auto r = req->on_reply(h);
                if (!r)
                    req->error = r.error();  // keep reading until the ack: stay in sync
            }
        }
        return delivered;
    }

    Result<std::size_t> deliver(const Pending& p, const EventViewCallback& on_event,
                                const LostCallback& on_lost) {
        std::size_t n = 0;
        if (p.lost != 0 && on_lost)
            on_lost(p.lost);
        for (const auto& blob : p.records) {
            auto r = decodeRecordViews(blob, on_event);
            if (!r)
                return r;
            n += *r;
        }
        return n;
    }

    // Sends `msg` and reads until its ack (or dump end), handing replies to `on_reply`.
    Result<void> transact(nl_msg* msg, std::string context,
                          std::function<Result<void>(const nlmsghdr*)> on_reply = {}) {
        const int sent = nl_send_auto(sock.get(), msg);
        if (sent < 0)
            return makeError(errno ? errno : EIO,
                             fmt::format("{}: send: {}", context, nl_geterror(sent)));
        Request req;
        req.seq = nlmsg_hdr(msg)->nlmsg_seq;
        req.context = std::move(context);
        req.on_reply = std::move(on_reply);
        const std::int64_t deadline =
            options.reply_timeout_ms < 0 ? -1 : nowMs() + options.reply_timeout_ms;
        while (!req.done) {
            int wait = -1;
            if (deadline >= 0) {
                wait = static_cast<int>(deadline - nowMs());
                if (wait <= 0)
                    return makeError(ETIMEDOUT,
                                     fmt::format("{}: no answer from the kernel within {} ms",
                                                 req.context, options.reply_timeout_ms));
            }
            pollfd pfd{fd, POLLIN, 0};
            const int pr = ::poll(&pfd, 1, wait);
            if (pr < 0) {
                if (errno == EINTR)
                    continue;  // a command is not interruptible halfway: finish it
                return makeError(errno, fmt::format("{}: poll", req.context));
            }
            if (pr == 0)
                continue;
            // A command sent from an event callback must not overwrite the message whose
            // records are being handed out (they are views into it).
            std::vector<std::byte>& buf = delivering ? rx_nested : rx;
            if (buf.empty())
                buf.resize(kInitialRx);
            auto n = recvDatagram(buf);
            if (!n)
                return makeError(n.error().err,
                                 fmt::format("{}: {}", req.context, n.error().message));
            if (*n == 0)
                continue;
            auto d = dispatch(buf.data(), *n, &req, nullptr, nullptr);
            if (!d)
                return d.error();
        }
        if (req.error) {
            // The kernel answers ENOENT for a family that is no longer registered: say so
            // rather than leave "no such file" on a command that was valid.
            if (req.error->err == ENOENT && nlmsg_hdr(msg)->nlmsg_type == family && familyGone())
                return makeError(ENODEV,
                                 fmt::format("{}: the probectl module was unloaded while this "
                                             "session was open: its probes, their counters "
                                             "and the records not yet delivered are gone",
                                             req.context));
            return *req.error;
        }
        return {};
    }

    // True when no family of our name holds our family id now. Asked by id: a lookup by
    // name would load the module again through its family alias.
    bool familyGone() {
        MsgPtr m = newMessage(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, 1);
        if (!m || nla_put_u16(m.get(), CTRL_ATTR_FAMILY_ID, static_cast<std::uint16_t>(family)) < 0)
            return false;
        bool ours = false;
        auto r = transact(m.get(), "look up family", [&](const nlmsghdr* h) -> Result<void> {
            nlattr* tb[CTRL_ATTR_MAX + 1] = {};
            if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, CTRL_ATTR_MAX, nullptr) == 0 &&
                tb[CTRL_ATTR_FAMILY_NAME])
                ours = std::string_view(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME])) ==
                       PROBECTL_GENL_NAME;
            return {};
        });
        return r ? !ours : r.error().err == ENOENT;
    }

    Result<void> simple(std::uint8_t cmd, std::string context,
                        const std::function<int(nl_msg*)>& fill = {}) {
        MsgPtr m = newCommand(cmd);
        if (!m || (fill && fill(m.get()) < 0))
            return makeError(ENOMEM, fmt::format("{}: cannot build message", context));
        return transact(m.get(), std::move(context));
    }

    Result<void> resolveFamily() {
        MsgPtr m = newMessage(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, 1);
        if (!m || nla_put_string(m.get(), CTRL_ATTR_FAMILY_NAME, PROBECTL_GENL_NAME) < 0)
            return makeError(ENOMEM, "cannot build CTRL_CMD_GETFAMILY");
        bool found = false;
        auto r = transact(m.get(), "resolve family", [&](const nlmsghdr* h) -> Result<void> {
            nlattr* tb[CTRL_ATTR_MAX + 1] = {};
            if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, CTRL_ATTR_MAX, nullptr) < 0)
                return makeError(EBADMSG, "resolve family: malformed reply");
            if (tb[CTRL_ATTR_FAMILY_ID]) {
                family = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
                found = true;
            }
            if (tb[CTRL_ATTR_VERSION])
                version = nla_get_u32(tb[CTRL_ATTR_VERSION]);
            return {};
        });
        if (!r || !found) {
            const int err = r ? ENOENT : r.error().err;
            if (err == ENOENT)
                return detail::familyMissingError();
            return r.error();
        }
        if (version != PROBECTL_GENL_VERSION)
            return detail::familyVersionError(version, PROBECTL_GENL_VERSION);
        return {};
    }

    Result<std::vector<ProbeInfo>> probeGet(std::optional<std::uint32_t> id,
                                            const std::string& what);
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Result<Client> Client::connect(const ClientOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->sock.reset(nl_socket_alloc());
    if (!impl->sock)
        return makeError(ENOMEM, "cannot allocate a netlink socket");
    // Sequence checks and auto-acks are handled by our own receive loop.
    nl_socket_disable_seq_check(impl->sock.get());
    if (int e = genl_connect(impl->sock.get()); e < 0)
        return makeError(errno ? errno : EIO,
                         fmt::format("cannot open a generic netlink socket: {}", nl_geterror(e)));
    impl->fd = nl_socket_get_fd(impl->sock.get());
    // The probes belong to this socket: a held command must not carry it across exec, or
    // they outlive a killed tracer until the command ends too.
    if (fcntl(impl->fd, F_SETFD, FD_CLOEXEC) < 0)
        return makeError(errno, "cannot mark the netlink socket close-on-exec");

    const int one = 1;
    // Extended acks carry the kernel's error text; capped acks keep error replies small.
    // Both are best effort: old kernels lack them and still work.
    setsockopt(impl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    setsockopt(impl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

    int want = options.rcvbuf_bytes;
    if (!(options.force_rcvbuf &&
          setsockopt(impl->fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) == 0))
        setsockopt(impl->fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
    int got = 0;
    socklen_t gl = sizeof(got);
    getsockopt(impl->fd, SOL_SOCKET, SO_RCVBUF, &got, &gl);
    // The kernel reports double the usable size (bookkeeping overhead), hence /2.
    if (got / 2 < kMinRcvbuf && got < want)
        return makeError(ENOBUFS, fmt::format("socket receive buffer is {} bytes, below the {} "
                                              "needed (net.core.rmem_max)",
                                              got / 2, kMinRcvbuf));

    detail::StepTimer family("netlink: resolve family");
    if (auto r = impl->resolveFamily(); !r)
        return r.error();
    family.done();
    return Client(std::move(impl));
}

std::string labelOf(std::string_view spec) {
    constexpr std::size_t kMax = PROBECTL_LABEL_MAX - 1;
    if (spec.size() <= kMax)
        return std::string(spec);
    return std::string(spec.substr(0, kMax - 3)) + "...";
}

Result<AddedProbe> Client::addProbe(const ProbeRequest& req) {
    const bool user = isUserKind(req.kind);
    const std::string where =
        user ? fmt::format("{}:{:#x}", req.path, req.file_offset)
        : req.symbol.empty()
            ? fmt::format("{:#x}", req.addr)
            : (req.offset ? fmt::format("{}+{:#x}", req.symbol, req.offset) : req.symbol);
    const std::string context = fmt::format("add {} {}", toString(req.kind), where);
    if (user) {
        if (!req.symbol.empty() || req.addr || req.offset || req.maxactive)
            return makeError(EINVAL, context +
                                         ": uprobes are located by path and file offset only "
                                         "(no symbol, address, offset or maxactive)");
        if (req.path.empty() || req.path.front() != '/')
            return makeError(EINVAL, context + ": the path must be absolute");
        if (req.path.size() >= PROBECTL_PATH_MAX)
            return makeError(ENAMETOOLONG, context + ": path too long");
    } else {
        if (req.symbol.empty() == (req.addr == 0))
            return makeError(EINVAL, context + ": give exactly one of a symbol or an address");
        if (req.symbol.size() >= PROBECTL_SYMBOL_MAX)
            return makeError(ENAMETOOLONG, context + ": symbol name too long");
        if (!req.path.empty() || req.file_offset || req.ref_ctr_offset)
            return makeError(EINVAL, context + ": paths and file offsets are for uprobes only");
    }

    MsgPtr m = impl_->newCommand(PROBECTL_CMD_PROBE_ADD);
    if (!m)
        return makeError(ENOMEM, context + ": cannot build message");
    nl_msg* msg = m.get();
    // Attribute puts only fail when the message is full; check them once at the end.
    int e = 0;
    auto put = [&e](int r) {
        if (r < 0)
            e = r;
    };
    put(nla_put_u32(msg, PROBECTL_A_PROBE_KIND, static_cast<std::uint32_t>(req.kind)));
    if (user) {
        put(nla_put_string(msg, PROBECTL_A_PROBE_PATH, req.path.c_str()));
        put(nla_put_u64(msg, PROBECTL_A_PROBE_FILE_OFFSET, req.file_offset));
        if (req.ref_ctr_offset)
            put(nla_put_u64(msg, PROBECTL_A_PROBE_REF_CTR_OFFSET, req.ref_ctr_offset));
    } else if (!req.symbol.empty()) {
        put(nla_put_string(msg, PROBECTL_A_PROBE_SYMBOL, req.symbol.c_str()));
        if (req.offset)
            put(nla_put_u32(msg, PROBECTL_A_PROBE_OFFSET, req.offset));
    } else {
        put(nla_put_u64(msg, PROBECTL_A_PROBE_ADDR, req.addr));
    }
    if (req.maxactive)
        put(nla_put_u32(msg, PROBECTL_A_PROBE_MAXACTIVE, req.maxactive));
    if (!req.fetch.empty())
        put(nla_put(msg, PROBECTL_A_PROBE_FETCH,
                    static_cast<int>(req.fetch.size() * sizeof(FetchInsn)), req.fetch.data()));
    if (req.fetch_entry)
        put(nla_put_u32(msg, PROBECTL_A_PROBE_FETCH_ENTRY, req.fetch_entry));
    if (req.flags)
        put(nla_put_u32(msg, PROBECTL_A_PROBE_FLAGS, req.flags));
    if (req.aggr)
        put(nla_put(msg, PROBECTL_A_PROBE_AGGR, sizeof(*req.aggr), &*req.aggr));
    if (!req.label.empty())
        put(nla_put_string(msg, PROBECTL_A_PROBE_LABEL, labelOf(req.label).c_str()));
    // absent means every part: old requests stay as they were
    if (req.record_parts != kRecordPartsAll)
        put(nla_put_u32(msg, PROBECTL_A_PROBE_PARTS, req.record_parts));
    if (!req.filter.insns.empty()) {
        auto strings = encodeFilterStrings(req.filter);
        if (!strings)
            return makeError(EINVAL, fmt::format("{}: {}", context, strings.error().message));
        put(nla_put(msg, PROBECTL_A_PROBE_FILTER,
                    static_cast<int>(req.filter.insns.size() * sizeof(FilterInsn)),
                    req.filter.insns.data()));
        if (!strings->empty())
            put(nla_put(msg, PROBECTL_A_PROBE_FILTER_STRINGS, static_cast<int>(strings->size()),
                        strings->data()));
    }
    if (e < 0)
        return makeError(EMSGSIZE, context + ": cannot build message");

    AddedProbe out;
    bool got_id = false;
    auto r = impl_->transact(msg, context, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, context + ": malformed reply");
        got_id |= tb[PROBECTL_A_PROBE_ID] != nullptr;
        decodeAll(detail::kProbeAddReply, tb, out);
        return {};
    });
    if (!r)
        return r.error();
    if (!got_id)
        return makeError(EPROTO, context + ": the kernel acked without a PROBE_ID reply");
    return out;
}

Result<void> Client::removeProbe(std::uint32_t id) {
    return impl_->simple(PROBECTL_CMD_PROBE_DEL, fmt::format("remove probe {}", id),
                         [&](nl_msg* m) { return nla_put_u32(m, PROBECTL_A_PROBE_ID, id); });
}

Result<void> Client::enable(std::uint32_t id) {
    return impl_->simple(PROBECTL_CMD_PROBE_ENABLE, fmt::format("enable probe {}", id),
                         [&](nl_msg* m) { return nla_put_u32(m, PROBECTL_A_PROBE_ID, id); });
}

Result<void> Client::disable(std::uint32_t id) {
    return impl_->simple(PROBECTL_CMD_PROBE_DISABLE, fmt::format("disable probe {}", id),
                         [&](nl_msg* m) { return nla_put_u32(m, PROBECTL_A_PROBE_ID, id); });
}

Result<void> Client::disableSession() {
    return impl_->simple(PROBECTL_CMD_PROBE_DISABLE, "disable the session's probes",
                         [](nl_msg*) { return 0; });
}

Result<void> Client::setSessionMatch(const std::vector<std::uint32_t>& pids,
                                     const std::vector<std::uint32_t>& tids,
                                     const std::vector<std::uint32_t>& uids,
                                     const std::string& comm) {
    for (const auto* l : {&pids, &tids, &uids})
        if (l->size() > PROBECTL_MATCH_MAX_IDS)
            return makeError(EINVAL, fmt::format("set task match: {} ids in one list, at most {}",
                                                 l->size(), PROBECTL_MATCH_MAX_IDS));
    if (comm.size() >= PROBECTL_MATCH_COMM_MAX || comm.find('\0') != std::string::npos)
        return makeError(EINVAL, fmt::format("set task match: comm glob '{}' is over {} bytes "
                                             "or holds a NUL",
                                             comm, PROBECTL_MATCH_COMM_MAX - 1));
    // No glob (no comm filter) needs 0 bytes: nothing to refuse.
    if (const std::string why = detail::commGlobNeverMatches(comm, "comm glob"); !why.empty())
        return makeError(EINVAL, "set task match: " + why);
    return impl_->simple(PROBECTL_CMD_SESSION_MATCH, "set task match", [&](nl_msg* m) {
        int r = 0;
        auto ids = [&](int attr, const std::vector<std::uint32_t>& v) {
            if (r >= 0 && !v.empty())
                r = nla_put(m, attr, static_cast<int>(v.size() * sizeof(std::uint32_t)), v.data());
        };
        ids(PROBECTL_A_SESSION_PIDS, pids);
        ids(PROBECTL_A_SESSION_TIDS, tids);
        ids(PROBECTL_A_SESSION_UIDS, uids);
        if (r >= 0 && !comm.empty())
            r = nla_put_string(m, PROBECTL_A_SESSION_COMM, comm.c_str());
        return r;
    });
}

Result<void> Client::setSessionTgids(const std::vector<std::uint32_t>& tgids, bool follow) {
    if (tgids.size() > PROBECTL_MAX_TGIDS)
        return makeError(EINVAL, fmt::format("set tgid filter: {} tgids, at most {}", tgids.size(),
                                             PROBECTL_MAX_TGIDS));
    if (follow && tgids.empty())
        return makeError(EINVAL, "set tgid filter: following forks needs processes to follow");
    return impl_->simple(PROBECTL_CMD_SESSION_SET, "set tgid filter", [&](nl_msg* m) {
        int r = nla_put(m, PROBECTL_A_SESSION_TGIDS,
                        static_cast<int>(tgids.size() * sizeof(std::uint32_t)), tgids.data());
        if (r >= 0 && follow)
            r = nla_put_u32(m, PROBECTL_A_SESSION_FLAGS, PROBECTL_SESSION_F_FOLLOW);
        return r;
    });
}

Result<void> Client::addSessionTgids(const std::vector<std::uint32_t>& tgids) {
    if (tgids.empty())
        return makeError(EINVAL, "add to the tgid filter: no tgids to add");
    for (std::size_t at = 0; at < tgids.size(); at += PROBECTL_MAX_TGIDS) {
        const std::size_t n = std::min<std::size_t>(PROBECTL_MAX_TGIDS, tgids.size() - at);
        auto r = impl_->simple(PROBECTL_CMD_SESSION_ADD, "add to the tgid filter", [&](nl_msg* m) {
            return nla_put(m, PROBECTL_A_SESSION_TGIDS, static_cast<int>(n * sizeof(std::uint32_t)),
                           tgids.data() + at);
        });
        if (!r)
            return r;
    }
    return {};
}

Result<SessionReply> Client::getSessionFilter() {
    const std::string context = "read the tgid filter";
    MsgPtr m = impl_->newCommand(PROBECTL_CMD_SESSION_GET);
    if (!m)
        return makeError(ENOMEM, context + ": cannot build message");
    SessionReply out;
    bool got = false;
    auto r = impl_->transact(m.get(), context, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, context + ": malformed reply");
        got |= tb[PROBECTL_A_SESSION_LIVE] != nullptr;
        decodeAll(detail::kSessionGetReply, tb, out);
        return {};
    });
    if (!r)
        return r.error();
    if (!got)
        return makeError(EPROTO, context + ": the kernel acked without a SESSION_LIVE reply");
    return out;
}

Result<void> Client::flush() {
    // The kernel sends only what fits in our receive buffer and answers EAGAIN when records
    // remain; the ack wait has meanwhile queued what it sent, so the buffer is empty again.
    // Each round delivers at least one batch, so the loop ends once the ring is empty.
    for (;;) {
        auto r = impl_->simple(PROBECTL_CMD_FLUSH, "flush");
        if (r || r.error().err != EAGAIN)
            return r;
    }
}

// PROBE_GET dump of every probe, or of one id.
Result<std::vector<ProbeInfo>> Client::Impl::probeGet(std::optional<std::uint32_t> id,
                                                      const std::string& what) {
    MsgPtr m = newCommand(PROBECTL_CMD_PROBE_GET, NLM_F_DUMP);
    if (!m || (id && nla_put_u32(m.get(), PROBECTL_A_PROBE_ID, *id) < 0))
        return makeError(ENOMEM, what + ": cannot build message");
    std::vector<ProbeInfo> out;
    auto r = transact(m.get(), what, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, what + ": malformed reply");
        ProbeInfo p;
        decodeAll(detail::kProbeGetReply, tb, p);
        out.push_back(std::move(p));
        return {};
    });
    if (!r)
        return r.error();
    return out;
}

Result<std::vector<ProbeInfo>> Client::listProbes() {
    return impl_->probeGet(std::nullopt, "list probes");
}

Result<ProbeInfo> Client::getProbe(std::uint32_t id) {
    const std::string what = fmt::format("get probe {}", id);
    auto r = impl_->probeGet(id, what);
    if (!r)
        return std::move(r).error();
    if (r->size() != 1 || r->front().id != id)
        return makeError(ENOENT, what + ": not in the reply");
    return std::move(r->front());
}

Result<void> Client::dumpAggregation(std::uint32_t id,
                                     const std::function<Result<void>(const AggrReply&)>& on_reply,
                                     bool clear) {
    const std::string context = fmt::format("read the aggregation of probe {}", id);
    MsgPtr m = impl_->newCommand(PROBECTL_CMD_AGGR_GET, NLM_F_DUMP);
    if (!m || nla_put_u32(m.get(), PROBECTL_A_PROBE_ID, id) < 0 ||
        (clear && nla_put_flag(m.get(), PROBECTL_A_AGGR_CLEAR) < 0))
        return makeError(ENOMEM, context + ": cannot build message");
    return impl_->transact(m.get(), context, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, context + ": malformed reply");
        AggrReply reply;
        decodeAll(detail::kAggrGetReply, tb, reply);
        return on_reply(reply);
    });
}

Result<void> Client::dumpStacks(std::uint32_t id,
                                const std::function<Result<void>(const StackReply&)>& on_reply) {
    const std::string context = fmt::format("read the kernel stacks of probe {}", id);
    MsgPtr m = impl_->newCommand(PROBECTL_CMD_STACK_GET, NLM_F_DUMP);
    if (!m || nla_put_u32(m.get(), PROBECTL_A_PROBE_ID, id) < 0)
        return makeError(ENOMEM, context + ": cannot build message");
    return impl_->transact(m.get(), context, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, context + ": malformed reply");
        StackReply reply;
        decodeAll(detail::kStackGetReply, tb, reply);
        return on_reply(reply);
    });
}

Result<std::string> Client::takeMaps(std::uint32_t id, pid_t tgid, std::uint64_t* unpinned,
                                     std::uint32_t maps_seq) {
    const std::string context =
        maps_seq ? fmt::format("read the kept maps {} of process {} through probe {}", maps_seq,
                               tgid, id)
                 : fmt::format("read the kept maps of process {} through probe {}", tgid, id);
    MsgPtr m = impl_->newCommand(PROBECTL_CMD_MAPS_GET, NLM_F_DUMP);
    if (!m || nla_put_u32(m.get(), PROBECTL_A_PROBE_ID, id) < 0 ||
        (tgid > 0 &&
         nla_put_u32(m.get(), PROBECTL_A_MAPS_TGID, static_cast<std::uint32_t>(tgid)) < 0) ||
        (tgid > 0 && maps_seq && nla_put_u32(m.get(), PROBECTL_A_MAPS_SEQ, maps_seq) < 0))
        return makeError(ENOMEM, context + ": cannot build message");
    std::string text;
    auto r = impl_->transact(m.get(), context, [&](const nlmsghdr* h) -> Result<void> {
        nlattr* tb[PROBECTL_A_MAX + 1] = {};
        if (genlmsg_parse(const_cast<nlmsghdr*>(h), 0, tb, PROBECTL_A_MAX, nullptr) < 0)
            return makeError(EBADMSG, context + ": malformed reply");
        MapsReply reply;
        decodeAll(detail::kMapsGetReply, tb, reply);
        if (unpinned)
            *unpinned = reply.maps_unpinned;
        text.append(reply.maps_text.begin(), reply.maps_text.end());
        return {};
    });
    if (!r)
        return r.error();
    return text;
}

int Client::fd() const {
    return impl_ ? impl_->fd : -1;
}

Result<std::size_t> Client::consume(const EventCallback& on_event, const LostCallback& on_lost) {
    return consumeAtMostViews(0, detail::asViewCallback(on_event), on_lost);
}

Result<std::size_t> Client::consumeViews(const EventViewCallback& on_event,
                                         const LostCallback& on_lost) {
    return consumeAtMostViews(0, on_event, on_lost);
}

Result<std::size_t> Client::consumeAtMost(std::size_t max_datagrams, const EventCallback& on_event,
                                          const LostCallback& on_lost) {
    return consumeAtMostViews(max_datagrams, detail::asViewCallback(on_event), on_lost);
}

Result<std::size_t> Client::consumeAtMostViews(std::size_t max_datagrams,
                                               const EventViewCallback& on_event,
                                               const LostCallback& on_lost) {
    std::size_t total = 0;
    std::size_t datagrams = 0;
    for (;;) {
        // Queued first: they arrived earlier than anything still in the socket (also those
        // queued by a command an event callback sent).
        while (!impl_->pending.empty()) {
            Impl::Pending p = std::move(impl_->pending.front());
            impl_->pending.pop_front();
            auto r = impl_->deliver(p, on_event, on_lost);
            if (!r)
                return r;
            total += *r;
        }
        if (impl_->delivering)
            return total;  // called from an event callback: the outer call reads on
        if (max_datagrams != 0 && datagrams++ == max_datagrams)
            return total;
        auto n = impl_->recvDatagram(impl_->rx);
        if (!n)
            return n.error();
        if (*n == 0) {
            if (!impl_->kick_wanted)
                return total;
            impl_->kick();  // what it drains is in the socket when it returns: read on
            continue;
        }
        Result<std::size_t> d = std::size_t{0};
        {
            // Cleared however the callbacks leave (an exception included).
            struct Delivering {
                bool& flag;
                explicit Delivering(bool& f) : flag(f) { flag = true; }
                ~Delivering() { flag = false; }
            } guard(impl_->delivering);
            d = impl_->dispatch(impl_->rx.data(), *n, nullptr, &on_event, &on_lost);
        }
        if (!d)
            return d;
        total += *d;
    }
}

Result<std::size_t> Client::poll(int timeout_ms, const EventCallback& on_event,
                                 const LostCallback& on_lost) {
    return pollViews(timeout_ms, detail::asViewCallback(on_event), on_lost);
}

Result<std::size_t> Client::pollViews(int timeout_ms, const EventViewCallback& on_event,
                                      const LostCallback& on_lost) {
    if (impl_->pending.empty()) {
        pollfd pfd{impl_->fd, POLLIN, 0};
        const int pr = ::poll(&pfd, 1, timeout_ms);
        if (pr < 0)
            return makeError(errno, "poll");
        if (pr == 0)
            return std::size_t{0};
    }
    // Bounded: on a live stream under load the socket never runs empty, and the caller's
    // stop check (--duration, Ctrl-C) must still run between polls.
    return consumeAtMostViews(kPollMaxDatagrams, on_event, on_lost);
}

std::uint32_t Client::portid() const {
    return nl_socket_get_local_port(impl_->sock.get());
}
std::uint32_t Client::familyVersion() const {
    return impl_->version;
}
std::uint64_t Client::overruns() const {
    return impl_->overruns;
}

}  // namespace probectl
