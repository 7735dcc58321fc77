// Fixtures of the attach/detach and tracer-death tests, shared by the host ptrace tests
// (tests/ptrace) and the in-VM tests comparing both backends (tests/integration): a running
// multithreaded pt_workload, the bytes of its text, and a ptrace tracer in a child process.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "probectl/probe_spec.hpp"
#include "probectl/proc_maps.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/user_target.hpp"

namespace probectl::ptfx {

// pt_workload as this build made it for the binary that includes this file.
inline const std::string kWorkload = PT_WORKLOAD_PATH;

// A running multithreaded workload for the attach tests: pt_workload spin T (default 4;
// tests/ptrace/pt_workload.c), its stdout a pipe that receives a byte every 4096 calls of thread
// 0. Not our child's child: the test process is its parent, so its exit status is ours to collect.
struct Spinner {
    pid_t pid = -1;
    int progress = -1;  // read end

    explicit Spinner(const std::string& workload, int threads = 4) {
        const std::string t = std::to_string(threads);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            return;
        pid = fork();
        if (pid == 0) {
            dup2(p[1], 1);
            execl(workload.c_str(), "pt_workload", "spin", t.c_str(), nullptr);
            _exit(127);
        }
        ::close(p[1]);
        progress = p[0];
    }
    ~Spinner() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            int st;
            waitpid(pid, &st, 0);
        }
        if (progress >= 0)
            ::close(progress);
    }
    // Proof of life: drain what is buffered, then wait for a fresh byte.
    bool advances() const {
        char buf[4096];
        int fl = fcntl(progress, F_GETFL);
        fcntl(progress, F_SETFL, fl | O_NONBLOCK);
        while (::read(progress, buf, sizeof(buf)) > 0) {
        }
        fcntl(progress, F_SETFL, fl);
        return ::read(progress, buf, 1) == 1;
    }
    int threadCount() const {
        int n = 0;
        std::ifstream f("/proc/" + std::to_string(pid) + "/status");
        std::string line;
        while (std::getline(f, line))
            if (line.rfind("Threads:", 0) == 0)
                n = std::stoi(line.substr(8));
        return n;
    }
};

// The process address of pt_spin in `pid`, and its executable mapping.
struct Text {
    std::uint64_t spin_addr = 0;
    std::uint64_t start = 0, end = 0;
};

inline Text findText(pid_t pid, const std::string& workload) {
    Text t;
    ProbeSpec ps = parseProbeSpec("uprobe:" + workload + ":pt_spin").value();
    auto target = resolveUserSpec(ps).value();
    auto maps = ProcMaps::read(pid).value();
    for (const auto& m : maps.mappings())
        if (m.executable() && m.path == target.path && m.holdsFileOffset(target.file_offset)) {
            t.spin_addr = m.address(target.file_offset);
            t.start = m.start;
            t.end = m.end;
        }
    return t;
}

inline std::string readMem(pid_t pid, std::uint64_t start, std::uint64_t end) {
    std::string bytes(end - start, '\0');
    const int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
    if (fd < 0)
        return {};
    const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(start));
    ::close(fd);
    bytes.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return bytes;
}

// The PtraceSession options attaching to `pid`.
inline PtraceSessionOptions attachOptions(pid_t pid) {
    PtraceSessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(pid)};
    return o;
}

// Runs a tracer in a child process attached to `target` with `probe`, reports on `ready`
// once it has seen an event, then waits to be killed. It waits outside poll(): killed
// while stepping a thread over a breakpoint, it would leave the original byte in place
// rather than the int3, and the tracer-death tests would depend on when the kill landed.
inline pid_t forkTracer(pid_t target, const std::string& probe, int ready) {
    const pid_t pid = fork();
    if (pid != 0)
        return pid;
    auto s = PtraceSession::open(attachOptions(target));
    if (!s || !s->add(probe))
        _exit(1);
    bool seen = false;
    while (!seen) {
        if (!s->poll(1000, [&](const Event&) { seen = true; }))
            _exit(2);
    }
    (void)!::write(ready, "r", 1);
    for (;;)
        ::pause();
}

}  // namespace probectl::ptfx
