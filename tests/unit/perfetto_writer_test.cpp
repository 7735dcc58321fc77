// The Perfetto writer, checked through protoc --decode with the project's schema
// (Documentation/perfetto_trace.proto): the packet sequence, one track per thread under
// its process, begin/end pairs per track, interning, counters; and a large trace's size.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "probectl/trace_export.hpp"
#include "text_proto.hpp"
#include "trace_export_events.hpp"

using prototest::Node;

namespace {

std::string writeTrace(const std::vector<probectl::Event>& events, const std::string& name,
                       const probectl::SessionStats& stats = exporttest::sampleStats()) {
    const std::string path = testing::TempDir() + name;
    std::ofstream f(path, std::ios::binary);
    auto w = probectl::perfettoTraceWriter(f);
    probectl::TraceClocks clocks{1'000'000'000, 5'000'000'000, 0};
    EXPECT_TRUE(w->begin(1'000'000'000, clocks).ok());
    for (const auto& ev : events)
        EXPECT_TRUE(w->event(ev).ok());
    EXPECT_TRUE(w->finish(stats).ok());
    return path;
}

Node decode(const std::string& path) {
    EXPECT_STRNE(PROBECTL_PROTOC, "") << "protoc not found: make deps installs protobuf-compiler";
    int status = -1;
    const std::string text =
        prototest::run(std::string(PROBECTL_PROTOC) +
                           " --decode=perfetto.protos.Trace --proto_path=" + PROBECTL_DOC_DIR +
                           " " + PROBECTL_DOC_DIR + "/perfetto_trace.proto < " + path,
                       &status);
    EXPECT_EQ(status, 0) << text;
    return prototest::parseTextProto(text);
}

}  // namespace

TEST(PerfettoWriter, DecodesIntoTheDocumentedPacketSequence) {
    const Node t = decode(writeTrace(exporttest::sampleRun(), "/sample.pftrace"));
    const auto packets = t.all("packet");
    ASSERT_GT(packets.size(), 5u);
    // 1. the clock snapshot, starting the sequence.
    const Node* snap = packets[0]->get("clock_snapshot");
    ASSERT_NE(snap, nullptr);
    ASSERT_EQ(snap->all("clocks").size(), 2u);
    EXPECT_EQ(snap->all("clocks")[0]->str("clock_id"), "3");
    EXPECT_EQ(snap->all("clocks")[0]->str("timestamp"), "1000000000");
    EXPECT_EQ(snap->all("clocks")[1]->str("clock_id"), "6");
    EXPECT_EQ(packets[0]->str("sequence_flags"), "1");
    // 2. processes and threads: each thread track's parent is its process's track.
    std::map<std::string, std::string> process_of_uuid, thread_parent;
    for (const Node* p : packets)
        if (const Node* td = p->get("track_descriptor")) {
            if (const Node* pr = td->get("process"))
                process_of_uuid[td->str("uuid")] = pr->str("pid");
            if (const Node* th = td->get("thread")) {
                thread_parent[th->str("tid")] = td->str("parent_uuid");
                EXPECT_EQ(th->str("thread_name"), "\"worker\"");
            }
        }
    ASSERT_EQ(process_of_uuid.size(), 2u);
    ASSERT_EQ(thread_parent.size(), 3u);
    EXPECT_EQ(process_of_uuid[thread_parent["101"]], "100");
    EXPECT_EQ(process_of_uuid[thread_parent["200"]], "200");
}

TEST(PerfettoWriter, SlicesPairPerTrackWithValuesOnTheBegin) {
    const Node t = decode(writeTrace(exporttest::sampleRun(), "/slices.pftrace"));
    std::map<std::string, int> depth, begins;
    std::map<std::string, std::string> names;  // iid -> name
    std::vector<const Node*> begin_events;
    for (const Node* p : t.all("packet")) {
        if (const Node* in = p->get("interned_data"))
            for (const Node* n : in->all("event_names"))
                names[n->str("iid")] = n->str("name");
        const Node* te = p->get("track_event");
        if (!te)
            continue;
        EXPECT_EQ(p->str("timestamp_clock_id"), "3");
        const std::string track = te->str("track_uuid");
        if (te->str("type") == "TYPE_SLICE_BEGIN") {
            ++depth[track];
            ++begins[track];
            begin_events.push_back(p);
        } else if (te->str("type") == "TYPE_SLICE_END") {
            EXPECT_GT(depth[track], 0) << "end without begin on " << track;
            --depth[track];
        }
    }
    for (auto [track, d] : depth)
        EXPECT_EQ(d, 0) << track;
    ASSERT_EQ(begin_events.size(), 3u);
    // The outer call (second record) begins at its entry, 1.0000002 s.
    EXPECT_EQ(begin_events[1]->str("timestamp"), "1000000200");
    const Node* te = begin_events[1]->get("track_event");
    EXPECT_EQ(names[te->str("name_iid")], "\"uretprobe:/bin/prog:work\"");
    std::vector<std::string> values;
    for (const Node* a : te->all("debug_annotations"))
        values.push_back(a->str("int_value") + a->str("uint_value"));
    EXPECT_EQ(values, (std::vector<std::string>{"-2", "-2", "1300"}));  // r, retval, latency
}

TEST(PerfettoWriter, StringsAreInternedOnce) {
    // 50 events of one probe on one thread: its name, category, annotation names and the
    // repeated path are each sent once.
    std::vector<probectl::Event> evs;
    for (int i = 0; i < 50; ++i)
        evs.push_back(exporttest::fetched(100, 100, 1'000'000'000 + i * 10, "/etc/passwd"));
    const Node t = decode(writeTrace(evs, "/interned.pftrace"));
    std::map<std::string, int> sent;
    int instants = 0, with_iid = 0;
    for (const Node* p : t.all("packet")) {
        if (const Node* in = p->get("interned_data"))
            for (const auto& c : in->children)
                ++sent[c.key + "=" + (c.str("name").empty() ? c.str("str") : c.str("name"))];
        if (const Node* te = p->get("track_event"); te && te->str("type") == "TYPE_INSTANT") {
            ++instants;
            for (const Node* a : te->all("debug_annotations"))
                with_iid += !a->str("string_value_iid").empty();
        }
    }
    EXPECT_EQ(instants, 50);
    EXPECT_EQ(with_iid, 150);  // path, the {1,2,3} array text and <fault>, every event
    EXPECT_EQ(sent["event_names=\"uprobe:/bin/prog:open\""], 1);
    EXPECT_EQ(sent["event_categories=\"uprobe\""], 1);
    EXPECT_EQ(sent["debug_annotation_names=\"path\""], 1);
    EXPECT_EQ(sent["debug_annotation_string_values=\"/etc/passwd\""], 1);
    for (auto [k, n] : sent)
        EXPECT_EQ(n, 1) << k;
}

// Drops, and calls that never returned (exit(): no slice) when there are any.
TEST(PerfettoWriter, DropsAreCounterTracks) {
    probectl::SessionStats stats = exporttest::sampleStats();
    stats.probes[1].unreturned = 4;
    const Node t = decode(writeTrace(exporttest::sampleRun(), "/counters.pftrace", stats));
    std::map<std::string, std::string> counter_names;  // uuid -> name
    std::map<std::string, std::vector<std::string>> values;
    for (const Node* p : t.all("packet")) {
        if (const Node* td = p->get("track_descriptor"); td && td->get("counter"))
            counter_names[td->str("uuid")] = td->str("name");
        if (const Node* te = p->get("track_event"); te && te->str("type") == "TYPE_COUNTER")
            values[counter_names[te->str("track_uuid")]].push_back(te->str("counter_value"));
    }
    EXPECT_EQ(values["\"dropped: kprobe:do_sys_openat2\""], (std::vector<std::string>{"0", "3"}));
    EXPECT_EQ(values["\"lost records\""], (std::vector<std::string>{"0", "2"}));
    EXPECT_EQ(values["\"unreturned: uretprobe:/bin/prog:work r=$retval:s64\""],
              (std::vector<std::string>{"0", "4"}));
    EXPECT_EQ(values.count("\"unreturned: kprobe:do_sys_openat2\""), 0u);
}

// 10^6 events: interning keeps each one small, and the writer holds no event.
TEST(PerfettoWriter, AMillionEventsStaySmall) {
    std::ostringstream out;
    auto w = probectl::perfettoTraceWriter(out);
    ASSERT_TRUE(w->begin(0, probectl::TraceClocks{}).ok());
    probectl::Event ev = exporttest::ret(100, 100, 0, 0, 0);
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
        ev.timestamp_ns = 1'000'000'000 + i * 1000 + 500;
        ev.latency_ns = 400;
        ev.pid = 100 + static_cast<std::uint32_t>(i % 8);
        ASSERT_TRUE(w->event(ev).ok());
    }
    ASSERT_TRUE(w->finish(exporttest::sampleStats()).ok());
    const double per_event = static_cast<double>(out.str().size()) / 1e6;
    // Without interning the name alone would be 24 more bytes, and each annotation name more.
    EXPECT_LT(per_event, 100) << "bytes per slice (begin + end packets, three annotations)";
    RecordProperty("bytes_per_slice", std::to_string(per_event));
}

// A comm or string value that is not UTF-8 went raw into protobuf string fields, which must
// be UTF-8: now U+FFFD there, and the exact bytes in hex beside (comm_bytes, NAME_bytes), as
// the JSON and Chrome writers keep them.
TEST(PerfettoWriter, NonUtf8NamesAndStringsAreValidTextAndKeepTheirBytes) {
    probectl::Event e = exporttest::fetched(100, 100, 1'000'000'000, "g\xfe");
    e.comm = "g\xff";
    const Node t = decode(writeTrace({e}, "/non-utf8.pftrace"));
    std::set<std::string> names;
    std::map<std::string, std::string> annotations;  // by interned name
    std::map<std::string, std::string> iid_names, iid_values;
    for (const Node* p : t.all("packet")) {
        if (const Node* td = p->get("track_descriptor")) {
            if (const Node* pr = td->get("process"))
                names.insert(pr->str("process_name"));
            if (const Node* th = td->get("thread"))
                names.insert(th->str("thread_name"));
        }
        if (const Node* in = p->get("interned_data")) {
            for (const Node* n : in->all("debug_annotation_names"))
                iid_names[n->str("iid")] = n->str("name");
            for (const Node* v : in->all("debug_annotation_string_values"))
                iid_values[v->str("iid")] = v->str("str");
        }
        if (const Node* te = p->get("track_event"))
            for (const Node* a : te->all("debug_annotations"))
                annotations[iid_names[a->str("name_iid")]] =
                    a->get("string_value_iid") ? iid_values[a->str("string_value_iid")]
                                               : a->str("string_value");
    }
    // protoc prints U+FFFD as its UTF-8 bytes in octal.
    EXPECT_EQ(names, (std::set<std::string>{"\"g\\357\\277\\275\""}));
    EXPECT_EQ(annotations["\"comm_bytes\""], "\"67ff\"");
    EXPECT_EQ(annotations["\"path\""], "\"g\\357\\277\\275\"");
    EXPECT_EQ(annotations["\"path_bytes\""], "\"67fe\"");
}

// A syscall event with syscall_returned but not is_return (a ptrace recording's) is a slice
// too: begin at its entry with the call, retval and latency, end at its exit.
TEST(PerfettoWriter, APtraceSyscallIsASlice) {
    const probectl::SyscallPlan plan = probectl::syscallPlan("getppid", nullptr);
    const Node t =
        decode(writeTrace({exporttest::ptraceSyscall(plan)}, "/ptrace-syscall.pftrace", {}));
    std::vector<std::string> types, stamps, values;
    for (const Node* p : t.all("packet"))
        if (const Node* te = p->get("track_event"); te && te->str("type") != "TYPE_COUNTER") {
            types.push_back(te->str("type"));
            stamps.push_back(p->str("timestamp"));
            for (const Node* a : te->all("debug_annotations"))
                values.push_back(a->str("int_value") + a->str("uint_value"));
        }
    EXPECT_EQ(types, (std::vector<std::string>{"TYPE_SLICE_BEGIN", "TYPE_SLICE_END"}));
    EXPECT_EQ(stamps, (std::vector<std::string>{"1000000400", "1000000500"}));
    // call (a string), retval, latency_ns
    EXPECT_EQ(values, (std::vector<std::string>{"", "169", "100"}));
}

TEST(PerfettoWriter, EventNameIsTheWholeLocation) {
    const Node t = decode(writeTrace({exporttest::spaced()}, "/spaced.pftrace"));
    std::vector<std::string> names;
    for (const Node* p : t.all("packet"))
        if (const Node* in = p->get("interned_data"))
            for (const Node* n : in->all("event_names"))
                names.push_back(n->str("name"));
    // protoc's text format escapes the quotes
    EXPECT_EQ(names,
              std::vector<std::string>{"\"uprobe:\\'/opt/my app/cv\\':\\'A::get(int) const\\'\""});
}
