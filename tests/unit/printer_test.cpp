// One printer, two back ends: exact text and JSON of representative events, the summary
// and list rows; the JSON parses and carries the text's numbers.
#include "probectl/printer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "format.hpp"
#include "probectl/event_json.hpp"
#include "probectl/event_print.hpp"
#include "probectl/syscall_probe.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using json = nlohmann::json;

namespace {

FetchedValue fetched(std::string name, FetchType t, std::uint64_t raw) {
    FetchedValue v;
    v.name = std::move(name);
    v.type = t;
    v.raw = raw;
    return v;
}

FetchedValue fetchedString(std::string name, FetchType t, std::string str) {
    FetchedValue v;
    v.name = std::move(name);
    v.type = t;
    v.str = std::move(str);
    return v;
}

Event base(std::string_view spec) {
    Event e;
    e.probe_id = 4;
    e.spec = spec;
    e.timestamp_ns = 7'250'000'000;
    e.cpu = 1;
    e.tgid = 300;
    e.pid = 301;
    e.comm = "worker";
    e.ip = 0xffffffff81200000;
    return e;
}

std::string text(const Event& e) {
    return cli::formatEvent(e, 7'000'000'000);
}
json object(const Event& e) {
    return json::parse(cli::formatEventJson(e));
}

}  // namespace

TEST(Printer, ShowPicksTheBackEnd) {
    for (bool as_json : {false, true}) {
        std::ostringstream os;
        auto p = makePrinter(as_json, os);
        p->beginRecord("t");
        p->u64(Show::Any, "a", "a={}", 1);
        p->u64(Show::Text, "b", " b={}", 2);
        p->u64(Show::Json, "c", " c={}", 3);
        p->hex(Show::Any, "d", " d={:#x}", 255);
        p->boolean(Show::Any, "e", true);
        p->null(Show::Any, "f", " -");
        p->endRecord();
        EXPECT_EQ(os.str(), as_json ? "{\"type\":\"t\",\"a\":1,\"c\":3,\"d\":\"0xff\",\"e\":true,"
                                      "\"f\":null}\n"
                                    : "a=1 b=2 d=0xffyes -\n");
    }
}

TEST(PrinterEvent, KprobeWithFetchArgs) {
    Event e = base("kprobe:do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):string");
    e.values.push_back(fetched("dfd", FetchType::S32, 0xffffff9c));
    e.values.push_back(fetchedString("path", FetchType::String, "/etc/hostname"));
    EXPECT_EQ(text(e),
              "    0.250000 [001] worker               301 kprobe:do_sys_openat2  "
              "dfd=-100 path=\"/etc/hostname\"");
    EXPECT_EQ(cli::formatEventJson(e),
              "{\"type\":\"event\",\"ts_ns\":7250000000,\"cpu\":1,\"pid\":300,\"tid\":301,"
              "\"comm\":\"worker\",\"probe\":\"kprobe:do_sys_openat2 dfd=$arg1:s32 "
              "path=+0($arg2):string\",\"probe_id\":4,\"ip\":\"0xffffffff81200000\","
              "\"args\":{\"dfd\":-100,\"path\":\"/etc/hostname\"}}");
}

// With fetch arguments the line names the probe by its whole location: a quoted path or
// symbol keeps its spaces (was cut at the first: "'A::get(int)", the non-const overload).
TEST(PrinterEvent, FetchArgsAfterALocationWithSpaces) {
    Event e = base("uprobe:'/opt/my app/cv':'A::get(int) const' k=$arg2:s32");
    e.values.push_back(fetched("k", FetchType::S32, 3));
    EXPECT_EQ(text(e),
              "    0.250000 [001] worker               301 "
              "uprobe:'/opt/my app/cv':'A::get(int) const'  k=3");
}

// The text columns are built without runtime format strings: the same widths as
// printEventHeader's, a comm padded by display width, an event before t0 negative.
TEST(PrinterEvent, TextColumnsKeepTheirWidths) {
    Event e = base("kprobe:vfs_read");
    e.args = {};
    e.comm = "caf\xc3\xa9";  // "café": five bytes, four columns
    EXPECT_EQ(text(e),
              "    0.250000 [001] caf\xc3\xa9                 301 kprobe:vfs_read  arg1=0x0 "
              "arg2=0x0 arg3=0x0 arg4=0x0 arg5=0x0 arg6=0x0");
    e.comm = "sixteen-letters!";
    e.timestamp_ns = 5'500'000'000;
    e.spec = {};
    e.cpu = 1234;
    e.pid = 12345678;
    EXPECT_EQ(text(e),
              "   -1.500000 [1234] sixteen-letters! 12345678 probe#4  arg1=0x0 arg2=0x0 "
              "arg3=0x0 arg4=0x0 arg5=0x0 arg6=0x0");
}

// A comm (or a recording's spec) with control bytes or bytes that are not UTF-8 is quoted
// with strace's escapes, as fetched strings and count --by comm are: raw, a newline split the
// event's line in two and an escape sequence cleared the terminal of whoever read it.
TEST(PrinterEvent, TextQuotesCommAndProbeBytesThatAreNotText) {
    Event e = base("kprobe:vfs_read");
    e.args = {};
    e.comm = "g\xff\xfe\"q\\\n";
    EXPECT_EQ(text(e),
              "    0.250000 [001] \"g\\377\\376\\\"q\\\\\\n\"     301 kprobe:vfs_read  arg1=0x0 "
              "arg2=0x0 arg3=0x0 arg4=0x0 arg5=0x0 arg6=0x0");
    e.comm = "a\x1b[2J\nb";
    EXPECT_EQ(text(e),
              "    0.250000 [001] \"a\\33[2J\\nb\"         301 kprobe:vfs_read  arg1=0x0 "
              "arg2=0x0 arg3=0x0 arg4=0x0 arg5=0x0 arg6=0x0");
    e.comm = "c1\xc2\x9b";  // U+009B, the C1 control sequence introducer
    e.spec = "kprobe:vfs\x1b[2Jread";
    EXPECT_EQ(text(e),
              "    0.250000 [001] \"c1\\302\\233\"         301 \"kprobe:vfs\\33[2Jread\"  "
              "arg1=0x0 arg2=0x0 arg3=0x0 arg4=0x0 arg5=0x0 arg6=0x0");
}

TEST(PrinterEvent, UretprobeWithLatency) {
    Event e = base("uretprobe:libc:malloc");
    e.is_return = true;
    e.retval = 0x555a3a2602a0;
    e.latency_ns = 3'010'000;
    EXPECT_EQ(text(e),
              "    0.250000 [001] worker               301 uretprobe:libc:malloc  "
              "ret=93846010987168 (0x555a3a2602a0) lat=3.01ms");
    const json j = object(e);
    EXPECT_EQ(j["retval"], 93846010987168);
    EXPECT_EQ(j["latency_ns"], 3'010'000);
    EXPECT_EQ(j["tid"], 301);
    EXPECT_EQ(j["pid"], 300);
    EXPECT_FALSE(j.contains("args"));
}

TEST(PrinterEvent, RawRegistersAreArgsInBoth) {
    Event e = base("kprobe:vfs_read");
    e.args = {1, 2, 3, 4, 5, 0xffff};
    EXPECT_EQ(text(e),
              "    0.250000 [001] worker               301 kprobe:vfs_read  arg1=0x1 "
              "arg2=0x2 arg3=0x3 arg4=0x4 arg5=0x5 arg6=0xffff");
    const json j = object(e);
    EXPECT_EQ(j["args"], json({{"arg1", "0x1"},
                               {"arg2", "0x2"},
                               {"arg3", "0x3"},
                               {"arg4", "0x4"},
                               {"arg5", "0x5"},
                               {"arg6", "0xffff"}}));
}

TEST(PrinterEvent, SyscallEventAndStraceLine) {
    SyscallPlan plan = syscallPlan("close", nullptr);
    Event e = base("syscall:close");
    e.args = {3, 0, 0, 0, 0, 0};
    e.is_return = true;
    e.retval = 0;
    e.latency_ns = 1500;
    e.syscall = &plan;
    e.syscall_returned = true;
    EXPECT_EQ(text(e), "    0.250000 [001] worker               301 syscall:close  close(3) = 0");
    EXPECT_EQ(cli::formatTraceEvent(e, 0, {.strace = true, .pid_prefix = true}),
              "301   close(3)                                = 0");
    const json j = object(e);
    EXPECT_EQ(j["syscall"], "close(3) = 0");
    EXPECT_EQ(j["retval"], 0);
    EXPECT_EQ(j["latency_ns"], 1500);
    EXPECT_FALSE(j.contains("args"));
    // The arguments as fields too, not only inside the line.
    ASSERT_EQ(j["syscall_args"].size(), 1u) << j.dump();
    EXPECT_FALSE(j["syscall_args"][0]["name"].get<std::string>().empty());
    EXPECT_EQ(j["syscall_args"][0]["value"], 3);
    EXPECT_EQ(j["syscall_args"][0]["decoded"], "3");

    SyscallPlan op = syscallPlan("openat", nullptr);
    Event o = base("syscall:openat");
    o.args = {static_cast<std::uint64_t>(-100), 0x7ffc0000, 0, 0, 0, 0};
    o.is_return = true;
    o.retval = 3;
    o.syscall = &op;
    o.syscall_returned = true;
    Event::RawValue path;
    path.bytes = {'/', 'e', 't', 'c', 0};
    o.fetched = {path};
    const json oj = object(o);
    ASSERT_EQ(oj["syscall_args"].size(), 3u) << oj.dump();
    EXPECT_EQ(oj["syscall_args"][0]["decoded"], "AT_FDCWD");
    EXPECT_EQ(oj["syscall_args"][1]["decoded"], "\"/etc\"");
    EXPECT_EQ(oj["syscall_args"][1]["value"], 0x7ffc0000);
    EXPECT_EQ(oj["syscall_args"][2]["decoded"], "O_RDONLY");
}

// With the spec's own fetch arguments a syscall line shows them, then the return as
// strace prints it (errno name and text), then the latency.
TEST(PrinterEvent, SyscallWithFetchArgumentsKeepsTheReturn) {
    SyscallPlan plan;
    plan.name = "openat";
    Event e = base("syscall:openat fd=$retval:s32 path=+0($arg2):ustring");
    e.is_return = true;
    e.retval = static_cast<std::uint64_t>(-2);
    e.latency_ns = 1500;
    e.syscall = &plan;
    e.syscall_returned = true;
    e.values = {fetched("fd", FetchType::S32, 0xfffffffe),
                fetchedString("path", FetchType::Ustring, "/nope")};
    EXPECT_EQ(text(e),
              "    0.250000 [001] worker               301 syscall:openat  fd=-2 path=\"/nope\" "
              "= -1 ENOENT (No such file or directory) lat=1.50us");
    const json j = object(e);
    EXPECT_EQ(j["args"]["fd"], -2);
    EXPECT_EQ(j["retval"], -2);
    EXPECT_EQ(j["latency_ns"], 1500);
    e.retval = 3;
    EXPECT_THAT(text(e), ::testing::EndsWith("path=\"/nope\" = 3 lat=1.50us"));
}

TEST(PrinterEvent, TracepointWithFields) {
    Event e = base("tracepoint:sched:sched_process_exec filename=args.filename");
    FetchedValue f;
    f.name = "filename";
    f.type = FetchType::String;
    f.str = "/bin/ls";
    f.truncated = true;
    e.values.push_back(f);
    e.values.push_back(fetched("pid", FetchType::U32, 301));
    e.timestamp_ns = 6'999'000'000;  // before t0: negative time
    EXPECT_EQ(text(e),
              "   -0.001000 [001] worker               301 "
              "tracepoint:sched:sched_process_exec  filename=\"/bin/ls\"... pid=301");
    const json j = object(e);
    EXPECT_EQ(j["args"]["filename"], "/bin/ls");
    EXPECT_EQ(j["args"]["pid"], 301);
    EXPECT_EQ(j["truncated"], json::array({"filename"}));
}

TEST(PrinterEvent, HeaderNamesTheThreadColumn) {
    EXPECT_EQ(cli::eventHeader(), "     TIME(s)   CPU COMM                 TID PROBE  ARGS");
}

TEST(PrinterSummary, TextAndJsonCarryTheSameNumbers) {
    SessionStats s;
    s.probes.push_back({1, "syscall:getppid", 1000, 990, 4, 1, 12, 6});
    s.probes.push_back({2, "kprobe:vfs_read", 5, 5, 0, 0, 0, 0});
    s.lost = 3;
    s.overruns = 2;
    std::ostringstream os;
    cli::printSummary(os, s);
    EXPECT_EQ(os.str(),
              "PROBE            HITS  DELIVERED  DROPPED  NMISSED  FILTERED  REJECTED  UNRETURNED\n"
              "syscall:getppid  1000        990        4        1        12         6           0\n"
              "kprobe:vfs_read     5          5        0        0         0         0           0\n"
              "FILTERED: skipped by the process filter (not in HITS); REJECTED: hits the spec's "
              "`if` predicate rejected (HITS = DELIVERED + DROPPED + REJECTED + UNRETURNED)\n"
              "lost records: 3 (session), receive-buffer overruns: 2\n");
    const std::string line = cli::formatSummaryJson(s);
    EXPECT_EQ(line,
              "{\"type\":\"summary\",\"probes\":[{\"id\":1,\"probe\":\"syscall:getppid\","
              "\"hits\":1000,\"delivered\":990,\"dropped\":4,\"nmissed\":1,\"filtered\":12,"
              "\"rejected\":6,\"unreturned\":0,\"depth_skipped\":0},{\"id\":2,\"probe\":"
              "\"kprobe:vfs_read\","
              "\"hits\":5,\"delivered\":5,\"dropped\":0,\"nmissed\":0,\"filtered\":0,"
              "\"rejected\":0,\"unreturned\":0,\"depth_skipped\":0}],"
              "\"lost\":3,\"overruns\":2}");
    const json j = json::parse(line);
    for (std::size_t i = 0; i < s.probes.size(); ++i)
        for (const auto& c : cli::summaryCounters(s.probes[i]))
            EXPECT_EQ(j["probes"][i][std::string(c.name)], c.value) << c.name;
}

// Columns follow the counter list: one more counter is one more column in both.
TEST(PrinterSummary, ColumnsFollowTheCounterList) {
    std::vector<ProbeCounters> rows = {{9, "kprobe:x", {{"hits", 2}, {"new_counter", 5}}}};
    std::ostringstream text_os, json_os;
    printSummary(*makeTextPrinter(text_os), rows, 0, 0);
    printSummary(*makeJsonPrinter(json_os), rows, 0, 0);
    EXPECT_EQ(text_os.str(),
              "PROBE     HITS  NEW_COUNTER\n"
              "kprobe:x     2            5\n"
              "lost records: 0 (session), receive-buffer overruns: 0\n");
    EXPECT_EQ(json::parse(json_os.str())["probes"][0]["new_counter"], 5);
}

// DEPTH_SKIPPED is a text column only when some probe has one; JSON always has the key.
TEST(PrinterSummary, DepthSkippedColumnOnlyWhenSomeProbeHasOne) {
    std::vector<ProbeCounters> none = {
        {1, "uretprobe:/t:f", {{"hits", 3}, {"unreturned", 0}, {"depth_skipped", 0}}}};
    std::vector<ProbeCounters> some = {
        {1, "uretprobe:/t:f", {{"hits", 100}, {"unreturned", 0}, {"depth_skipped", 36}}}};
    std::ostringstream a, b, j;
    printSummary(*makeTextPrinter(a), none, 0, 0);
    printSummary(*makeTextPrinter(b), some, 0, 0);
    printSummary(*makeJsonPrinter(j), none, 0, 0);
    EXPECT_EQ(a.str(),
              "PROBE           HITS  UNRETURNED\n"
              "uretprobe:/t:f     3           0\n"
              "lost records: 0 (session), receive-buffer overruns: 0\n");
    EXPECT_EQ(b.str(),
              "PROBE           HITS  UNRETURNED  DEPTH_SKIPPED\n"
              "uretprobe:/t:f   100           0             36\n"
              "DEPTH_SKIPPED: uretprobe calls whose return the kernel did not probe: the thread "
              "was nested deeper than the kernel's uretprobe limit (not in UNRETURNED; the "
              "ptrace backend has no such limit)\n"
              "lost records: 0 (session), receive-buffer overruns: 0\n");
    EXPECT_EQ(json::parse(j.str())["probes"][0]["depth_skipped"], 0);
}

TEST(PrinterList, JsonRowsMatchTheTable) {
    ProbeInfo a;
    a.id = 1;
    a.kind = ProbeKind::Kretprobe;
    a.symbol = "__x64_sys_getppid";
    a.addr = 0xffffffff81001000ull;
    a.flags = PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC | PROBECTL_PROBE_F_ENABLED;
    a.owner = 1234;
    a.hits = 7;
    a.rejected = 2;
    ProbeInfo c;
    c.id = 13;
    c.symbol = "vfs_read";
    c.offset = 4;
    c.flags = PROBECTL_PROBE_F_PERSISTENT;
    c.label = "kprobe:vfs_read+4";
    std::ostringstream os;
    cli::printProbeList(os, {a, c}, true);
    EXPECT_EQ(os.str(),
              "{\"type\":\"list\",\"probes\":[{\"id\":1,\"kind\":\"syscall\","
              "\"location\":\"__x64_sys_getppid\",\"address\":\"0xffffffff81001000\","
              "\"owner\":1234,\"persistent\":false,\"enabled\":true,\"hits\":7,\"nmissed\":0,"
              "\"dropped\":0,\"filtered\":0,\"rejected\":2,\"unreturned\":0,\"depth_skipped\":0,"
              "\"spec\":null},{\"id\":"
              "13,\"kind\":\"kprobe\","
              "\"location\":\"vfs_read+0x4\",\"address\":null,\"owner\":null,"
              "\"persistent\":true,\"enabled\":false,\"hits\":0,\"nmissed\":0,\"dropped\":0,"
              "\"filtered\":0,\"rejected\":0,\"unreturned\":0,\"depth_skipped\":0,"
              "\"spec\":\"kprobe:vfs_read+4\"}]}\n");
    EXPECT_EQ(json::parse(os.str())["probes"].size(), 2u);
    std::ostringstream empty;
    cli::printProbeList(empty, {}, true);
    EXPECT_EQ(empty.str(), "{\"type\":\"list\",\"probes\":[]}\n");
}

// The JSON back end writes text, not a tree: every line must be what nlohmann's compact
// dump prints for it (so parse and dump again give the same bytes, and no key repeats),
// escapes, UTF-8 and invalid bytes included.
TEST(PrinterJson, LinesAreNlohmannsCompactDump) {
    std::vector<Event> events;
    Event k = base("kprobe:do_sys_openat2 path=+0($arg2):string flags=$arg3:x32");
    FetchedValue quoted = fetchedString("path", FetchType::String, "a\"b\\c\n\t\x01 é \xff end");
    quoted.truncated = true;
    FetchedValue arr;
    arr.name = "words";
    arr.type = FetchType::S16;
    arr.array_len = 3;
    arr.array = {1, 0xffff, 7};
    FetchedValue fault;
    fault.name = "gone";
    fault.faulted = true;
    k.values = {quoted, fetched("flags", FetchType::X32, 0x8000), arr, fault,
                fetched("neg", FetchType::S32, 0xfffffffb)};
    k.comm = "tab\there";
    events.push_back(k);
    Event r = base("kretprobe:vfs_read");
    r.is_return = true;
    r.retval = static_cast<std::uint64_t>(-5);
    r.latency_ns = 42;
    events.push_back(r);
    events.push_back(base("kprobe:raw_registers"));
    SyscallPlan plan = syscallPlan("close", nullptr);
    Event s = base("syscall:close");
    s.is_return = true;
    s.syscall = &plan;
    s.syscall_returned = true;
    events.push_back(s);
    for (const Event& e : events) {
        const std::string line = cli::formatEventJson(e);
        EXPECT_EQ(toJsonLine(nlohmann::ordered_json::parse(line)), line);
    }
    const json j = object(k);
    EXPECT_EQ(j["args"]["path"], "a\"b\\c\n\t\x01 é \xef\xbf\xbd end");
    EXPECT_EQ(j["args"]["path_bytes"], "6122625c630a090120c3a920ff20656e64");
    EXPECT_EQ(j["args"]["words"], json::array({1, -1, 7}));
    EXPECT_EQ(j["args"]["flags"], "0x8000");
    EXPECT_TRUE(j["args"]["gone"].is_null());
    EXPECT_EQ(j["args"]["neg"], -5);
    EXPECT_EQ(j["faults"], json::array({"gone"}));
    EXPECT_EQ(j["truncated"], json::array({"path"}));
}

// A string array (stack frames) with strings that are not UTF-8: NAME_bytes after the
// array, the same length, null for the valid ones; none inside an unnamed array.
TEST(PrinterJson, ArrayStringsKeepTheirBytes) {
    std::ostringstream os;
    auto p = makeJsonPrinter(os);
    p->beginRecord("t");
    p->beginArray("ustack");
    p->str(Show::Json, {}, {}, "main");
    p->str(Show::Json, {}, {}, "f\xfe");
    p->str(Show::Json, {}, {}, "g");
    p->end();
    p->beginArray("rows");
    p->beginArray({});
    p->str(Show::Json, {}, {}, "\xff");
    p->end();
    p->beginObject({});
    p->str(Show::Json, "name", {}, "\xff");
    p->end();
    p->end();
    p->endRecord();
    const std::string line = os.str();
    EXPECT_EQ(line,
              "{\"type\":\"t\",\"ustack\":[\"main\",\"f\xef\xbf\xbd\",\"g\"],"
              "\"ustack_bytes\":[null,\"66fe\",null],\"rows\":[[\"\xef\xbf\xbd\"],"
              "{\"name\":\"\xef\xbf\xbd\",\"name_bytes\":\"ff\"}]}\n");
    EXPECT_EQ(toJsonLine(nlohmann::ordered_json::parse(line)) + '\n', line);
}
