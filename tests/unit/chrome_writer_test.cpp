// The Chrome trace-event JSON writer: the file parses, slices and instants carry the
// events' times and values, per-thread slices nest (as B/E pairs they balance), names are
// given once per process and thread, drops and calls that never returned are counters.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>

#include "probectl/syscall_probe.hpp"
#include "probectl/trace_export.hpp"
#include "trace_export_events.hpp"

using nlohmann::json;

namespace {

json writeSample(const probectl::SessionStats& stats = exporttest::sampleStats()) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    EXPECT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks::now()).ok());
    for (const auto& ev : exporttest::sampleRun())
        EXPECT_TRUE(w->event(ev).ok());
    EXPECT_TRUE(w->finish(stats).ok());
    return json::parse(out.str());  // throws (fails the test) when it is not JSON
}

std::vector<json> ofPhase(const json& trace, const std::string& ph) {
    std::vector<json> out;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == ph)
            out.push_back(e);
    return out;
}

}  // namespace

TEST(ChromeWriter, SlicesAreReturnsWithExactTimesAndValues) {
    const json t = writeSample();
    auto x = ofPhase(t, "X");
    ASSERT_EQ(x.size(), 3u) << t.dump(1);
    EXPECT_EQ(x[0]["name"], "uretprobe:/bin/prog:work");
    EXPECT_EQ(x[0]["cat"], "uretprobe");
    EXPECT_EQ(x[0]["ts"].get<double>(), 1000000.3);  // µs: ns kept as 3 decimals
    EXPECT_EQ(x[0]["dur"].get<double>(), 0.6);
    EXPECT_EQ(x[0]["pid"], 100);
    EXPECT_EQ(x[0]["tid"], 100);
    EXPECT_EQ(x[0]["args"]["r"], 7);
    EXPECT_EQ(x[0]["args"]["retval"], 7);
    EXPECT_EQ(x[0]["args"]["latency_ns"], 600);
    EXPECT_EQ(x[1]["args"]["retval"], -2);
}

TEST(ChromeWriter, InstantsCarryRegistersOrFetchedValues) {
    const json t = writeSample();
    auto i = ofPhase(t, "i");
    ASSERT_EQ(i.size(), 3u);
    EXPECT_EQ(i[0]["name"], "kprobe:do_sys_openat2");
    EXPECT_EQ(i[0]["s"], "t");
    EXPECT_EQ(i[0]["args"]["arg1"], "0x10");
    EXPECT_EQ(i[0]["args"]["arg6"], "0x15");
    EXPECT_EQ(i[1]["args"]["path"], "/etc/passwd");
    EXPECT_EQ(i[1]["args"]["flags"], "0x80000");
    EXPECT_EQ(i[1]["args"]["bytes"], "{1,2,3}");
    EXPECT_TRUE(i[1]["args"]["bad"].is_null());
    // Invalid UTF-8 replaced, quotes and newlines escaped: the file still parsed.
    EXPECT_EQ(i[2]["args"]["path"], "bad\xef\xbf\xbd utf8 \"q\"\n");
}

TEST(ChromeWriter, ProcessesAndThreadsAreNamedOnce) {
    const json t = writeSample();
    std::map<std::string, int> names;
    for (const auto& m : ofPhase(t, "M"))
        ++names[m["name"].get<std::string>() + ":" + std::to_string(m["pid"].get<unsigned>()) +
                ":" + std::to_string(m["tid"].get<unsigned>())];
    EXPECT_EQ(names["process_name:100:100"], 1);
    EXPECT_EQ(names["process_name:200:200"], 1);
    EXPECT_EQ(names["thread_name:100:100"], 1);
    EXPECT_EQ(names["thread_name:100:101"], 1);
    EXPECT_EQ(names["thread_name:200:200"], 1);
}

// A process is renamed when its main thread's comm changes (exec), as its threads are; it
// kept its pre-exec name. A thread's own new name leaves the process's.
// probectl's own counters (drops, lost records) are in a process named "probectl" whose
// pid was 4294967295 (-1 cast), which viewers read as -1 or an overflow: a pid no task can
// have (Linux pids are below 2^22), named once, carrying every counter.
TEST(ChromeWriter, ProbectlsCountersHaveAPidNoTaskHas) {
    const json t = writeSample();
    std::vector<unsigned> own;
    for (const auto& m : ofPhase(t, "M"))
        if (m["name"] == "process_name" && m["args"]["name"] == "probectl") {
            own.push_back(m["pid"].get<unsigned>());
            EXPECT_EQ(m["tid"], m["pid"]);
        }
    ASSERT_EQ(own.size(), 1u) << t.dump(1);
    EXPECT_EQ(own[0], 1u << 22);
    for (const auto& e : t["traceEvents"])
        EXPECT_LE(e["pid"].get<std::int64_t>(), std::int64_t{1} << 22) << e.dump();
    const auto counters = ofPhase(t, "C");
    ASSERT_FALSE(counters.empty());
    for (const auto& c : counters)
        EXPECT_EQ(c["pid"].get<unsigned>(), own[0]) << c.dump();
}

TEST(ChromeWriter, AProcessIsRenamedAfterExec) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    ASSERT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks{}).ok());
    auto ev = [&](std::uint32_t tid, std::uint64_t ts, const char* comm) {
        probectl::Event e = exporttest::entry(100, tid, ts, "kprobe:do_sys_openat2");
        e.comm = comm;
        ASSERT_TRUE(w->event(e).ok());
    };
    ev(101, 1'000'000'100, "worker");  // a thread first: names the process for now
    ev(100, 1'000'000'200, "fe");
    ev(101, 1'000'000'300, "pool");
    ev(100, 1'000'000'400, "rec");
    ASSERT_TRUE(w->finish(exporttest::sampleStats()).ok());
    std::vector<std::string> names;
    for (const auto& m : ofPhase(json::parse(out.str()), "M"))
        if (m["name"] == "process_name" && m["pid"] == 100)
            names.push_back(m["args"]["name"]);
    EXPECT_EQ(names, (std::vector<std::string>{"worker", "fe", "rec"}));
}

// As begin/end pairs sorted by time, each thread's slices balance and nest.
TEST(ChromeWriter, BeginEndBalancedPerThread) {
    const json t = writeSample();
    std::map<unsigned, std::vector<std::pair<double, int>>> marks;  // +1 begin, -1 end
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "X") {
            const double ts = e["ts"], dur = e["dur"];
            marks[e["tid"]].push_back({ts, +1});
            marks[e["tid"]].push_back({ts + dur, -1});
        } else if (e["ph"] == "B" || e["ph"] == "E") {
            marks[e["tid"]].push_back({e["ts"].get<double>(), e["ph"] == "B" ? 1 : -1});
        }
    }
    ASSERT_EQ(marks[100].size(), 4u);
    for (auto& [tid, m] : marks) {
        std::sort(m.begin(), m.end());
        int depth = 0, max_depth = 0;
        for (auto [ts, d] : m) {
            depth += d;
            max_depth = std::max(max_depth, depth);
            EXPECT_GE(depth, 0) << "tid " << tid << " at " << ts;
        }
        EXPECT_EQ(depth, 0) << "tid " << tid;
        if (tid == 100) {
            EXPECT_EQ(max_depth, 2);  // the inner call nests in the outer one
        }
    }
}

TEST(ChromeWriter, DropsAreCountersFromZeroToTheTotal) {
    const json t = writeSample();
    auto c = ofPhase(t, "C");
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0]["args"]["kprobe:do_sys_openat2"], 0);
    EXPECT_EQ(c[1]["args"]["kprobe:do_sys_openat2"], 3);
    EXPECT_EQ(c[1]["args"]["lost"], 2);
    EXPECT_EQ(c[0]["ts"].get<double>(), 1000000.1);  // the first event
    EXPECT_EQ(c[1]["ts"].get<double>(), 1000004.0);  // the last one
    EXPECT_EQ(t["otherData"]["t0_ns"], 1000000000);
}

// A call that never returned (exit()) has no slice; the trace had no sign of it. Its count
// is a counter, as drops are, only when there is one.
TEST(ChromeWriter, UnreturnedCallsAreACounter) {
    EXPECT_EQ(ofPhase(writeSample(), "C").size(), 2u);  // none unreturned: no counter
    probectl::SessionStats stats = exporttest::sampleStats();
    stats.probes[1].unreturned = 4;
    const json t = writeSample(stats);
    std::vector<json> u;
    for (const auto& e : ofPhase(t, "C"))
        if (e["name"] == "unreturned")
            u.push_back(e);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_EQ(u[0]["args"], json({{"uretprobe:/bin/prog:work r=$retval:s64", 0}}));
    EXPECT_EQ(u[1]["args"], json({{"uretprobe:/bin/prog:work r=$retval:s64", 4}}));
}

// Thread names and string values that are not UTF-8 keep their bytes beside the U+FFFD
// text (name_bytes, path_bytes): threads g\xff and g\xfe were otherwise named the same.
TEST(ChromeWriter, NonUtf8NamesAndStringsKeepTheirBytes) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    ASSERT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks{}).ok());
    for (const auto& [tid, comm] : {std::pair{100u, "g\xff"}, std::pair{200u, "g\xfe"}}) {
        probectl::Event e = exporttest::entry(tid, tid, 1'000'000'000 + tid,
                                              "uprobe:/bin/prog:open path=+0($arg1):string");
        e.comm = comm;
        probectl::FetchedValue v;
        v.name = "path";
        v.type = probectl::FetchType::String;
        v.str = comm;
        e.values.push_back(v);
        ASSERT_TRUE(w->event(e).ok());
    }
    ASSERT_TRUE(w->finish(exporttest::sampleStats()).ok());
    const json t = json::parse(out.str());
    std::map<int, std::string> names;
    for (const auto& m : ofPhase(t, "M"))
        if (m["name"] == "thread_name") {
            EXPECT_EQ(m["args"]["name"], "g\xef\xbf\xbd");
            names[m["tid"]] = m["args"]["name_bytes"];
        }
    EXPECT_EQ(names, (std::map<int, std::string>{{100, "67ff"}, {200, "67fe"}}));
    std::map<int, std::string> paths;
    for (const auto& i : ofPhase(t, "i"))
        paths[i["tid"]] = i["args"]["path_bytes"];
    EXPECT_EQ(paths, (std::map<int, std::string>{{100, "67ff"}, {200, "67fe"}}));
}

// A syscall's "call" is the strace line without strace's padding to column 40: it kept the
// spaces ("getppid()                               = 169") where JSON Lines have none.
TEST(ChromeWriter, ASyscallCallIsNotPadded) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    ASSERT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks{}).ok());
    const probectl::SyscallPlan plan = probectl::syscallPlan("getppid", nullptr);
    probectl::Event e = exporttest::entry(100, 100, 1'000'000'500, "syscall:getppid");
    e.is_return = true;
    e.syscall = &plan;
    e.syscall_returned = true;
    e.retval = 169;
    e.latency_ns = 100;
    ASSERT_TRUE(w->event(e).ok());
    ASSERT_TRUE(w->finish(exporttest::sampleStats()).ok());
    const json t = json::parse(out.str());
    const auto x = ofPhase(t, "X");
    ASSERT_EQ(x.size(), 1u) << t.dump(1);
    EXPECT_EQ(x[0]["args"]["call"], "getppid() = 169");
}

// A syscall event with syscall_returned but not is_return (a ptrace recording's) is a slice
// too, from its entry, with the exit's retval and latency.
TEST(ChromeWriter, APtraceSyscallIsASlice) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    ASSERT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks{}).ok());
    const probectl::SyscallPlan plan = probectl::syscallPlan("getppid", nullptr);
    ASSERT_TRUE(w->event(exporttest::ptraceSyscall(plan)).ok());
    ASSERT_TRUE(w->finish({}).ok());
    const json t = json::parse(out.str());
    EXPECT_EQ(ofPhase(t, "i").size(), 0u) << t.dump(1);
    const auto x = ofPhase(t, "X");
    ASSERT_EQ(x.size(), 1u) << t.dump(1);
    EXPECT_EQ(x[0]["ts"].get<double>(), 1000000.4);  // the entry, 100 ns before
    EXPECT_EQ(x[0]["dur"].get<double>(), 0.1);
    EXPECT_EQ(x[0]["args"]["call"], "getppid() = 169");
    EXPECT_EQ(x[0]["args"]["retval"], 169);
    EXPECT_EQ(x[0]["args"]["latency_ns"], 100);
}

// The name is the spec's whole location, spaces in quoted fields included, not the text
// up to its first space ("uprobe:'/opt/my").
TEST(ChromeWriter, NameIsTheWholeLocation) {
    std::ostringstream out;
    auto w = probectl::chromeTraceWriter(out);
    ASSERT_TRUE(w->begin(1'000'000'000, probectl::TraceClocks::now()).ok());
    ASSERT_TRUE(w->event(exporttest::spaced()).ok());
    ASSERT_TRUE(w->finish({}).ok());
    auto i = ofPhase(json::parse(out.str()), "i");
    ASSERT_EQ(i.size(), 1u);
    EXPECT_EQ(i[0]["name"], exporttest::kSpacedName);
    EXPECT_EQ(i[0]["args"]["k"], 3);
}
