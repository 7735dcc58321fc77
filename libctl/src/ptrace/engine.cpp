// Engine lifecycle: attaching, the wait loop, fork/clone/exec following, and detaching.
#include "ptrace/engine.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "target/process_tree.hpp"

namespace probectl::ptrace {

namespace {
// Stops one poll() with no deadline handles before it returns the events they produced.
constexpr std::size_t kStopsPerPoll = 4096;
}  // namespace

Engine::Engine(PtraceSessionOptions options) : options_(std::move(options)) {}

Engine::~Engine() {
    if (!detached_)
        detachAll(nullptr);
    if (sigchld_fd_ >= 0)
        ::close(sigchld_fd_);
}

Probe* Engine::probe(std::uint32_t id) {
    for (auto& p : probes_)
        if (p->info.id == id)
            return p.get();
    return nullptr;
}

Space* Engine::newSpace(pid_t id) {
    auto s = std::make_unique<Space>();
    s->id = id;
    if (auto m = ProcMem::open(id))
        s->mem = std::move(*m);
    Space* raw = s.get();
    spaces_[id] = std::move(s);
    return raw;
}

Thread& Engine::addThread(pid_t tid, pid_t tgid, Space* space, bool report, bool from_command) {
    Thread& t = threads_[tid];
    t.tid = tid;
    t.tgid = tgid;
    t.space = space;
    t.report = report;
    t.from_command = from_command;
    if (killing_ && from_command && report)
        ::kill(tid, SIGKILL);  // forked as the others were killed
    space->threads.insert(tid);
    seen_tgids_.insert(tgid);
    return t;
}

void Engine::dropSpace(Space* s) {
    for (auto it = spaces_.begin(); it != spaces_.end(); ++it)
        if (it->second.get() == s) {
            spaces_.erase(it);
            return;
        }
}

void Engine::dropThread(pid_t tid) {
    auto it = threads_.find(tid);
    if (it == threads_.end())
        return;
    Space* s = it->second.space;
    threads_.erase(it);
    if (s) {
        s->threads.erase(tid);
        if (s->threads.empty())
            dropSpace(s);
    }
}

bool Engine::syscallMode(const Thread& t) const {
    return t.report && !traced_syscalls_.empty() && !options_.seccomp;
}

void Engine::resume(Thread& t) {
    if (stopping_ || t.state != Thread::State::Stopped)
        return;
    if (t.in_group_stop) {
        // Keeps job control working: the thread stays stopped until SIGCONT, yet we hear of
        // it (ptrace(2) "PTRACE_LISTEN").
        if (::ptrace(PTRACE_LISTEN, t.tid, nullptr, nullptr) == 0)
            t.state = Thread::State::Listening;
        return;
    }
    long req = syscallMode(t) ? PTRACE_SYSCALL : PTRACE_CONT;
    if (t.syscall_exit_wanted)
        req = PTRACE_SYSCALL;
    const long sig = t.inject;
    t.inject = 0;
    // ESRCH: killed meanwhile (SIGKILL needs no stop); its exit status comes through wait.
    (void)::ptrace(static_cast<__ptrace_request>(req), t.tid, nullptr, sig);
    t.state = Thread::State::Running;
}

void Engine::collect(Thread& t) {
    int st = 0;
    if (waitThread(t.tid, &st) < 0) {
        // ECHILD: reaped elsewhere or gone with an exec; forget it at the next chance.
        t.state = Thread::State::Stopped;
        t.pending = 0;  // handled as an exit, but of unknown status
        t.end_unknown = true;
        pending_.push_back(t.tid);
        return;
    }
    t.state = Thread::State::Stopped;
    const Stop s = classify(st);
    if (s.kind == StopKind::Interrupt && stopping_ && trapPending(t)) {
        // It executed one of our int3s, but the interrupt was reported before the SIGTRAP
        // (the kernel handles job-control traps before dequeuing signals). Detached now,
        // it would get that SIGTRAP with nobody to handle it: let it take the trap first.
        (void)::ptrace(PTRACE_CONT, t.tid, nullptr, nullptr);
        if (waitThread(t.tid, &st) < 0)
            st = 0;
        t.pending = st;
        pending_.push_back(t.tid);
        return;
    }
    if (s.kind == StopKind::Interrupt) {
        noteInterruptedCall(t);
        return;
    }
    if (s.kind == StopKind::GroupStop) {
        t.in_group_stop = true;
        return;
    }
    t.pending = st;
    pending_.push_back(t.tid);
}

bool Engine::trapPending(const Thread& t) {
    auto regs = getRegs(t.tid);
    if (!regs || !t.space || !t.space->patched.count(regs->rip - 1))
        return false;
    return sigtrapPending(t.tid);
}

void Engine::stopSpace(Space& s, pid_t except, bool include_listening) {
    std::vector<pid_t> wait_for;
    for (pid_t tid : s.threads) {
        if (tid == except)
            continue;
        Thread& t = threads_.at(tid);
        const bool run = t.state == Thread::State::Running;
        const bool listen = include_listening && t.state == Thread::State::Listening;
        if ((!run && !listen) || t.in_vfork)
            continue;
        (void)::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
        wait_for.push_back(tid);
    }
    for (pid_t tid : wait_for)
        collect(threads_.at(tid));
}

void Engine::resumeSpace(Space& s, pid_t except) {
    for (pid_t tid : std::vector<pid_t>(s.threads.begin(), s.threads.end())) {
        if (tid == except)
            continue;
        Thread& t = threads_.at(tid);
        if (!t.pending)
            resume(t);
    }
}

Result<void> Engine::attach(pid_t tgid) {
    Space* s = nullptr;
    std::set<pid_t> seen;
    // Threads may start while we walk the task list: walk it until a pass finds no new one.
    // Those started by a thread already seized are attached by the kernel (TRACECLONE).
    for (bool found = true; found;) {
        found = false;
        const auto dir_path = fmt::format("/proc/{}/task", tgid);
        DIR* dir = ::opendir(dir_path.c_str());
        if (!dir) {
            if (seen.empty())
                return makeError(errno == ENOENT ? ESRCH : errno,
                                 fmt::format("no process {}", tgid));
            break;
        }
        while (dirent* e = ::readdir(dir)) {
            if (e->d_name[0] == '.')
                continue;
            const pid_t tid = static_cast<pid_t>(std::atol(e->d_name));
            if (seen.count(tid) || threads_.count(tid))
                continue;
            seen.insert(tid);
            found = true;
            if (auto r = seize(tid, baseOptions()); !r) {
                if (tid == tgid) {
                    ::closedir(dir);
                    return r;
                }
                if (r.error().err == ESRCH)
                    continue;  // the thread exited meanwhile
                if (r.error().err != EPERM) {
                    ::closedir(dir);
                    return r;
                }
                // EPERM for a thread of a process we trace: the kernel attached it for us
                // already; its first stop and its parent's clone event will tell us.
                continue;
            }
            if (!s)
                s = newSpace(tgid);
            Thread& t = addThread(tid, tgid, s, true);
            t.state = Thread::State::Running;
        }
        ::closedir(dir);
    }
    if (!s)
        return makeError(ESRCH, fmt::format("no process {}", tgid));
    if (!s->mem.valid())
        return makeError(EACCES, fmt::format("cannot open /proc/{}/mem", tgid));
    if (!probes_.empty()) {
        stopSpace(*s, 0);
        placeAll(*s);
        resumeSpace(*s, 0);
    }
    return {};
}

Result<void> Engine::spawnCommand() {
    auto c = HeldCommand::spawn(options_.command, options_.adopt_orphans);
    if (!c)
        return std::move(c).error();
    // EXITKILL: the command dies with the tracer, as the kernel backend's does (and it
    // could not survive a tracer that left int3 bytes in it anyway). On failure `c` kills
    // and reaps it.
    if (auto r = seize(c->pid(), baseOptions() | PTRACE_O_EXITKILL |
                                     (options_.seccomp ? PTRACE_O_TRACESECCOMP : 0));
        !r)
        return r;
    command_ = std::move(*c);
    Space* s = newSpace(command_.pid());
    Thread& t = addThread(command_.pid(), command_.pid(), s, true, true);
    t.state = Thread::State::Running;
    t.before_exec = true;
    return {};
}

Result<void> Engine::release() {
    if (!command_.held())
        return makeError(EINVAL, "no held command to release");
    // Threads resumed before a syscall probe existed run without syscall stops; this
    // restart puts the command into the mode its probes need before it execs.
    if (auto it = threads_.find(command_.pid()); it != threads_.end()) {
        stopSpace(*it->second.space, 0);
        resumeSpace(*it->second.space, 0);
    }
    std::vector<sock_filter> filter;
    if (options_.seccomp) {
        auto f = seccompFilter();
        if (!f)
            return std::move(f).error();
        filter = std::move(*f);
    }
    if (auto r = command_.start(filter); !r)
        return r;
    released_ = true;
    // The command may stop (syscall stops, the exec event) before its exec closes the
    // error pipe: handle stops until the pipe answers. Events go to queued_.
    for (;;) {
        if (auto r = command_.execResult())
            return *r;
        while (!pending_.empty()) {
            const pid_t tid = pending_.front();
            pending_.pop_front();
            auto it = threads_.find(tid);
            if (it == threads_.end() || !it->second.pending)
                continue;
            const int st = *it->second.pending;
            it->second.pending.reset();
            handle(it->second, classify(st));
        }
        int st = 0;
        const pid_t pid = ::waitpid(-1, &st, __WALL);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            if (auto r = command_.execResult())
                return *r;
            return makeError(errno, "waiting for the command to start");
        }
        dispatch(pid, st);
    }
}

void Engine::dispatch(pid_t pid, int status) {
    auto it = threads_.find(pid);
    if (it == threads_.end()) {
        if (WIFSTOPPED(status))
            early_[pid] = status;  // a new child; its parent's event will claim it
        else if (pid == command_.pid())
            command_.reaped(status);
        return;
    }
    it->second.state = Thread::State::Stopped;
    handle(it->second, classify(status));
}

void Engine::handle(Thread& t, const Stop& stop) {
    switch (stop.kind) {
        case StopKind::Exited:
            onExit(t, stop.status);
            return;
        case StopKind::Interrupt:
            t.in_group_stop = false;
            noteInterruptedCall(t);
            resume(t);
            return;
        case StopKind::GroupStop:
            t.in_group_stop = true;
            resume(t);
            return;
        case StopKind::Syscall:
            onSyscallStop(t, false);
            return;
        case StopKind::Event:
            switch (stop.event()) {
                case PTRACE_EVENT_FORK:
                case PTRACE_EVENT_VFORK:
                case PTRACE_EVENT_CLONE:
                    onNewChild(t, stop.event());
                    return;
                case PTRACE_EVENT_EXEC:
                    onExec(t);
                    return;
                case PTRACE_EVENT_VFORK_DONE:
                    t.in_vfork = false;
                    resume(t);
                    return;
                case PTRACE_EVENT_SECCOMP:
                    onSyscallStop(t, true);
                    return;
                default:
                    resume(t);
                    return;
            }
        case StopKind::Signal:
            if (stop.sig() == SIGTRAP) {
                onTrap(t);
            } else {
                if (stop.sig() == SIGCHLD)
                    noteUntracedChild(t);
                // A signal after an ERESTART exit: the call returned (a handler runs, or it
                // is restarted as a new call), as the kernel backend sees it.
                releaseHeld(t);
                t.inject = stop.sig();
                resume(t);
            }
            return;
    }
}

void Engine::onExit(Thread& t, int status) {
    missReturns(t, 0);
    endCall(t);
    if (t.tid == command_.pid())
        command_.reaped(status);
    // Ends of what is reported: not of the held command before its exec (probectl's own
    // code), nor of a child only kept until it drops our int3s.
    if (on_end_ && t.report && !t.before_exec && !t.end_unknown) {
        const TaskEnd end{t.tid, t.tgid, status};
        if (cb_)
            on_end_(end);
        else
            queued_.emplace_back(end);
    }
    dropThread(t.tid);
}

void Engine::onNewChild(Thread& parent, int event) {
    auto msg = eventMsg(parent.tid);
    if (!msg) {
        resume(parent);
        return;
    }
    const auto child = static_cast<pid_t>(*msg);
    if (event == PTRACE_EVENT_VFORK)
        parent.in_vfork = true;
    int st = 0;
    if (auto e = early_.find(child); e != early_.end()) {
        st = e->second;
        early_.erase(e);
    } else if (waitThread(child, &st) < 0) {
        resume(parent);
        return;
    }
    if (!WIFSTOPPED(st)) {  // killed before it ran
        resume(parent);
        return;
    }
    const pid_t child_tgid = event == PTRACE_EVENT_CLONE ? processOf(child) : child;
    if (event == PTRACE_EVENT_CLONE && child_tgid == parent.tgid) {
        Thread& c = addThread(child, parent.tgid, parent.space, parent.report, parent.from_command);
        c.state = Thread::State::Stopped;
        resume(c);
    } else if (event == PTRACE_EVENT_VFORK) {
        // The child runs in the parent's memory until it execs: it sees our int3s, so it
        // stays traced (reported only under follow) until exec or exit.
        Thread& c = addThread(child, child, parent.space, options_.follow && parent.report,
                              parent.from_command);
        c.state = Thread::State::Stopped;
        resume(c);
    } else if (options_.follow && parent.report) {
        // A copy of the parent's memory, int3s included: the same breakpoints, and the
        // parent thread's frames (so its pending returns) are the child's too.
        Space* s = newSpace(child);
        const Space& ps = *parent.space;
        s->bps = ps.bps;
        s->patched = ps.patched;
        s->placed = ps.placed;
        s->site_at = ps.site_at;  // which of them read arguments (USDT)
        s->semaphores = ps.semaphores;
        Thread& c = addThread(child, child, s, true, parent.from_command);
        c.state = Thread::State::Stopped;
        c.returns = parent.returns;
        for (auto& [addr, bp] : s->bps)
            bp.returns = 0;
        for (const auto& r : c.returns) {
            if (auto it = s->bps.find(r.ret_addr); it != s->bps.end())
                it->second.returns++;
            // the child's copy of the call is an entry of its own: it returns or not
            if (Probe* p = probe(r.probe_id))
                p->info.hits++;
        }
        removeUnneeded(*s);
        resume(c);
    } else {
        // Not followed: give the child its original bytes back and let it go.
        if (auto m = ProcMem::open(child)) {
            for (const auto& [addr, bp] : parent.space->bps)
                (void)m->write(addr, &bp.orig, 1);
            for (const auto& [addr, n] : parent.space->semaphores) {
                std::uint16_t v = 0;
                if (m->read(addr, &v, sizeof(v)))
                    v = static_cast<std::uint16_t>(v >= n ? v - n : 0);
                (void)m->write(addr, &v, sizeof(v));
            }
        }
        (void)::ptrace(PTRACE_DETACH, child, nullptr, nullptr);
    }
    resume(parent);
}

void Engine::forgetThreadsOf(pid_t tgid, pid_t keep) {
    std::vector<pid_t> gone;
    for (const auto& [tid, t] : threads_)
        if (t.tgid == tgid && tid != keep)
            gone.push_back(tid);
    for (pid_t tid : gone) {
        auto& t = threads_.at(tid);
        missReturns(t, 0);
        endCall(t);
        if (t.space)
            t.space->threads.erase(tid);
        threads_.erase(tid);
    }
}

void Engine::onExec(Thread& reported) {
    // The exec'ing thread now has the leader's tid (ptrace(2) "execve(2) under ptrace");
    // PTRACE_GETEVENTMSG gives the tid it had.
    const pid_t tid = reported.tid;
    const pid_t tgid = reported.tgid;
    auto former = eventMsg(tid);
    if (former && static_cast<pid_t>(*former) != tid) {
        auto it = threads_.find(static_cast<pid_t>(*former));
        if (it != threads_.end()) {
            Thread moved = std::move(it->second);
            moved.tid = tid;
            moved.state = Thread::State::Stopped;
            if (moved.space)
                moved.space->threads.erase(it->first);
            threads_.erase(it);
            Thread& leader = threads_.at(tid);
            missReturns(leader, 0);
            endCall(leader);
            if (leader.space)
                leader.space->threads.erase(tid);
            leader = std::move(moved);
            leader.space->threads.insert(tid);
        }
    }
    Thread& t = threads_.at(tid);
    t.before_exec = false;
    forgetThreadsOf(tgid, tid);
    missReturns(t, 0);
    Space* old = t.space;
    old->threads.erase(tid);
    if (old->id == tgid || old->threads.empty()) {
        // The old memory is gone: nothing to restore in it. A vfork child still using it
        // (a thread of the parent exec'd) takes it over.
        if (old->threads.empty())
            dropSpace(old);
        else
            old->id = *old->threads.begin();
    }
    Space* s = newSpace(tgid);
    s->threads.insert(tid);
    t.space = s;
    t.comm = readComm(tid).value_or("");
    t.rseq = 0;
    if (auto note = setidNote(tgid))
        setid_notes_.push_back(std::move(*note));
    if (!t.report) {
        // A vfork child we only kept because it shared our int3s: its new image has none.
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        dropThread(tid);
        return;
    }
    if (!stopping_)
        placeAll(*s);
    resume(t);
}

std::size_t Engine::deliverQueued(const EventCallback& cb) {
    std::size_t n = 0;
    while (!queued_.empty()) {
        auto q = std::move(queued_.front());
        queued_.pop_front();
        if (const auto* end = std::get_if<TaskEnd>(&q)) {
            on_end_(*end);
            continue;
        }
        const Event& ev = std::get<Event>(q);
        if (Probe* p = probe(ev.probe_id))
            p->info.delivered++;
        n++;
        if (cb)
            cb(ev);
    }
    return n;
}

Result<std::size_t> Engine::poll(int timeout_ms, const EventCallback& cb) {
    cb_ = &cb;
    delivered_now_ = deliverQueued(cb);
    if (threads_.empty()) {
        cb_ = nullptr;
        return delivered_now_;
    }
    // SIGCHLD is blocked only while we wait, and waitpid(WNOHANG) drains first: a stop
    // that came before the mask is found by the drain, one after it wakes the signalfd.
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old);
    if (sigchld_fd_ < 0)
        sigchld_fd_ = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    const std::uint64_t deadline =
        timeout_ms > 0 ? monotonicNowNs() + static_cast<std::uint64_t>(timeout_ms) * 1000000ull : 0;
    Result<std::size_t> result = std::size_t{0};
    // Threads that keep hitting breakpoints are a stream of stops that never runs dry: each
    // step over a breakpoint stops the other threads and finds some trapped already, so
    // pending_ refills as fast as it drains. The deadline, or a cap on the stops handled,
    // ends the batch anyway.
    std::size_t handled = 0;
    const auto batch_done = [&] {
        ++handled;
        if (deadline && monotonicNowNs() >= deadline)
            return true;
        return handled >= kStopsPerPoll && (delivered_now_ > 0 || timeout_ms == 0);
    };
    for (;;) {
        if (!pending_.empty()) {
            const pid_t tid = pending_.front();
            pending_.pop_front();
            auto it = threads_.find(tid);
            if (it == threads_.end() || !it->second.pending)
                continue;
            const int st = *it->second.pending;
            it->second.pending.reset();
            handle(it->second, classify(st));
            if (batch_done())
                break;
            continue;
        }
        int st = 0;
        const pid_t pid = ::waitpid(-1, &st, __WALL | WNOHANG);
        if (pid > 0) {
            dispatch(pid, st);
            if (batch_done())
                break;
            continue;
        }
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0 || threads_.empty() || delivered_now_ > 0 || timeout_ms == 0)
            break;
        int wait_ms = -1;
        if (deadline) {
            const std::uint64_t now = monotonicNowNs();
            if (now >= deadline)
                break;
            wait_ms = static_cast<int>((deadline - now + 999999) / 1000000);
        }
        pollfd pfd{sigchld_fd_, POLLIN, 0};
        const int n = ::poll(&pfd, 1, wait_ms);
        if (n < 0 && errno == EINTR) {
            result = makeError(EINTR, "interrupted");
            break;
        }
        if (n == 0)
            break;
        signalfd_siginfo si;
        while (::read(sigchld_fd_, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    cb_ = nullptr;
    if (!result)
        return result;
    return delivered_now_;
}

void Engine::detachAll(const EventCallback& cb) {
    if (detached_)
        return;
    cb_ = cb ? &cb : nullptr;
    stopping_ = true;
    for (auto& [id, s] : spaces_)
        stopSpace(*s, 0, true);
    // What the threads were doing when stopped: hits already taken are delivered, threads
    // on an int3 are rewound, new children are claimed (and stay stopped).
    while (!pending_.empty()) {
        const pid_t tid = pending_.front();
        pending_.pop_front();
        auto it = threads_.find(tid);
        if (it == threads_.end() || !it->second.pending)
            continue;
        const int st = *it->second.pending;
        it->second.pending.reset();
        handle(it->second, classify(st));
    }
    findUntracedChildren();
    for (auto& [pid, st] : early_)
        (void)::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    early_.clear();
    for (auto& [id, s] : spaces_)
        restoreAll(*s);
    for (auto& [tid, t] : threads_) {
        missReturns(t, 0);
        missCall(t);
        if (!t.in_vfork)
            (void)::ptrace(PTRACE_DETACH, tid, nullptr, static_cast<long>(t.inject));
    }
    // A thread in vfork() stops only once its child, detached above, has exec'd or exited:
    // left traced, it would wait at its vfork-done stop for a tracer that is gone.
    for (auto& [tid, t] : threads_) {
        if (!t.in_vfork)
            continue;
        (void)::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
        int st = 0;
        if (waitThread(tid, &st) == tid && WIFSTOPPED(st))
            (void)::ptrace(PTRACE_DETACH, tid, nullptr, static_cast<long>(t.inject));
    }
    threads_.clear();
    spaces_.clear();
    if (cb)
        deliverQueued(cb);
    queued_.clear();
    cb_ = nullptr;
    detached_ = true;
}

std::optional<int> Engine::terminateCommand(int grace_ms) {
    if (command_.pid() <= 0)
        return std::nullopt;
    // Still traced (stop() not called): the status must come from our own wait loop.
    if (!command_.status() && !detached_)
        detachAll(nullptr);
    return command_.terminate(grace_ms);
}

bool Engine::killCommand() {
    if (command_.pid() <= 0)
        return false;
    // Adopting orphans, every process under this one is the command's (HeldCommand made it
    // the subreaper of its orphans), untraced (no -f, or after detachAll) or traced.
    // Otherwise the command's own tree, while its pid is still its own (not reaped).
    const bool adopted = command_.adoptsOrphans();
    const pid_t root = adopted ? ::getpid() : command_.status() ? 0 : command_.pid();
    if (detached_ || threads_.empty()) {
        if (root > 0)
            killTree(root, 2000);
        // Detached, no wait loop of ours reaps them any more.
        if (detached_ && adopted)
            reapChildren(command_.pid());
        return false;
    }
    killing_ = true;
    // The untraced ones as the kernel backend kills a tree: stopped until no new one shows,
    // then killed and waited for. The traced are spared there (a SIGSTOP would be a signal
    // stop of ours to handle) and killed below: they end through this engine's own stops.
    // Not adopting, the last pass below finds nothing (what the killed command forked went
    // to init): a fork child attached but not seen yet (no wait since) is killed here, so
    // only the processes this engine knows are spared.
    const pid_t self = static_cast<pid_t>(::gettid());
    std::set<pid_t> known;
    for (const auto& [tid, t] : threads_)
        known.insert(t.tgid);
    const auto traced = [&](pid_t pid) {
        return adopted ? tracerOf(pid) == self : known.contains(pid);
    };
    if (root > 0)
        killTree(root, 2000, traced);
    std::vector<pid_t> killed;
    for (const auto& [tid, t] : threads_)
        if (t.from_command && t.report) {
            ::kill(t.tgid, SIGKILL);
            killed.push_back(t.tgid);
        }
    // The traced ran during that pass and may have forked after its last look: an untraced
    // child, or a traced one this engine has not seen yet (its parent's fork event never
    // comes once the parent is killed; detached at stop, it would run on). Once they have
    // ended, their forks are done and their children listed under the subreaper: all of
    // those are stopped and killed, traced or not. Not adopted, they went to init.
    waitEnded(killed, 2000);
    if (adopted)
        killTree(::getpid(), 2000);
    return true;
}

const std::vector<PtraceProbe>& Engine::probeInfo() {
    info_.clear();
    for (const auto& p : probes_)
        if (!p->internal)
            info_.push_back(p->info);
    return info_;
}

std::vector<pid_t> Engine::threadIds() const {
    std::vector<pid_t> out;
    for (const auto& [tid, t] : threads_)
        out.push_back(tid);
    return out;
}

SessionStats Engine::stats() const {
    SessionStats s;
    for (const auto& p : probes_) {
        if (p->internal)
            continue;
        ProbeStats ps;
        ps.id = p->info.id;
        ps.spec = p->info.spec;
        ps.hits = p->info.hits;
        ps.delivered = p->info.delivered;
        // As the kernel's: a call still inside is unreturned, not dropped.
        ps.unreturned = p->info.unreturned + callsInFlight(p->info.id);
        ps.dropped = p->info.hits - p->info.rejected - p->info.delivered - ps.unreturned;
        ps.rejected = p->info.rejected;
        s.probes.push_back(ps);
    }
    s.notes = replacedFileNotes(files_);
    s.notes.insert(s.notes.end(), setid_notes_.begin(), setid_notes_.end());
    for (pid_t pid : untraced_children_)
        s.notes.push_back(fmt::format(
            "process {} was not traced: a traced process created it with CLONE_UNTRACED, "
            "which ptrace cannot follow (the kernel backend follows it)",
            pid));
    return s;
}

}  // namespace probectl::ptrace
