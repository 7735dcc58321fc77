// What a stop means for the probes: breakpoint hits (entries and returns), stepping over
// the original instruction, syscall entry/exit pairs, and building events.
#include <signal.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/x86.hpp"
#include "ptrace/engine.hpp"
#include "ptrace/site_fetch.hpp"
#include "uapi/probectl.h"

namespace probectl::ptrace {

namespace {

std::array<std::uint64_t, kEventArgs> argRegs(const user_regs_struct& r) {
    return {r.rdi, r.rsi, r.rdx, r.rcx, r.r8, r.r9};
}

// What the kernel's store-ustack-snapshot stores (struct probectl_ustack_regs, then the
// stack from sp up, page by page, ending at the first page it cannot read), with the
// registers of the hit at `ip`: the same bytes for the same unwinder.
FetchedValue ustackSnapshot(pid_t tid, const user_regs_struct& r, std::uint64_t ip,
                            std::uint32_t bytes) {
    const probectl_ustack_regs regs{r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                                    r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, ip};
    FetchedValue v;
    v.name = "ustack";
    v.snapshot.resize(sizeof(regs) + bytes);
    std::memcpy(v.snapshot.data(), &regs, sizeof(regs));
    constexpr std::uint64_t kPage = 4096;
    std::size_t len = 0;
    while (len < bytes) {
        const std::size_t chunk =
            std::min<std::uint64_t>(bytes - len, kPage - ((r.rsp + len) % kPage));
        if (!readRemote(tid, r.rsp + len, v.snapshot.data() + sizeof(regs) + len, chunk))
            break;
        len += chunk;
    }
    v.snapshot.resize(sizeof(regs) + len);
    v.truncated = len == bytes;
    return v;
}

// A user string as STORE_STRING reads it: up to its NUL within kSyscallPathMax bytes, page
// by page so a string ending before an unmapped page still reads.
Event::RawValue readString(pid_t tid, std::uint64_t addr) {
    Event::RawValue v;
    constexpr std::uint64_t kPage = 4096;
    std::vector<std::uint8_t> buf(kSyscallPathMax);
    std::size_t len = 0;
    while (len < kSyscallPathMax - 1) {
        const std::size_t chunk =
            std::min<std::uint64_t>(kSyscallPathMax - 1 - len, kPage - ((addr + len) % kPage));
        if (auto r = readRemote(tid, addr + len, buf.data() + len, chunk); !r) {
            v.flags = len ? PROBECTL_FETCH_V_TRUNCATED : PROBECTL_FETCH_V_FAULT;
            v.error = len ? 0 : r.error().err;
            break;
        }
        auto* nul = std::find(buf.data() + len, buf.data() + len + chunk, 0);
        if (nul != buf.data() + len + chunk) {
            v.bytes.assign(buf.data(), nul + 1);
            return v;
        }
        len += chunk;
    }
    if (len == kSyscallPathMax - 1)
        v.flags |= PROBECTL_FETCH_V_TRUNCATED;
    if (v.flags & PROBECTL_FETCH_V_FAULT)
        return v;
    v.bytes.assign(buf.data(), buf.data() + len);
    v.bytes.push_back(0);
    return v;
}

// An array as STORE_ARRAY reads it: `size` bytes page by page; one that runs into a page
// that cannot be read keeps its whole `elem`-byte elements before it (truncated).
Event::RawValue readArray(pid_t tid, std::uint64_t addr, std::size_t size, std::size_t elem) {
    Event::RawValue v;
    constexpr std::uint64_t kPage = 4096;
    v.bytes.resize(size);
    std::size_t len = 0;
    while (len < size) {
        const std::size_t chunk =
            std::min<std::uint64_t>(size - len, kPage - ((addr + len) % kPage));
        if (auto r = readRemote(tid, addr + len, v.bytes.data() + len, chunk); !r) {
            v.error = r.error().err;
            break;
        }
        len += chunk;
    }
    len -= len % elem;
    v.bytes.resize(len);
    if (len == 0)
        v.flags = PROBECTL_FETCH_V_FAULT;
    else if (len < size)
        v.flags = PROBECTL_FETCH_V_TRUNCATED;
    if (len != 0)
        v.error = 0;
    return v;
}

// One value of a syscall plan, read the way the kernel's fetch program reads it
// (kmod/fetch.c): a path as above; a buffer of kSyscallBufferMax bytes and a pointer array
// as arrays; an array's string through its pointer. Same bytes and flags, so both backends
// print the same line.
Event::RawValue readPlanValue(pid_t tid, const SyscallMemHint& h,
                              const std::array<std::uint64_t, kEventArgs>& args) {
    using K = SyscallMemHint::Kind;
    const std::uint64_t addr = args[h.arg];
    if (h.kind == K::Path)
        return readString(tid, addr);
    if (h.kind == K::ArrayString) {
        std::uint64_t ptr = 0;
        if (auto r = readRemote(tid, addr + 8 * h.len_arg, &ptr, sizeof(ptr)); !r) {
            Event::RawValue v;
            v.flags = PROBECTL_FETCH_V_FAULT;
            v.error = r.error().err;
            return v;
        }
        return readString(tid, ptr);
    }
    if (h.kind == K::PtrArray)
        return readArray(tid, addr, 8 * h.len_arg, 8);
    if (h.kind == K::Timespec || h.kind == K::TimespecOut)
        return readArray(tid, addr, 16, 8);
    if (h.kind == K::FdPair)
        return readArray(tid, addr, 8, 4);
    if (h.kind == K::Int)
        return readArray(tid, addr, 4, 4);
    return readArray(tid, addr, kSyscallBufferMax, 1);
}

}  // namespace

Event Engine::baseEvent(Thread& t, std::uint32_t probe_id) {
    Event ev;
    ev.probe_id = probe_id;
    if (Probe* p = probe(probe_id))
        ev.spec = p->info.spec;
    ev.timestamp_ns = monotonicNowNs();
    ev.pid = static_cast<std::uint32_t>(t.tid);
    ev.tgid = static_cast<std::uint32_t>(t.tgid);
    // The comm at this hit, as the kernel reads task->comm: a thread may rename itself
    // (prctl PR_SET_NAME, pthread_setname_np) at any time. The last one read stands in for a
    // thread already gone (killed while stopped).
    if (auto comm = readComm(t.tid))
        t.comm = std::move(*comm);
    ev.comm = t.comm;
    // The CPU the thread last ran on, as sched_getcpu() in it would say: glibc registers a
    // struct rseq per thread whose cpu_id (offset 4) the kernel keeps current on every
    // return to user space. Threads without rseq report CPU 0.
    if (!t.rseq) {
        __ptrace_rseq_configuration conf{};
        if (::ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t.tid, sizeof(conf), &conf) > 0)
            t.rseq = conf.rseq_abi_pointer;
    }
    if (t.rseq) {
        std::uint32_t cpu = 0;
        if (readRemote(t.tid, t.rseq + 4, &cpu, sizeof(cpu)) && cpu != ~0u)
            ev.cpu = cpu;
    }
    return ev;
}

void Engine::emit(Thread& t, Probe& p, Event& ev, bool entry_counted) {
    if (!entry_counted)
        p.info.hits++;
    if (!p.filter.insns.empty()) {
        PredicateValues v;
        v.pid = ev.tgid;
        v.tid = ev.pid;
        v.cpu = ev.cpu;
        v.comm = ev.comm;
        v.retval = ev.retval;  // set at returns and syscall exits, where $retval is allowed
        // a USDT site's arguments (the only fetched values here), by the predicate's index
        for (std::size_t i = 0; i < ev.fetched.size() && i < ev.values.size(); i++) {
            v.ints.push_back(ev.values[i].raw);
            v.strs.push_back(ev.values[i].str);
            v.faulted.push_back(ev.values[i].faulted);
        }
        if (p.filter_uid)
            v.uid = readUid(t.tid);
        if (!evalPredicate(p.filter, v)) {
            p.info.rejected++;
            return;
        }
    }
    if (cb_) {
        p.info.delivered++;
        delivered_now_++;
        if (*cb_)
            (*cb_)(ev);
    } else {
        queued_.push_back(std::move(ev));
    }
}

void Engine::endCall(Thread& t) {
    if (t.call && t.call->restart_nr) {
        // Killed after its ERESTART exit: that was its return.
        releaseHeld(t);
        return;
    }
    if (!t.call)
        return;
    const Thread::Call c = *t.call;
    t.call.reset();
    t.syscall_exit_wanted = false;
    const std::uint64_t now = monotonicNowNs();
    // The kernel ended the call as it ended the thread (it leaves through the syscall's
    // return, where the kernel backend records it, with an ERESTART code or its result):
    // a return, timed to the end, whose value ptrace never sees (no exit stop with a fatal
    // signal pending). strace prints it "= ?".
    for (std::uint32_t id : c.counted)
        if (Probe* p = probe(id)) {
            Event ev = baseEvent(t, id);
            ev.ip = c.ip;
            ev.args = c.args;
            ev.is_return = true;
            ev.latency_ns = now - c.entry_ns;
            ev.parts &= ~kRecordPartRetval;
            ev.fetched = c.fetched;
            ev.syscall = p->plan.get();
            emit(t, *p, ev, true);
        }
}

void Engine::missReturns(Thread& t, std::size_t keep) {
    while (t.returns.size() > keep) {
        const PendingReturn& r = t.returns.back();
        if (Probe* p = probe(r.probe_id))
            p->info.unreturned++;
        if (t.space)
            if (auto it = t.space->bps.find(r.ret_addr); it != t.space->bps.end())
                if (it->second.returns > 0)
                    it->second.returns--;
        t.returns.pop_back();
    }
}

void Engine::releaseHeld(Thread& t) {
    if (!t.call || !t.call->restart_nr)
        return;
    std::vector<Event> held = std::move(t.call->held);
    t.call.reset();
    t.syscall_exit_wanted = false;
    for (Event& ev : held)
        if (Probe* p = probe(ev.probe_id))
            emit(t, *p, ev, true);
}

void Engine::missCall(Thread& t) {
    if (t.call)
        for (std::uint32_t id : t.call->counted)
            if (Probe* p = probe(id))
                p->info.unreturned++;
    t.call.reset();
}

std::uint64_t Engine::callsInFlight(std::uint32_t id) const {
    std::uint64_t n = 0;
    for (const auto& [tid, t] : threads_)
        if (t.call)
            n += std::count(t.call->counted.begin(), t.call->counted.end(), id);
    return n;
}

void Engine::dropUnwound(Thread& t, std::uint64_t floor) {
    std::size_t keep = t.returns.size();
    while (keep > 0 && t.returns[keep - 1].sp_after - 8 < floor)
        --keep;
    missReturns(t, keep);
}

void Engine::onTrap(Thread& t) {
    auto regs = getRegs(t.tid);
    if (!regs) {
        resume(t);
        return;
    }
    const std::uint64_t addr = regs->rip - 1;
    Space& s = *t.space;
    if (s.bps.count(addr)) {
        onBreakpoint(t, *regs, addr);
        return;
    }
    siginfo_t si{};
    (void)::ptrace(PTRACE_GETSIGINFO, t.tid, nullptr, &si);
    if (si.si_code == SI_KERNEL && s.patched.count(addr)) {
        // Our int3, removed after this thread had already trapped on it: run the original.
        regs->rip = addr;
        (void)setRegs(t.tid, *regs);
    } else if (si.si_code != TRAP_TRACE) {
        t.inject = SIGTRAP;  // the program's own trap
    }
    resume(t);
}

void Engine::onBreakpoint(Thread& t, user_regs_struct& regs, std::uint64_t addr) {
    Space& s = *t.space;
    bool rescan = false;
    if (t.report && !t.before_exec) {
        if (s.bps.at(addr).returns > 0) {
            // Frames below this one that never came back here (longjmp, exceptions) are
            // unreturned, then every entry whose frame this is returns.
            dropUnwound(t, regs.rsp - 8);
            while (!t.returns.empty() && t.returns.back().ret_addr == addr &&
                   t.returns.back().sp_after == regs.rsp) {
                const PendingReturn r = t.returns.back();
                t.returns.pop_back();
                s.bps.at(addr).returns--;
                if (Probe* p = probe(r.probe_id)) {
                    Event ev = baseEvent(t, r.probe_id);
                    ev.ip = r.func;
                    ev.args = r.args;
                    ev.is_return = true;
                    ev.retval = regs.rax;
                    ev.latency_ns = ev.timestamp_ns - r.entry_ns;
                    if (options_.ustack_snapshot)
                        ev.values.push_back(
                            ustackSnapshot(t.tid, regs, addr, options_.ustack_snapshot));
                    emit(t, *p, ev, true);
                }
            }
        }
        const std::vector<std::uint32_t> entries = s.bps.at(addr).entries;
        // A call here pushed its return address at rsp: pending returns saved at or below
        // it belong to frames left without returning (longjmp, an exception). Their
        // breakpoints are dropped, or 1 024 calls left by longjmp would all "return" with
        // the one that really does (same return address, same stack pointer).
        if (std::any_of(entries.begin(), entries.end(), [&](std::uint32_t id) {
                const Probe* p = probe(id);
                return p && p->info.kind == SpecKind::Uretprobe;
            }))
            dropUnwound(t, regs.rsp + 1);
        for (std::uint32_t id : entries) {
            Probe* p = probe(id);
            if (!p)
                continue;
            if (p->internal) {
                rescan = true;
                continue;
            }
            if (p->info.kind == SpecKind::Uretprobe) {
                std::uint64_t ret = 0;
                if (!readRemote(t.tid, regs.rsp, &ret, sizeof(ret)) || stopping_)
                    continue;
                PendingReturn r;
                r.probe_id = id;
                r.ret_addr = ret;
                r.sp_after = regs.rsp + 8;
                r.func = addr;
                r.entry_ns = monotonicNowNs();
                r.args = argRegs(regs);
                p->info.hits++;
                if (insert(s, ret, 0))
                    t.returns.push_back(r);
                else
                    p->info.unreturned++;
                continue;
            }
            Event ev = baseEvent(t, id);
            ev.ip = addr;
            ev.args = argRegs(regs);
            if (auto at = s.site_at.find({id, addr}); at != s.site_at.end()) {
                const Site& site = p->sites.at(at->second);
                user_regs_struct at_site = regs;
                at_site.rip = addr;
                fillSiteValues(ev, t.tid, at_site, site.fetch, site.fetch_args);
            }
            if (options_.ustack_snapshot)
                ev.values.push_back(ustackSnapshot(t.tid, regs, addr, options_.ustack_snapshot));
            emit(t, *p, ev);
        }
    }
    if (rescan && !stopping_)
        placeAll(s);
    stepOver(t, regs, addr);
}

void Engine::stepOver(Thread& t, user_regs_struct& regs, std::uint64_t addr) {
    Space& s = *t.space;
    regs.rip = addr;
    (void)setRegs(t.tid, regs);
    if (stopping_)
        return;  // the byte goes back for good in detachAll
    auto it = s.bps.find(addr);
    if (it != s.bps.end() && !it->second.needed()) {
        // Nothing wants this address any more: remove the int3 instead of stepping.
        (void)s.mem.write(addr, &it->second.orig, 1);
        s.bps.erase(it);
        it = s.bps.end();
    }
    if (it == s.bps.end()) {
        resume(t);
        return;
    }
    // While the original byte is in place no other thread of this memory may run, or it
    // could pass the probe unseen.
    stopSpace(s, t.tid);
    const std::uint8_t orig = it->second.orig;
    (void)s.mem.write(addr, &orig, 1);
    const pid_t tid = t.tid;
    for (;;) {
        (void)::ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
        int st = 0;
        if (waitThread(tid, &st) < 0)
            st = 0;
        const Stop stop = classify(st);
        if (stop.kind == StopKind::Signal && stop.sig() == SIGTRAP)
            break;
        if (stop.kind == StopKind::Signal) {
            // Delivered when the thread runs on; stepping goes on without it.
            t.inject = stop.sig();
            continue;
        }
        if (stop.kind == StopKind::Interrupt || stop.kind == StopKind::GroupStop) {
            // A PTRACE_INTERRUPT from an earlier stop of the whole space, latched while
            // this thread reported its trap, fires before the step: step again.
            continue;
        }
        // The instruction ended the thread or raised an event (a syscall instruction that
        // forks or execs): put the int3 back and handle it like any stop.
        if (s.mem.valid())
            (void)s.mem.write(addr, &kInt3, 1);
        resumeSpace(s, tid);
        handle(t, stop);
        return;
    }
    (void)s.mem.write(addr, &kInt3, 1);
    removeUnneeded(s);
    resumeSpace(s, tid);
    resume(t);
}

namespace {

// Before its exec the held command runs probectl's code (the read of its release pipe); the
// exec itself is the command's, as strace shows it.
bool isExec(const __ptrace_syscall_info& info) {
    if (info.op != PTRACE_SYSCALL_INFO_ENTRY && info.op != PTRACE_SYSCALL_INFO_SECCOMP)
        return false;
    const std::uint64_t nr = info.op == PTRACE_SYSCALL_INFO_ENTRY ? info.entry.nr : info.seccomp.nr;
    return nr == SYS_execve || nr == SYS_execveat;
}

// ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND (512..514) and ERESTART_RESTARTBLOCK (516;
// 515 is ENOIOCTLCMD) of include/linux/errno.h: kernel-internal, turned into EINTR or a
// restart on the way out.
bool isRestart(std::int64_t rval) {
    return (rval <= -512 && rval >= -514) || rval == -516;
}

// The syscall the kernel runs when it restarts one that ended with `rval` (an ERESTART
// code): the same again, or restart_syscall for ERESTART_RESTARTBLOCK (arch/x86's
// arch_do_signal_or_restart).
std::uint64_t restartedAs(std::uint64_t nr, std::int64_t rval) {
    return rval == -516 ? SYS_restart_syscall : nr;
}

}  // namespace

void Engine::noteInterruptedCall(Thread& t) {
    if (stopping_ || t.call || !t.report || t.before_exec || traced_syscalls_.empty())
        return;
    // At the interrupt stop the kernel has not restarted the call yet: orig_rax is its
    // number, rax its ERESTART code, rip past its syscall instruction.
    auto regs = getRegs(t.tid);
    if (!regs)
        return;
    const auto nr = static_cast<std::int64_t>(regs->orig_rax);
    const auto rval = static_cast<std::int64_t>(regs->rax);
    if (nr < 0 || !isRestart(rval))
        return;
    Thread::Call c;
    c.nr = static_cast<std::uint64_t>(nr);
    c.ip = regs->rip;
    c.restart_nr = restartedAs(c.nr, rval);
    c.restart_ip = regs->rip;
    t.call = std::move(c);
}

void Engine::onSyscallStop(Thread& t, bool seccomp_stop) {
    __ptrace_syscall_info info{};
    const bool got = ::ptrace(PTRACE_GET_SYSCALL_INFO, t.tid, sizeof(info), &info) > 0;
    if (got && info.op == PTRACE_SYSCALL_INFO_EXIT)
        t.syscall_exit_wanted = false;
    if (!got || !t.report || (t.before_exec && !isExec(info))) {
        resume(t);
        return;
    }
    const std::uint64_t now = monotonicNowNs();
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY || info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
        const std::uint64_t nr =
            info.op == PTRACE_SYSCALL_INFO_ENTRY ? info.entry.nr : info.seccomp.nr;
        const auto* args =
            info.op == PTRACE_SYSCALL_INFO_ENTRY ? info.entry.args : info.seccomp.args;
        if (t.call && t.call->restart_nr) {
            if (*t.call->restart_nr == nr && t.call->restart_ip == info.instruction_pointer) {
                // The kernel restarting the interrupted call: the same call goes on, entry
                // time and hits unchanged, its return still to come.
                t.call->restart_nr.reset();
                t.call->held.clear();
                t.syscall_exit_wanted = options_.seccomp;
                resume(t);
                return;
            }
            releaseHeld(t);  // not restarted: its ERESTART exit was its return
        }
        missCall(t);  // an entry without the exit of the call before: none will come
        if (traced_syscalls_.count(nr)) {
            Thread::Call c;
            c.nr = nr;
            std::copy(args, args + kEventArgs, c.args.begin());
            c.ip = info.instruction_pointer;
            c.entry_ns = now;
            // A thread killed inside its first traced call has no /proc left to name it
            // when its event is made (endCall): its comm is read while it still runs.
            if (t.comm.empty())
                if (auto comm = readComm(t.tid))
                    t.comm = std::move(*comm);
            // Every probe of one syscall has the same plan: read its entry memory once.
            for (auto& p : probes_)
                if (p->syscall_nr == static_cast<int>(nr) && p->plan) {
                    for (std::size_t i = 0; i < p->plan->entry_args; ++i)
                        c.fetched.push_back(readPlanValue(t.tid, p->plan->hints[i], c.args));
                    break;
                }
            if (nr == SYS_exit || nr == SYS_exit_group) {
                // They never return: their event is the entry.
                for (auto& p : probes_)
                    if (p->syscall_nr == static_cast<int>(nr)) {
                        Event ev = baseEvent(t, p->info.id);
                        ev.ip = c.ip;
                        ev.args = c.args;
                        ev.fetched = c.fetched;
                        ev.syscall = p->plan.get();
                        emit(t, *p, ev);
                    }
            } else {
                // The hit is the entry, as the kernel backend counts it; the event waits for
                // the exit.
                for (auto& p : probes_)
                    if (p->syscall_nr == static_cast<int>(nr)) {
                        p->info.hits++;
                        c.counted.push_back(p->info.id);
                    }
                t.call = c;
                t.syscall_exit_wanted = seccomp_stop;
            }
        }
    } else if (info.op == PTRACE_SYSCALL_INFO_EXIT && t.call) {
        // detachAll's PTRACE_INTERRUPT ends a blocking call with a restart code; after the
        // detach the kernel restarts it and the thread goes on waiting: not a return, the
        // call is still in progress, unreturned as the kernel backend's is at its end. No
        // restart code reaches user space, so none of these is a return the program sees.
        if (stopping_ && isRestart(info.exit.rval)) {
            missCall(t);
            resume(t);
            return;
        }
        // Any other ERESTART exit is held until the thread's next stop tells whether the
        // kernel restarts the call (Thread::Call::held): an interrupt of ours (placing
        // probes, stepping over one in another thread, attaching) restarts it unseen by
        // the program and by the kernel backend.
        const bool restarting = isRestart(info.exit.rval);
        std::vector<Event> held;
        const Thread::Call c = *t.call;
        t.call.reset();
        for (auto& p : probes_)
            // A probe added while the call was in progress saw no entry: no return either,
            // as a kernel return probe registered mid-call.
            if (std::find(c.counted.begin(), c.counted.end(), p->info.id) != c.counted.end()) {
                Event ev = baseEvent(t, p->info.id);
                ev.ip = c.ip;
                ev.args = c.args;
                // One event per call, like strace: the arguments of the entry and the
                // return value and duration of the exit. A return, as the kernel backend's
                // syscall events are: trace files make it a slice from entry to exit.
                ev.is_return = true;
                ev.retval = static_cast<std::uint64_t>(info.exit.rval);
                ev.latency_ns = now - c.entry_ns;
                if (p->plan) {
                    ev.syscall = p->plan.get();
                    ev.syscall_returned = true;
                    ev.fetched = c.fetched;
                    for (std::size_t i = p->plan->entry_args; i < p->plan->hints.size(); ++i)
                        ev.fetched.push_back(readPlanValue(t.tid, p->plan->hints[i], c.args));
                }
                if (restarting)
                    held.push_back(std::move(ev));
                else
                    emit(t, *p, ev, true);
            }
        if (restarting) {
            Thread::Call r = c;
            r.restart_nr = restartedAs(c.nr, info.exit.rval);
            r.restart_ip = info.instruction_pointer;
            r.held = std::move(held);
            t.call = std::move(r);
            // seccomp mode: the filter stops the restarted call if it traces its number;
            // restart_syscall it does not trace is seen by its entry stop.
            t.syscall_exit_wanted =
                options_.seccomp && !traced_syscalls_.count(*t.call->restart_nr);
        }
    }
    resume(t);
}

}  // namespace probectl::ptrace
