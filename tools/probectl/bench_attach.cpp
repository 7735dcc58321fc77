// probectl bench: attaching and detaching many kprobes at once, probectl.ko against ftrace's
// kprobe_events. The functions are `kprobe:*_show` (sysfs and procfs show routines, which
// hardly run), so the figures are the cost of registration and removal alone.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "bench.hpp"
#include "probectl/expand.hpp"
#include "probectl/session.hpp"

namespace probectl::cli::bench {

namespace {

constexpr const char* kGlob = "kprobe:*_show";
constexpr const char* kAttachGroup = "probectl_attach";

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// This process's CPU time so far, in user space and in the kernel (the netlink handlers and
// tracefs writes run in its context), in seconds.
std::pair<double, double> cpuTimes() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return {s(u.ru_utime), s(u.ru_stime)};
}

// Adds the CPU time since `at` to t's user and system seconds.
void addCpu(AttachTimes& t, const std::pair<double, double>& at) {
    const auto now = cpuTimes();
    t.user_s += now.first - at.first;
    t.sys_s += now.second - at.second;
}

bool append(const std::string& path, const std::string& line) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    return ok;
}

AttachTimes kernelTimes(const std::vector<ProbeSpec>& specs, std::size_t n) {
    AttachTimes t{"probectl", 0, 0, 0, 0, 0, {}};
    SessionOptions so;
    so.tgids = {static_cast<std::uint32_t>(::getpid())};
    auto opened = Session::open(so);
    if (!opened) {
        t.error = opened.error().describe();
        return t;
    }
    std::optional<Session> s(std::move(*opened));
    const auto c0 = cpuTimes();
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& spec : specs) {
        if (t.probes == n)
            break;
        t.probes += s->add(spec).ok();
    }
    t.attach_s = since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    s.reset();
    t.detach_s = since(t1);
    addCpu(t, c0);
    return t;
}

AttachTimes ftraceTimes(const std::vector<ProbeSpec>& specs, std::size_t n) {
    AttachTimes t{"ftrace", 0, 0, 0, 0, 0, {}};
    const std::string root = "/sys/kernel/tracing";
    if (::access((root + "/kprobe_events").c_str(), W_OK) != 0) {
        t.error = "no writable tracefs kprobe_events";
        return t;
    }
    const std::string events = root + "/kprobe_events";
    const auto c0 = cpuTimes();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> names;
    for (const auto& spec : specs) {
        if (names.size() == n)
            break;
        const std::string name = fmt::format("p{}", names.size());
        if (append(events, fmt::format("p:{}/{} {}", kAttachGroup, name, spec.symbol)))
            names.push_back(name);
    }
    const std::string enable = fmt::format("{}/events/{}/enable", root, kAttachGroup);
    (void)append(enable, "1");
    t.attach_s = since(t0);
    t.probes = names.size();
    const auto t1 = std::chrono::steady_clock::now();
    (void)append(enable, "0");
    for (const auto& name : names)
        (void)append(events, fmt::format("-:{}/{}", kAttachGroup, name));
    t.detach_s = since(t1);
    addCpu(t, c0);
    return t;
}

}  // namespace

std::vector<AttachTimes> attachBench(std::size_t n) {
    SpecExpander x;
    auto e = x.expand(*parseProbeSpec(kGlob));
    if (!e)
        return {AttachTimes{"probectl", 0, 0, 0, 0, 0, e.error().describe()}};
    return {kernelTimes(e->specs, n), ftraceTimes(e->specs, n)};
}

void printAttach(std::ostream& out, const std::vector<AttachTimes>& rows) {
    out << fmt::format("Attach and detach of many kprobes ({}, armed; detach removes them):\n",
                       kGlob);
    out << fmt::format("  {:<10} {:>7} {:>10} {:>10} {:>10} {:>8} {:>8}\n", "TRACER", "PROBES",
                       "ATTACH(s)", "DETACH(s)", "TOTAL(s)", "USER(s)", "SYS(s)");
    for (const auto& r : rows) {
        if (!r.error.empty()) {
            out << fmt::format("  {:<10} skipped: {}\n", r.tracer, r.error);
            continue;
        }
        out << fmt::format("  {:<10} {:>7} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.3f} {:>8.3f}\n",
                           r.tracer, r.probes, r.attach_s, r.detach_s, r.attach_s + r.detach_s,
                           r.user_s, r.sys_s);
    }
    const double v = attachRatio(rows);
    if (!std::isnan(v))
        out << fmt::format("  probectl / ftrace, attach + detach per probe: {:.2f}  aim < 1.0\n",
                           v);
}

double attachRatio(const std::vector<AttachTimes>& rows) {
    const AttachTimes *k = nullptr, *f = nullptr;
    for (const auto& r : rows)
        if (r.error.empty() && r.probes)
            (r.tracer == "probectl" ? k : f) = &r;
    if (!k || !f)
        return NAN;
    return ((k->attach_s + k->detach_s) / static_cast<double>(k->probes)) /
           ((f->attach_s + f->detach_s) / static_cast<double>(f->probes));
}

}  // namespace probectl::cli::bench
