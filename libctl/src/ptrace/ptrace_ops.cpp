#include "ptrace/ptrace_ops.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace probectl::ptrace {

int Stop::sig() const {
    return WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
}

Stop classify(int status) {
    Stop s;
    s.status = status;
    if (!WIFSTOPPED(status)) {
        s.kind = StopKind::Exited;
        return s;
    }
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (sig == (SIGTRAP | 0x80))
        s.kind = StopKind::Syscall;
    else if (event == PTRACE_EVENT_STOP)
        s.kind = (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                     ? StopKind::GroupStop
                     : StopKind::Interrupt;
    else if (event != 0)
        s.kind = StopKind::Event;
    else
        s.kind = StopKind::Signal;
    return s;
}

unsigned long baseOptions() {
    return PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
           PTRACE_O_TRACEEXEC | PTRACE_O_TRACEVFORKDONE;
}

Result<void> seize(pid_t tid, unsigned long options) {
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, options) < 0) {
        const int e = errno;
        if (e == EPERM)
            return makeError(e, fmt::format("cannot trace thread {}: not permitted (another "
                                            "user's process, Yama ptrace_scope, or already "
                                            "traced, e.g. by a debugger)",
                                            tid));
        return makeError(e, fmt::format("cannot trace thread {}", tid));
    }
    return {};
}

pid_t waitThread(pid_t tid, int* status) {
    pid_t r;
    do
        r = ::waitpid(tid, status, __WALL);
    while (r < 0 && errno == EINTR);
    return r;
}

Result<user_regs_struct> getRegs(pid_t tid) {
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) < 0)
        return makeError(errno, fmt::format("PTRACE_GETREGS of thread {}", tid));
    return regs;
}

Result<void> setRegs(pid_t tid, const user_regs_struct& regs) {
    if (::ptrace(PTRACE_SETREGS, tid, nullptr, &regs) < 0)
        return makeError(errno, fmt::format("PTRACE_SETREGS of thread {}", tid));
    return {};
}

Result<unsigned long> eventMsg(pid_t tid) {
    unsigned long msg = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) < 0)
        return makeError(errno, fmt::format("PTRACE_GETEVENTMSG of thread {}", tid));
    return msg;
}

std::optional<std::string> readComm(pid_t tid) {
    const int fd = ::open(fmt::format("/proc/{}/comm", tid).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    char buf[64];  // TASK_COMM_LEN is 16; one read returns it whole
    ssize_t n;
    do
        n = ::read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n <= 0)
        return std::nullopt;
    if (buf[n - 1] == '\n')
        --n;
    return std::string(buf, static_cast<std::size_t>(n));
}

std::uint32_t readUid(pid_t tid) {
    std::ifstream f(fmt::format("/proc/{}/status", tid));
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("Uid:", 0) == 0)
            return static_cast<std::uint32_t>(std::stoul(line.substr(4)));
    return 0;
}

bool sigtrapPending(pid_t tid) {
    std::ifstream f(fmt::format("/proc/{}/status", tid));
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("SigPnd:", 0) == 0)
            return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTRAP - 1)) & 1;
    return false;
}

std::uint64_t monotonicNowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace probectl::ptrace
