// Synthetic events for the trace writers' tests: two processes, nested returns on one
// thread (inner returns first, as records arrive), instants, fetched values of every kind.
#pragma once

#include <string>
#include <vector>

#include "probectl/event.hpp"
#include "probectl/session.hpp"
#include "probectl/syscall_probe.hpp"

namespace exporttest {

inline probectl::Event entry(std::uint32_t tgid, std::uint32_t tid, std::uint64_t ts,
                             std::string_view spec) {
    probectl::Event ev;
    ev.probe_id = 1;
    ev.spec = spec;
    ev.timestamp_ns = ts;
    ev.cpu = tid % 2;
    ev.pid = tid;
    ev.tgid = tgid;
    ev.comm = "worker";
    ev.ip = 0xffffffff81000000ull;
    for (std::size_t i = 0; i < ev.args.size(); ++i)
        ev.args[i] = 0x10 + i;
    return ev;
}

inline probectl::Event ret(std::uint32_t tgid, std::uint32_t tid, std::uint64_t start,
                           std::uint64_t end, std::int64_t retval) {
    probectl::Event ev = entry(tgid, tid, end, "uretprobe:/bin/prog:work r=$retval:s64");
    ev.probe_id = 2;
    ev.is_return = true;
    ev.latency_ns = end - start;
    ev.retval = static_cast<std::uint64_t>(retval);
    probectl::FetchedValue v;
    v.name = "r";
    v.type = probectl::FetchType::S64;
    v.raw = static_cast<std::uint64_t>(retval);
    ev.values.push_back(v);
    return ev;
}

// uprobe with a string, an x32, a u8[3] array and a faulted u64.
inline probectl::Event fetched(std::uint32_t tgid, std::uint32_t tid, std::uint64_t ts,
                               std::string str) {
    probectl::Event ev = entry(tgid, tid, ts, "uprobe:/bin/prog:open path=+0($arg1):string");
    ev.probe_id = 3;
    probectl::FetchedValue s;
    s.name = "path";
    s.type = probectl::FetchType::String;
    s.str = std::move(str);
    probectl::FetchedValue x;
    x.name = "flags";
    x.type = probectl::FetchType::X32;
    x.raw = 0x80000;
    probectl::FetchedValue a;
    a.name = "bytes";
    a.type = probectl::FetchType::U8;
    a.array_len = 3;
    a.array = {1, 2, 3};
    probectl::FetchedValue f;
    f.name = "bad";
    f.type = probectl::FetchType::U64;
    f.faulted = true;
    ev.values = {s, x, a, f};
    return ev;
}

// A probe whose location holds spaces (a const method in a quoted path with a space),
// with a fetch argument after it: its event name is the whole location.
inline constexpr std::string_view kSpacedSpec =
    "uprobe:'/opt/my app/cv':'A::get(int) const' k=$arg2:s32";
inline constexpr std::string_view kSpacedName = "uprobe:'/opt/my app/cv':'A::get(int) const'";

inline probectl::Event spaced() {
    probectl::Event ev = entry(100, 100, 1'000'000'100, kSpacedSpec);
    probectl::FetchedValue k;
    k.name = "k";
    k.type = probectl::FetchType::S32;
    k.raw = 3;
    ev.values.push_back(k);
    return ev;
}

// The run the tests write: 100 tgid with threads 100 and 101, 200 with thread 200.
inline std::vector<probectl::Event> sampleRun() {
    return {
        entry(100, 100, 1'000'000'100, "kprobe:do_sys_openat2"),
        ret(100, 100, 1'000'000'300, 1'000'000'900, 7),   // inner: returns first
        ret(100, 100, 1'000'000'200, 1'000'001'500, -2),  // outer
        fetched(100, 101, 1'000'002'000, "/etc/passwd"),
        fetched(200, 200, 1'000'003'000, "bad\xff utf8 \"q\"\n"),
        ret(200, 200, 1'000'003'100, 1'000'004'000, 1),
    };
}

inline probectl::SessionStats sampleStats() {
    probectl::SessionStats s;
    s.probes = {{1, "kprobe:do_sys_openat2", 1, 1, 3, 0, 0, 0},
                {2, "uretprobe:/bin/prog:work r=$retval:s64", 3, 3, 0, 0, 0, 0},
                {3, "uprobe:/bin/prog:open path=+0($arg1):string", 2, 2, 1, 0, 0, 0}};
    s.lost = 2;
    return s;
}

// getppid() = 169 as the ptrace backend gave it before its syscall events were returns,
// and as recordings of that time still hold it: syscall_returned, the exit's retval and
// latency, but is_return false. `plan` is syscallPlan("getppid", nullptr).
inline probectl::Event ptraceSyscall(const probectl::SyscallPlan& plan) {
    probectl::Event ev = entry(100, 100, 1'000'000'500, "syscall:getppid");
    ev.probe_id = 4;
    ev.syscall = &plan;
    ev.syscall_returned = true;
    ev.retval = 169;
    ev.latency_ns = 100;
    return ev;
}

}  // namespace exporttest
