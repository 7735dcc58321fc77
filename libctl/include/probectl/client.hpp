// Client: one generic-netlink socket to the "probectl" family (kmod/uapi/probectl.h).
//
// The kernel unicasts a probe's EVENTS to the socket that added it, and removes a
// non-persistent probe when that socket closes; so one Client carries both the commands
// and the records of a session. Records that arrive while a command waits for its ack
// (always the case for flush()) are queued and handed out by the next consume().
//
// All methods return Result; errors carry the kernel's errno and extack text. A command
// sent after the module was unloaded fails with ENODEV "...: the probectl module was
// unloaded while this session was open..." (the kernel's ENOENT for a family that is gone,
// told apart from an unknown probe id by asking the controller for the family's id). Not
// thread-safe: use one Client from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/aggr_map.hpp"
#include "probectl/counters.hpp"
#include "probectl/event.hpp"
#include "probectl/event_view.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/predicate.hpp"
#include "probectl/result.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct StackReply;  // kernel_stacks.hpp
struct MapsReply;   // kernel_stacks.hpp

// Probe kinds on the wire (enum probectl_probe_kind; the values are checked against the
// uapi header in src/core/uapi_checks.cpp, which public headers do not include).
enum class ProbeKind : std::uint32_t {
    Kprobe = 1,
    Kretprobe = 2,
    Uprobe = 3,  // USDT probes too (with ref_ctr_offset)
    Uretprobe = 4,
    Tracepoint = 5,  // symbol = the tracepoint's name
};

// Probe flags on the wire (PROBECTL_PROBE_F_*).
inline constexpr std::uint32_t kProbeFlagPersistent = 1u << 0;
inline constexpr std::uint32_t kProbeFlagSyscall = 1u << 1;
inline constexpr std::uint32_t kProbeFlagEnabled = 1u << 2;
// Written as syscall:NAME: what `probectl list` calls the probe's kind. kProbeFlagSyscall
// says where its arguments come from, true of a kprobe on __x64_sys_NAME too.
inline constexpr std::uint32_t kProbeFlagSyscallSpec = 1u << 4;

// "kprobe", "kretprobe", "uprobe", "uretprobe", "tracepoint", "unknown"
const char* toString(ProbeKind kind);

// True for the kinds located by file and file offset.
constexpr bool isUserKind(ProbeKind kind) {
    return kind == ProbeKind::Uprobe || kind == ProbeKind::Uretprobe;
}

// PROBE_ADD arguments.
// Kernel kinds: exactly one of `symbol` (non-empty) or `addr` (non-zero) locates the probe;
// the kernel resolves `symbol` itself (kallsyms_lookup_name semantics: the first of
// duplicate names), so callers that care resolve duplicates in userspace (KernelSymbols)
// and pass `addr`.
// User kinds (uprobe, uretprobe): `path` and `file_offset` locate it; symbol, offset, addr
// and maxactive must be left empty. The kernel opens `path` in the caller's mount
// namespace: give an absolute path valid there (e.g. /proc/PID/root/... for a process in
// another namespace).
struct ProbeRequest {
    ProbeKind kind = ProbeKind::Kprobe;
    std::string symbol;           // < PROBECTL_SYMBOL_MAX bytes
    std::uint32_t offset = 0;     // bytes after symbol (kprobes only)
    std::uint64_t addr = 0;       // kernel virtual address instead of symbol
    std::uint32_t maxactive = 0;  // kretprobe instances, 0 = kernel default, max 4096
    std::uint32_t flags = 0;      // PROBECTL_PROBE_F_PERSISTENT | PROBECTL_PROBE_F_SYSCALL
    std::string path;             // user kinds: absolute path, < PROBECTL_PATH_MAX bytes
    // User kinds: FILE offset (bytes from the start of the file) of the probed instruction,
    // as computed from the ELF program headers (st_value - p_vaddr + p_offset); not a
    // virtual address.
    std::uint64_t file_offset = 0;
    // USDT: file offset of the probe's 16-bit semaphore (2-byte aligned), which the kernel
    // raises while the probe is armed in a process; 0 = none.
    std::uint64_t ref_ctr_offset = 0;
    // Fetch programs (compileFetchArgs), one per fetch argument, concatenated in order; each
    // record then carries their values after the fixed part (Event::fetched). Not with
    // PROBECTL_PROBE_F_PERSISTENT (EINVAL from the kernel).
    std::vector<FetchInsn> fetch;
    // Predicate (compilePredicate) over the fetched values; no instructions = none. The kernel
    // runs it before reserving a record and counts what it rejects (ProbeInfo::rejected).
    // Not with PROBECTL_PROBE_F_PERSISTENT.
    FilterProgram filter;
    // Kretprobes: the first `fetch_entry` programs run at function entry, their values kept
    // until the return (a syscall's path); the rest run at the return. 0: all at the return.
    std::uint32_t fetch_entry = 0;
    // In-kernel aggregation (aggr.hpp: prepareAggregation fills it): the probe adds its hits
    // to a map instead of sending records. Not with PROBECTL_PROBE_F_PERSISTENT.
    std::optional<AggrMapSpec> aggr;
    // Uprobes: the probed instruction is a function's first (not sent; $ustack loads then
    // read the caller's return address at the stack pointer, kernel_stacks.hpp).
    bool function_entry = false;
    // The spec as the user wrote it, kept by the module for `probectl list` (labelOf()
    // bounds it); "" for none.
    std::string label;
    // The optional record parts (kRecordPart*, event.hpp) this probe's records carry: ask
    // only for what is read to keep records small (Event::parts says what came).
    std::uint32_t record_parts = kRecordPartsAll;
};

// `spec` cut to fit a probe label (PROBECTL_LABEL_MAX - 1 bytes, "..." at the end when cut).
std::string labelOf(std::string_view spec);

// PROBE_ADD reply.
struct AddedProbe {
    std::uint32_t id = 0;
    std::uint64_t addr = 0;  // kernel address registered (0 if it did not say; 0 for uprobes)
};

// SESSION_GET reply: the tgid filter's processes as the module counts them (a process joins
// at its followed fork, before it runs, and is counted exited once its last thread exits).
struct SessionReply {
    std::uint32_t session_live = 0;   // not exited yet
    std::uint32_t session_procs = 0;  // living or exited: given by SESSION_SET or SESSION_ADD,
                                      // or followed
};

// One PROBE_GET dump entry. Counters are totals since the probe was added.
struct ProbeInfo {
    std::uint32_t id = 0;
    ProbeKind kind = ProbeKind::Kprobe;
    std::string symbol;  // empty for address probes
    std::uint32_t offset = 0;
    std::uint64_t addr = 0;
    std::uint32_t maxactive = 0;
    std::uint32_t flags = 0;  // PROBECTL_PROBE_F_*
    std::uint32_t owner = 0;  // netlink portid of the owning socket; 0 when persistent
    // hits, nmissed, dropped, filtered, rejected, unreturned, depth_skipped (counters.hpp)
    PROBECTL_PROBE_COUNTERS(PROBECTL_COUNTER_MEMBER)
    // uretprobes: the kernel's uretprobe nesting limit depth_skipped counts against; 0 when
    // the module cannot read the nesting depth on this kernel (or predates the attribute).
    std::uint32_t depth_limit = 0;
    std::string path;                  // user kinds: the probed file
    std::uint64_t file_offset = 0;     // user kinds: file offset of the probed instruction
    std::uint64_t ref_ctr_offset = 0;  // USDT semaphore file offset, 0 = none
    std::string label;                 // the spec as its adder wrote it ("" if not given)
    // Netlink portid of the client that removed this probe of the caller's session; 0 while
    // registered. Such a probe is listed to its owner only, its counters final at the removal.
    std::uint32_t removed_by = 0;
    // The process that removed it (its tgid and comm when it did), with removed_by.
    std::uint32_t removed_by_pid = 0;
    std::string removed_by_comm;

    bool persistent() const { return flags & kProbeFlagPersistent; }
    bool enabled() const { return flags & kProbeFlagEnabled; }
    bool syscallSpec() const { return flags & kProbeFlagSyscallSpec; }
    // "do_sys_openat2+0x10", "0xffffffff81234560", or for user kinds "/bin/busybox:0x1234"
    // (file offset) with " (semaphore 0x...)" for USDT probes
    std::string location() const;
};

struct ClientOptions {
    // SO_RCVBUF request in bytes. Records arrive in bursts; a small buffer turns a burst into
    // ENOBUFS overruns. Falls back to the kernel's rmem_max cap silently; connect() fails if
    // the result is below 32 KiB.
    int rcvbuf_bytes = 4 << 20;
    // Try SO_RCVBUFFORCE first (works with CAP_NET_ADMIN, exceeds rmem_max).
    bool force_rcvbuf = true;
    // How long a command waits for its ack (ms, < 0 forever) before failing with
    // ETIMEDOUT. An ack can be lost when the receive buffer overflows; without a bound the
    // caller would hang.
    int reply_timeout_ms = 10000;

    // For a socket that only reads dumps (STACK_GET, MAPS_GET) beside a session's: no record
    // bursts arrive on it, so 1 MiB of receive buffer will do.
    static ClientOptions dumpsOnly() {
        ClientOptions o;
        o.rcvbuf_bytes = 1 << 20;
        return o;
    }
};

class Client {
  public:
    // Opens a NETLINK_GENERIC socket (NETLINK_EXT_ACK and NETLINK_CAP_ACK on), sizes its
    // receive buffer, resolves the "probectl" family and checks its version.
    // Errors: ENOENT "family 'probectl' not found: is probectl.ko loaded? (sudo modprobe
    // probectl; ...)"; EPROTO on a family version other than PROBECTL_GENL_VERSION;
    // socket errnos otherwise.
    static Result<Client> connect(const ClientOptions& options = {});

    Client(Client&&) noexcept;
    Client& operator=(Client&&) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client();  // closes the socket: the kernel then removes this socket's probes

    // PROBE_ADD: the kernel registers and arms the probe, owned by this socket unless
    // PROBECTL_PROBE_F_PERSISTENT. Errors: kernel errno + extack (EINVAL for a blacklisted
    // or unknown location, ENOENT, EPERM without CAP_SYS_ADMIN/CAP_PERFMON, ...).
    Result<AddedProbe> addProbe(const ProbeRequest& req);
    // PROBE_DEL. ENOENT for an unknown id; EPERM for a probe the caller does not own (another
    // socket's, or a persistent probe another euid added) without CAP_SYS_ADMIN. Removing
    // another socket's probe leaves that socket its final counters (ProbeInfo::removed_by).
    Result<void> removeProbe(std::uint32_t id);
    // PROBE_GET dump: every probe of every owner, in kernel order, then this socket's probes
    // that another client removed (ProbeInfo::removed_by set).
    Result<std::vector<ProbeInfo>> listProbes();
    // PROBE_GET of one id: a registered probe, or one of this socket's that another client
    // removed. ENOENT when neither.
    Result<ProbeInfo> getProbe(std::uint32_t id);
    // PROBE_ENABLE / PROBE_DISABLE: arm or disarm without removing (counters are kept).
    // ENOENT, EPERM as for removeProbe().
    Result<void> enable(std::uint32_t id);
    Result<void> disable(std::uint32_t id);
    // PROBE_DISABLE without an id: every probe of this socket's session stops counting hits
    // at once, then each is disarmed; one probe after another, those still armed would count
    // hits during the others' disarm (milliseconds each for a kprobe). Success without a
    // session. Errors: the first disarm's (the others are disarmed all the same).
    Result<void> disableSession();
    // SESSION_SET: only threads whose tgid is in `tgids` produce records for this socket's
    // probes (others count as `filtered`). Empty = no filter. At most PROBECTL_MAX_TGIDS
    // (EINVAL locally beyond that). With `follow`, processes those processes fork from now
    // on join the filter, across exec (EINVAL locally with an empty list; EOPNOTSUPP from a
    // kernel without the sched_process_fork tracepoint). Uprobes are armed only in the
    // filtered processes' address spaces.
    // It replaces the filter, processes that followed forks added included: to add processes
    // to a filter, addSessionTgids().
    Result<void> setSessionTgids(const std::vector<std::uint32_t>& tgids, bool follow = false);
    // SESSION_ADD: `tgids` join the tgid filter, which keeps the processes it holds (those
    // followed forks added since SESSION_SET too) and its follow setting. How to follow a
    // process and the children it has: setSessionTgids({pid}, true), then the children read
    // from /proc added with this, so one forked in between stays followed. Any number of ids
    // (sent PROBECTL_MAX_TGIDS per message). Errors: EINVAL locally for an empty list, ENOENT
    // without a filter, EOPNOTSUPP from a module older than the command (kernel extack).
    Result<void> addSessionTgids(const std::vector<std::uint32_t>& tgids);
    // SESSION_GET: how many processes the tgid filter holds and how many of them have not
    // exited. Errors: ENOENT without a filter, EOPNOTSUPP from a kernel without the
    // sched_process_exit tracepoint or a module older than the command (kernel extack).
    Result<SessionReply> getSessionFilter();
    // SESSION_MATCH: replaces the task match. A hit of this socket's probes counts only when
    // its task is in every non-empty list (`pids`: tgids, `tids`: thread ids, `uids`: uids in
    // the initial user namespace) and its comm matches the glob `comm` ("" = any);
    // otherwise it counts as `filtered`, like hits outside the tgid filter. All empty
    // removes the match. Errors: EINVAL locally for a list over PROBECTL_MATCH_MAX_IDS or a
    // comm of PROBECTL_MATCH_COMM_MAX bytes or more; kernel errno + extack otherwise.
    Result<void> setSessionMatch(const std::vector<std::uint32_t>& pids,
                                 const std::vector<std::uint32_t>& tids,
                                 const std::vector<std::uint32_t>& uids, const std::string& comm);
    // FLUSH: the kernel sends every buffered record of this socket's probes, then acks.
    // Those EVENTS messages are queued here; call consume() afterwards to receive them.
    // The kernel sends only what fits in the receive buffer and answers EAGAIN when more
    // remains: flush() then repeats the request until the ring is empty (the queued records
    // are held in memory meanwhile).
    Result<void> flush();
    // AGGR_GET dump of probe `id`'s aggregation map: each reply message goes to `on_reply`
    // (a map larger than one message comes in several). Errors: EINVAL for a probe without
    // a map, ENOENT for an unknown id (kernel errno + extack), or on_reply's. `clear`: the
    // kernel zeroes the values as it reads them, so each hit is in exactly one such read
    // (keys stay; the first clearing read allocates a second bank of values).
    Result<void> dumpAggregation(std::uint32_t id,
                                 const std::function<Result<void>(const AggrReply&)>& on_reply,
                                 bool clear = false);
    // STACK_GET dump of the stack map of probe `id`'s session (kernel_stacks.hpp): each reply
    // message goes to `on_reply`. Errors: EINVAL when the session has no stack map (none of
    // its probes captures stacks), ENOENT for an unknown id (kernel errno + extack), or
    // on_reply's.
    Result<void> dumpStacks(std::uint32_t id,
                            const std::function<Result<void>(const StackReply&)>& on_reply);
    // MAPS_GET through probe `id`'s session: the mappings, as /proc/PID/maps text, of the
    // address space the kernel kept for process `tgid` since one of the session's probes
    // captured a user stack there (it may have exited since), which the kernel then lets go.
    // `tgid` 0: no text, only the counter. `unpinned` (if not null) receives the session's
    // hits whose address space was not kept (the kernel's table was full).
    // Errors: ENOENT when nothing is kept for `tgid` (read /proc instead) or for an unknown
    // id, EINVAL when the session captures no user stacks (kernel errno + extack).
    // `maps_seq` (a stack's, not 0): exactly that address space of `tgid`, which alone is let
    // go (ENOENT when it is not kept, or was read already); 0: the newest, all let go.
    Result<std::string> takeMaps(std::uint32_t id, pid_t tgid, std::uint64_t* unpinned = nullptr,
                                 std::uint32_t maps_seq = 0);

    // The socket fd, for poll()/epoll (POLLIN when records or a stray reply are waiting).
    int fd() const;
    // Delivers queued records, then every EVENTS message readable without blocking.
    // Returns the number of records delivered. A receive-buffer overrun (ENOBUFS) is not
    // an error: it is counted in overruns() (the kernel's per-probe `dropped` counters give
    // the exact number of records lost that way).
    // Errors: EBADMSG for malformed records (see decodeRecords), socket errnos.
    Result<std::size_t> consume(const EventCallback& on_event, const LostCallback& on_lost = {});
    // consume() with each record as a view over the received message (event_view.hpp: no
    // copy, no allocation per record; spec and values empty here, a Session adds them).
    Result<std::size_t> consumeViews(const EventViewCallback& on_event,
                                     const LostCallback& on_lost = {});
    // As consume(), but reads at most `max_datagrams` datagrams from the socket (0: no
    // limit), so a caller draining a live stream gets control back.
    Result<std::size_t> consumeAtMost(std::size_t max_datagrams, const EventCallback& on_event,
                                      const LostCallback& on_lost = {});
    Result<std::size_t> consumeAtMostViews(std::size_t max_datagrams,
                                           const EventViewCallback& on_event,
                                           const LostCallback& on_lost = {});
    // Datagrams one poll() reads at most.
    static constexpr std::size_t kPollMaxDatagrams = 64;
    // poll(fd, timeout_ms) then consumeAtMost(kPollMaxDatagrams); timeout_ms < 0 waits
    // forever. Returns 0 on timeout. EINTR from poll is returned as an error (err = EINTR) so
    // signal handlers can stop a loop.
    Result<std::size_t> poll(int timeout_ms, const EventCallback& on_event,
                             const LostCallback& on_lost = {});
    Result<std::size_t> pollViews(int timeout_ms, const EventViewCallback& on_event,
                                  const LostCallback& on_lost = {});

    // Netlink port id of this socket (the `owner` of the probes it adds).
    std::uint32_t portid() const;
    // Family version the kernel reported at connect.
    std::uint32_t familyVersion() const;
    // Receive-buffer overruns seen (ENOBUFS on the socket): records were lost.
    std::uint64_t overruns() const;

  private:
    struct Impl;  // socket, family id, receive buffer, queued EVENTS (src/client.cpp)
    explicit Client(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
