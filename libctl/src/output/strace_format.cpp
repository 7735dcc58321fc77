// strace-style syscall lines. Flag values come from the kernel's uapi headers; the order in
// which names are printed follows strace's (see the header and the fixture test).
#include "probectl/strace_format.hpp"

#include <asm/prctl.h>
#include <fmt/format.h>
#include <linux/fcntl.h>
#include <linux/futex.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "output/append_text.hpp"
#include "output/json_text.hpp"
#include "output/strace_names.hpp"
#include "probectl/errno_names.hpp"

namespace probectl {

namespace {

using strace_names::appendFlags;
using strace_names::appendRest;
using FlagName = strace_names::Name;

constexpr FlagName kProt[] = {
    {PROT_READ, "PROT_READ"}, {PROT_WRITE, "PROT_WRITE"},         {PROT_EXEC, "PROT_EXEC"},
    {PROT_SEM, "PROT_SEM"},   {PROT_GROWSDOWN, "PROT_GROWSDOWN"}, {PROT_GROWSUP, "PROT_GROWSUP"},
};

constexpr FlagName kMapFlags[] = {
    {MAP_FIXED, "MAP_FIXED"},
    {MAP_ANONYMOUS, "MAP_ANONYMOUS"},
    {MAP_32BIT, "MAP_32BIT"},
    {MAP_NORESERVE, "MAP_NORESERVE"},
    {MAP_POPULATE, "MAP_POPULATE"},
    {MAP_NONBLOCK, "MAP_NONBLOCK"},
    {MAP_GROWSDOWN, "MAP_GROWSDOWN"},
    {MAP_DENYWRITE, "MAP_DENYWRITE"},
    {MAP_EXECUTABLE, "MAP_EXECUTABLE"},
    {MAP_LOCKED, "MAP_LOCKED"},
    {MAP_STACK, "MAP_STACK"},
    {MAP_HUGETLB, "MAP_HUGETLB"},
    {MAP_SYNC, "MAP_SYNC"},
    {MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"},
};

constexpr FlagName kCloneFlags[] = {
    {CLONE_VM, "CLONE_VM"},
    {CLONE_FS, "CLONE_FS"},
    {CLONE_FILES, "CLONE_FILES"},
    {CLONE_SIGHAND, "CLONE_SIGHAND"},
    {CLONE_PIDFD, "CLONE_PIDFD"},
    {CLONE_PTRACE, "CLONE_PTRACE"},
    {CLONE_VFORK, "CLONE_VFORK"},
    {CLONE_PARENT, "CLONE_PARENT"},
    {CLONE_THREAD, "CLONE_THREAD"},
    {CLONE_NEWNS, "CLONE_NEWNS"},
    {CLONE_SYSVSEM, "CLONE_SYSVSEM"},
    {CLONE_SETTLS, "CLONE_SETTLS"},
    {CLONE_PARENT_SETTID, "CLONE_PARENT_SETTID"},
    {CLONE_CHILD_CLEARTID, "CLONE_CHILD_CLEARTID"},
    {CLONE_DETACHED, "CLONE_DETACHED"},
    {CLONE_UNTRACED, "CLONE_UNTRACED"},
    {CLONE_CHILD_SETTID, "CLONE_CHILD_SETTID"},
    {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
    {CLONE_NEWUTS, "CLONE_NEWUTS"},
    {CLONE_NEWIPC, "CLONE_NEWIPC"},
    {CLONE_NEWUSER, "CLONE_NEWUSER"},
    {CLONE_NEWPID, "CLONE_NEWPID"},
    {CLONE_NEWNET, "CLONE_NEWNET"},
    {CLONE_IO, "CLONE_IO"},
};

std::int32_t asInt(std::uint64_t v) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

std::string fd(std::uint64_t v) {
    return fmt::format("{}", asInt(v));
}

std::string ulong(std::uint64_t v) {
    return fmt::format("{}", v);
}

std::string i64(std::uint64_t v) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
}

std::string hexOrZero(std::uint64_t v) {
    return v == 0 ? "0" : fmt::format("{:#x}", v);
}

// A pointer argument with memory: the quoted bytes, or the pointer when not fetched or
// when the call itself found it bad (EFAULT, as strace prints it). Memory the program
// could use but the tracer could not read says so, with why, rather than pass for a
// bad pointer.
std::string memArg(const SyscallRecord& r, std::size_t i, std::size_t limit) {
    const auto& m = r.mem[i];
    if (r.args[i] == 0)
        return "NULL";
    if (!m || (m->faulted && r.retval && *r.retval == -EFAULT))
        return stracePointer(r.args[i]);
    if (m->faulted)
        return fmt::format("<unreadable: {}>", errnoName(m->error ? m->error : EFAULT));
    return straceQuote(m->bytes, limit, m->truncated);
}

std::string path(const SyscallRecord& r, std::size_t i) {
    return memArg(r, i, std::numeric_limits<std::size_t>::max());
}

// The kernel's names of string arguments that are file names: strace prints those whole
// (its printpath), and other strings (an xattr's name, a filesystem type) cut at -s.
bool isPathName(std::string_view name) {
    static constexpr std::string_view kNames[] = {"filename", "pathname",    "path",    "oldname",
                                                  "newname",  "oldpath",     "newpath", "dir_name",
                                                  "dev_name", "specialfile", "library", "linkpath"};
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

bool returned(const SyscallRecord& r) {
    return r.retval && *r.retval >= 0;
}

std::string outBuffer(const SyscallRecord& r, std::size_t i, const StraceOptions& o) {
    // Before return, or after a failure, strace has nothing to show but the address.
    if (!returned(r))
        return stracePointer(r.args[i]);
    // Only the returned count of bytes is data, whatever the tracer copied.
    const auto n = static_cast<std::size_t>(*r.retval);
    if (r.mem[i] && !r.mem[i]->faulted && r.mem[i]->bytes.size() > n) {
        SyscallRecord cut = r;
        cut.mem[i]->bytes.resize(n);
        return memArg(cut, i, o.string_limit);
    }
    return memArg(r, i, o.string_limit);
}

// listxattr's names: with size 0 the call only returns the size it needs and writes
// nothing, so strace prints the address.
std::string xattrList(const SyscallRecord& r, std::size_t i, const StraceOptions& o) {
    if (r.args[i + 1] == 0 && r.args[i] != 0)
        return stracePointer(r.args[i]);
    return outBuffer(r, i, o);
}

// clock_gettime(2)'s clock ids; others as strace 6.1 prints them, "0x2a /* CLOCK_??? */"
// (CPU-time clocks of a process or thread, negative, too).
std::string clockName(std::uint64_t v) {
    static constexpr std::pair<int, const char*> kClocks[] = {
        {CLOCK_REALTIME, "CLOCK_REALTIME"},
        {CLOCK_MONOTONIC, "CLOCK_MONOTONIC"},
        {CLOCK_PROCESS_CPUTIME_ID, "CLOCK_PROCESS_CPUTIME_ID"},
        {CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID"},
        {CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW"},
        {CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE"},
        {CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE"},
        {CLOCK_BOOTTIME, "CLOCK_BOOTTIME"},
        {CLOCK_REALTIME_ALARM, "CLOCK_REALTIME_ALARM"},
        {CLOCK_BOOTTIME_ALARM, "CLOCK_BOOTTIME_ALARM"},
        {CLOCK_TAI, "CLOCK_TAI"},
    };
    const std::int32_t id = asInt(v);
    for (const auto& [n, name] : kClocks)
        if (n == id)
            return name;
    return fmt::format("{:#x} /* CLOCK_??? */", static_cast<std::uint32_t>(id));
}

std::string clockFlags(std::uint64_t v) {
    std::string s;
    constexpr FlagName kTimerFlags[] = {{TIMER_ABSTIME, "TIMER_ABSTIME"}};
    appendRest(s, appendFlags(s, v & 0xffffffff, kTimerFlags));
    return s.empty() ? "0" : s;
}

// {tv_sec=1, tv_nsec=500000000}, as strace prints a struct timespec the call read; the
// address when it could not be read whole.
std::string timespecArg(const SyscallRecord& r, std::size_t i) {
    const auto& m = r.mem[i];
    if (r.args[i] == 0)
        return "NULL";
    if (!m || m->faulted || m->bytes.size() != 16)
        return stracePointer(r.args[i]);
    std::int64_t ts[2];
    std::memcpy(ts, m->bytes.data(), sizeof(ts));
    return fmt::format("{{tv_sec={}, tv_nsec={}}}", ts[0], ts[1]);
}

// nanosleep's remaining time: the kernel writes it only when a signal interrupted the
// sleep (the call then returns an ERESTART code at its exit), so strace shows it then and
// the address otherwise. `relative`: clock_nanosleep without TIMER_ABSTIME (an absolute
// sleep has no remaining time).
std::string remainingArg(const SyscallRecord& r, std::size_t i, bool relative) {
    const bool restart = r.retval && *r.retval <= -512 && *r.retval >= -516;
    if (relative && restart)
        return timespecArg(r, i);
    return stracePointer(r.args[i]);
}

// getrandom's bytes, each as \xNN (strace forces hex for random data), cut at the limit;
// the address before the return or after a failure, as for any output buffer.
std::string randomBytes(const SyscallRecord& r, const StraceOptions& o) {
    const auto& m = r.mem[0];
    if (r.args[0] == 0 || !returned(r) || !m || m->faulted)
        return outBuffer(r, 0, o);
    const std::size_t n = std::min(m->bytes.size(), static_cast<std::size_t>(*r.retval));
    const std::size_t shown = std::min(n, o.string_limit);
    std::string s = "\"";
    for (std::size_t i = 0; i < shown; ++i)
        s += fmt::format("\\x{:02x}", static_cast<unsigned char>(m->bytes[i]));
    s += '"';
    if (n > shown || m->truncated || static_cast<std::size_t>(*r.retval) > n)
        s += "...";
    return s;
}

// wait4's status: what the call wrote when it returned a pid, else the address (strace's
// rule: a 0 return of WNOHANG wrote nothing).
std::string waitStatusArg(const SyscallRecord& r, std::size_t i) {
    const auto& m = r.mem[i];
    if (r.args[i] == 0)
        return "NULL";
    if (!r.retval || *r.retval <= 0 || !m || m->faulted || m->bytes.size() != 4)
        return stracePointer(r.args[i]);
    std::int32_t st;
    std::memcpy(&st, m->bytes.data(), sizeof(st));
    return "[" + strace_names::waitStatus(st) + "]";
}

using Args = std::vector<StraceArg>;

// Arguments 0, 1, 2... in order, as most calls print them.
Args inOrder(std::initializer_list<std::string> texts) {
    Args a;
    for (const auto& t : texts)
        a.push_back({a.size(), t});
    return a;
}

// open's and openat's mode, only when the flags make it count (strace leaves it out else).
Args withMode(Args a, std::uint64_t flags, std::uint64_t mode) {
    if ((flags & O_CREAT) || ((flags & O_TMPFILE) == O_TMPFILE))
        a.push_back({a.size(), straceMode(mode)});
    return a;
}

Args cloneArgs(const SyscallRecord& r) {
    // x86-64: clone(flags, newsp, parent_tid, child_tid, tls)
    const std::uint64_t flags = r.args[0];
    Args s = {{1, "child_stack=" + stracePointer(r.args[1])},
              {0, "flags=" + straceCloneFlags(flags)}};
    if (flags & (CLONE_PARENT_SETTID | CLONE_PIDFD))
        s.push_back({2, "parent_tid=" + stracePointer(r.args[2])});
    if (flags & CLONE_SETTLS)
        s.push_back({4, "tls=" + stracePointer(r.args[4])});
    if (flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID))
        s.push_back({3, "child_tidptr=" + stracePointer(r.args[3])});
    return s;
}

Args execveArgs(const SyscallRecord& r, const StraceOptions& o) {
    Args a = {{0, path(r, 0)}};
    std::string s;
    if (r.args[1] == 0) {
        s += "NULL";
    } else if (r.argv) {
        s += '[';
        for (std::size_t i = 0; i < r.argv->size(); ++i) {
            if (i)
                s += ", ";
            if (i == o.string_limit) {
                s += "...";
                break;
            }
            s += straceQuote((*r.argv)[i], o.string_limit);
        }
        if (r.argv_more)
            s += ", ...";
        s += ']';
    } else {
        s += stracePointer(r.args[1]);
    }
    a.push_back({1, std::move(s)});
    s = stracePointer(r.args[2]);
    if (r.args[2] != 0 && r.envc)
        s += fmt::format(" /* {}{} var{} */", *r.envc, r.envc_more ? "+" : "",
                         *r.envc == 1 ? "" : "s");
    a.push_back({2, std::move(s)});
    return a;
}

// x86-64 syscalls without arguments, so they print "getppid()" even without metadata.
bool isArgumentless(std::string_view n) {
    static constexpr std::string_view kNames[] = {
        "getpid",     "getppid",      "gettid",          "getuid", "geteuid", "getgid", "getegid",
        "getpgrp",    "setsid",       "sched_yield",     "fork",   "vfork",   "pause",  "sync",
        "munlockall", "inotify_init", "restart_syscall",
    };
    for (auto k : kNames)
        if (k == n)
            return true;
    return false;
}

bool isIntType(const std::string& t) {
    return t == "int" || t == "long" || t == "pid_t" || t == "off_t" || t == "loff_t" ||
           t == "ssize_t" || t == "key_t" || t == "clockid_t" || t == "timer_t";
}

// Directory fds of the *at calls, by the names the kernel gives them (dfd, olddfd, newdfd).
bool isDirFdName(const std::string& n) {
    return n == "dfd" || n == "olddfd" || n == "newdfd";
}

// pipe's and pipe2's fds ("[3, 4]"), which the call writes: the address before it returns,
// after it failed, or when they could not be read.
std::string fdPairArg(const SyscallRecord& r, std::size_t i) {
    const auto& m = r.mem[i];
    if (!returned(r) || !m || m->faulted || m->bytes.size() != 8)
        return stracePointer(r.args[i]);
    std::int32_t fds[2];
    std::memcpy(fds, m->bytes.data(), sizeof(fds));
    return fmt::format("[{}, {}]", fds[0], fds[1]);
}

Args fcntlArgs(const SyscallRecord& r) {
    Args a = inOrder({fd(r.args[0]), strace_names::fcntlCommand(r.args[1])});
    std::string arg;
    if (strace_names::fcntlArgument(r.args[1], r.args[2], arg))
        a.push_back({2, std::move(arg)});
    return a;
}

// arch_prctl's second argument as its code reads it (strace prints none for
// ARCH_GET_CPUID; the GET codes write through it: their address, as strace shows it when
// the call failed).
Args archPrctlArgs(const SyscallRecord& r) {
    const std::string code = strace_names::archPrctlCode(r.args[0]);
    switch (static_cast<std::uint32_t>(r.args[0])) {
        case ARCH_GET_CPUID:
            return inOrder({code});
        case ARCH_GET_FS:
        case ARCH_GET_GS:
        case ARCH_GET_XCOMP_SUPP:
        case ARCH_GET_XCOMP_PERM:
        case ARCH_GET_XCOMP_GUEST_PERM:
            return inOrder({code, stracePointer(r.args[1])});
        case ARCH_SET_CPUID:
        case ARCH_REQ_XCOMP_PERM:
        case ARCH_REQ_XCOMP_GUEST_PERM:
            return inOrder({code, ulong(r.args[1])});
        default:
            return inOrder({code, hexOrZero(r.args[1])});
    }
}

// futex(uaddr, op, val, timeout or val2, uaddr2, val3): the arguments its command reads,
// as strace 6.1 prints them.
Args futexArgs(const SyscallRecord& r) {
    const auto& a = r.args;
    const std::string val = ulong(static_cast<std::uint32_t>(a[2]));
    const std::string val2 = ulong(static_cast<std::uint32_t>(a[3]));
    Args s = inOrder({stracePointer(a[0]), strace_names::futexOp(a[1])});
    auto add = [&s](std::size_t i, std::string t) { s.push_back({i, std::move(t)}); };
    switch (static_cast<std::uint32_t>(a[1]) & FUTEX_CMD_MASK) {
        case FUTEX_WAIT:
            add(2, val);
            add(3, timespecArg(r, 3));
            break;
        case FUTEX_LOCK_PI:
        case FUTEX_LOCK_PI2:
            add(3, timespecArg(r, 3));
            break;
        case FUTEX_WAIT_BITSET:
            add(2, val);
            add(3, timespecArg(r, 3));
            add(5, strace_names::futexBitset(a[5]));
            break;
        case FUTEX_WAKE_BITSET:
            add(2, val);
            add(5, strace_names::futexBitset(a[5]));
            break;
        case FUTEX_REQUEUE:
            add(2, val);
            add(3, val2);
            add(4, stracePointer(a[4]));
            break;
        case FUTEX_CMP_REQUEUE:
        case FUTEX_CMP_REQUEUE_PI:
            add(2, val);
            add(3, val2);
            add(4, stracePointer(a[4]));
            add(5, ulong(static_cast<std::uint32_t>(a[5])));
            break;
        case FUTEX_WAKE_OP:
            add(2, val);
            add(3, val2);
            add(4, stracePointer(a[4]));
            add(5, strace_names::futexWakeOp(a[5]));
            break;
        case FUTEX_WAIT_REQUEUE_PI:
            add(2, val);
            add(3, timespecArg(r, 3));
            add(4, stracePointer(a[4]));
            break;
        case FUTEX_FD:
        case FUTEX_WAKE:
            add(2, val);
            break;
        case FUTEX_UNLOCK_PI:
        case FUTEX_TRYLOCK_PI:
            break;
        default:
            add(2, val);
            add(3, stracePointer(a[3]));
            add(4, stracePointer(a[4]));
            add(5, hexOrZero(static_cast<std::uint32_t>(a[5])));
    }
    return s;
}

Args genericArgs(const SyscallRecord& r, const SyscallInfo* info, const StraceOptions& o) {
    Args s;
    const std::size_t n = info ? info->args.size() : 6;
    for (std::size_t i = 0; i < n; ++i) {
        if (!info) {
            s.push_back({i, hexOrZero(r.args[i])});
            continue;
        }
        const SyscallArg& a = info->args[i];
        std::string t;
        if (a.is_string && isPathName(a.name))
            t = path(r, i);
        else if (a.is_string)
            t = memArg(r, i, o.string_limit);
        else if (a.is_pointer)
            t = stracePointer(r.args[i]);
        else if (a.type == "umode_t")
            t = straceMode(r.args[i]);
        else if (isDirFdName(a.name))
            t = straceDirFd(r.args[i]);
        else if (a.name == "sig")
            t = strace_names::signal(static_cast<std::int64_t>(r.args[i]));
        else if (isIntType(a.type))
            t = a.type == "int" || a.type == "pid_t" || a.type == "clockid_t"
                    ? fmt::format("{}", asInt(r.args[i]))
                    : fmt::format("{}", static_cast<std::int64_t>(r.args[i]));
        else if (a.type.starts_with("unsigned") || a.type == "size_t" || a.type == "u32" ||
                 a.type == "u64")
            t = ulong(r.args[i]);
        else
            t = hexOrZero(r.args[i]);
        s.push_back({i, std::move(t)});
    }
    return s;
}

}  // namespace

std::vector<StraceArg> straceArgs(const SyscallRecord& r, const SyscallInfo* info,
                                  const StraceOptions& o) {
    const auto& a = r.args;
    const std::string& n = r.name;
    if (n == "openat")
        return withMode(inOrder({straceDirFd(a[0]), path(r, 1), straceOpenFlags(a[2])}), a[2],
                        a[3]);
    if (n == "open")
        return withMode(inOrder({path(r, 0), straceOpenFlags(a[1])}), a[1], a[2]);
    if (n == "creat")
        return inOrder({path(r, 0), straceMode(a[1])});
    if (n == "read")
        return inOrder({fd(a[0]), outBuffer(r, 1, o), ulong(a[2])});
    if (n == "pread64")
        return inOrder({fd(a[0]), outBuffer(r, 1, o), ulong(a[2]), i64(a[3])});
    if (n == "write")
        return inOrder({fd(a[0]), memArg(r, 1, o.string_limit), ulong(a[2])});
    if (n == "pwrite64")
        return inOrder({fd(a[0]), memArg(r, 1, o.string_limit), ulong(a[2]), i64(a[3])});
    if (n == "close")
        return inOrder({fd(a[0])});
    // Without metadata too (7.2's tracefs formats did not give exit_group's argument).
    if (n == "exit_group" || n == "exit")
        return inOrder({fmt::format("{}", asInt(a[0]))});
    if (n == "mmap")
        return inOrder({stracePointer(a[0]), ulong(a[1]), straceMmapProt(a[2]),
                        straceMmapFlags(a[3]), fd(a[4]), hexOrZero(a[5])});
    if (n == "munmap")
        return inOrder({stracePointer(a[0]), ulong(a[1])});
    if (n == "mprotect")
        return inOrder({stracePointer(a[0]), ulong(a[1]), straceMmapProt(a[2])});
    if (n == "clone")
        return cloneArgs(r);
    // The remaining time (the last argument) is written only when a signal cut the sleep
    // short; its address prints, as strace prints it after a full sleep.
    if (n == "nanosleep")
        return inOrder({timespecArg(r, 0), remainingArg(r, 1, true)});
    if (n == "clock_nanosleep")
        return inOrder({clockName(a[0]), clockFlags(a[1]), timespecArg(r, 2),
                        remainingArg(r, 3, (a[1] & TIMER_ABSTIME) == 0)});
    if (n == "execve")
        return execveArgs(r, o);
    namespace names = strace_names;
    if (n == "umask")
        return inOrder({straceMode(a[0])});
    if (n == "access")
        return inOrder({path(r, 0), names::accessMode(a[1])});
    if (n == "faccessat")
        return inOrder({straceDirFd(a[0]), path(r, 1), names::accessMode(a[2])});
    if (n == "faccessat2")
        return inOrder(
            {straceDirFd(a[0]), path(r, 1), names::accessMode(a[2]), names::faccessatFlags(a[3])});
    if (n == "unlinkat")
        return inOrder({straceDirFd(a[0]), path(r, 1), names::atFlags(a[2])});
    if (n == "lseek")
        return inOrder({fd(a[0]), i64(a[1]), names::seekWhence(a[2])});
    if (n == "dup3")
        return inOrder({fd(a[0]), fd(a[1]), names::cloexecFlags(a[2])});
    if (n == "pipe")
        return inOrder({fdPairArg(r, 0)});
    if (n == "pipe2")
        return inOrder({fdPairArg(r, 0), names::pipeFlags(a[1])});
    if (n == "fcntl")
        return fcntlArgs(r);
    if (n == "socket")
        return inOrder({names::socketDomain(a[0]), names::socketType(a[1]),
                        names::socketProtocol(a[0], a[2])});
    if (n == "socketpair")
        return inOrder({names::socketDomain(a[0]), names::socketType(a[1]),
                        names::socketProtocol(a[0], a[2]), fdPairArg(r, 3)});
    if (n == "rt_sigprocmask")
        return inOrder(
            {names::sigprocmaskHow(a[0]), stracePointer(a[1]), stracePointer(a[2]), ulong(a[3])});
    if (n == "brk")
        return inOrder({stracePointer(a[0])});
    if (n == "arch_prctl")
        return archPrctlArgs(r);
    if (n == "getrandom")
        return inOrder({randomBytes(r, o), ulong(a[1]), names::getrandomFlags(a[2])});
    if (n == "readlink")
        return inOrder({path(r, 0), outBuffer(r, 1, o), fmt::format("{}", asInt(a[2]))});
    if (n == "readlinkat")
        return inOrder(
            {straceDirFd(a[0]), path(r, 1), outBuffer(r, 2, o), fmt::format("{}", asInt(a[3]))});
    if (n == "getcwd")
        return inOrder({returned(r) ? path(r, 0) : stracePointer(a[0]), ulong(a[1])});
    if (n == "listxattr" || n == "llistxattr")
        return inOrder({path(r, 0), xattrList(r, 1, o), ulong(a[2])});
    if (n == "flistxattr")
        return inOrder({fd(a[0]), xattrList(r, 1, o), ulong(a[2])});
    // strace prints the address of a name longer than the kernel takes (__NEW_UTS_LEN).
    if (n == "sethostname" || n == "setdomainname")
        return inOrder({static_cast<std::uint32_t>(a[1]) > 64 ? stracePointer(a[0])
                                                              : memArg(r, 0, o.string_limit),
                        ulong(static_cast<std::uint32_t>(a[1]))});
    // SYSLOG_ACTION_READ, _READ_ALL, _READ_CLEAR write the buffer; the others do not.
    if (n == "syslog")
        return inOrder(
            {fmt::format("{}", asInt(a[0])),
             asInt(a[0]) >= 2 && asInt(a[0]) <= 4 ? outBuffer(r, 1, o) : stracePointer(a[1]),
             fmt::format("{}", asInt(a[2]))});
    if (n == "wait4")
        return inOrder({fmt::format("{}", asInt(a[0])), waitStatusArg(r, 1),
                        names::waitOptions(a[2]), stracePointer(a[3])});
    if (n == "futex")
        return futexArgs(r);
    if (n == "rseq")
        return inOrder({hexOrZero(a[0]), hexOrZero(static_cast<std::uint32_t>(a[1])),
                        hexOrZero(static_cast<std::uint32_t>(a[2])),
                        hexOrZero(static_cast<std::uint32_t>(a[3]))});
    if (n == "newfstatat")
        return inOrder({straceDirFd(a[0]), path(r, 1), stracePointer(a[2]), names::atFlags(a[3])});
    if (n == "prlimit64")
        return inOrder({fmt::format("{}", asInt(a[0])), names::rlimitResource(a[1]),
                        stracePointer(a[2]), stracePointer(a[3])});
    if (n == "getrlimit" || n == "setrlimit")
        return inOrder({names::rlimitResource(a[0]), stracePointer(a[1])});
    if (!info && isArgumentless(n))
        return {};
    return genericArgs(r, info, o);
}

namespace {

std::string callArgs(const SyscallRecord& r, const SyscallInfo* info, const StraceOptions& o) {
    std::string s;
    for (const auto& a : straceArgs(r, info, o))
        s += (s.empty() ? "" : ", ") + a.text;
    return s;
}

}  // namespace

bool isShownAsIs(std::string_view bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        // C0 controls, DEL, and the C1 controls (U+0080..U+009F: 0xc2 0x80..0x9f)
        if (c < 0x20 || c == 0x7f ||
            (c == 0xc2 && i + 1 < bytes.size() && static_cast<unsigned char>(bytes[i + 1]) < 0xa0))
            return false;
    }
    return json::isUtf8(bytes);
}

void appendShownName(std::string& out, std::string_view bytes) {
    if (isShownAsIs(bytes))
        out += bytes;
    else
        appendStraceQuote(out, bytes, bytes.size());
}

void appendStraceQuote(std::string& out, std::string_view bytes, std::size_t limit,
                       bool truncated) {
    out += '"';
    const std::size_t n = std::min(bytes.size(), limit);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                continue;
            case '\\':
                out += "\\\\";
                continue;
            case '\t':
                out += "\\t";
                continue;
            case '\n':
                out += "\\n";
                continue;
            case '\v':
                out += "\\v";
                continue;
            case '\f':
                out += "\\f";
                continue;
            case '\r':
                out += "\\r";
                continue;
            default:
                break;
        }
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
            continue;
        }
        // Shortest octal unless an octal digit follows, which would extend the escape.
        const bool digit_follows = i + 1 < n && bytes[i + 1] >= '0' && bytes[i + 1] <= '7';
        if (digit_follows)
            fmt::format_to(std::back_inserter(out), "\\{:03o}", c);
        else
            fmt::format_to(std::back_inserter(out), "\\{:o}", c);
    }
    out += '"';
    if (bytes.size() > limit || truncated)
        out += "...";
}

std::string straceQuote(std::string_view bytes, std::size_t limit, bool truncated) {
    std::string out;
    appendStraceQuote(out, bytes, limit, truncated);
    return out;
}

std::string shownName(std::string_view bytes) {
    std::string out;
    appendShownName(out, bytes);
    return out;
}

std::string shownQuoted(std::string_view bytes) {
    if (isShownAsIs(bytes))
        return fmt::format("'{}'", bytes);
    return shownName(bytes);
}

std::string straceOpenFlags(std::uint64_t flags) {
    std::string out;
    const std::uint64_t acc = flags & O_ACCMODE;
    out = acc == O_RDONLY   ? "O_RDONLY"
          : acc == O_WRONLY ? "O_WRONLY"
          : acc == O_RDWR   ? "O_RDWR"
                            : "O_ACCMODE";
    appendRest(out,
               strace_names::appendOpenFlags(out, flags & ~static_cast<std::uint64_t>(O_ACCMODE)));
    return out;
}

std::string straceMode(std::uint64_t mode) {
    return strace_names::umode(mode);
}

std::string straceMmapProt(std::uint64_t prot) {
    if (prot == 0)
        return "PROT_NONE";
    std::string out;
    appendRest(out, appendFlags(out, prot, kProt));
    return out;
}

std::string straceMmapFlags(std::uint64_t flags) {
    std::string out;
    switch (flags & MAP_TYPE) {
        case 0:
            out = "MAP_FILE";
            break;
        case MAP_SHARED:
            out = "MAP_SHARED";
            break;
        case MAP_PRIVATE:
            out = "MAP_PRIVATE";
            break;
        case MAP_SHARED_VALIDATE:
            out = "MAP_SHARED_VALIDATE";
            break;
        default:
            out = fmt::format("{:#x}", flags & MAP_TYPE);
    }
    std::uint64_t rest = appendFlags(out, flags & ~static_cast<std::uint64_t>(MAP_TYPE), kMapFlags);
    const std::uint64_t huge = (rest >> MAP_HUGE_SHIFT) & MAP_HUGE_MASK;
    rest &= ~(static_cast<std::uint64_t>(MAP_HUGE_MASK) << MAP_HUGE_SHIFT);
    appendRest(out, rest);
    if (huge != 0)
        out += fmt::format("|{}<<MAP_HUGE_SHIFT", huge);
    return out;
}

std::string straceCloneFlags(std::uint64_t flags) {
    std::string out;
    const int sig = static_cast<int>(flags & CSIGNAL);
    appendRest(out, appendFlags(out, flags & ~static_cast<std::uint64_t>(CSIGNAL), kCloneFlags));
    if (sig != 0) {
        if (!out.empty())
            out += '|';
        out += strace_names::signal(sig);
    }
    return out.empty() ? "0" : out;
}

std::string straceDirFd(std::uint64_t v) {
    return asInt(v) == AT_FDCWD ? "AT_FDCWD" : fd(v);
}

std::string stracePointer(std::uint64_t p) {
    return p == 0 ? "NULL" : fmt::format("{:#x}", p);
}

std::string straceEndLine(int st) {
    if (WIFSIGNALED(st))
        return fmt::format("+++ killed by {} {}+++", strace_names::signal(WTERMSIG(st)),
                           WCOREDUMP(st) ? "(core dumped) " : "");
    return fmt::format("+++ exited with {} +++", WEXITSTATUS(st));
}

std::string straceReturn(std::string_view syscall, std::optional<std::int64_t> retval) {
    if (!retval)
        return "= ?";
    const std::int64_t v = *retval;
    if (v < 0 && v >= -4095) {
        const int err = static_cast<int>(-v);
        const std::string_view name = errnoName(err);
        const bool internal = err >= 512 && err <= 516;
        return fmt::format("= {} {} ({})", internal ? "?" : "-1",
                           name.empty() ? fmt::format("errno {}", err) : std::string(name),
                           errnoDescription(err));
    }
    if (syscallReturnsAddress(syscall))
        return "= " + straceAddress(static_cast<std::uint64_t>(v));
    return fmt::format("= {}", v);
}

bool syscallReturnsAddress(std::string_view syscall) {
    return syscall == "mmap" || syscall == "brk" || syscall == "mremap" || syscall == "shmat";
}

std::string straceAddress(std::uint64_t v) {
    return hexOrZero(v);
}

namespace {

// Returns strace decodes from the arguments too (umask's old mask, fcntl's flags).
std::string returnText(const SyscallRecord& r) {
    if (r.retval && *r.retval >= 0) {
        if (r.name == "umask")
            return "= " + straceMode(static_cast<std::uint64_t>(*r.retval));
        if (r.name == "fcntl")
            if (auto t = strace_names::fcntlReturn(r.args[1], *r.retval); !t.empty())
                return "= " + t;
    }
    return straceReturn(r.name, r.retval);
}

}  // namespace

std::string formatSyscall(const SyscallRecord& rec, const SyscallInfo* info,
                          const StraceOptions& opts) {
    std::string call = fmt::format("{}({})", rec.name, callArgs(rec, info, opts));
    const std::string ret = returnText(rec);
    // strace pads the call to 40 columns, then "= ..."; longer calls get one space.
    constexpr std::size_t kColumn = 40;
    if (opts.align && call.size() < kColumn)
        call.resize(kColumn, ' ');
    else
        call += ' ';
    return call + ret;
}

std::vector<SyscallMemHint> syscallMemHints(std::string_view n, const SyscallInfo* info) {
    using K = SyscallMemHint::Kind;
    if (n == "openat")
        return {{1, K::Path, 0}};
    if (n == "execve") {
        std::vector<SyscallMemHint> h = {
            {0, K::Path, 0}, {1, K::PtrArray, kExecArgvMax + 1}, {2, K::PtrArray, kExecEnvMax}};
        for (std::size_t i = 0; i < kExecArgvMax; ++i)
            h.push_back({1, K::ArrayString, i});
        return h;
    }
    if (n == "open" || n == "creat")
        return {{0, K::Path, 0}};
    if (n == "read" || n == "pread64")
        return {{1, K::OutBuffer, 0}};
    if (n == "write" || n == "pwrite64")
        return {{1, K::InBuffer, 2}};
    if (n == "nanosleep")
        return {{0, K::Timespec, 0}, {1, K::TimespecOut, 0}};
    if (n == "clock_nanosleep")
        return {{2, K::Timespec, 0}, {3, K::TimespecOut, 0}};
    if (n == "pipe" || n == "pipe2")
        return {{0, K::FdPair, 0}};
    if (n == "socketpair")
        return {{3, K::FdPair, 0}};
    if (n == "getrandom")
        return {{0, K::OutBuffer, 0}};
    if (n == "wait4")
        return {{1, K::Int, 0}};
    // Strings the call writes: only the bytes it returns the count of are its answer (the
    // rest of the buffer is older data), and getcwd's, read as a path at the return, only
    // when it succeeded (formatter).
    if (n == "readlink")
        return {{0, K::Path, 0}, {1, K::OutBuffer, 0}};
    if (n == "readlinkat")
        return {{1, K::Path, 0}, {2, K::OutBuffer, 0}};
    if (n == "getcwd")
        return {{0, K::Path, 0}};
    if (n == "listxattr" || n == "llistxattr")
        return {{0, K::Path, 0}, {1, K::OutBuffer, 0}};
    if (n == "flistxattr")
        return {{1, K::OutBuffer, 0}};
    // A name of `len` bytes, no NUL needed; syslog's read actions write the returned count.
    if (n == "sethostname" || n == "setdomainname")
        return {{0, K::InBuffer, 1}};
    if (n == "syslog")
        return {{1, K::OutBuffer, 0}};
    // The timeout of the commands that take one; for the others the same register holds a
    // number, whose read is not shown.
    if (n == "futex")
        return {{3, K::Timespec, 0}};
    if (n == "close" || n == "mmap" || n == "munmap" || n == "mprotect" || n == "clone")
        return {};
    std::vector<SyscallMemHint> hints;
    if (info)
        for (std::size_t i = 0; i < info->args.size(); ++i)
            if (info->args[i].is_string)
                hints.push_back({i, K::Path, 0});
    return hints;
}

}  // namespace probectl
