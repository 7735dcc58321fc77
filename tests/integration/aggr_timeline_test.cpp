// count/hist/latency --format perfetto|chrome -o FILE on a live run: the counter tracks of
// the read-outs add up to the calls the workload made, and equal the tables printed beside
// them; both backends give the same totals.
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "text_proto.hpp"

using nlohmann::json;

namespace {

std::string tmpFile(const std::string& name) {
    return testing::TempDir() + "/aggr-timeline-" + std::to_string(getpid()) + "-" + name;
}

// The values of every counter track of a Perfetto file, by track name (quoted as protoc
// prints it), in file order.
std::map<std::string, std::vector<std::int64_t>> perfettoCounters(const std::string& file) {
    const auto ran =
        itest::sh(std::string("protoc --decode=perfetto.protos.Trace --proto_path=") +
                  PROBECTL_DOC_DIR + " " + PROBECTL_DOC_DIR + "/perfetto_trace.proto < " + file);
    EXPECT_EQ(ran.status, 0) << ran.out;
    const std::string& text = ran.out;
    std::map<std::string, std::string> name_of;
    std::map<std::string, std::vector<std::int64_t>> values;
    const prototest::Node trace = prototest::parseTextProto(text);
    for (const auto* p : trace.all("packet")) {
        if (const auto* td = p->get("track_descriptor"); td && td->get("counter"))
            name_of[td->str("uuid")] = td->str("name");
        if (const auto* te = p->get("track_event"); te && te->str("type") == "TYPE_COUNTER")
            values[name_of[te->str("track_uuid")]].push_back(std::stoll(te->str("counter_value")));
    }
    return values;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
    std::int64_t s = 0;
    for (auto x : v)
        s += x;
    return s;
}

}  // namespace

TEST(AggrTimelineRun, PerfettoIntervalsAddUpToTheCalls) {
    constexpr int kCalls = 100000;
    const std::string file = tmpFile("count.pftrace");
    auto r = itest::sh("probectl count syscall:getppid --interval 100ms --format perfetto -o " +
                       file + " -- " + itest::workload("getppid_loop") + " " +
                       std::to_string(kCalls) + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("syscall:getppid"), std::string::npos) << "the tables still print";
    const auto tracks = perfettoCounters(file);
    std::string names;
    for (const auto& [name, v] : tracks)
        names += name + "\n";
    ASSERT_TRUE(tracks.count("\"syscall:getppid: count\"")) << names << r.out;
    const auto& counts = tracks.at("\"syscall:getppid: count\"");
    // A zero to start from, then one sample per read-out: several intervals, each cleared.
    EXPECT_GE(counts.size(), 3u);
    EXPECT_EQ(counts.front(), 0);
    EXPECT_EQ(sum(counts), kCalls);
    EXPECT_TRUE(tracks.count("\"lost records\""));
}

class AggrTimelineBackends : public testing::TestWithParam<const char*> {};

TEST_P(AggrTimelineBackends, ChromeLatencyTracksMatchTheTable) {
    constexpr int kCalls = 300;
    const std::string file = tmpFile(std::string(GetParam()) + "-latency.json");
    auto r = itest::sh(std::string("probectl latency syscall:getppid --by comm --backend ") +
                       GetParam() + " --format chrome -o " + file + " -- " +
                       itest::workload("getppid_loop") + " " + std::to_string(kCalls) + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    std::ifstream f(file);
    const json t = json::parse(f);
    std::map<std::string, std::vector<std::int64_t>> series;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "C" && e["name"] != "dropped")
            series[e["name"]].push_back(e["args"]["value"]);
    // No --interval: one step from 0 at the start to the totals at the end.
    const auto& c = series["syscall:getppid [comm=getppid_loop]: count"];
    const auto& a = series["syscall:getppid [comm=getppid_loop]: avg latency (ns)"];
    ASSERT_EQ(c.size(), 2u) << t.dump(1);
    EXPECT_EQ(c[0], 0);
    EXPECT_EQ(c[1], kCalls);
    ASSERT_EQ(a.size(), 2u) << t.dump(1);
    EXPECT_EQ(a[0], 0);
    EXPECT_GT(a[1], 0);
    // The histogram printed beside it has the same count.
    EXPECT_NE(r.out.find("count " + std::to_string(kCalls) + ", avg"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, AggrTimelineBackends, testing::Values("kernel", "ptrace"));
