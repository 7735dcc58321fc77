#include "child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace probectl::cli {

namespace {

void closeFd(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

}  // namespace

Result<StoppedChild> StoppedChild::spawn(const std::vector<std::string>& argv) {
    if (argv.empty())
        return makeError(EINVAL, "no command to run");
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        return makeError(errno, "pipe");
    if (pipe2(err, O_CLOEXEC) < 0) {
        const int e = errno;
        ::close(go[0]);
        ::close(go[1]);
        return makeError(e, "pipe");
    }
    // argv for exec is built before fork: the child may only call async-signal-safe code.
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {go[0], go[1], err[0], err[1]})
            ::close(fd);
        return makeError(e, "fork");
    }
    if (pid == 0) {
        // Die with the tracer (kill -9 of probectl must not leave CMD running); the signal
        // survives exec. If the parent died before prctl, we are already orphaned.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(126);
        ::close(go[1]);
        ::close(err[0]);
        char c;
        ssize_t n;
        do
            n = ::read(go[0], &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            _exit(126);  // the tracer gave up before releasing us
        execvp(args[0], args.data());
        const int e = errno;
        (void)!::write(err[1], &e, sizeof(e));
        _exit(127);
    }
    ::close(go[0]);
    ::close(err[1]);
    StoppedChild c;
    c.pid_ = pid;
    c.go_fd_ = go[1];
    c.err_fd_ = err[0];
    c.name_ = argv[0];
    return c;
}

StoppedChild::StoppedChild(StoppedChild&& o) noexcept
    : pid_(o.pid_), go_fd_(o.go_fd_), err_fd_(o.err_fd_), reaped_(o.reaped_), name_(o.name_) {
    o.pid_ = -1;
    o.go_fd_ = o.err_fd_ = -1;
}

StoppedChild::~StoppedChild() {
    closeFd(go_fd_);  // a child still waiting sees EOF and exits 126
    closeFd(err_fd_);
    if (pid_ > 0 && !reaped_) {
        ::kill(pid_, SIGKILL);
        int st;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
    }
}

Result<void> StoppedChild::release() {
    const char go = 1;
    if (::write(go_fd_, &go, 1) != 1)
        return makeError(errno, fmt::format("cannot start {}", name_));
    closeFd(go_fd_);
    int e = 0;
    ssize_t n;
    do
        n = ::read(err_fd_, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    closeFd(err_fd_);
    if (n == static_cast<ssize_t>(sizeof(e)))
        return makeError(e, fmt::format("cannot run '{}'", name_));
    return {};
}

std::optional<int> StoppedChild::tryWait() {
    if (pid_ <= 0)
        return std::nullopt;
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
        reaped_ = true;
        pid_ = -1;
        return st;
    }
    return std::nullopt;
}

int StoppedChild::terminate(int grace_ms) {
    if (pid_ <= 0)
        return 0;
    ::kill(pid_, SIGTERM);
    for (int waited = 0; waited < grace_ms; waited += 10) {
        if (auto st = tryWait())
            return *st;
        ::usleep(10000);
    }
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    pid_ = -1;
    return st;
}

int StoppedChild::exitCode(int status) {
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

std::string StoppedChild::describeStatus(int status) {
    if (WIFEXITED(status))
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return fmt::format("killed by signal {} ({})", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    return fmt::format("ended with wait status {:#x}", status);
}

}  // namespace probectl::cli
