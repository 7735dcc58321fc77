#include "itest_util.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "probectl/aggr.hpp"

namespace itest {

Ran sh(const std::string& cmd) {
    Ran r;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p)
        return r;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;)
        r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

std::string tablesOnly(const std::string& cmd) {
    const auto dash = cmd.find(" -- ");
    if (dash == std::string::npos)
        return cmd;
    return cmd.substr(0, dash) + " -o /proc/self/fd/3" + cmd.substr(dash) + " 3>&1 >/dev/null";
}

std::string workload(const std::string& name) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        throw std::runtime_error("readlink /proc/self/exe failed");
    std::string dir(self, static_cast<size_t>(n));
    return dir.substr(0, dir.rfind('/')) + "/" + name;
}

namespace {

// fork() with the child's pid chosen: clone3's set_tid (5.5+, root). Fails with EEXIST when
// the pid is in use.
pid_t forkAs(pid_t pid) {
    clone_args args{};
    args.exit_signal = SIGCHLD;
    args.set_tid = reinterpret_cast<std::uintptr_t>(&pid);
    args.set_tid_size = 1;
    return static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof(args)));
}

}  // namespace

Workload::Workload(std::vector<std::string> argv, pid_t pid) {
    int gate[2], out[2];
    if (pipe2(gate, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        throw std::runtime_error("pipe2 failed");
    pid_ = pid ? forkAs(pid) : fork();
    if (pid_ < 0)
        throw std::runtime_error(pid ? "clone3 with pid " + std::to_string(pid) + ": " +
                                           std::strerror(errno)
                                     : std::string("fork failed"));
    if (pid_ == 0) {
        char c;
        close(gate[1]);
        close(out[0]);
        // EOF or a byte opens the gate; a dead parent must not leave the child running.
        if (read(gate[0], &c, 1) != 1)
            _exit(125);
        dup2(out[1], STDOUT_FILENO);
        std::vector<char*> args;
        for (auto& a : argv)
            args.push_back(a.data());
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    close(gate[0]);
    close(out[1]);
    gate_fd_ = gate[1];
    out_fd_ = out[0];
}

Workload::~Workload() {
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (gate_fd_ >= 0)
        close(gate_fd_);
    if (out_fd_ >= 0)
        close(out_fd_);
}

void Workload::release() {
    char c = 'g';
    if (write(gate_fd_, &c, 1) != 1)
        throw std::runtime_error("cannot release workload");
    close(gate_fd_);
    gate_fd_ = -1;
}

int Workload::wait(std::string* out) {
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = read(out_fd_, buf, sizeof(buf))) > 0)
        text.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (out)
        *out = text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string readFile(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

namespace {
bool writeFile(const std::string& path, const std::string& v) {
    std::ofstream f(path);
    f << v << std::flush;
    return static_cast<bool>(f);
}
}  // namespace

ModuleParam::ModuleParam(const std::string& name, const std::string& value)
    : path_("/sys/module/probectl/parameters/" + name), saved_(readFile(path_)) {
    ok_ = writeFile(path_, value);
}

ModuleParam::~ModuleParam() {
    writeFile(path_, saved_);
}

bool debugKernel() {
    return ::access("/sys/kernel/debug/kmemleak", F_OK) == 0;
}

std::vector<std::string> kprobesListed(const std::string& symbol) {
    std::vector<std::string> hits;
    std::istringstream in(readFile("/sys/kernel/debug/kprobes/list"));
    for (std::string line; std::getline(in, line);)
        if (line.find(symbol) != std::string::npos)
            hits.push_back(line);
    return hits;
}

std::vector<std::string> kprobesListedAt(std::uint64_t addr) {
    std::vector<std::string> hits;
    std::istringstream in(readFile("/sys/kernel/debug/kprobes/list"));
    for (std::string line; std::getline(in, line);)
        if (std::strtoull(line.c_str(), nullptr, 16) == addr)
            hits.push_back(line);
    return hits;
}

probectl::Client connectOrDie() {
    auto c = probectl::Client::connect();
    if (!c)
        throw std::runtime_error("connect: " + c.error().describe());
    return std::move(*c);
}

probectl::ProbeRequest pidMapProbe(std::uint32_t entries) {
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Kprobe;
    req.symbol = "vfs_read";
    std::vector<probectl::FetchArg> args;
    probectl::AggrSpec a;
    a.keys = {"pid"};
    a.max_entries = entries;
    auto r = probectl::prepareAggregation(a, req, args);
    EXPECT_TRUE(r.ok()) << why(r);
    return req;
}

std::vector<probectl::ProbeInfo> listOrDie(probectl::Client& c) {
    auto r = c.listProbes();
    if (!r)
        throw std::runtime_error("list failed: " + r.error().describe());
    return *r;
}

bool hasProbe(const std::vector<probectl::ProbeInfo>& probes, std::uint32_t id) {
    for (const auto& p : probes)
        if (p.id == id)
            return true;
    return false;
}

}  // namespace itest
