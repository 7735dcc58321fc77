// Helpers shared by the in-VM integration tests: workload processes held at a gate so a
// session can filter on their pid before they run, and small readers of kernel files.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "probectl/client.hpp"
#include "probectl/result.hpp"

namespace itest {

// Path of a workload program built beside the test binary (tests/integration/workloads).
std::string workload(const std::string& name);
// The workloads that several test files probe.
inline std::string uprobeTarget() {
    return workload("uprobe_target");
}
inline std::string aggrTarget() {
    return workload("aggr_target");
}

// A child process forked now and held before exec until release(), so its pid can be put
// in a session filter first. Its stdout is captured. A non-zero `pid` is the pid the child
// must get (a free one; root): to hand out a pid again on purpose.
class Workload {
  public:
    explicit Workload(std::vector<std::string> argv, pid_t pid = 0);
    ~Workload();  // kills and reaps the child if still running
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    pid_t pid() const { return pid_; }
    void release();
    // Waits for exit; returns the exit status (128+signal when killed) and fills `out`.
    int wait(std::string* out = nullptr);

  private:
    pid_t pid_ = -1;
    int gate_fd_ = -1;
    int out_fd_ = -1;
};

// A shell command's exit status (128+signal when killed) and its stdout and stderr together.
struct Ran {
    int status = -1;
    std::string out;
};
Ran sh(const std::string& cmd);
// A `probectl count|hist|latency ... -- CMD` shell command whose stdout is the tables alone:
// with a command they go to stderr, among the messages (CMD's own output keeps stdout), so
// -o sends them to a descriptor of stdout and stdout itself (CMD's) is discarded. Other
// commands are returned as they are.
std::string tablesOnly(const std::string& cmd);

// Whole file as text ("" when it cannot be read).
std::string readFile(const std::string& path);

// A probectl module parameter set for one test and restored after it.
class ModuleParam {
  public:
    ModuleParam(const std::string& name, const std::string& value);
    ~ModuleParam();
    ModuleParam(const ModuleParam&) = delete;
    ModuleParam& operator=(const ModuleParam&) = delete;
    bool ok() const { return ok_; }

  private:
    std::string path_;
    std::string saved_;
    bool ok_ = false;
};
// The kernel was built with the bug detectors (the debug test kernel: kmemleak, KASAN,
// lockdep), which make every kprobe registration many times slower: tests that time
// nothing but register hundreds of probes size themselves down there.
bool debugKernel();
// Lines of /sys/kernel/debug/kprobes/list that mention `symbol`. The kernel prints the
// name kallsyms finds first for an address, which may be an alias (6.12 lists
// __x64_sys_getppid as __do_sys_getppid): prefer kprobesListedAt with the resolved address.
std::vector<std::string> kprobesListed(const std::string& symbol);
// Lines of /sys/kernel/debug/kprobes/list for the probe registered at `addr`.
std::vector<std::string> kprobesListedAt(std::uint64_t addr);
// A connected Client; throws (failing the test) when the module cannot be reached.
probectl::Client connectOrDie();
// Probes currently registered by the module, by id.
std::vector<probectl::ProbeInfo> listOrDie(probectl::Client& c);
bool hasProbe(const std::vector<probectl::ProbeInfo>& probes, std::uint32_t id);
// A kprobe on vfs_read counting into a map keyed by pid, of `entries` keys (the map-size
// tests: each such map is charged to max_map_kb).
probectl::ProbeRequest pidMapProbe(std::uint32_t entries);
// Formats a Result's error for an assertion message.
template <class R>
std::string why(const R& r) {
    return r.ok() ? std::string("ok")
                  : r.error().describe() + " [extack: " + r.error().extack + "]";
}

// operator new calls so far in this binary (alloc_count.cpp).
std::size_t allocations();

}  // namespace itest
