#include "probectl/held_command.hpp"

#include <linux/filter.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace probectl {

namespace {

void closeFd(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// The child's filter buffer: static, so reading it needs no allocation after fork.
sock_filter g_filter[HeldCommand::kMaxFilterLen];

bool readAll(int fd, void* buf, std::size_t len) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
        const ssize_t n = ::read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

[[noreturn]] void childFail(int err_fd, int e) {
    (void)!::write(err_fd, &e, sizeof(e));
    _exit(127);
}

int waitBlocking(pid_t pid) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return st;
}

// The child between fork and exec: only async-signal-safe calls, no allocation.
[[noreturn]] void runChild(pid_t parent, int go_fd, int err_fd, const char* path,
                           char* const* args) {
    // Die with the tracer; if the parent died before prctl, we are already orphaned.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(126);
    // Tell the tracer we are parked in read(): whatever this child does before it is let
    // go is done by then, so no syscall of ours leaks into the command's trace.
    if (::write(err_fd, "R", 1) != 1)
        _exit(126);
    std::uint32_t len = 0;
    if (!readAll(go_fd, &len, sizeof(len)))
        _exit(126);  // the tracer gave up before releasing us
    if (len > HeldCommand::kMaxFilterLen)
        childFail(err_fd, E2BIG);
    if (len > 0) {
        if (!readAll(go_fd, g_filter, len * sizeof(sock_filter)))
            _exit(126);
        sock_fprog prog{static_cast<unsigned short>(len), g_filter};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
            childFail(err_fd, errno);
    }
    execv(path, args);
    childFail(err_fd, errno);
}

// The file execvp would run for `name`, searched here so that the search's failed execs do
// not appear in the command's trace, and a missing command is reported before any probe
// is armed. A name with a '/' is used as it is.
Result<std::string> resolveCommand(const std::string& name) {
    if (name.empty())
        return makeError(ENOENT, "cannot run '': empty command name");
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) < 0)
            return makeError(errno, fmt::format("cannot run '{}'", name));
        return name;
    }
    const char* env = std::getenv("PATH");
    const std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
    int first_err = ENOENT;  // execvp's rule: EACCES wins over ENOENT
    for (std::size_t pos = 0;;) {
        const std::size_t end = path.find(':', pos);
        std::string dir = path.substr(pos, end == std::string::npos ? end : end - pos);
        const std::string file = (dir.empty() ? std::string(".") : dir) + "/" + name;
        struct stat st {};
        if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            if (::access(file.c_str(), X_OK) == 0)
                return file;
            first_err = EACCES;
        }
        if (end == std::string::npos)
            break;
        pos = end + 1;
    }
    if (first_err == EACCES)
        return makeError(EACCES,
                         fmt::format("cannot run '{}': found in PATH but not executable", name));
    return makeError(ENOENT, fmt::format("cannot run '{}': command not found in PATH", name));
}

// Whether binfmt_misc may run files of other formats (it is mounted, enabled and holds an
// entry): then only exec can tell.
bool binfmtMiscMayRun() {
    std::ifstream status("/proc/sys/fs/binfmt_misc/status");
    std::string state;
    if (!(status >> state) || state != "enabled")
        return false;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/sys/fs/binfmt_misc", ec)) {
        const std::string name = e.path().filename();
        if (name != "status" && name != "register")
            return true;
    }
    return false;
}

// A #! line's interpreter: the first word after "#!" (the kernel's rule: spaces and tabs
// skipped, the word ends at one or at the line's end); "" when there is none.
std::string interpreterOf(const std::string& line) {
    const std::size_t from = line.find_first_not_of(" \t", 2);
    if (from == std::string::npos)
        return {};
    return line.substr(from, line.find_first_of(" \t", from) - from);
}

// What exec would refuse, found before a probe is armed rather than after: a directory; a
// file that is neither ELF nor a #! script (ENOEXEC) unless binfmt_misc may run it; a #!
// line without an interpreter, or naming one that is missing or not executable. A file
// this user may run but not read is left to exec.
Result<void> checkExecFormat(const std::string& path, const std::string& name) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return makeError(EACCES, fmt::format("cannot run '{}': it is a directory", name));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    // The kernel reads at most this much of a #! line (BINPRM_BUF_SIZE).
    char head[256] = {};
    ssize_t n;
    do
        n = ::read(fd, head, sizeof(head));
    while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n < 0)
        return {};
    const std::string_view got(head, static_cast<std::size_t>(n));
    static constexpr std::string_view kElfMagic = "\177ELF";
    if (got.starts_with(kElfMagic))
        return {};
    if (got.starts_with("#!")) {
        const std::string line(got.substr(0, got.find('\n')));
        const std::string interp = interpreterOf(line);
        if (interp.empty())
            return makeError(
                ENOEXEC, fmt::format("cannot run '{}': its #! line names no interpreter", name));
        if (::access(interp.c_str(), X_OK) < 0)
            return makeError(errno, fmt::format("cannot run '{}': its interpreter '{}' (#! line)",
                                                name, interp));
        return {};
    }
    if (binfmtMiscMayRun())
        return {};
    return makeError(ENOEXEC,
                     fmt::format("cannot run '{}': {} is neither an ELF executable nor a script "
                                 "starting with #!",
                                 name, path == name ? "it" : "'" + path + "'"));
}

}  // namespace

Result<std::string> HeldCommand::findCommand(const std::string& name) {
    return resolveCommand(name);
}

Result<HeldCommand> HeldCommand::spawn(const std::vector<std::string>& argv, bool adopt_orphans) {
    if (argv.empty())
        return makeError(EINVAL, "no command to run");
    auto path = resolveCommand(argv[0]);
    if (!path)
        return std::move(path).error();
    if (auto f = checkExecFormat(*path, argv[0]); !f)
        return std::move(f).error();
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

    // Only when asked: the command's orphans (a daemonised grandchild, what a killed
    // command leaves) become this process's children rather than init's, still found when
    // the run kills what the command started (Tracer::killCommand). An embedding program
    // with children of its own must not become one behind its back.
    if (adopt_orphans && ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        return makeError(errno,
                         "prctl(PR_SET_CHILD_SUBREAPER) to adopt the command's "
                         "orphans failed");
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {go[0], go[1], err[0], err[1]})
            ::close(fd);
        return makeError(e, "fork");
    }
    if (pid == 0) {
        ::close(go[1]);
        ::close(err[0]);
        runChild(parent, go[0], err[1], path->c_str(), args.data());
    }
    ::close(go[0]);
    ::close(err[1]);
    char ready = 0;
    if (!readAll(err[0], &ready, 1)) {
        ::close(go[1]);
        ::close(err[0]);
        waitBlocking(pid);
        return makeError(ECHILD, fmt::format("'{}' exited before it could be started", argv[0]));
    }
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    HeldCommand c;
    c.pid_ = pid;
    c.go_fd_ = go[1];
    c.err_fd_ = err[0];
    c.name_ = argv[0];
    c.adopt_orphans_ = adopt_orphans;
    return c;
}

HeldCommand::HeldCommand(HeldCommand&& o) noexcept
    : pid_(o.pid_),
      go_fd_(o.go_fd_),
      err_fd_(o.err_fd_),
      status_(o.status_),
      name_(std::move(o.name_)),
      adopt_orphans_(o.adopt_orphans_) {
    o.pid_ = -1;
    o.go_fd_ = o.err_fd_ = -1;
    o.status_.reset();
}

HeldCommand& HeldCommand::operator=(HeldCommand&& o) noexcept {
    if (this != &o) {
        closePipes();
        killAndReap();
        pid_ = o.pid_;
        go_fd_ = o.go_fd_;
        err_fd_ = o.err_fd_;
        status_ = o.status_;
        name_ = std::move(o.name_);
        adopt_orphans_ = o.adopt_orphans_;
        o.pid_ = -1;
        o.go_fd_ = o.err_fd_ = -1;
        o.status_.reset();
    }
    return *this;
}

HeldCommand::~HeldCommand() {
    closePipes();
    killAndReap();
}

void HeldCommand::closePipes() {
    closeFd(go_fd_);
    closeFd(err_fd_);
}

void HeldCommand::killAndReap() {
    if (pid_ > 0 && !status_) {
        ::kill(pid_, SIGKILL);
        status_ = waitBlocking(pid_);
    }
}

Result<void> HeldCommand::start() {
    return start(std::vector<sock_filter>{});
}

Result<void> HeldCommand::start(const std::vector<sock_filter>& filter) {
    if (go_fd_ < 0)
        return makeError(EINVAL, "no held command to start");
    // One write: 4 + 4096 * 8 bytes at most, which a pipe buffer (64 KiB) takes whole
    // without the child reading.
    std::vector<char> msg(sizeof(std::uint32_t) + filter.size() * sizeof(sock_filter));
    const auto len = static_cast<std::uint32_t>(filter.size());
    std::memcpy(msg.data(), &len, sizeof(len));
    if (!filter.empty())
        std::memcpy(msg.data() + sizeof(len), filter.data(), filter.size() * sizeof(sock_filter));
    const ssize_t n = ::write(go_fd_, msg.data(), msg.size());
    const int e = errno;
    closeFd(go_fd_);
    if (n != static_cast<ssize_t>(msg.size()))
        return makeError(n < 0 ? e : EIO, fmt::format("cannot start {}", name_));
    return {};
}

std::optional<Result<void>> HeldCommand::execResult() {
    if (err_fd_ < 0)
        return Result<void>{};
    int e = 0;
    ssize_t n;
    do
        n = ::read(err_fd_, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return std::nullopt;
    closeFd(err_fd_);
    if (n == static_cast<ssize_t>(sizeof(e)))
        return Result<void>{makeError(e, fmt::format("cannot run '{}'", name_))};
    return Result<void>{};
}

Result<void> HeldCommand::release() {
    if (auto r = start(); !r)
        return r;
    for (;;) {
        if (auto r = execResult())
            return *r;
        // A signal (Ctrl-C) does not abandon the wait: the exec is a moment away.
        pollfd p{err_fd_, POLLIN, 0};
        if (::poll(&p, 1, -1) < 0 && errno != EINTR)
            return makeError(errno, fmt::format("waiting for '{}' to start", name_));
    }
}

std::optional<int> HeldCommand::tryWait() {
    if (status_ || pid_ <= 0)
        return status_;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_)
        status_ = st;
    return status_;
}

void HeldCommand::reaped(int status) {
    status_ = status;
}

int HeldCommand::terminate(int grace_ms) {
    if (pid_ <= 0)
        return 0;
    if (status_)
        return *status_;
    ::kill(pid_, SIGTERM);
    for (int waited = 0; waited < grace_ms; waited += 10) {
        if (auto st = tryWait())
            return *st;
        ::usleep(10000);
    }
    if (auto st = tryWait())
        return *st;
    ::kill(pid_, SIGKILL);
    status_ = waitBlocking(pid_);
    return *status_;
}

int HeldCommand::exitCode(int status) {
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

std::string HeldCommand::describeStatus(int status) {
    if (WIFEXITED(status))
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return fmt::format("killed by signal {} ({})", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    return fmt::format("ended with wait status {:#x}", status);
}

}  // namespace probectl
