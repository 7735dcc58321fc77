#include "format.hpp"

#include "probectl/event_json.hpp"
#include "probectl/syscall_probe.hpp"

#include <fmt/format.h>
#include <time.h>

#include <ostream>

#include "table.hpp"

namespace probectl::cli {

std::uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string formatLatency(std::uint64_t ns) {
    auto sig3 = [](double v, const char* unit) {
        if (v >= 100)
            return fmt::format("{:.0f}{}", v, unit);
        if (v >= 10)
            return fmt::format("{:.1f}{}", v, unit);
        return fmt::format("{:.2f}{}", v, unit);
    };
    if (ns < 1000)
        return fmt::format("{}ns", ns);
    if (ns < 1000000)
        return sig3(static_cast<double>(ns) / 1e3, "us");
    if (ns < 1000000000)
        return sig3(static_cast<double>(ns) / 1e6, "ms");
    return sig3(static_cast<double>(ns) / 1e9, "s");
}

std::string formatSyscallEvent(const Event& ev, bool align) {
    StraceOptions so;
    so.align = align;
    const SyscallPlan& plan = *ev.syscall;
    return formatSyscall(syscallRecord(ev, plan, ev.syscall_returned),
                         systemSyscallTable().find(plan.name), so);
}

std::string formatTraceEvent(const Event& ev, std::uint64_t t0_ns, const TraceLayout& layout) {
    if (layout.json)
        return formatEventJson(ev);
    if (!layout.strace || !ev.syscall)
        return formatEvent(ev, t0_ns);
    // strace -f -o FILE: the pid, left-aligned in 5 columns, before every line.
    std::string line = layout.pid_prefix ? fmt::format("{:<5} ", ev.pid) : std::string();
    return line + formatSyscallEvent(ev, true);
}

std::string eventHeader() {
    return fmt::format("{:>12} {:>5} {:<16} {:>7} {}", "TIME(s)", "CPU", "COMM", "PID",
                       "PROBE  ARGS");
}

std::string formatEvent(const Event& ev, std::uint64_t t0_ns) {
    // Events from a probe armed before the last one can precede t0: shown negative rather
    // than clamped to 0.
    const bool early = ev.timestamp_ns < t0_ns;
    const std::uint64_t rel = early ? t0_ns - ev.timestamp_ns : ev.timestamp_ns - t0_ns;
    const std::string secs = fmt::format("{}{}", early ? "-" : "", rel / 1000000000);
    // With fetch arguments the spec's location names the probe and the values replace the
    // raw registers.
    std::string probe =
        ev.spec.empty() ? fmt::format("probe#{}", ev.probe_id) : std::string(ev.spec);
    if (!ev.values.empty())
        probe = probe.substr(0, probe.find(' '));
    std::string line = fmt::format("{:>5}.{:06} [{:03}] {:<16} {:>7} {}", secs,
                                   (rel % 1000000000) / 1000, ev.cpu, ev.comm, ev.pid, probe);
    if (ev.syscall) {
        line += "  " + formatSyscallEvent(ev, false);
    } else if (!ev.values.empty()) {
        line += "  " + formatFetchedValues(ev.values);
        if (ev.is_return)
            line += fmt::format(" lat={}", formatLatency(ev.latency_ns));
    } else if (ev.is_return) {
        line += fmt::format("  ret={} ({:#x}) lat={}", static_cast<std::int64_t>(ev.retval),
                            ev.retval, formatLatency(ev.latency_ns));
    } else {
        line += " ";
        for (std::size_t i = 0; i < ev.args.size(); ++i)
            line += fmt::format(" arg{}={:#x}", i, ev.args[i]);
    }
    return line;
}

std::string formatEventJson(const Event& ev) {
    DecodedEvent d;
    d.timestamp_ns = ev.timestamp_ns;
    d.cpu = ev.cpu;
    d.pid = ev.tgid;
    d.tid = ev.pid;
    d.comm = ev.comm;
    d.probe = ev.spec;
    d.probe_id = ev.probe_id;
    d.ip = ev.ip;
    d.values = ev.values;
    if (ev.syscall) {
        d.syscall = formatSyscallEvent(ev, false);
        if (ev.syscall_returned) {
            d.retval = static_cast<std::int64_t>(ev.retval);
            d.latency_ns = ev.latency_ns;
        }
    } else if (d.values.empty() && !ev.is_return) {
        for (std::size_t i = 0; i < ev.args.size(); ++i) {
            FetchedValue v;
            v.name = fmt::format("arg{}", i);
            v.type = FetchType::X64;
            v.raw = ev.args[i];
            d.values.push_back(std::move(v));
        }
    }
    if (ev.is_return) {
        d.retval = static_cast<std::int64_t>(ev.retval);
        d.latency_ns = ev.latency_ns;
    }
    return toJsonLine(eventToJson(d));
}

std::string formatSummaryJson(const SessionStats& stats) {
    std::vector<ProbeSummary> probes;
    for (const auto& p : stats.probes)
        probes.push_back(
            {p.id, p.spec, p.hits, p.delivered, p.dropped, p.nmissed, p.filtered, p.rejected});
    return toJsonLine(summaryToJson(probes, stats.lost));
}

void printSummary(std::ostream& os, const SessionStats& stats) {
    using A = Table::Align;
    Table t({{"PROBE", A::Left},
             {"HITS", A::Right},
             {"DELIVERED", A::Right},
             {"DROPPED", A::Right},
             {"NMISSED", A::Right},
             {"FILTERED", A::Right},
             {"REJECTED", A::Right}});
    bool any_filter = false;
    for (const auto& p : stats.probes) {
        t.add({p.spec, std::to_string(p.hits), std::to_string(p.delivered),
               std::to_string(p.dropped), std::to_string(p.nmissed), std::to_string(p.filtered),
               std::to_string(p.rejected)});
        any_filter |= p.filtered || p.rejected;
    }
    t.print(os);
    if (any_filter)
        os << "FILTERED: skipped by the process filter (not in HITS); REJECTED: hits the "
              "spec's `if` predicate rejected (HITS = DELIVERED + DROPPED + REJECTED)\n";
    os << fmt::format("lost records: {} (session), receive-buffer overruns: {}\n", stats.lost,
                      stats.overruns);
}

std::string lossWarning(const SessionStats& stats) {
    std::uint64_t dropped = 0, nmissed = 0;
    for (const auto& p : stats.probes) {
        dropped += p.dropped;
        nmissed += p.nmissed;
    }
    if (!stats.anyLoss())
        return {};
    return fmt::format(
        "warning: events were lost: {} dropped (ring full or delivery failed), {} "
        "missed (probe reentry or kretprobe --maxactive too small), {} lost in "
        "transport, {} socket overruns",
        dropped, nmissed, stats.lost, stats.overruns);
}

void printProbeList(std::ostream& os, const std::vector<ProbeInfo>& probes) {
    using A = Table::Align;
    Table t({{"ID", A::Right},
             {"KIND", A::Left},
             {"LOCATION", A::Left},
             {"ADDRESS", A::Left},
             {"OWNER", A::Right},
             {"PERSISTENT", A::Left},
             {"ENABLED", A::Left},
             {"HITS", A::Right},
             {"NMISSED", A::Right},
             {"DROPPED", A::Right},
             {"FILTERED", A::Right},
             {"REJECTED", A::Right}});
    for (const auto& p : probes)
        t.add({std::to_string(p.id), p.syscall() ? "syscall" : toString(p.kind), p.location(),
               p.addr ? fmt::format("{:#018x}", p.addr) : "-",
               p.owner ? std::to_string(p.owner) : "-", p.persistent() ? "yes" : "no",
               p.enabled() ? "yes" : "no", std::to_string(p.hits), std::to_string(p.nmissed),
               std::to_string(p.dropped), std::to_string(p.filtered), std::to_string(p.rejected)});
    t.print(os);
}

}  // namespace probectl::cli
