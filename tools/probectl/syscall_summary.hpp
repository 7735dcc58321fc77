// trace -c: strace -c's table (% time, seconds, usecs/call, calls, errors, syscall; by time,
// then a total row) from one aggregation per syscall probe: the entry-to-return latency
// keyed by errno (0 for a success), in probectl.ko's maps or, with --backend ptrace, over
// the events. The kernel's maps take every call without a record per call, so nothing is
// dropped at any rate; what was not counted (kretprobe instances short, map full, nested)
// is said under the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli.hpp"
#include "probectl/aggr.hpp"
#include "probectl/session.hpp"
#include "subcommands.hpp"

namespace probectl::cli {

struct SyscallRow {
    std::string name;  // the spec's syscall name ("getppid")
    std::uint64_t ns = 0;
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
};

// One row per table with calls, highest time first (then calls, then name).
std::vector<SyscallRow> syscallRows(const std::vector<AggrTable>& tables);
// strace -c's text of `rows`, with its total row.
std::string formatSyscallSummary(const std::vector<SyscallRow>& rows);
// What the counts miss, one line ("" when nothing): calls the kretprobes could not pair,
// keys a full map refused, hits nested on a busy CPU.
std::string syscallSummaryLosses(const std::vector<AggrTable>& tables, const SessionStats& stats);

// The specs -c puts probes on: those of o's specs whose syscall returns. strace -c counts a
// call at its return, so exit and exit_group (which never return) have no row in its table;
// the kernel's latency map could not take them either (it needs a return).
std::vector<ProbeSpec> summarySpecs(const std::vector<ProbeSpec>& specs);

// trace -c with o's specs (syscalls only) and target, on o.backend.
int runSyscallSummary(const TraceOptions& o, Io& io);

}  // namespace probectl::cli
