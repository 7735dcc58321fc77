// Session: the kernel backend's Tracer (tracer.hpp). A tracing session that owns one Client
// (socket) and the probes it adds, for its lifetime. Destroying it removes the probes (the kernel
// would also remove them when the socket closes, however the process dies). Records arrive decoded,
// tagged with the spec text of their probe.
//
// Typical use:
//   auto s = probectl::Session::open({.tgids = {child_pid}});
//   if (!s) die(s.error().describe());
//   auto id = s->add("syscall:getppid");          // Result<uint32_t>
//   s->run(on_event, [&] { return stop_requested; });
//   auto stats = s->stop(on_event);               // disable, flush, drain, counters
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "probectl/client.hpp"
#include "probectl/counters.hpp"
#include "probectl/event.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/syscall_probe.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct SessionOptions {
    // Only these processes (thread-group ids) produce records; empty = every process.
    // At most PROBECTL_MAX_TGIDS. Set before any probe is added, so no stray records.
    std::vector<std::uint32_t> tgids;
    // Processes that the filtered ones fork from now on are traced too (strace -f), and so
    // are their descendants running already: open() sets the filter with follow first, then
    // adds the descendants it reads from /proc (Client::addSessionTgids), so a process forked
    // in between stays traced (against a probectl.ko without SESSION_ADD they are set again
    // with the filter, which may drop it: stats().notes says so). Needs a non-empty `tgids`
    // (or a `command`).
    bool follow = false;
    // A command to trace (argv[0] looked up in PATH): forked and held before exec until
    // start() (HeldCommand), its tgid appended to `tgids`, so its first instruction is
    // already traced. It dies with this process; destroying the Session kills it.
    std::vector<std::string> command;
    // Adopt the command's orphans (HeldCommand::spawn's adopt_orphans): this process
    // becomes a child subreaper for the rest of its life, and killCommand() kills every
    // process under it, the caller's other children included. For a program whose only
    // child is the command (the probectl CLI). Off: killCommand() takes the command and
    // its descendants, and a process the command daemonised runs on.
    bool adopt_orphans = false;
    // Task match (Client::setSessionMatch), on top of `tgids`: a hit counts only when its
    // task's tgid is in `match_pids`, its thread id in `match_tids`, its uid (initial user
    // namespace) in `match_uids` (each when non-empty) and its comm matches the glob
    // `match_comm` (when non-empty). Pure filters: unlike `tgids` they decide nothing about
    // where uprobes are armed or how specs are resolved. Others count as `filtered`.
    std::vector<std::uint32_t> match_pids;
    std::vector<std::uint32_t> match_tids;
    std::vector<std::uint32_t> match_uids;
    std::string match_comm;
    // User-space specs (uprobe, uretprobe, usdt) name files and libraries as this process
    // sees them (0: as the tracer sees them; see UserResolveOptions::pid).
    pid_t resolve_pid = 0;
    // Resolutions of user-space specs to reuse and keep (UserResolveCache); null: none.
    std::shared_ptr<UserResolveCache> resolve_cache;
    // A uretprobe in a file that unwinds exceptions (UserTarget::exception_use) is refused
    // (EINVAL, usage) unless this is set: an exception unwinding through the probed frame
    // would end the traced program (std::terminate).
    bool uretprobe_despite_exceptions = false;
    // kretprobe instances for specs that do not set their own (0 = kernel default).
    std::uint32_t maxactive = 0;
    // Symbol table used to resolve and vet specs (not owned; must outlive the Session).
    // nullptr: the Session loads /proc/kallsyms (+ blacklist) on the first spec that needs
    // it; if that fails, kprobe/kretprobe names go to the kernel unchecked and syscall:
    // specs fail.
    const KernelSymbols* symbols = nullptr;
    ClientOptions client;
    // add()'s last step before PROBE_ADD, on every site of a spec once it is compiled: the
    // request and its fetch arguments (empty for a syscall's strace plan), which it may
    // change, e.g. to aggregate (aggr.hpp: prepareAggregation). SessionProbe keeps what was
    // sent. Not called by addRequest(). An error adds none of the spec's sites.
    std::function<Result<void>(ProbeRequest&, std::vector<FetchArg>&)> prepare;
};

// A probe this session added.
struct SessionProbe {
    std::uint32_t id = 0;
    std::string spec;             // spec text as given ("syscall:getppid")
    Resolution resolution;        // what was sent
    std::uint64_t addr = 0;       // address the kernel registered
    std::uint64_t delivered = 0;  // records received by this session (userspace count)
    // Its fetch arguments (the spec's, or a USDT probe's own arg1..argN): Event::values.
    std::vector<FetchArg> fetch_args;
    // syscall:NAME: what is fetched for the strace line without fetch arguments of its own,
    // only the syscall's name with them (Event::syscall points here); null otherwise.
    std::shared_ptr<const SyscallPlan> syscall;
};

// Per-probe counters at stop()/stats() time.
struct ProbeStats {
    std::uint32_t id = 0;
    std::string spec;
    // hits, delivered, dropped, nmissed, filtered, rejected, unreturned, depth_skipped
    // (counters.hpp): hits = delivered + dropped + rejected + unreturned + depth_skipped.
    // depth_skipped: kernel uretprobe entries whose return the kernel did not probe, the
    // thread being nested deeper than its uretprobe limit (ptrace has no such limit: 0).
    PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_MEMBER)
    // Kernel uretprobes: that limit (ProbeInfo::depth_limit); 0 when not known or not one.
    std::uint32_t depth_limit = 0;
    // Netlink portid of another client that removed the probe during the session (its
    // counters are those at the removal, as is its aggregation map, which the session keeps);
    // 0 when it was not. The remover's pid and comm when it removed it.
    std::uint32_t removed_by = 0;
    std::uint32_t removed_by_pid = 0;
    std::string removed_by_comm{};
};

// Who removed probe p (removed_by set), as notes name it: "pid 123 (probectl)", "pid 123"
// without a comm, "netlink port 456" from a module that does not report the pid.
std::string probeRemover(const ProbeStats& p);

struct SessionStats {
    std::vector<ProbeStats> probes;  // in the order the probes were added
    std::uint64_t lost = 0;          // sum of PROBECTL_A_LOST over the session
    std::uint64_t overruns = 0;      // socket receive-buffer overruns (ENOBUFS)
    // What makes the counts incomplete beyond loss: a probed file replaced on disk while
    // traced (processes started from the new file were not traced), a probe removed by
    // another client. One sentence each.
    std::vector<std::string> notes;
    // Anything lost anywhere: lost, overruns, or any probe's dropped/nmissed.
    bool anyLoss() const;
};

class Session : public Tracer {
  public:
    // Connects (see Client::connect), starts options.command held, and applies
    // options.tgids. Errors: the Client's, HeldCommand::spawn's.
    static Result<Session> open(SessionOptions options = {});

    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    // Closes the socket; the kernel then removes the session's probes, all in one batch.
    ~Session() override;

    std::string_view backend() const override { return "kernel"; }

    // Parses, resolves (KernelSymbols::resolve for kernel specs, resolveUserSpecAll for
    // uprobe/uretprobe/usdt) and adds the probe; returns its id. A USDT probe with several
    // sites adds one uprobe per site, all tagged with the spec, and returns the first id;
    // if any site fails, none stays. Errors: EINVAL with the rendered spec error (column +
    // caret); resolution errors (unknown/duplicate/blacklisted symbol, named; see
    // user_target.hpp for user-space ones); kernel errors with extack text. Every message
    // starts with the spec text.
    Result<std::uint32_t> add(std::string_view spec);
    Result<std::uint32_t> add(const ProbeSpec& spec) override;
    // Adds a request as is (no resolution), tagged `spec` in events and stats.
    Result<std::uint32_t> addRequest(const ProbeRequest& req, std::string spec);
    // The one PROBE_ADD request of a spec without fetch arguments or predicate, resolved as
    // add() resolves it with `options` (resolve_pid, maxactive, the C++ exception refusal),
    // for a caller that sends it itself (`probectl add`); no session needed. Errors: add()'s
    // resolution errors; EINVAL when the spec has fetch arguments or a predicate; ENOTUNIQ
    // for a USDT probe with several sites (each named).
    static Result<ProbeRequest> resolveRequest(const ProbeSpec& spec,
                                               const SessionOptions& options = {});

    // Replaces the tgid filter (see SessionOptions::tgids and follow).
    Result<void> setTgids(const std::vector<std::uint32_t>& tgids, bool follow = false);

    // Waits up to timeout_ms (< 0: forever) for records and delivers them. Returns the
    // number delivered (0 on timeout). EINTR is returned as an error so a signal can end
    // a loop; run() handles it.
    Result<std::size_t> poll(int timeout_ms, const EventCallback& cb) override;
    // The same as views over the records (event_view.hpp): nothing copied or allocated per
    // event.
    Result<std::size_t> pollViews(int timeout_ms, const EventViewCallback& cb) override;
    // Delivers what is readable now without blocking.
    Result<std::size_t> consume(const EventCallback& cb);
    Result<std::size_t> consumeViews(const EventViewCallback& cb);
    // run(): Tracer::run (never done() on its own).
    bool done() const override { return false; }
    // The tgid filter's processes as the module counts them (Client::getSessionFilter).
    Result<TracedProcesses> tracedProcesses() override;

    // Releases options.command (HeldCommand::release); nothing to do without one.
    Result<void> start() override;
    pid_t commandPid() const override;
    std::optional<int> commandStatus() const override;
    std::optional<int> terminateCommand(int grace_ms = 1000) override;
    // SIGKILL to the command and, with follow, to every descendant it has (the processes
    // the kernel follows for the session); returns once the descendants are gone or
    // zombies, the command being left for commandStatus() to reap. False (see Tracer).
    bool killCommand() override;

    // Ends tracing: disables every probe, FLUSHes, delivers the remaining records to `cb`,
    // then reads the kernel counters (PROBE_GET). Probes stay registered (disabled) until
    // the Session is destroyed, so their counters remain readable.
    Result<SessionStats> stop(const EventCallback& cb) override;
    Result<SessionStats> stopViews(const EventViewCallback& cb) override;
    // Counters now, without stopping (PROBE_GET + userspace counts).
    Result<SessionStats> stats();

    const std::vector<SessionProbe>& probes() const;
    std::uint64_t lost() const;
    int fd() const;
    Client& client();

  private:
    struct Impl;  // src/session.cpp
    explicit Session(std::unique_ptr<Impl> impl);
    Result<std::uint32_t> addRequestImpl(const Resolution& res, std::string spec,
                                         std::vector<FetchArg> fetch_args = {});
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
