#include "nl_fuzz.hpp"

#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "probectl/client.hpp"
#include "uapi/probectl.h"

namespace itest {

namespace {

// One attribute of an operation's policy, as CTRL_CMD_GETPOLICY describes it.
struct PolicyAttr {
    std::uint16_t id = 0;
    std::uint32_t type = NL_ATTR_TYPE_INVALID;
    std::uint64_t min_u = 0, max_u = UINT64_MAX;
    std::int64_t min_s = INT64_MIN, max_s = INT64_MAX;
    std::uint32_t min_len = 0, max_len = 0;
};

struct Op {
    std::uint8_t cmd = 0;
    bool do_ = false, dump = false;
    std::uint32_t do_policy = UINT32_MAX, dump_policy = UINT32_MAX;
};

class Message {
  public:
    Message(std::uint16_t family, std::uint8_t cmd, std::uint16_t flags, std::uint32_t seq) {
        b_.resize(NLMSG_HDRLEN + GENL_HDRLEN);
        nlmsghdr h{};
        h.nlmsg_type = family;
        h.nlmsg_flags = flags;
        h.nlmsg_seq = seq;
        std::memcpy(b_.data(), &h, sizeof(h));
        genlmsghdr g{};
        g.cmd = cmd;
        g.version = PROBECTL_GENL_VERSION;
        std::memcpy(b_.data() + NLMSG_HDRLEN, &g, sizeof(g));
    }
    void put(std::uint16_t type, const void* data, std::size_t len) {
        nlattr a{};
        a.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + len);
        a.nla_type = type;
        const std::size_t at = b_.size();
        b_.resize(at + NLA_ALIGN(NLA_HDRLEN + len));
        std::memcpy(b_.data() + at, &a, sizeof(a));
        if (len)
            std::memcpy(b_.data() + at + NLA_HDRLEN, data, len);
    }
    void raw(const std::vector<std::uint8_t>& bytes) {
        b_.insert(b_.end(), bytes.begin(), bytes.end());
    }
    // Fixes nlmsg_len (or leaves a lie in it) and returns the bytes.
    std::vector<std::uint8_t>& finish(std::int64_t len_delta = 0) {
        const auto len =
            static_cast<std::uint32_t>(static_cast<std::int64_t>(b_.size()) + len_delta);
        std::memcpy(b_.data(), &len, sizeof(len));
        return b_;
    }

  private:
    std::vector<std::uint8_t> b_;
};

// Walks the attributes in [p, p+len).
template <typename F>
void forEachAttr(const std::uint8_t* p, std::size_t len, F&& f) {
    while (len >= NLA_HDRLEN) {
        nlattr a;
        std::memcpy(&a, p, sizeof(a));
        if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
            return;
        f(static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK), p + NLA_HDRLEN,
          static_cast<std::size_t>(a.nla_len - NLA_HDRLEN));
        const std::size_t step = NLA_ALIGN(a.nla_len);
        if (step >= len)
            return;
        p += step;
        len -= step;
    }
}

template <typename T>
T readAs(const std::uint8_t* p, std::size_t len) {
    T v{};
    std::memcpy(&v, p, std::min(len, sizeof(v)));
    return v;
}

class Fuzzer {
  public:
    explicit Fuzzer(const FuzzOptions& opt) : opt_(opt), rng_(opt.seed) {}

    FuzzStats run() {
        fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
        if (fd_ < 0)
            return fail("socket: " + std::string(strerror(errno)));
        // Records of probes the fuzzer added arrive on this socket too: room for them.
        int rcv = 8 << 20;
        setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
        int one = 1;
        setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
        sockaddr_nl sa{};
        sa.nl_family = AF_NETLINK;
        if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0)
            return fail("bind: " + std::string(strerror(errno)));
        if (!resolveFamily() || !readPolicies())
            return stats_;
        stats_.ops = static_cast<unsigned>(ops_.size());
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(opt_.seconds);
        while (stats_.sent < opt_.requests && std::chrono::steady_clock::now() < end) {
            // A bounded number of live probes: kprobes on kfree or schedule fire all the time.
            if (ids_.size() > 16) {
                Message del(family_, PROBECTL_CMD_PROBE_DEL, NLM_F_REQUEST | NLM_F_ACK, ++seq_);
                del.put(PROBECTL_A_PROBE_ID, &ids_.front(), sizeof(ids_.front()));
                ids_.erase(ids_.begin());
                auto& db = del.finish();
                if (opt_.log_requests)
                    kmsg("nlfuzz req " + hex(db));
                exchange(db, PROBECTL_CMD_PROBE_DEL);
                continue;
            }
            const Op& op = ops_[pick(ops_.size())];
            const bool dump = op.dump && (!op.do_ || coin());
            const std::uint32_t policy = dump ? op.dump_policy : op.do_policy;
            std::uint16_t flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
            Message m(family_, op.cmd, flags, ++seq_);
            std::int64_t lie = 0;
            const bool random = pick(4) == 0;
            if (random)
                randomAttrs(m, lie);
            else if (op.cmd == PROBECTL_CMD_PROBE_ADD && pick(4) != 0)
                probeAddAttrs(m, policy);
            else
                structuredAttrs(m, policy);
            auto& b = m.finish(lie);
            if (static_cast<std::int64_t>(b.size()) + lie <
                static_cast<std::int64_t>(NLMSG_HDRLEN)) {
                // netlink_rcv_skb() skips such a message without an ack: check it stays silent.
                stats_.sent++;
                if (silent(b))
                    stats_.discarded++;
                else
                    stats_.failure = "a message shorter than its header was answered";
                continue;
            }
            if (opt_.log_requests)
                kmsg("nlfuzz req " + hex(b));
            if (!exchange(b, op.cmd))
                stats_.unanswered_requests.push_back(
                    "cmd " + std::to_string(op.cmd) + (dump ? " dump" : " do") +
                    (random ? " random" : " structured") + ", " + std::to_string(b.size()) +
                    " bytes, nlmsg_len " +
                    std::to_string(static_cast<std::int64_t>(b.size()) + lie));
        }
        close(fd_);
        return stats_;
    }

  private:
    FuzzStats fail(std::string why) {
        stats_.failure = std::move(why);
        if (fd_ >= 0)
            close(fd_);
        fd_ = -1;
        return stats_;
    }

    std::size_t pick(std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }
    bool coin() { return pick(2) == 0; }
    std::uint64_t any64() { return std::uniform_int_distribution<std::uint64_t>()(rng_); }

    // Sends a control request and collects its replies' payloads (after the genl header).
    bool control(std::uint8_t cmd, std::uint16_t flags,
                 const std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>>& attrs,
                 std::vector<std::vector<std::uint8_t>>& replies) {
        Message m(GENL_ID_CTRL, cmd, NLM_F_REQUEST | NLM_F_ACK | flags, ++seq_);
        for (const auto& [t, v] : attrs)
            m.put(t, v.data(), v.size());
        auto& b = m.finish();
        if (send(fd_, b.data(), b.size(), 0) < 0)
            return false;
        std::vector<std::uint8_t> buf(1 << 16);
        for (;;) {
            const ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
            if (n < 0)
                return false;
            auto len = static_cast<std::size_t>(n);
            for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len);
                 h = NLMSG_NEXT(h, len)) {
                if (h->nlmsg_seq != seq_)
                    continue;
                if (h->nlmsg_type == NLMSG_DONE)
                    return true;
                if (h->nlmsg_type == NLMSG_ERROR) {
                    const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
                    if (e->error)
                        return false;
                    if (!(flags & NLM_F_DUMP))
                        return true;
                    continue;
                }
                const auto* p = static_cast<const std::uint8_t*>(NLMSG_DATA(h)) + GENL_HDRLEN;
                replies.emplace_back(p, p + (h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN));
            }
        }
    }

    bool resolveFamily() {
        std::vector<std::uint8_t> name(PROBECTL_GENL_NAME,
                                       PROBECTL_GENL_NAME + sizeof(PROBECTL_GENL_NAME));
        std::vector<std::vector<std::uint8_t>> replies;
        if (!control(CTRL_CMD_GETFAMILY, 0, {{CTRL_ATTR_FAMILY_NAME, name}}, replies) ||
            replies.empty()) {
            fail("the probectl family is not registered (module not loaded?)");
            return false;
        }
        const auto& r = replies.front();
        forEachAttr(
            r.data(), r.size(), [&](std::uint16_t t, const std::uint8_t* p, std::size_t len) {
                if (t == CTRL_ATTR_FAMILY_ID)
                    family_ = readAs<std::uint16_t>(p, len);
                if (t != CTRL_ATTR_OPS)
                    return;
                forEachAttr(p, len, [&](std::uint16_t, const std::uint8_t* op, std::size_t oplen) {
                    Op o;
                    std::uint32_t fl = 0;
                    forEachAttr(
                        op, oplen, [&](std::uint16_t ot, const std::uint8_t* v, std::size_t vl) {
                            if (ot == CTRL_ATTR_OP_ID)
                                o.cmd = static_cast<std::uint8_t>(readAs<std::uint32_t>(v, vl));
                            if (ot == CTRL_ATTR_OP_FLAGS)
                                fl = readAs<std::uint32_t>(v, vl);
                        });
                    o.do_ = fl & GENL_CMD_CAP_DO;
                    o.dump = fl & GENL_CMD_CAP_DUMP;
                    if (o.do_ || o.dump)
                        ops_.push_back(o);
                });
            });
        if (!family_ || ops_.empty()) {
            fail("the family lists no operations");
            return false;
        }
        return true;
    }

    bool readPolicies() {
        std::vector<std::uint8_t> id(sizeof(family_));
        std::memcpy(id.data(), &family_, sizeof(family_));
        std::vector<std::vector<std::uint8_t>> replies;
        if (!control(CTRL_CMD_GETPOLICY, NLM_F_DUMP, {{CTRL_ATTR_FAMILY_ID, id}}, replies)) {
            fail("CTRL_CMD_GETPOLICY failed");
            return false;
        }
        for (const auto& r : replies) {
            forEachAttr(
                r.data(), r.size(), [&](std::uint16_t t, const std::uint8_t* p, std::size_t len) {
                    if (t == CTRL_ATTR_OP_POLICY) {
                        forEachAttr(
                            p, len, [&](std::uint16_t cmd, const std::uint8_t* q, std::size_t ql) {
                                for (auto& o : ops_) {
                                    if (o.cmd != cmd)
                                        continue;
                                    forEachAttr(q, ql,
                                                [&](std::uint16_t k, const std::uint8_t* v,
                                                    std::size_t vl) {
                                                    if (k == CTRL_ATTR_POLICY_DO)
                                                        o.do_policy = readAs<std::uint32_t>(v, vl);
                                                    if (k == CTRL_ATTR_POLICY_DUMP)
                                                        o.dump_policy =
                                                            readAs<std::uint32_t>(v, vl);
                                                });
                                }
                            });
                    }
                    if (t != CTRL_ATTR_POLICY)
                        return;
                    forEachAttr(
                        p, len, [&](std::uint16_t idx, const std::uint8_t* q, std::size_t ql) {
                            forEachAttr(
                                q, ql,
                                [&](std::uint16_t attr, const std::uint8_t* a, std::size_t al) {
                                    PolicyAttr pa;
                                    pa.id = attr;
                                    forEachAttr(
                                        a, al,
                                        [&](std::uint16_t k, const std::uint8_t* v,
                                            std::size_t vl) {
                                            switch (k) {
                                                case NL_POLICY_TYPE_ATTR_TYPE:
                                                    pa.type = readAs<std::uint32_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MIN_VALUE_U:
                                                    pa.min_u = readAs<std::uint64_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MAX_VALUE_U:
                                                    pa.max_u = readAs<std::uint64_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MIN_VALUE_S:
                                                    pa.min_s = readAs<std::int64_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MAX_VALUE_S:
                                                    pa.max_s = readAs<std::int64_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MIN_LENGTH:
                                                    pa.min_len = readAs<std::uint32_t>(v, vl);
                                                    break;
                                                case NL_POLICY_TYPE_ATTR_MAX_LENGTH:
                                                    pa.max_len = readAs<std::uint32_t>(v, vl);
                                                    break;
                                                default:
                                                    break;
                                            }
                                        });
                                    policies_[idx].push_back(pa);
                                });
                        });
                });
        }
        return true;
    }

    std::vector<std::uint8_t> corpusString() {
        static const char* const kStrings[] = {
            "vfs_read",
            "do_sys_openat2",
            "__x64_sys_getppid",
            "schedule",
            "kfree",
            "no_such_function_at_all",
            "sched:sched_process_fork",
            "syscalls:sys_enter_openat",
            "nosuch:event",
            "sched_process_fork",
            "/nonexistent/file",
            "/proc/self/exe",
            "",
            "*",
            "??",
            "%s%n%x",
        };
        std::string s;
        const std::size_t n = std::size(kStrings) + 2;
        const std::size_t i = pick(n);
        if (i < std::size(kStrings))
            s = kStrings[i];
        else if (i == std::size(kStrings))
            s = opt_.uprobe_file;
        else
            for (std::size_t k = pick(300); k; k--)
                s.push_back(static_cast<char>(1 + pick(255)));
        std::vector<std::uint8_t> v(s.begin(), s.end());
        if (pick(8))
            v.push_back(0);  // mostly terminated, sometimes not
        return v;
    }

    std::vector<std::uint8_t> bytes(std::size_t n) {
        std::vector<std::uint8_t> v(n);
        for (auto& c : v)
            c = static_cast<std::uint8_t>(pick(256));
        return v;
    }

    // Mostly values the policy accepts, so requests get past validation to the module's own
    // checks; sometimes its edges, one beyond, or anything.
    std::uint64_t unsignedValue(const PolicyAttr& a) {
        if (a.max_u < a.min_u || a.min_u > UINT64_MAX - 16)
            return any64();
        const std::uint64_t hi = std::min(a.max_u, a.min_u + 16);
        switch (pick(10)) {
            case 0:
                return a.min_u;
            case 1:
                return a.max_u;
            case 2:
                return a.max_u + 1;
            case 3:
                return any64();
            case 4:
                return PROBECTL_PROBE_F_PERSISTENT;
            default:
                return a.min_u + pick(hi - a.min_u + 1);
        }
    }

    // A PROBE_ADD the module would accept (a kprobe, kretprobe, uprobe, uretprobe or
    // tracepoint on real targets), with a few other attributes of the policy added, so
    // requests get past the basic checks to fetch programs, predicates and maps.
    void probeAddAttrs(Message& m, std::uint32_t policy) {
        static const char* const kSymbols[] = {"vfs_read", "kfree", "schedule", "do_sys_openat2",
                                               "__x64_sys_getppid"};
        const auto kind = static_cast<std::uint32_t>(1 + pick(PROBECTL_KIND_MAX));
        m.put(PROBECTL_A_PROBE_KIND, &kind, sizeof(kind));
        std::set<std::uint16_t> set{PROBECTL_A_PROBE_KIND};
        if (kind == PROBECTL_KIND_UPROBE || kind == PROBECTL_KIND_URETPROBE) {
            m.put(PROBECTL_A_PROBE_PATH, opt_.uprobe_file.c_str(), opt_.uprobe_file.size() + 1);
            const std::uint64_t off = pick(8192);
            m.put(PROBECTL_A_PROBE_FILE_OFFSET, &off, sizeof(off));
            set.insert({PROBECTL_A_PROBE_PATH, PROBECTL_A_PROBE_FILE_OFFSET});
        } else {
            const std::string sym = kind == PROBECTL_KIND_TRACEPOINT
                                        ? "sched_process_fork"
                                        : kSymbols[pick(std::size(kSymbols))];
            m.put(PROBECTL_A_PROBE_SYMBOL, sym.c_str(), sym.size() + 1);
            set.insert(PROBECTL_A_PROBE_SYMBOL);
        }
        auto it = policies_.find(policy);
        if (it == policies_.end())
            return;
        for (const PolicyAttr& a : it->second)
            if (!set.count(a.id) && pick(6) == 0)
                putStructured(m, a);
    }

    void putValue(Message& m, std::uint16_t id, std::uint64_t v, std::size_t size) {
        m.put(id, &v, size);  // little-endian: the low bytes
    }

    void structuredAttrs(Message& m, std::uint32_t policy) {
        auto it = policies_.find(policy);
        if (it == policies_.end())
            return;
        for (const PolicyAttr& a : it->second) {
            const bool blob = a.type == NL_ATTR_TYPE_BINARY || a.type == NL_ATTR_TYPE_NESTED;
            if (pick(blob ? 3 : 2) == 0)
                putStructured(m, a);  // present one time in two, programs and blobs one in three
        }
    }

    // One attribute of the policy's type; a probe id is mostly one the module handed out.
    void putStructured(Message& m, const PolicyAttr& a) {
        if (a.id == PROBECTL_A_PROBE_ID && !ids_.empty() && pick(3) != 0) {
            const std::uint32_t id = ids_[pick(ids_.size())];
            m.put(a.id, &id, sizeof(id));
            return;
        }
        switch (a.type) {
            case NL_ATTR_TYPE_FLAG:
                m.put(a.id, nullptr, 0);
                break;
            case NL_ATTR_TYPE_U8:
            case NL_ATTR_TYPE_S8:
                putValue(m, a.id, unsignedValue(a), 1);
                break;
            case NL_ATTR_TYPE_U16:
            case NL_ATTR_TYPE_S16:
                putValue(m, a.id, unsignedValue(a), 2);
                break;
            case NL_ATTR_TYPE_U32:
            case NL_ATTR_TYPE_S32:
                putValue(m, a.id, unsignedValue(a), 4);
                break;
            case NL_ATTR_TYPE_U64:
            case NL_ATTR_TYPE_S64:
                putValue(m, a.id, unsignedValue(a), 8);
                break;
            case NL_ATTR_TYPE_STRING:
            case NL_ATTR_TYPE_NUL_STRING: {
                auto s = corpusString();
                m.put(a.id, s.data(), s.size());
                break;
            }
            default: {
                // Binary and nested: lengths at and around the policy's bounds, or any.
                std::size_t n = 0;
                switch (pick(5)) {
                    case 0:
                        n = a.min_len;
                        break;
                    case 1:
                        n = a.max_len;
                        break;
                    case 2:
                        n = a.max_len ? a.max_len + 1 : 1;
                        break;
                    case 3:
                        n = a.min_len ? a.min_len - 1 : 0;
                        break;
                    default:
                        n = pick(2048);
                        break;
                }
                auto v = bytes(std::min<std::size_t>(n, 4000));
                // Small integers are what headers and counts hold: bias towards them.
                if (coin())
                    for (std::size_t i = 0; i < v.size(); i += 1 + pick(8))
                        v[i] = static_cast<std::uint8_t>(pick(16));
                m.put(a.id, v.data(), v.size());
                break;
            }
        }
    }

    void randomAttrs(Message& m, std::int64_t& lie) {
        for (std::size_t k = pick(6); k; k--) {
            const auto type =
                static_cast<std::uint16_t>(pick(4) ? pick(PROBECTL_A_MAX + 4) : any64());
            auto v = bytes(pick(64));
            m.put(type, v.data(), v.size());
        }
        switch (pick(6)) {
            case 0:
                m.raw(bytes(1 + pick(7)));
                break;  // a torn attribute header
            case 1:
                lie = -static_cast<std::int64_t>(pick(8));
                break;  // nlmsg_len short
            case 2: {   // an attribute longer than the message
                nlattr a{};
                a.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + 64 + pick(1000));
                a.nla_type = static_cast<std::uint16_t>(pick(PROBECTL_A_MAX + 1));
                std::vector<std::uint8_t> h(sizeof(a));
                std::memcpy(h.data(), &a, sizeof(a));
                m.raw(h);
                break;
            }
            default:
                break;
        }
    }

    // Sends one request and waits for its answer, reading records and other replies.
    // False when no answer came.
    bool exchange(const std::vector<std::uint8_t>& b, std::uint8_t cmd) {
        drain();
        stats_.sent++;
        if (send(fd_, b.data(), b.size(), 0) < 0) {
            // The socket layer refused it (nlmsg_len larger than the bytes): no request.
            stats_.errors[errno]++;
            stats_.answered++;
            return true;
        }
        const std::uint32_t seq = seq_;
        std::vector<std::uint8_t> buf(1 << 20);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        bool overran = false;
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 1000) <= 0)
                continue;
            const ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
            if (n > static_cast<ssize_t>(buf.size())) {
                stats_.failure = "a reply of " + std::to_string(n) + " bytes did not fit";
                continue;
            }
            if (n < 0) {
                if (errno == ENOBUFS) {
                    overran = true;
                    stats_.overruns++;
                }
                continue;
            }
            auto len = static_cast<std::size_t>(n);
            for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len);
                 h = NLMSG_NEXT(h, len)) {
                if (h->nlmsg_seq != seq)
                    continue;
                if (cmd == PROBECTL_CMD_PROBE_ADD && h->nlmsg_type == family_)
                    rememberId(h);
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    int err = 0;
                    if (h->nlmsg_type == NLMSG_ERROR)
                        err = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
                    else if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
                        err = -readAs<int>(static_cast<const std::uint8_t*>(NLMSG_DATA(h)),
                                           sizeof(int));
                    stats_.answered++;
                    if (opt_.log_requests)
                        kmsg("nlfuzz answered " + std::to_string(err));
                    if (err)
                        stats_.errors[err]++;
                    else {
                        stats_.accepted++;
                        stats_.accepted_by_op[std::to_string(cmd)]++;
                    }
                    return true;
                }
            }
        }
        if (!overran)
            stats_.unanswered++;
        return overran;
    }

    // Sends a message no answer is due for; true when none came within 200 ms.
    bool silent(const std::vector<std::uint8_t>& b) {
        drain();
        const std::uint32_t seq = seq_;
        if (send(fd_, b.data(), b.size(), 0) < 0)
            return true;
        std::vector<std::uint8_t> buf(1 << 20);
        // Records of live probes keep the socket readable: bound the wait by time.
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        while (std::chrono::steady_clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0)
                continue;
            const ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
            if (n <= 0)
                continue;
            auto len = static_cast<std::size_t>(n);
            for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len);
                 h = NLMSG_NEXT(h, len))
                if (h->nlmsg_seq == seq && h->nlmsg_type == NLMSG_ERROR)
                    return false;
        }
        return true;
    }

    void rememberId(const nlmsghdr* h) {
        if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
            return;
        const auto* p = static_cast<const std::uint8_t*>(NLMSG_DATA(h)) + GENL_HDRLEN;
        forEachAttr(p, h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN),
                    [&](std::uint16_t t, const std::uint8_t* v, std::size_t len) {
                        if (t == PROBECTL_A_PROBE_ID && len == sizeof(std::uint32_t))
                            ids_.push_back(readAs<std::uint32_t>(v, len));
                    });
    }

    static std::string hex(const std::vector<std::uint8_t>& b) {
        static const char* const kDigits = "0123456789abcdef";
        std::string s;
        for (auto c : b) {
            s.push_back(kDigits[c >> 4]);
            s.push_back(kDigits[c & 15]);
        }
        return s;
    }

    void kmsg(const std::string& line) {
        const int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        const std::string l = "<4>" + line + "\n";
        (void)!write(fd, l.data(), l.size());
        close(fd);
    }

    // Reads whatever is queued (records, late dump parts) without waiting.
    void drain() {
        std::vector<std::uint8_t> buf(1 << 16);
        // Bounded: records may arrive as fast as they are read.
        for (int i = 0; i < 256; i++)
            if (recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT) <= 0 && errno != ENOBUFS)
                return;
    }

    FuzzOptions opt_;
    std::mt19937_64 rng_;
    FuzzStats stats_;
    int fd_ = -1;
    std::uint16_t family_ = 0;
    std::uint32_t seq_ = 0;
    std::vector<Op> ops_;
    std::vector<std::uint32_t> ids_;  // probes PROBE_ADD handed out and not yet deleted here
    std::map<std::uint32_t, std::vector<PolicyAttr>> policies_;
};

}  // namespace

FuzzStats fuzzFamily(const FuzzOptions& opt) {
    return Fuzzer(opt).run();
}

unsigned removePersistentProbes() {
    auto c = probectl::Client::connect();
    if (!c)
        return 0;
    unsigned n = 0;
    auto probes = c->listProbes();
    if (!probes)
        return 0;
    for (const auto& p : *probes)
        if (p.persistent() && c->removeProbe(p.id))
            n++;
    return n;
}

}  // namespace itest
