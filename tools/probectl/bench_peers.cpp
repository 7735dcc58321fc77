// probectl bench: spawning and timing the workload, the untraced run, and the peers users
// would pick instead of probectl when present: Debian's strace and ltrace.
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench.hpp"

namespace probectl::cli::bench {

std::vector<std::string> Workload::argv(const std::string& out_file) const {
    std::vector<std::string> a = {binary, mode, std::to_string(n), std::to_string(threads),
                                  out_file};
    if (gap_ns)
        a.push_back(std::to_string(gap_ns));
    return a;
}

std::string Workload::label() const {
    return fmt::format("{}/{}t", mode, threads);
}

std::vector<Workload> standardWorkloads(const std::string& binary, std::uint64_t n,
                                        unsigned threads) {
    std::vector<Workload> out;
    for (const char* mode : {"calls", "syscalls"}) {
        out.push_back({binary, mode, n, 1});
        if (threads > 1)
            out.push_back({binary, mode, n, threads});
    }
    return out;
}

namespace {
std::string g_temp_dir;
unsigned g_temp_seq = 0;
}  // namespace

const std::string& tempDir() {
    if (g_temp_dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path() / "probectl-bench.XXXXXX");
        if (::mkdtemp(tmpl.data()))
            g_temp_dir = tmpl;
        else
            g_temp_dir = "/tmp";
    }
    return g_temp_dir;
}

void removeTempDir() {
    if (!g_temp_dir.empty() && g_temp_dir != "/tmp") {
        std::error_code ec;
        std::filesystem::remove_all(g_temp_dir, ec);
    }
    g_temp_dir.clear();
}

std::string tempFile(const std::string& stem) {
    return fmt::format("{}/{}.{}", tempDir(), stem, ++g_temp_seq);
}

Result<int> runToEnd(const std::vector<std::string>& argv) {
    int errpipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) < 0)
        return makeError(errno, "pipe");
    const pid_t pid = ::fork();
    if (pid < 0)
        return makeError(errno, "fork");
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        const int e = errno;
        (void)!::write(errpipe[1], &e, sizeof(e));
        ::_exit(127);
    }
    ::close(errpipe[1]);
    int exec_errno = 0;
    const bool exec_failed = ::read(errpipe[0], &exec_errno, sizeof(exec_errno)) > 0;
    ::close(errpipe[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (exec_failed)
        return makeError(exec_errno, fmt::format("cannot run {}", argv[0]));
    return status;
}

Result<std::uint64_t> readElapsed(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const auto at = line.find(" ns=");
        if (line.rfind("bench_workload ", 0) == 0 && at != std::string::npos)
            return std::stoull(line.substr(at + 4));
    }
    return makeError(EBADMSG, fmt::format("{}: no timing line from the workload", file));
}

std::uint64_t countLines(const std::string& file, const std::string& needle) {
    std::ifstream in(file);
    std::string line;
    std::uint64_t n = 0;
    while (std::getline(in, line))
        if (line.find(needle) != std::string::npos)
            ++n;
    return n;
}

std::string findInPath(const std::string& name) {
    const char* path = ::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string p = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(p.c_str(), X_OK) == 0)
            return p;
    }
    return {};
}

namespace {

std::string describeStatus(int status) {
    if (WIFEXITED(status))
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    return fmt::format("killed by signal {}", WTERMSIG(status));
}

}  // namespace

Outcome timed(const std::vector<std::string>& prefix, const Workload& w, Measure m) {
    const std::string out = tempFile("workload");
    std::vector<std::string> argv = prefix;
    for (auto& a : w.argv(out))
        argv.push_back(std::move(a));
    const auto t0 = std::chrono::steady_clock::now();
    auto st = runToEnd(argv);
    m.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    if (!st)
        return fail(st.error().describe());
    if (*st != 0)
        return fail(fmt::format("{} {}", argv[0], describeStatus(*st)));
    auto ns = readElapsed(out);
    std::filesystem::remove(out);
    if (!ns)
        return fail(
            fmt::format("{} exited 0 but the workload under it never finished its loop "
                        "(no timing line)",
                        argv[0]));
    m.elapsed_ns = *ns;
    return measured(m);
}

std::string selfExe() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("probectl") : p.string();
}

namespace {

// A peer run whose hits are the lines of its output file naming `needle`.
Outcome peer(const char* tool, std::vector<std::string> prefix, const std::string& needle,
             const Workload& w) {
    const std::string exe = findInPath(tool);
    if (exe.empty())
        return skip(fmt::format("no {} in PATH", tool));
    const std::string log = tempFile(tool);
    prefix.insert(prefix.begin(), {exe, "-o", log});
    auto o = timed(prefix, w);
    if (o.measure)
        o.measure->hits = countLines(log, needle);
    std::filesystem::remove(log);
    return o;
}

}  // namespace

Outcome runUntraced(const Workload& w) {
    return timed({}, w);
}

// -f: the multithreaded workload's threads; -qq: no attach/exit lines among the counted ones.
Outcome runStrace(const Workload& w) {
    return peer("strace", {"-f", "-qq", "-e", "trace=getppid", "--"}, "getppid(", w);
}

Outcome runStraceSeccomp(const Workload& w) {
    return peer("strace", {"-f", "-qq", "--seccomp-bpf", "-e", "trace=getppid", "--"}, "getppid(",
                w);
}

// -x: a breakpoint on the workload's own function (not a PLT call, which ltrace's default
// -e watches); ltrace writes "bench_fn(N, ...) = R" per call.
Outcome runLtrace(const Workload& w) {
    return peer("ltrace", {"-f", "-x", "bench_fn", "--"}, "bench_fn(", w);
}

}  // namespace probectl::cli::bench
