// Output formats of trace and list.
#include "format.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "uapi/probectl.h"

#include <nlohmann/json.hpp>

using namespace probectl;
using namespace probectl::cli;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

Event entryEvent() {
    Event e;
    e.probe_id = 1;
    e.spec = "syscall:getppid";
    e.timestamp_ns = 5'001'234'567;
    e.cpu = 2;
    e.pid = 4242;
    e.tgid = 4242;
    e.comm = "getppid_loop";
    e.args = {0x1, 0x2, 0x3, 0x4, 0x5, 0xffff};
    return e;
}

}  // namespace

TEST(FormatLatency, Units) {
    EXPECT_EQ(formatLatency(0), "0ns");
    EXPECT_EQ(formatLatency(999), "999ns");
    EXPECT_EQ(formatLatency(1'000), "1.00us");
    EXPECT_EQ(formatLatency(12'345), "12.3us");
    EXPECT_EQ(formatLatency(123'456), "123us");
    EXPECT_EQ(formatLatency(4'560'000), "4.56ms");
    EXPECT_EQ(formatLatency(2'500'000'000), "2.50s");
}

TEST(FormatEvent, EntryShowsTimeCpuCommPidSpecArgs) {
    const std::string line = formatEvent(entryEvent(), 5'000'000'000);
    EXPECT_EQ(line,
              "    0.001234 [002] getppid_loop        4242 syscall:getppid  arg1=0x1 arg2=0x2 "
              "arg3=0x3 arg4=0x4 arg5=0x5 arg6=0xffff");
}

TEST(FormatEvent, ReturnShowsSignedRetvalHexAndLatency) {
    Event e = entryEvent();
    e.spec = "kretprobe:do_sys_openat2";
    e.is_return = true;
    e.retval = static_cast<std::uint64_t>(-2);
    e.latency_ns = 12'345;
    const std::string line = formatEvent(e, 5'000'000'000);
    EXPECT_THAT(line, HasSubstr("kretprobe:do_sys_openat2  ret=-2 (0xfffffffffffffffe) "
                                "lat=12.3us"));
    EXPECT_THAT(line, ::testing::Not(HasSubstr("arg1")));
}

// int f() { return -5; } leaves rax = 0xfffffffb: its int reading is shown beside it.
TEST(FormatEvent, AnIntReturnShowsItsSigned32BitReading) {
    Event e = entryEvent();
    e.spec = "uretprobe:./app:fails";
    e.is_return = true;
    e.retval = 0xfffffffbu;
    e.latency_ns = 1000;
    EXPECT_THAT(formatEvent(e, 5'000'000'000),
                HasSubstr("ret=4294967291 (0xfffffffb, int -5) lat=1.00us"));
    EXPECT_THAT(formatEventJson(e), HasSubstr("\"retval\":4294967291,\"retval_s32\":-5"));
    e.retval = 0x7fffffffu;  // bit 31 clear: both readings agree
    EXPECT_THAT(formatEvent(e, 5'000'000'000), HasSubstr("ret=2147483647 (0x7fffffff) lat="));
    EXPECT_THAT(formatEventJson(e), Not(HasSubstr("retval_s32")));
    e.retval = 0x1fffffffbu;  // upper half not zero: a 64-bit value
    EXPECT_THAT(formatEvent(e, 5'000'000'000), HasSubstr("(0x1fffffffb) lat="));
}

TEST(FormatEvent, EarlierThanStartIsNegativeAndUnknownProbe) {
    Event e = entryEvent();
    e.spec = {};
    e.probe_id = 9;
    // 5.001234567 s against t0 = 6 s: 0.998765 s before the start, not 0.000000.
    EXPECT_THAT(formatEvent(e, 6'000'000'000), ::testing::StartsWith("   -0.998765 [002]"));
    EXPECT_THAT(formatEvent(e, 0), HasSubstr("probe#9"));
}

// --format json: the JSON Lines schema of probectl/event_json.hpp, parsed back.
TEST(FormatEventJson, FetchedValuesRawRegistersAndReturns) {
    Event e;
    e.probe_id = 3;
    e.spec = "syscall:openat path=+0($arg2):ustring";
    e.timestamp_ns = 42;
    e.pid = 101;
    e.tgid = 100;
    e.comm = "cat";
    e.ip = 0xffffffff81000000;
    FetchedValue path;
    path.name = "path";
    path.type = FetchType::Ustring;
    path.str = "/etc/hostname";
    FetchedValue bad;
    bad.name = "bad";
    bad.type = FetchType::String;
    bad.faulted = true;
    e.values = {path, bad};
    auto j = nlohmann::json::parse(formatEventJson(e));
    EXPECT_EQ(j["type"], "event");
    EXPECT_EQ(j["pid"], 100);
    EXPECT_EQ(j["tid"], 101);
    EXPECT_EQ(j["probe"], "syscall:openat path=+0($arg2):ustring");
    EXPECT_EQ(j["args"]["path"], "/etc/hostname");
    EXPECT_TRUE(j["args"]["bad"].is_null());
    EXPECT_EQ(j["faults"], nlohmann::json::array({"bad"}));

    Event raw;
    raw.args = {1, 2, 3, 4, 5, 6};
    auto r = nlohmann::json::parse(formatEventJson(raw));
    // Numbered as $arg1..$arg6 fetch them.
    EXPECT_EQ(r["args"]["arg1"], "0x1");
    EXPECT_EQ(r["args"]["arg6"], "0x6");
    EXPECT_FALSE(r["args"].contains("arg0"));
    EXPECT_FALSE(r.contains("retval"));

    Event ret;
    ret.is_return = true;
    ret.retval = static_cast<std::uint64_t>(-2);
    ret.latency_ns = 1500;
    auto rr = nlohmann::json::parse(formatEventJson(ret));
    EXPECT_EQ(rr["retval"], -2);
    EXPECT_EQ(rr["latency_ns"], 1500);
    EXPECT_FALSE(rr.contains("args"));
}

TEST(FormatEventJson, SummaryObject) {
    SessionStats st;
    st.probes.push_back({7, "kprobe:do_nanosleep", 10, 8, 2, 0, 1});
    st.lost = 3;
    auto j = nlohmann::json::parse(formatSummaryJson(st));
    EXPECT_EQ(j["type"], "summary");
    EXPECT_EQ(j["lost"], 3);
    ASSERT_EQ(j["probes"].size(), 1u);
    EXPECT_EQ(j["probes"][0]["hits"], 10);
    EXPECT_EQ(j["probes"][0]["dropped"], 2);
    EXPECT_EQ(j["probes"][0]["probe"], "kprobe:do_nanosleep");
}

TEST(Summary, TableAndLossWarning) {
    SessionStats s;
    s.probes.push_back({1, "syscall:getppid", 1000, 1000, 0, 0, 12});
    s.probes.push_back({2, "kretprobe:do_sys_openat2", 11, 8, 2, 1, 0, 0, 1});
    s.lost = 3;
    std::ostringstream os;
    printSummary(os, s);
    EXPECT_EQ(os.str(),
              "PROBE                     HITS  DELIVERED  DROPPED  NMISSED  FILTERED  REJECTED  "
              "UNRETURNED\n"
              "syscall:getppid           1000       1000        0        0        12         0  "
              "         0\n"
              "kretprobe:do_sys_openat2    11          8        2        1         0         0  "
              "         1\n"
              "FILTERED: skipped by the process filter (not in HITS); REJECTED: hits the spec's "
              "`if` predicate rejected (HITS = DELIVERED + DROPPED + REJECTED + UNRETURNED)\n"
              "UNRETURNED: return-probe entries with no return (left by longjmp or an exception, "
              "ended by the thread's exit, or still inside when tracing ended)\n"
              "lost records: 3 (session), receive-buffer overruns: 0\n");
    EXPECT_TRUE(s.anyLoss());
    EXPECT_THAT(lossWarning(s), HasSubstr("2 dropped"));
    EXPECT_THAT(lossWarning(s), HasSubstr("1 missed"));
    EXPECT_THAT(lossWarning(s), HasSubstr("3 lost in transport"));

    SessionStats clean;
    clean.probes.push_back({1, "kprobe:vfs_read", 5, 5, 0, 0, 0});
    EXPECT_FALSE(clean.anyLoss());
    EXPECT_EQ(lossWarning(clean), "");
    // No filter counted anything: no legend.
    std::ostringstream cs;
    printSummary(cs, clean);
    EXPECT_THAT(cs.str(), Not(HasSubstr("REJECTED:")));
}

// Of several probes, the text summary leaves out the rows whose counters are all 0 and says
// how many in count's words (trace 'syscall:*' printed some 340 such rows; seen failing); a
// row with any counter set stays, --zeros keeps them all, one probe is always shown, and JSON
// has every probe.
TEST(Summary, RowsWithNothingToSayAreCountedNotShown) {
    SessionStats s;
    s.probes.push_back({1, "syscall:read", 5, 5, 0, 0, 0});
    s.probes.push_back({2, "syscall:readv", 0, 0, 0, 0, 0});
    s.probes.push_back({3, "syscall:pread64", 0, 0, 0, 0, 3});  // filtered only
    s.probes.push_back({4, "syscall:preadv", 0, 0, 0, 0, 0});
    std::ostringstream os;
    printSummary(os, s);
    EXPECT_EQ(os.str(),
              "PROBE            HITS  DELIVERED  DROPPED  NMISSED  FILTERED  REJECTED  "
              "UNRETURNED\n"
              "syscall:read        5          5        0        0         0         0  "
              "         0\n"
              "syscall:pread64     0          0        0        0         3         0  "
              "         0\n"
              "(2 probes with no hits not shown; --zeros shows them)\n"
              "FILTERED: skipped by the process filter (not in HITS); REJECTED: hits the spec's "
              "`if` predicate rejected (HITS = DELIVERED + DROPPED + REJECTED + UNRETURNED)\n"
              "lost records: 0 (session), receive-buffer overruns: 0\n");
    std::ostringstream all;
    printSummary(all, s, true);
    EXPECT_THAT(all.str(), HasSubstr("syscall:readv       0"));
    EXPECT_THAT(all.str(), HasSubstr("syscall:preadv      0"));
    EXPECT_THAT(all.str(), Not(HasSubstr("not shown")));
    auto j = nlohmann::json::parse(formatSummaryJson(s));
    EXPECT_EQ(j["probes"].size(), 4u);
    SessionStats one;
    one.probes.push_back({2, "syscall:readv", 0, 0, 0, 0, 0});
    std::ostringstream single;
    printSummary(single, one);
    EXPECT_THAT(single.str(), HasSubstr("\nsyscall:readv     0"));
    EXPECT_THAT(single.str(), Not(HasSubstr("not shown")));
    s.probes.pop_back();
    std::ostringstream two;
    printSummary(two, s);
    EXPECT_THAT(two.str(), HasSubstr("\n(1 probe with no hits not shown; --zeros shows them)\n"));
}

// Hits a predicate rejects are neither delivered nor lost: no loss warning.
TEST(Summary, RejectedColumnIsNoLoss) {
    SessionStats s;
    s.probes.push_back({1, "syscall:openat if fd == 3", 10, 4, 0, 0, 0, 6});
    std::ostringstream os;
    printSummary(os, s);
    EXPECT_THAT(os.str(), HasSubstr("syscall:openat if fd == 3    10          4        0        0 "
                                    "        0         6           0\n"));
    EXPECT_FALSE(s.anyLoss());
    EXPECT_EQ(lossWarning(s), "");
}

// OWNER as netstat -p shows it (PID/COMM) when the owner was found; JSON keeps the port id.
TEST(ProbeList, OwnerIsPidAndComm) {
    ProbeInfo a;
    a.id = 1;
    a.symbol = "vfs_read";
    a.owner = 3000000;
    ProbeInfo gone = a;
    gone.id = 2;
    gone.owner = 77;
    const ProbeOwners owners = {{3000000, {1234, "probectl"}}};
    std::ostringstream os;
    printProbeList(os, {a, gone}, false, owners);
    EXPECT_THAT(os.str(), HasSubstr(" 1234/probectl "));
    EXPECT_THAT(os.str(), HasSubstr(" 77 "));
    std::ostringstream js;
    printProbeList(js, {a}, true, owners);
    EXPECT_THAT(js.str(), HasSubstr("\"owner\":3000000,\"owner_pid\":1234,\"owner_comm\":"
                                    "\"probectl\""));
}

TEST(ProbeList, Columns) {
    ProbeInfo a;
    a.id = 1;
    a.kind = ProbeKind::Kretprobe;
    a.symbol = "__x64_sys_getppid";
    a.addr = 0xffffffff81001000ull;
    a.flags = PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC | PROBECTL_PROBE_F_ENABLED;
    a.owner = 1234;
    a.hits = 7;
    a.rejected = 2;
    ProbeInfo b;
    b.id = 12;
    b.kind = ProbeKind::Kretprobe;
    b.addr = 0xffffffff81001400ull;
    b.flags = PROBECTL_PROBE_F_PERSISTENT;
    b.dropped = 3;
    ProbeInfo c;
    c.id = 13;
    c.symbol = "vfs_read";
    c.offset = 4;
    c.label = "kprobe:vfs_read+4";
    std::ostringstream os;
    printProbeList(os, {a, b, c});
    EXPECT_EQ(
        os.str(),
        "ID  KIND       LOCATION            ADDRESS                  OWNER  PERSISTENT  "
        "ENABLED  HITS  NMISSED  DROPPED  FILTERED  REJECTED  UNRETURNED  DEPTH_SKIPPED  SPEC\n"
        " 1  syscall    __x64_sys_getppid   0xffffffff81001000        1234  no          "
        "yes         7        0        0         0         2           0              0  -\n"
        "12  kretprobe  0xffffffff81001400  0xffffffff81001400  persistent  yes         "
        "no          0        0        3         0         0           0              0  -\n"
        "13  kprobe     vfs_read+0x4        -                            -  no          "
        "no          0        0        0         0         0           0              0  "
        "kprobe:vfs_read+4\n");
}

// KIND is how the spec was written: a kprobe on a syscall's wrapper reads the syscall's
// arguments (flag SYSCALL) but is no syscall: spec (it was listed as one).
TEST(ProbeList, AKprobeOnASyscallWrapperIsListedAsAKprobe) {
    ProbeInfo k;
    k.id = 1;
    k.kind = ProbeKind::Kprobe;
    k.symbol = "__x64_sys_getppid";
    k.flags = PROBECTL_PROBE_F_SYSCALL;
    ProbeInfo s = k;
    s.id = 2;
    s.kind = ProbeKind::Kretprobe;
    s.flags = PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC;
    // syscall:exit_group is a kprobe; a syscall resolved to a function that is not a
    // pt_regs wrapper has no SYSCALL: both are still syscall: specs.
    ProbeInfo e = k;
    e.id = 3;
    e.symbol = "__x64_sys_exit_group";
    e.flags = PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC;
    ProbeInfo o = s;
    o.id = 4;
    o.symbol = "__se_sys_oldcall";
    o.flags = PROBECTL_PROBE_F_SYSCALL_SPEC;
    std::ostringstream os;
    printProbeList(os, {k, s, e, o}, true);
    std::vector<std::string> kinds;
    const auto listed = nlohmann::json::parse(os.str());
    for (const auto& row : listed["probes"])
        kinds.push_back(row["kind"].get<std::string>());
    EXPECT_THAT(kinds, ElementsAre("kprobe", "syscall", "syscall", "syscall"));
}
