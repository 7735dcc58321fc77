// Events and per-probe counters through a Printer (printer.hpp): the text line and the JSON
// object (schema in event_json.hpp) come from the same calls.
//
// Text event line:
//   TIME(s since t0, 6 decimals) [CPU] COMM TID PROBE  arg1=0x.. ... arg6=0x.. ($arg1..$arg6)
//   ... PROBE  ret=N (0x..) lat=12.3us          (returns without fetch arguments; a value
//                                                whose upper half is zero and bit 31 set
//                                                adds its int reading: (0xfffffffb, int -5))
//   ... PROBE  name=value ... [lat=..]          (fetch arguments; PROBE is the location)
//   ... syscall:NAME  openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3
//   ... syscall:NAME  name=value ... = -1 ENOENT (No such file or directory) lat=..
//                                               (a syscall spec with fetch arguments)
//         do_sys_openat2+0x5                    (EventFormat::kernel_stack: the kernel
//         __x64_sys_openat+0x55                  stack of a trailing `kstack` value, one
//         ...                                    frame per line, innermost first; JSON:
//                                                "kstack": [frames], "kstack_id": N)
//         leaf+0x4 (/usr/bin/app)               (then the user stack of a trailing `ustack`
//         main+0x1d (/usr/bin/app)               value, the same way: "ustack", "ustack_id")
// TID is the thread id (Event::pid); JSON carries both "pid" (tgid) and "tid".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/printer.hpp"

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct EventFormat {
    std::uint64_t t0_ns = 0;  // text time 0 (CLOCK_MONOTONIC, as Event::timestamp_ns)
    // Syscall events as strace's own lines (text only), prefixed with the thread id like
    // `strace -f -o FILE` when pid_prefix.
    bool strace = false;
    bool pid_prefix = false;
    // Stacks: when set, an event's last values named `kstack` and `ustack` (in that order; a
    // $kstack or $ustack fetch argument, u32) are printed as the lines this returns for (probe
    // id, stack id), under the event in text and as the arrays "kstack" and "ustack" in JSON,
    // instead of as numbers; nullptr: the stack was not kept (id 0: stack map full) or is
    // unknown. KernelStacks::lines gives both kinds.
    std::function<const std::vector<std::string>*(std::uint32_t probe_id, std::uint32_t stack_id)>
        kernel_stack;
    // DWARF user stacks: when set, a last value named `ustack` that is a user stack snapshot
    // (FetchedValue::snapshot, or faulted) prints as the lines this returns
    // (UserSymbolizer::snapshotLines), the same way as a `ustack` id (JSON "ustack", no id).
    std::function<std::vector<std::string>(const Event& ev, const FetchedValue& snapshot)>
        user_snapshot;
};

// The text column header matching printEvent (nothing in JSON).
void printEventHeader(Printer& p);
void printEvent(Printer& p, const Event& ev, const EventFormat& f);

// A return value's signed 32-bit reading when it may be a C int's: the upper half zero and
// bit 31 set (4294967291 is -5); nullopt otherwise, where the 64-bit reading is the int's too.
std::optional<std::int32_t> int32Reading(std::uint64_t retval);

// "12.3us": ns below 1us, us below 1ms, ms below 1s, s above; three significant digits.
std::string formatLatency(std::uint64_t ns);
// A syscall:NAME event as strace prints the call (ev.syscall must be set); `align` pads the
// call to strace's column 40.
std::string formatSyscallEvent(const Event& ev, bool align);

// One counter of a probe. Summary and list columns follow the list they are given, so a
// new counter is one more entry (text header: the name in capitals).
struct Counter {
    std::string_view name;
    std::uint64_t value = 0;
};
struct ProbeCounters {
    std::uint32_t id = 0;
    std::string_view probe;
    std::vector<Counter> counters;
};

// End-of-trace summary. Text: table PROBE COUNTERS..., `note` when not empty (a line under
// the table, such as what rows the caller left out), a note when something was filtered or
// rejected, "lost records: N (session), receive-buffer overruns: M". JSON:
// {"type":"summary","probes":[{"id","probe",counters...}],"lost","overruns"} (no `note`).
void printSummary(Printer& p, const std::vector<ProbeCounters>& probes, std::uint64_t lost,
                  std::uint64_t overruns, std::string_view note = {});

// The counter columns of a table row (Show::Any, key = name).
std::vector<Table::Column> counterColumns(const std::vector<Counter>& counters);
void printCounters(Printer& p, const std::vector<Counter>& counters);

}  // namespace probectl
#pragma GCC visibility pop
