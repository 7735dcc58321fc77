// trace -c: strace -c's table from per-syscall latency aggregations keyed by errno.
#include "syscall_summary.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "aggr_cli.hpp"
#include "probectl/syscall_probe.hpp"

namespace probectl::cli {

namespace {

constexpr std::string_view kSyscallPrefix = "syscall:";

std::string syscallName(const std::string& spec) {
    std::string name = spec.starts_with(kSyscallPrefix) ? spec.substr(kSyscallPrefix.size()) : spec;
    // Fetch arguments or a predicate after the name are no part of it.
    return name.substr(0, name.find(' '));
}

std::string line(double percent, std::uint64_t ns, std::uint64_t calls, std::uint64_t errors,
                 const std::string& name) {
    // Both time columns from the same microseconds, rounded as seconds shows them: a single
    // call once read 1.877253 beside 1877252 (the one rounded, the other truncated).
    const std::uint64_t us = (ns + 500) / 1000;
    return fmt::format("{:6.2f} {:>11} {:11} {:9} {:>9} {}\n", percent,
                       fmt::format("{}.{:06}", us / 1'000'000, us % 1'000'000),
                       calls ? us / calls : 0, calls,
                       errors ? std::to_string(errors) : std::string(), name);
}

}  // namespace

std::vector<SyscallRow> syscallRows(const std::vector<AggrTable>& tables) {
    std::vector<SyscallRow> rows;
    for (const AggrTable& t : tables) {
        SyscallRow r;
        r.name = syscallName(t.spec);
        for (const AggrEntry& e : t.entries) {
            r.calls += e.count;
            r.ns += e.sum;
            // A call whose value is not known (ptrace: its thread killed inside it) is an
            // error, as the kernel backend sees it: it returned an ERESTART code.
            if (!e.key.empty() && (e.key[0].faulted || e.key[0].unknown || e.key[0].raw != 0))
                r.errors += e.count;
        }
        if (r.calls)
            rows.push_back(std::move(r));
    }
    std::sort(rows.begin(), rows.end(), [](const SyscallRow& a, const SyscallRow& b) {
        if (a.ns != b.ns)
            return a.ns > b.ns;
        if (a.calls != b.calls)
            return a.calls > b.calls;
        return a.name < b.name;
    });
    return rows;
}

std::string formatSyscallSummary(const std::vector<SyscallRow>& rows) {
    const std::string rule =
        "------ ----------- ----------- --------- --------- ----------------\n";
    std::string out = fmt::format("{:>6} {:>11} {:>11} {:>9} {:>9} {}\n", "% time", "seconds",
                                  "usecs/call", "calls", "errors", "syscall");
    out += rule;
    SyscallRow total;
    for (const auto& r : rows) {
        total.ns += r.ns;
        total.calls += r.calls;
        total.errors += r.errors;
    }
    for (const auto& r : rows)
        out +=
            line(total.ns ? 100.0 * static_cast<double>(r.ns) / static_cast<double>(total.ns) : 0.0,
                 r.ns, r.calls, r.errors, r.name);
    out += rule;
    out += line(100.0, total.ns, total.calls, total.errors, "total");
    return out;
}

std::string syscallSummaryLosses(const std::vector<AggrTable>& tables, const SessionStats& stats) {
    std::uint64_t nmissed = 0, overflow = 0, nested = 0;
    for (const auto& p : stats.probes)
        nmissed += p.nmissed;
    for (const auto& t : tables) {
        overflow += t.overflow;
        nested += t.nested;
    }
    if (nmissed + overflow + nested == 0)
        return "";
    return fmt::format(
        "{} calls not counted: {} unpaired (kretprobe instances short: raise --maxactive), {} "
        "map full, {} nested",
        nmissed + overflow + nested, nmissed, overflow, nested);
}

std::vector<ProbeSpec> summarySpecs(const std::vector<ProbeSpec>& specs) {
    std::vector<ProbeSpec> out;
    for (const auto& s : specs)
        if (s.kind != SpecKind::Syscall || !syscallNeverReturns(s.symbol))
            out.push_back(s);
    return out;
}

int runSyscallSummary(const TraceOptions& t, Io& io) {
    AggrCliOptions o;
    o.mode = AggrMode::Latency;
    o.specs = summarySpecs(t.specs);
    o.pids = t.pids;
    o.follow = t.follow;
    o.duration = t.duration;
    o.duration_text = t.duration_text;
    o.command = t.command;
    o.verbose = t.verbose;
    o.backend = t.backend;
    o.force = t.force;
    o.maxactive = t.maxactive;
    o.match_pids = t.match_pids;
    o.match_tids = t.match_tids;
    o.match_uids = t.match_uids;
    o.match_comm = t.match_comm;
    o.seccomp = t.seccomp_bpf;
    o.aggr.keys = {"errno"};
    o.aggr.value = AggrValue::Latency;
    // Distinct errnos of one syscall: a few; a new one past this is counted as map full.
    o.aggr.max_entries = 128;
    return runAggregation(o, t.cmd, io, [&](const AggrReadout& r) -> Result<void> {
        io.err << formatSyscallSummary(syscallRows(r.tables));
        if (auto l = syscallSummaryLosses(r.tables, r.stats); !l.empty())
            io.err << fmt::format("probectl {}: {}\n", t.cmd, l);
        io.err.flush();
        return {};
    });
}

}  // namespace probectl::cli
