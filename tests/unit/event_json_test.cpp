// The JSON back end's event objects (schema in event_json.hpp), from Events.
#include "probectl/event_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "probectl/event_print.hpp"

using namespace probectl;
using json = nlohmann::ordered_json;

namespace {

FetchedValue value(std::string name, FetchType t, std::uint64_t raw) {
    FetchedValue v;
    v.name = std::move(name);
    v.type = t;
    v.raw = raw;
    return v;
}

std::string line(const Event& e) {
    std::ostringstream os;
    printEvent(*makeJsonPrinter(os), e, {});
    std::string s = os.str();
    EXPECT_EQ(s.back(), '\n');
    s.pop_back();
    return s;
}

json eventToJson(const Event& e) {
    return json::parse(line(e));
}

// A kretprobe with fetch arguments (entry values) and its return.
Event openatEvent() {
    Event e;
    e.timestamp_ns = 123456789;
    e.cpu = 1;
    e.tgid = 100;
    e.pid = 101;
    e.comm = "cat";
    e.spec = "kretprobe:do_sys_openat2 dfd=$arg1:s32";
    e.probe_id = 7;
    e.ip = 0xffffffff81234560;
    e.values.push_back(value("dfd", FetchType::S32, 0xffffff9c));
    FetchedValue path;
    path.name = "path";
    path.type = FetchType::Ustring;
    path.str = "/etc/passwd";
    e.values.push_back(path);
    e.values.push_back(value("flags", FetchType::X32, 0x80000));
    e.values.push_back(value("mode", FetchType::U16, 0644));
    e.is_return = true;
    e.retval = 3;
    e.latency_ns = 2500;
    return e;
}

}  // namespace

TEST(EventJson, EventSchema) {
    EXPECT_EQ(line(openatEvent()),
              "{\"type\":\"event\",\"ts_ns\":123456789,\"cpu\":1,\"pid\":100,\"tid\":101,"
              "\"comm\":\"cat\",\"probe\":\"kretprobe:do_sys_openat2 dfd=$arg1:s32\","
              "\"probe_id\":7,\"ip\":\"0xffffffff81234560\",\"args\":{\"dfd\":-100,"
              "\"path\":\"/etc/passwd\",\"flags\":\"0x80000\",\"mode\":420},\"retval\":3,"
              "\"latency_ns\":2500}");
}

TEST(EventJson, FaultIsNullAndListedNeverEmpty) {
    Event e = openatEvent();
    e.values[1].faulted = true;
    e.values[1].str.clear();
    e.values[3].faulted = true;
    const json j = eventToJson(e);
    EXPECT_TRUE(j["args"]["path"].is_null());
    EXPECT_TRUE(j["args"]["mode"].is_null());
    EXPECT_EQ(j["faults"], json::array({"path", "mode"}));
    EXPECT_FALSE(j.contains("truncated"));
    // The line shows null, not "" or 0.
    EXPECT_THAT(line(e), ::testing::HasSubstr("\"path\":null"));
}

TEST(EventJson, TruncatedArraysAndWidths) {
    Event e;
    FetchedValue s;
    s.name = "s";
    s.type = FetchType::String;
    s.str = "abc";
    s.truncated = true;
    e.values.push_back(s);
    FetchedValue a;
    a.name = "a";
    a.type = FetchType::S8;
    a.array_len = 3;
    a.array = {1, 0xff, 0x80};
    e.values.push_back(a);
    FetchedValue x;
    x.name = "x";
    x.type = FetchType::X8;
    x.array_len = 2;
    x.array = {0x0f, 0xf0};
    e.values.push_back(x);
    e.values.push_back(value("big", FetchType::U64, ~0ull));
    e.values.push_back(value("neg", FetchType::S64, ~0ull));
    const json j = eventToJson(e);
    EXPECT_EQ(j["truncated"], json::array({"s"}));
    EXPECT_EQ(j["args"]["a"], json::array({1, -1, -128}));
    EXPECT_EQ(j["args"]["x"], json::array({"0xf", "0xf0"}));
    EXPECT_EQ(j["args"]["big"].get<std::uint64_t>(), ~0ull);
    EXPECT_EQ(j["args"]["neg"].get<std::int64_t>(), -1);
    EXPECT_FALSE(j.contains("retval"));
    EXPECT_FALSE(j.contains("syscall"));
    EXPECT_FALSE(j.contains("faults"));
}

TEST(EventJson, ReturnWithoutValuesHasNoArgsKey) {
    Event e;
    e.is_return = true;
    EXPECT_FALSE(eventToJson(e).contains("args"));
    EXPECT_EQ(eventToJson(e)["retval"], 0);
}

TEST(EventJson, InvalidUtf8IsReplacedNotThrown) {
    Event e;
    FetchedValue s;
    s.name = "s";
    s.type = FetchType::Ustring;
    s.str =
        "a\xff"
        "b";
    e.values.push_back(s);
    EXPECT_THAT(line(e), ::testing::HasSubstr("\"s\":\"a\xef\xbf\xbd"
                                              "b\""));
}

// Two tasks named g\xff and g\xfe, reading the same string path: as U+FFFD alone their
// events were the same; comm_bytes and path_bytes keep the bytes apart.
TEST(EventJson, NonUtf8StringsKeepTheirBytes) {
    auto event = [](const char* comm, const char* path) {
        Event e = openatEvent();
        e.comm = comm;
        e.values[1].str = path;
        return eventToJson(e);
    };
    const json a = event("g\xff", "/tmp/\xfe"), b = event("g\xfe", "/tmp/\xff");
    EXPECT_EQ(a["comm"], "g\xef\xbf\xbd");
    EXPECT_EQ(a["comm"], b["comm"]);
    EXPECT_EQ(a["comm_bytes"], "67ff");
    EXPECT_EQ(b["comm_bytes"], "67fe");
    EXPECT_EQ(a["args"]["path_bytes"], "2f746d702ffe");
    EXPECT_EQ(b["args"]["path_bytes"], "2f746d702fff");
    // Right after its string; none for valid UTF-8.
    const std::string l = line(openatEvent());
    EXPECT_EQ(l.find("_bytes"), std::string::npos) << l;
    Event e = openatEvent();
    e.comm = "g\xff";
    EXPECT_THAT(line(e), ::testing::HasSubstr("\"comm\":\"g\xef\xbf\xbd\",\"comm_bytes\":\"67ff\","
                                              "\"probe\""));
}

// A tree (aggregations, stacks): each object's NAME_bytes right after NAME; for an array
// of strings, an array of the same length with null for the valid ones.
TEST(EventJson, TreesGetBytesMembersAtEveryLevel) {
    nlohmann::ordered_json j;
    j["key"] = {{"comm", "g\xff"}, {"n", 3}};
    j["kstack"] = {"ok", "bad\xfe"};
    j["entries"] = nlohmann::ordered_json::array({{{"s", "\xc0"}}});
    j["fine"] = "caf\xc3\xa9";
    EXPECT_EQ(toJsonLine(j),
              "{\"key\":{\"comm\":\"g\xef\xbf\xbd\",\"comm_bytes\":\"67ff\",\"n\":3},"
              "\"kstack\":[\"ok\",\"bad\xef\xbf\xbd\"],\"kstack_bytes\":[null,\"626164fe\"],"
              "\"entries\":[{\"s\":\"\xef\xbf\xbd\",\"s_bytes\":\"c0\"}],"
              "\"fine\":\"caf\xc3\xa9\"}");
}

TEST(EventJson, Summary) {
    std::ostringstream os;
    printSummary(*makeJsonPrinter(os),
                 {{1,
                   "syscall:openat",
                   {{"hits", 10},
                    {"delivered", 8},
                    {"dropped", 2},
                    {"nmissed", 0},
                    {"filtered", 5},
                    {"rejected", 4}}}},
                 3, 1);
    EXPECT_EQ(os.str(),
              "{\"type\":\"summary\",\"probes\":[{\"id\":1,\"probe\":\"syscall:openat\","
              "\"hits\":10,\"delivered\":8,\"dropped\":2,\"nmissed\":0,\"filtered\":5,"
              "\"rejected\":4}],"
              "\"lost\":3,\"overruns\":1}\n");
}
