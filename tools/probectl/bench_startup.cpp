// probectl bench: start-up, the wall time of a whole traced command that makes a single
// getppid call, where start-up and tear-down are all there is to measure: probectl (a
// syscall probe, a kprobe on the syscall's entry, a kprobe whose name only kallsyms vets,
// with the kallsyms cache and without) beside strace and the program alone; then the
// steps of probectl's start-up, each a command that stops after it, so the difference
// between two rows is one step's cost.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "bench.hpp"
#include "probectl/held_command.hpp"

namespace probectl::cli::bench {

namespace {

StartupTimes timeCommand(std::string label, const std::vector<std::string>& prefix,
                         const Workload& w, unsigned runs) {
    std::vector<std::string> argv = prefix;
    for (auto& a : w.argv("TIMING-FILE"))
        argv.push_back(std::move(a));
    StartupTimes t{std::move(label), fmt::format("{}", fmt::join(argv, " ")), 0, {}};
    std::vector<double> times;
    for (unsigned i = 0; i < runs; i++) {
        const Outcome o = timed(prefix, w);
        if (!o.measure) {
            t.error = o.error.empty() ? o.skipped : o.error;
            return t;
        }
        times.push_back(static_cast<double>(o.measure->wall_ns) / 1e9);
    }
    std::sort(times.begin(), times.end());
    t.median_s = times[times.size() / 2];
    return t;
}

// A command without the workload: one start-up step.
StartupTimes timeStep(std::string label, const std::vector<std::string>& argv, unsigned runs) {
    StartupTimes t{std::move(label), fmt::format("{}", fmt::join(argv, " ")), 0, {}, true};
    std::vector<double> times;
    for (unsigned i = 0; i < runs; i++) {
        const auto t0 = std::chrono::steady_clock::now();
        auto st = runToEnd(argv);
        const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        if (!st) {
            t.error = st.error().describe();
            return t;
        }
        if (*st != 0) {
            t.error = fmt::format("{} {}", argv[0], HeldCommand::describeStatus(*st));
            return t;
        }
        times.push_back(d.count());
    }
    std::sort(times.begin(), times.end());
    t.median_s = times[times.size() / 2];
    return t;
}

}  // namespace

std::vector<StartupTimes> startupBench(const std::string& workload, unsigned runs) {
    const Workload w{workload, "syscalls", 1, 1};
    const std::string self = selfExe();
    std::vector<StartupTimes> rows;
    rows.push_back(timeCommand("program", {}, w, runs));
    if (const std::string strace = findInPath("strace"); !strace.empty())
        rows.push_back(timeCommand(
            "strace", {strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=getppid", "--"}, w,
            runs));
    else
        rows.push_back(StartupTimes{"strace", "", 0, "no strace on PATH"});
    rows.push_back(timeCommand(
        "probectl-syscall", {self, "trace", "syscall:getppid", "-o", "/dev/null", "--"}, w, runs));
    rows.push_back(timeCommand("probectl-kprobe",
                               {self, "trace", "kprobe:__x64_sys_getppid", "-o", "/dev/null", "--"},
                               w, runs));
    // Not a syscall wrapper: only kallsyms tells it is one function, not a duplicate name.
    // From the kallsyms cache (the first run fills it), then with the cache off.
    const std::vector<std::string> kallsyms_trace = {self, "trace",     "kprobe:__task_pid_nr_ns",
                                                     "-o", "/dev/null", "--"};
    rows.push_back(timeCommand("probectl-kallsyms", kallsyms_trace, w, runs));
    if (const std::string env = findInPath("env"); !env.empty()) {
        std::vector<std::string> off = {env, "PROBECTL_SYMBOL_CACHE="};
        off.insert(off.end(), kallsyms_trace.begin(), kallsyms_trace.end());
        rows.push_back(timeCommand("kallsyms-nocache", off, w, runs));
    }
    rows.push_back(timeStep("exec, libraries", {self, "--version"}, runs));
    rows.push_back(timeStep("+ netlink", {self, "list"}, runs));
    rows.push_back(timeStep("+ kallsyms", {self, "symbols", "__x64_sys_getppid"}, runs));
    if (const std::string cat = findInPath("cat"); !cat.empty())
        rows.push_back(timeStep("read kallsyms", {cat, "/proc/kallsyms"}, runs));
    return rows;
}

void printStartup(std::ostream& out, const std::vector<StartupTimes>& rows) {
    double strace = 0;
    for (const auto& r : rows)
        if (r.label == "strace" && r.error.empty())
            strace = r.median_s;
    out << "Start-up: wall time of a whole command whose program makes one getppid call\n"
           "(median of the runs; X STRACE divides by strace's time on the same program):\n";
    out << fmt::format("  {:<17} {:>9} {:>9}  {}\n", "COMMAND", "WALL(s)", "X STRACE", "ARGV");
    bool steps = false;
    for (const auto& r : rows) {
        if (r.step && !steps) {
            steps = true;
            out << "Steps of probectl's start-up (each command stops after its step; a row less\n"
                   "the one above it is that step's cost):\n";
        }
        if (!r.error.empty()) {
            out << fmt::format("  {:<17} skipped: {}\n", r.label, r.error);
            continue;
        }
        const std::string ratio = strace > 0 ? fmt::format("{:.2f}", r.median_s / strace) : "-";
        out << fmt::format("  {:<17} {:>9.3f} {:>9}  {}\n", r.label, r.median_s, ratio, r.argv);
    }
}

}  // namespace probectl::cli::bench
