// The ptrace engine behind PtraceSession: traced threads, the address spaces they run in,
// the breakpoints in each space, and the handling of every kind of ptrace stop.
//
// State of a traced thread, from the tracer's side: Running (resumed by us), Stopped (in a
// ptrace-stop we have not resumed; `pending` holds its wait status when it was collected
// while stopping a whole space and is not handled yet), Listening (in a job-control stop,
// PTRACE_LISTEN). Only the tracing thread may issue ptrace requests.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>
#include <sys/user.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/held_command.hpp"
#include "probectl/predicate.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/result.hpp"
#include "probectl/syscall_probe.hpp"
#include "probectl/tracer.hpp"
#include "ptrace/memory.hpp"
#include "ptrace/ptrace_ops.hpp"
#include "session/resolve_spec.hpp"
#include "target/file_identity.hpp"

namespace probectl::ptrace {

// One place a user-space probe fires: a file (by device and inode, as /proc/PID/maps names
// it) and a byte offset in it.
struct Site {
    std::string path;  // tracer's view, for messages
    dev_t dev = 0;
    ino_t ino = 0;
    std::uint64_t file_offset = 0;
    std::uint64_t semaphore_offset = 0;  // USDT semaphore (file offset), 0 = none
    // USDT: the site's arguments from its note (site_fetch.hpp); empty for other kinds.
    std::vector<FetchInsn> fetch;
    std::vector<FetchArg> fetch_args;
};

struct Probe {
    PtraceProbe info;
    std::vector<Site> sites;  // uprobe/uretprobe/usdt
    int syscall_nr = -1;      // syscall
    bool internal = false;    // the dynamic linker's rendezvous hook (never reported)
    FilterProgram filter;     // the spec's predicate, evaluated host-side as the kernel does
    bool filter_uid = false;  // it reads $uid (one /proc read per hit)
    // syscall: the memory read for the strace line, as the kernel backend reads it.
    std::shared_ptr<const SyscallPlan> plan;
};

// An int3 the engine wrote. `entries`: probes whose entry is here; `returns`: pending
// uretprobe returns that will come back here (a return address).
struct Breakpoint {
    std::uint8_t orig = 0;
    std::vector<std::uint32_t> entries;
    std::uint32_t returns = 0;
    bool needed() const { return !entries.empty() || returns > 0; }
};

struct PendingReturn {
    std::uint32_t probe_id = 0;
    std::uint64_t ret_addr = 0;  // where the breakpoint is
    std::uint64_t sp_after = 0;  // rsp once `ret` has popped the return address
    std::uint64_t func = 0;      // function entry (Event::ip of the return)
    std::uint64_t entry_ns = 0;
    std::array<std::uint64_t, kEventArgs> args{};
};

// An address space: a process, shared by its threads and by a vfork child until that
// child execs or exits.
struct Space {
    pid_t id = 0;  // tgid of the process that owns it
    ProcMem mem;
    std::map<std::uint64_t, Breakpoint> bps;
    // Every address ever patched here: a thread that trapped on an int3 that has since been
    // removed (its trap was already on the way) is recognised and rewound, not sent SIGTRAP.
    std::set<std::uint64_t> patched;
    std::set<std::pair<std::uint32_t, std::uint64_t>> placed;  // (probe id, address)
    // (probe id, address) -> index in the probe's sites, for sites with arguments to read
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> site_at;
    std::map<std::uint64_t, std::uint32_t> semaphores;  // address -> raises by us
    std::set<pid_t> threads;
};

struct Thread {
    enum class State { Running, Stopped, Listening };
    pid_t tid = 0;
    pid_t tgid = 0;
    Space* space = nullptr;
    State state = State::Stopped;
    std::optional<int> pending;  // wait status collected but not handled
    bool end_unknown = false;    // `pending` is no status ptrace gave: its end is not told
    int inject = 0;              // signal to deliver at the next resume
    bool report = true;          // false: a child kept traced only until it drops our int3s
    bool from_command = false;   // the held command or a process or thread it made
    // The held command until its exec: still probectl's code (the read of its release pipe),
    // nothing of the command's own to report.
    bool before_exec = false;
    // seccomp mode: a traced syscall's seccomp stop was seen, its exit stop was not yet:
    // every resume until then is PTRACE_SYSCALL, not only the first (an exec, fork, clone or
    // vfork event, or an interrupt, can stop the thread in between).
    bool syscall_exit_wanted = false;
    bool in_group_stop = false;  // job-control stopped: resume with PTRACE_LISTEN
    // In vfork() from its event until PTRACE_EVENT_VFORK_DONE: blocked in the kernel until
    // the child execs or exits, it runs no user code and cannot be stopped (an interrupt
    // waits for the child, which may be stopped by us: a hang), so stopSpace leaves it.
    bool in_vfork = false;
    // A probed syscall in progress (entry seen, exit not yet).
    struct Call {
        std::uint64_t nr = 0;
        std::array<std::uint64_t, kEventArgs> args{};
        std::uint64_t ip = 0;
        std::uint64_t entry_ns = 0;
        std::vector<Event::RawValue> fetched;  // the plan's entry values, per probe order
        // The probes whose hit the entry counted, as the kernel's counts a call at its entry:
        // an interval's read-out sees a call in progress as a hit not returned yet. Empty
        // for a call entered before we traced the thread (noteInterruptedCall): no hit, and
        // its return none either, as a kernel return probe never sees a call entered
        // before it was armed.
        std::vector<std::uint32_t> counted;
        // Its exit stop said ERESTART*: interrupted (by a signal, or by our own
        // PTRACE_INTERRUPT, which the kernel backend never sends), the kernel restarts it
        // from `restart_ip` as syscall `restart_nr` (the same, or restart_syscall) unless a
        // signal handler runs first. Its return events wait in `held` until the thread's
        // next stop says which: the restarted entry (the same call going on, no hit: the
        // program and the kernel backend saw no return) or a signal (a return the kernel
        // backend saw too).
        std::optional<std::uint64_t> restart_nr;
        std::uint64_t restart_ip = 0;
        std::vector<Event> held;
    };
    std::optional<Call> call;
    std::vector<PendingReturn> returns;  // innermost last
    std::string comm;
    std::uint64_t rseq = 0;  // address of the thread's struct rseq, 0 = not known
};

class Engine {
  public:
    explicit Engine(PtraceSessionOptions options);
    ~Engine();

    Result<void> attach(pid_t tgid);
    Result<void> spawnCommand();
    Result<std::uint32_t> addProbe(const ProbeSpec& spec);
    // The notes of the sites addProbe resolved since the last call (Tracer::takeNotes).
    std::vector<std::string> takeAddNotes() { return std::exchange(add_notes_, {}); }
    Result<void> release();
    Result<std::size_t> poll(int timeout_ms, const EventCallback& cb);
    void detachAll(const EventCallback& cb);

    bool done() const { return threads_.empty(); }
    void watchEnds(TaskEndCallback cb) { on_end_ = std::move(cb); }
    std::optional<int> commandStatus() const { return command_.status(); }
    pid_t commandPid() const { return command_.pid(); }
    bool adoptsOrphans() const { return command_.adoptsOrphans(); }
    std::optional<int> terminateCommand(int grace_ms);
    // Tracer::killCommand: SIGKILL to the command and every process under it (under this
    // process when the command adopts its orphans); the traced ones' ends come through
    // poll. False when nothing is traced any more.
    bool killCommand();
    const std::vector<PtraceProbe>& probeInfo();
    std::vector<pid_t> threadIds() const;
    SessionStats stats() const;

  private:
    // engine.cpp: threads, spaces, waiting, fork/exec, detach
    Thread& addThread(pid_t tid, pid_t tgid, Space* space, bool report, bool from_command = false);
    Space* newSpace(pid_t id);
    void dropThread(pid_t tid);
    void dropSpace(Space* s);
    void resume(Thread& t);
    void stopSpace(Space& s, pid_t except, bool include_listening = false);
    void resumeSpace(Space& s, pid_t except);
    void collect(Thread& t);
    // Stopped just after one of our int3s with its SIGTRAP still queued.
    bool trapPending(const Thread& t);
    void dispatch(pid_t pid, int status);
    void handle(Thread& t, const Stop& stop);
    void onNewChild(Thread& parent, int event);
    void onExec(Thread& t);
    void onExit(Thread& t, int status);
    void forgetThreadsOf(pid_t tgid, pid_t keep);
    void cleanAndDetachChild(Thread& child);
    bool syscallMode(const Thread& t) const;

    // hits.cpp: breakpoints, syscalls, events
    void onTrap(Thread& t);
    void onBreakpoint(Thread& t, user_regs_struct& regs, std::uint64_t addr);
    void stepOver(Thread& t, user_regs_struct& regs, std::uint64_t addr);
    void onSyscallStop(Thread& t, bool seccomp_stop);
    // `entry_counted`: a uretprobe's return or a syscall's exit, whose hit its entry counted.
    void emit(Thread& t, Probe& p, Event& ev, bool entry_counted = false);
    // The thread ends (killed, or gone with another thread's exec) inside a probed syscall:
    // no exit stop will come, yet the call ended there.
    void endCall(Thread& t);
    Event baseEvent(Thread& t, std::uint32_t probe_id);
    void missReturns(Thread& t, std::size_t keep);
    // The thread's syscall in progress will not return to us (detached, or a new entry came
    // without its exit): unreturned for each probe that counted its entry.
    void missCall(Thread& t);
    // An interrupt stop (PTRACE_INTERRUPT: attaching, placing probes, stepping over one)
    // caught the thread inside a syscall we saw no entry of, which it ended with ERESTART*:
    // remembered as a call without hits, so that its restarted entry is no hit either.
    void noteInterruptedCall(Thread& t);
    // The thread's held ERESTART returns (Call::held) are returns after all: emitted.
    void releaseHeld(Thread& t);
    // The calls of probe `id` entered and not returned yet, over every thread.
    std::uint64_t callsInFlight(std::uint32_t id) const;
    // Drops the pending returns whose saved return address lies below `floor` (popped).
    void dropUnwound(Thread& t, std::uint64_t floor);

    // placement.cpp: probes -> addresses in a space
    // Where each site of each probe is in `maps`: an int3 (semaphore=false) or a USDT
    // semaphore to raise.
    struct Placement {
        std::uint32_t probe_id = 0;
        std::size_t site = 0;  // index in the probe's sites
        std::uint64_t addr = 0;
        bool semaphore = false;
    };
    std::vector<Placement> placements(const ProcMaps& maps) const;
    // Drops what the space's memory no longer holds: int3s gone with their mapping, and
    // placements (int3 entries, semaphore raises) no longer in `wanted`, without writing
    // anything back.
    void forgetUnmapped(Space& s, const std::vector<Placement>& wanted);
    void placeAll(Space& s);
    Result<void> insert(Space& s, std::uint64_t addr, std::uint32_t probe_id);
    void removeUnneeded(Space& s);
    void restoreAll(Space& s);
    void adjustSemaphores(Space& s, int delta);
    void addLinkerHook();
    // The spec resolved as the ptrace backend sees it (resolve_spec.hpp).
    Result<std::vector<ResolvedProbe>> resolve(const ProbeSpec& spec) const;
    // One Site per resolved file location (breakpoint and USDT semaphore offsets).
    Result<void> setupSites(Probe& p, const ProbeSpec& spec,
                            const std::vector<ResolvedProbe>& resolved);

    // seccomp.cpp: seccompProgram() of the traced syscalls
    Result<std::vector<sock_filter>> seccompFilter() const;

    Probe* probe(std::uint32_t id);
    // Hands out queued_ in order (events to cb, counted as delivered; ends to on_end_).
    // Returns the number of events.
    std::size_t deliverQueued(const EventCallback& cb);

    PtraceSessionOptions options_;
    std::vector<std::unique_ptr<Probe>> probes_;  // stable addresses: Event::spec views them
    std::vector<PtraceProbe> info_;
    std::map<pid_t, Thread> threads_;
    std::map<pid_t, std::unique_ptr<Space>> spaces_;
    std::map<pid_t, int> early_;  // first stops of children whose parent's event is not seen
    std::deque<pid_t> pending_;   // threads with a collected status, in arrival order
    // Events and thread ends produced outside poll() (release, stop), in order.
    std::deque<std::variant<Event, TaskEnd>> queued_;
    TaskEndCallback on_end_;
    const EventCallback* cb_ = nullptr;
    std::size_t delivered_now_ = 0;
    HeldCommand command_;
    bool released_ = false;
    std::set<std::uint64_t> traced_syscalls_;
    bool has_user_probes_ = false;
    std::set<std::string> hooked_linkers_;  // ld.so paths whose hook probe exists
    std::vector<FileIdentity> files_;       // probed files as they were when added
    std::vector<std::string> add_notes_;    // ResolvedProbe::note of added probes
    std::vector<std::string> setid_notes_;  // set-user/group-ID execs that kept our ids
    // Under follow: every tgid traced so far, and children of traced processes that were
    // not (CLONE_UNTRACED: no ptrace event), seen by their SIGCHLD or alive at detach.
    std::set<pid_t> seen_tgids_;
    std::set<pid_t> untraced_children_;
    void noteUntracedChild(Thread& t);
    void findUntracedChildren();
    bool detached_ = false;
    bool killing_ = false;  // killCommand() was called: a new child dies as it appears
    // detachAll() in progress: handlers leave threads stopped instead of resuming them.
    bool stopping_ = false;
    std::uint32_t next_id_ = 1;
    int sigchld_fd_ = -1;
};

// A note when process `pid`, just after its exec, runs a set-user-ID or set-group-ID file
// without the ids that file gives (the kernel drops them under a tracer that lacks
// CAP_SYS_PTRACE); nullopt otherwise.
std::optional<std::string> setidNote(pid_t pid);

}  // namespace probectl::ptrace
