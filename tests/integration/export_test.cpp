// Trace files from real traces, both backends: a recording reported as text is the live
// text of the same workload; chrome, perfetto and ctf files of one recorded run carry the
// same events (names, times, threads, values) as its JSON, read back with the formats' own
// tools (protoc --decode with the project's schema, babeltrace2); and trace --format F -o
// writes them directly.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "text_proto.hpp"

using nlohmann::json;
using prototest::Node;

namespace {

std::string sh(const std::string& cmd, int* status) {
    return prototest::run(cmd + " 2>&1", status);
}

// pc_add(i, 2i+1) for i = 1..4: an entry (arg1 = i) and a return (3i+1) each.
std::string specs() {
    const std::string ut = itest::workload("uprobe_target");
    return "uprobe:" + ut + ":pc_add uretprobe:" + ut + ":pc_add";
}
std::string exportWorkloadCmd() {
    return " -- " + itest::workload("uprobe_target") + " calls 4";
}

class Export : public ::testing::TestWithParam<std::string> {
  protected:
    std::string backend() const { return " --backend=" + GetParam(); }
    std::string tmp(const std::string& name) const {
        return "/tmp/export-" + GetParam() + "-" + name;
    }
    // probectl CMD ...; asserts success, returns the output.
    std::string probectl(const std::string& args) {
        int status = -1;
        std::string out = sh("probectl " + args, &status);
        EXPECT_EQ(status, 0) << args << "\n" << out;
        return out;
    }
    // One recorded run, and its events as report --format json prints them.
    std::vector<json> recordRun() {
        rec_ = tmp("run.rec");
        probectl("record" + backend() + " " + specs() + " -o " + rec_ + exportWorkloadCmd());
        const std::string jfile = tmp("run.json");
        probectl("report " + rec_ + " --format json -o " + jfile);
        std::vector<json> events;
        std::istringstream in(itest::readFile(jfile));
        for (std::string l; std::getline(in, l);) {
            json j = json::parse(l);
            if (j["type"] == "event")
                events.push_back(j);
        }
        EXPECT_EQ(events.size(), 8u);
        return events;
    }
    static std::string location(const json& ev) {
        const std::string p = ev["probe"];
        return p.substr(0, p.find(' '));
    }
    std::string rec_;
};

// A Perfetto trace file as protoc decodes it with the project's schema (text); a failed
// decode fails the test and gives "".
std::string perfettoText(const std::string& file) {
    int status = -1;
    const std::string text =
        sh(std::string("protoc --decode=perfetto.protos.Trace --proto_path=") + PROBECTL_DOC_DIR +
               " " + PROBECTL_DOC_DIR + "/perfetto_trace.proto < " + file,
           &status);
    EXPECT_EQ(status, 0) << text;
    return status == 0 ? text : std::string();
}

Node decodePerfetto(const std::string& file) {
    return prototest::parseTextProto(perfettoText(file));
}

long count(const std::string& text, const std::string& re) {
    const std::regex r(re);
    return std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator());
}

// Text without what differs between two runs: times, cpus, pids, latencies.
std::string normalize(const std::string& text) {
    std::string out =
        std::regex_replace(text, std::regex(R"((^|\n) *-?\d+\.\d+ \[\d+\] (\S+) +\d+ )"), "$1$2 ");
    return std::regex_replace(out, std::regex(R"(lat=\S+)"), "lat=");
}

}  // namespace

TEST_P(Export, ReportedRecordingIsTheLiveText) {
    const std::string live = tmp("live.txt"), rep = tmp("report.txt"), rec = tmp("text.rec");
    probectl("trace" + backend() + " " + specs() + " -o " + live + exportWorkloadCmd());
    probectl("record" + backend() + " " + specs() + " -o " + rec + exportWorkloadCmd());
    const std::string note = probectl("report " + rec + " -o " + rep);
    EXPECT_EQ(note, "");  // complete: no note
    const std::string a = normalize(itest::readFile(live)), b = normalize(itest::readFile(rep));
    EXPECT_EQ(a, b);
    EXPECT_THAT(b, ::testing::HasSubstr("ret=13 (0xd)"));  // pc_add(4, 9)
}

TEST_P(Export, RecordingKilledMidTraceReadsUpToItsLastBlock) {
    const std::string rec = tmp("killed.rec");
    const std::string ut = itest::workload("uprobe_target");
    // A long run of calls, the recorder SIGKILLed while it writes.
    int status = -1;
    const std::string out =
        sh("probectl record" + backend() + " uretprobe:" + ut + ":pc_add -o " + rec + " -- " + ut +
               " calls 100000000 & sleep 3; kill -9 $!; wait; "
               "probectl report " +
               rec + " 2>&1 | tail -n 3",
           &status);
    EXPECT_THAT(out, ::testing::HasSubstr("note: " + rec + ": recording ends at byte"));
    EXPECT_THAT(out, ::testing::HasSubstr("cut short"));
    EXPECT_TRUE(std::regex_search(out, std::regex("uretprobe:\\S+:pc_add +ret=\\d+"))) << out;
}

TEST_P(Export, ChromeHasTheEventsOfTheJson) {
    const auto events = recordRun();
    const std::string file = tmp("run.chrome.json");
    probectl("report " + rec_ + " --format chrome -o " + file);
    const json t = json::parse(itest::readFile(file));
    std::vector<json> got;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "X" || e["ph"] == "i")
            got.push_back(e);
    ASSERT_EQ(got.size(), events.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE(events[i].dump());
        const bool ret = events[i].contains("latency_ns");
        EXPECT_EQ(got[i]["ph"], ret ? "X" : "i");
        EXPECT_EQ(got[i]["name"], location(events[i]));
        EXPECT_EQ(got[i]["tid"], events[i]["tid"]);
        EXPECT_EQ(got[i]["pid"], events[i]["pid"]);
        const std::uint64_t ts = events[i]["ts_ns"],
                            lat = ret ? events[i]["latency_ns"].get<std::uint64_t>() : 0;
        EXPECT_EQ(std::llround(got[i]["ts"].get<double>() * 1000), ts - lat);
        if (ret) {
            EXPECT_EQ(std::llround(got[i]["dur"].get<double>() * 1000), lat);
            EXPECT_EQ(got[i]["args"]["retval"], events[i]["retval"]);
        } else {
            EXPECT_EQ(got[i]["args"]["arg1"], events[i]["args"]["arg1"]);
        }
    }
    // Straight from trace: the same shape, slices balanced on the thread.
    const std::string direct = tmp("direct.chrome.json");
    probectl("trace" + backend() + " --format chrome -o " + direct + " " + specs() +
             exportWorkloadCmd());
    const json d = json::parse(itest::readFile(direct));
    int x = 0, inst = 0;
    std::vector<std::int64_t> rets;
    for (const auto& e : d["traceEvents"]) {
        x += e["ph"] == "X";
        inst += e["ph"] == "i";
        if (e["ph"] == "X")
            rets.push_back(e["args"]["retval"]);
    }
    EXPECT_EQ(inst, 4);
    EXPECT_EQ(rets, (std::vector<std::int64_t>{4, 7, 10, 13}));
}

TEST_P(Export, PerfettoHasTheEventsOfTheJson) {
    const auto events = recordRun();
    const std::string file = tmp("run.pftrace");
    probectl("report " + rec_ + " --format perfetto -o " + file);
    const Node t = decodePerfetto(file);
    std::map<std::string, std::string> names, tid_of_track;
    std::vector<const Node*> starts;  // SLICE_BEGIN and INSTANT packets
    std::map<std::string, int> depth;
    for (const Node* p : t.all("packet")) {
        if (const Node* in = p->get("interned_data"))
            for (const Node* n : in->all("event_names"))
                names[n->str("iid")] = n->str("name");
        if (const Node* td = p->get("track_descriptor"); td && td->get("thread"))
            tid_of_track[td->str("uuid")] = td->get("thread")->str("tid");
        const Node* te = p->get("track_event");
        if (!te)
            continue;
        const std::string type = te->str("type");
        if (type == "TYPE_SLICE_BEGIN" || type == "TYPE_INSTANT")
            starts.push_back(p);
        if (type == "TYPE_SLICE_BEGIN")
            ++depth[te->str("track_uuid")];
        if (type == "TYPE_SLICE_END") {
            EXPECT_GE(--depth[te->str("track_uuid")], 0);
        }
    }
    for (auto [track, d] : depth)
        EXPECT_EQ(d, 0) << track;
    ASSERT_EQ(starts.size(), events.size());
    for (std::size_t i = 0; i < starts.size(); ++i) {
        SCOPED_TRACE(events[i].dump());
        const Node* te = starts[i]->get("track_event");
        const bool ret = events[i].contains("latency_ns");
        EXPECT_EQ(te->str("type"), ret ? "TYPE_SLICE_BEGIN" : "TYPE_INSTANT");
        EXPECT_EQ(names[te->str("name_iid")], "\"" + location(events[i]) + "\"");
        EXPECT_EQ(tid_of_track[te->str("track_uuid")], events[i]["tid"].dump());
        const std::uint64_t ts = events[i]["ts_ns"],
                            lat = ret ? events[i]["latency_ns"].get<std::uint64_t>() : 0;
        EXPECT_EQ(starts[i]->str("timestamp"), std::to_string(ts - lat));
    }
    // Straight from trace: it decodes, four slices and four instants.
    const std::string direct = tmp("direct.pftrace");
    probectl("trace" + backend() + " --format perfetto -o " + direct + " " + specs() +
             exportWorkloadCmd());
    const std::string dtext = perfettoText(direct);
    EXPECT_EQ(count(dtext, "TYPE_SLICE_END"), 4);
    EXPECT_EQ(count(dtext, "TYPE_INSTANT"), 4);
}

TEST_P(Export, CtfHasTheEventsOfTheJson) {
    const auto events = recordRun();
    const std::string dir = tmp("run-ctf");
    std::filesystem::remove_all(dir);
    probectl("report " + rec_ + " --format ctf -o " + dir);
    int status = -1;
    const std::string out = sh("babeltrace2 --clock-cycles " + dir, &status);
    ASSERT_EQ(status, 0) << out;
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        if (!l.empty() && l[0] == '[')
            lines.push_back(l);
    ASSERT_EQ(lines.size(), events.size()) << out;
    EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("discarded")));
    // babeltrace2 orders by time across the CPU streams, as the JSON is on one CPU;
    // match each JSON event to the line of its timestamp.
    std::map<std::string, std::string> by_ts;
    for (const auto& l : lines)
        by_ts[std::to_string(std::stoull(l.substr(1, l.find(']') - 1)))] = l;  // 20 digits
    for (const auto& ev : events) {
        SCOPED_TRACE(ev.dump());
        const std::string& l = by_ts[std::to_string(ev["ts_ns"].get<std::uint64_t>())];
        ASSERT_FALSE(l.empty());
        EXPECT_THAT(l, ::testing::HasSubstr(" " + location(ev) +
                                            ": { cpu_id = " + ev["cpu"].dump() + " }"));
        EXPECT_THAT(
            l, ::testing::HasSubstr("tid = " + ev["tid"].dump() + ", pid = " + ev["pid"].dump()));
        if (ev.contains("retval"))
            EXPECT_THAT(l, ::testing::HasSubstr("retval = " + ev["retval"].dump() +
                                                ", latency_ns = " + ev["latency_ns"].dump()));
        else
            EXPECT_THAT(l, ::testing::HasSubstr("arg1 = " + ev["args"]["arg1"].get<std::string>()));
    }
    // Straight from trace.
    const std::string direct = tmp("direct-ctf");
    std::filesystem::remove_all(direct);
    probectl("trace" + backend() + " --format ctf -o " + direct + " " + specs() +
             exportWorkloadCmd());
    const std::string dout = sh("babeltrace2 " + direct, &status);
    ASSERT_EQ(status, 0) << dout;
    EXPECT_EQ(count(dout, ":pc_add: \\{ cpu_id"), 8) << dout;
}

// Calls that never return have no slice: their count is a counter in both timeline formats
// (un_jump(1..5): the first four leave by longjmp). The files once had no sign of them.
TEST_P(Export, TimelinesCountTheCallsThatNeverReturned) {
    const std::string w = itest::workload("unwind_target");
    const std::string spec = "uretprobe:" + w + ":un_jump";
    const std::string chrome = tmp("unreturned.json");
    probectl("trace" + backend() + " " + spec + " --format chrome -o " + chrome + " -- " + w +
             " longjmp 5");
    const json t = json::parse(itest::readFile(chrome));
    std::vector<json> counts;
    int slices = 0;
    for (const auto& e : t["traceEvents"]) {
        slices += e["ph"] == "X";
        if (e["ph"] == "C" && e["name"] == "unreturned")
            counts.push_back(e["args"][spec]);
    }
    EXPECT_EQ(slices, 1);
    EXPECT_EQ(counts, (std::vector<json>{0, 4})) << t.dump(1);

    const std::string pf = tmp("unreturned.pftrace");
    probectl("trace" + backend() + " " + spec + " --format perfetto -o " + pf + " -- " + w +
             " longjmp 5");
    const Node trace = decodePerfetto(pf);
    std::string uuid;
    std::vector<std::string> values;
    for (const Node* p : trace.all("packet")) {
        if (const Node* td = p->get("track_descriptor");
            td && td->str("name") == "\"unreturned: " + spec + "\"")
            uuid = td->str("uuid");
        if (const Node* te = p->get("track_event");
            te && !uuid.empty() && te->str("track_uuid") == uuid)
            values.push_back(te->str("counter_value"));
    }
    EXPECT_EQ(values, (std::vector<std::string>{"0", "4"}));
}

// A syscall is a slice in every timeline format with either backend, from its entry to its
// exit with the return value and the latency (the ptrace backend once wrote instants, and
// CTF events without either field), straight from trace and from a recording.
TEST_P(Export, SyscallsAreSlices) {
    const std::string w = " syscall:getppid -- " + itest::workload("aggr_target") + " syscalls 3";
    const std::string chrome = tmp("sys.json"), rec = tmp("sys.rec"), conv = tmp("sys-rep.json");
    probectl("trace" + backend() + " --format chrome -o " + chrome + w);
    probectl("record" + backend() + " -o " + rec + w);
    probectl("report " + rec + " --format chrome -o " + conv);
    for (const std::string* file : {&chrome, &conv}) {
        const json t = json::parse(itest::readFile(*file));
        int slices = 0, instants = 0;
        for (const auto& e : t["traceEvents"]) {
            instants += e["ph"] == "i";
            if (e["ph"] == "X") {
                ++slices;
                EXPECT_EQ(e["name"], "syscall:getppid");
                EXPECT_TRUE(e["args"].contains("retval")) << e.dump();
                EXPECT_TRUE(e["args"].contains("latency_ns")) << e.dump();
            }
        }
        EXPECT_EQ(slices, 3) << *file;
        EXPECT_EQ(instants, 0) << *file;
    }
    const std::string pf = tmp("sys.pftrace");
    probectl("trace" + backend() + " --format perfetto -o " + pf + w);
    const std::string text = perfettoText(pf);
    EXPECT_EQ(count(text, "TYPE_SLICE_BEGIN"), 3) << text;
    EXPECT_EQ(count(text, "TYPE_INSTANT"), 0) << text;
    const std::string dir = tmp("sys-ctf");
    std::filesystem::remove_all(dir);
    probectl("trace" + backend() + " --format ctf -o " + dir + w);
    int status = -1;
    const std::string out = sh("babeltrace2 " + dir, &status);
    ASSERT_EQ(status, 0) << out;
    EXPECT_EQ(count(out, "retval = \\d+, latency_ns = \\d+"), 3) << out;
}

INSTANTIATE_TEST_SUITE_P(Backends, Export, ::testing::Values("kernel", "ptrace"));
