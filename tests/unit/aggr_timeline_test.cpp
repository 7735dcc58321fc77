// count/hist/latency --format perfetto|chrome: read-outs as counter tracks. The track names
// and values of a table, the zero a new track starts from, the zero of a key that left a
// cleared interval, Perfetto's track descriptors (once per track) through protoc, and the
// options that go with a timeline file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "aggr_cli.hpp"
#include "aggr_timeline.hpp"
#include "probectl/trace_export.hpp"
#include "text_proto.hpp"

using namespace probectl;
using nlohmann::json;

namespace {

FetchedValue str(const std::string& s) {
    FetchedValue v;
    v.type = FetchType::String;
    v.str = s;
    return v;
}

FetchedValue u32(std::uint32_t n) {
    FetchedValue v;
    v.type = FetchType::U32;
    v.raw = n;
    return v;
}

AggrTable byComm(std::vector<std::pair<std::string, std::uint64_t>> counts) {
    AggrTable t;
    t.spec = "syscall:read";
    t.key_names = {"comm"};
    for (auto& [comm, n] : counts)
        t.entries.push_back({{str(comm)}, n, 0, 0, 0, {}});
    return t;
}

// (track, ts, value) of each counter sample of a chrome file, in file order.
struct Sample {
    std::string track;
    double ts_us;
    std::int64_t value;
    bool operator==(const Sample&) const = default;
};
std::vector<Sample> chromeSamples(const std::string& path) {
    std::ifstream f(path);
    const json t = json::parse(f);
    std::vector<Sample> out;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "C" && e["name"] != "dropped")
            out.push_back({e["name"], e["ts"].get<double>(), e["args"]["value"]});
    return out;
}

}  // namespace

TEST(AggrTimeline, TrackPerProbeAndKeyWithCountAndAverage) {
    AggrTable t;
    t.spec = "kretprobe:vfs_read";
    t.key_names = {"comm", "pid"};
    t.value = AggrValue::Latency;
    t.value_name = "latency";
    t.entries.push_back({{str("cat"), u32(12)}, 4, 4000, 500, 2000, {}});
    t.entries.push_back({{str("sh"), u32(7)}, 10, 5000, 100, 900, {}});
    const auto s = cli::aggrCounterSamples(t);
    using P = std::pair<std::string, std::int64_t>;
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0], P("kretprobe:vfs_read [comm=sh, pid=7]: count", 10));
    EXPECT_EQ(s[1], P("kretprobe:vfs_read [comm=sh, pid=7]: avg latency (ns)", 500));
    EXPECT_EQ(s[2], P("kretprobe:vfs_read [comm=cat, pid=12]: count", 4));
    EXPECT_EQ(s[3], P("kretprobe:vfs_read [comm=cat, pid=12]: avg latency (ns)", 1000));
    AggrTable plain;
    plain.spec = "kprobe:vfs_write";
    plain.entries.push_back({{}, 9, 0, 0, 0, {}});
    EXPECT_EQ(cli::aggrCounterSamples(plain), (std::vector<P>{{"kprobe:vfs_write: count", 9}}));
    // A signed argument's average is signed.
    AggrTable neg;
    neg.spec = "uprobe:/bin/app:f r=$arg1:s64";
    neg.value = AggrValue::Arg;
    neg.value_name = "r";
    neg.is_signed = true;
    neg.entries.push_back({{},
                           2,
                           static_cast<std::uint64_t>(-10),
                           static_cast<std::uint64_t>(-6),
                           static_cast<std::uint64_t>(-4),
                           {}});
    EXPECT_EQ(cli::aggrCounterSamples(neg)[1], P("uprobe:/bin/app:f r=$arg1:s64: avg r", -5));
}

TEST(AggrTimeline, NewTracksStartFromZeroAndClearedKeysFallBack) {
    const std::string path = testing::TempDir() + "/timeline.json";
    auto tl = cli::AggrTimeline::open("chrome", path);
    ASSERT_TRUE(tl.ok()) << tl.error().message;
    ASSERT_TRUE(tl->start(1'000'000'000).ok());
    ASSERT_TRUE(tl->readout({byComm({{"sh", 3}})}, 2'000'000'000, true).ok());
    ASSERT_TRUE(tl->readout({byComm({{"cat", 5}})}, 3'000'000'000, true).ok());
    ASSERT_TRUE(tl->readout({byComm({{"cat", 1}})}, 4'000'000'000, true).ok());
    ASSERT_TRUE(tl->finish(SessionStats{}).ok());
    const std::string sh = "syscall:read [comm=sh]: count", cat = "syscall:read [comm=cat]: count";
    EXPECT_EQ(chromeSamples(path), (std::vector<Sample>{{sh, 1e6, 0},
                                                        {sh, 2e6, 3},
                                                        {cat, 2e6, 0},
                                                        {cat, 3e6, 5},
                                                        {sh, 3e6, 0},
                                                        {cat, 4e6, 1}}));
}

TEST(AggrTimeline, CumulativeKeysKeepTheirTotal) {
    const std::string path = testing::TempDir() + "/cumulative.json";
    auto tl = cli::AggrTimeline::open("chrome", path);
    ASSERT_TRUE(tl.ok());
    ASSERT_TRUE(tl->start(0).ok());
    ASSERT_TRUE(tl->readout({byComm({{"sh", 3}})}, 1000, false).ok());
    ASSERT_TRUE(tl->readout({byComm({{"cat", 2}})}, 2000, false).ok());
    ASSERT_TRUE(tl->finish(SessionStats{}).ok());
    const auto s = chromeSamples(path);
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s.back(), (Sample{"syscall:read [comm=cat]: count", 2, 2}));
}

TEST(AggrTimeline, PerfettoDescribesEachTrackOnce) {
    const std::string path = testing::TempDir() + "/timeline.pftrace";
    {
        auto tl = cli::AggrTimeline::open("perfetto", path);
        ASSERT_TRUE(tl.ok());
        ASSERT_TRUE(tl->start(1'000'000'000).ok());
        ASSERT_TRUE(tl->readout({byComm({{"sh", 3}, {"cat", 1}})}, 2'000'000'000, true).ok());
        ASSERT_TRUE(tl->readout({byComm({{"sh", 4}})}, 3'000'000'000, true).ok());
        SessionStats st;
        ASSERT_TRUE(tl->finish(st).ok());
    }
    int status = -1;
    const auto t = prototest::parseTextProto(prototest::run(
        std::string(PROBECTL_PROTOC) + " --decode=perfetto.protos.Trace --proto_path=" +
            PROBECTL_DOC_DIR + " " + PROBECTL_DOC_DIR + "/perfetto_trace.proto < " + path,
        &status));
    ASSERT_EQ(status, 0);
    std::map<std::string, std::string> name_of;              // uuid -> track name
    std::map<std::string, std::vector<std::string>> values;  // track name -> values
    std::string last_ts = "0";
    for (const auto* p : t.all("packet")) {
        if (const auto* td = p->get("track_descriptor")) {
            if (!td->get("counter"))
                continue;
            EXPECT_FALSE(name_of.count(td->str("uuid"))) << "described twice";
            name_of[td->str("uuid")] = td->str("name");
        }
        if (const auto* te = p->get("track_event")) {
            ASSERT_EQ(te->str("type"), "TYPE_COUNTER");
            ASSERT_TRUE(name_of.count(te->str("track_uuid"))) << "a sample before its track";
            const std::string& name = name_of[te->str("track_uuid")];
            // The read-outs in time order (the drop counters at the end span the trace).
            if (name.find("syscall:read") != std::string::npos) {
                EXPECT_GE(std::stoull(p->str("timestamp")), std::stoull(last_ts));
                last_ts = p->str("timestamp");
            }
            values[name_of[te->str("track_uuid")]].push_back(te->str("counter_value"));
        }
    }
    EXPECT_EQ(values["\"syscall:read [comm=sh]: count\""],
              (std::vector<std::string>{"0", "3", "4"}));
    EXPECT_EQ(values["\"syscall:read [comm=cat]: count\""],
              (std::vector<std::string>{"0", "1", "0"}));
    EXPECT_EQ(values["\"lost records\""], (std::vector<std::string>{"0", "0"}));
}

TEST(AggrTimeline, AnUnwritablePathFailsAtOnce) {
    auto tl = cli::AggrTimeline::open("perfetto", testing::TempDir() + "/no/such/dir/x.pftrace");
    ASSERT_FALSE(tl);
    EXPECT_EQ(tl.error().err, ENOENT);
    EXPECT_NE(tl.error().message.find("/no/such/dir/x.pftrace"), std::string::npos);
}

TEST(AggrTimeline, CtfHasNoCounterTracks) {
    const std::string dir = testing::TempDir() + "/aggr-ctf";
    auto w = openTraceWriter("ctf", dir);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->begin(0, TraceClocks::now()).ok());
    auto r = (*w)->counter("x: count", 1, 1);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOTSUP);
}

TEST(AggrCliOptions, TimelineFormatsNeedAFileAndLiveProbes) {
    auto ok = cli::parseAggrOptions(
        cli::AggrMode::Latency, {"kretprobe:vfs_read", "--format", "perfetto", "-o", "l.pftrace"});
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->output, "l.pftrace");
    auto no_file =
        cli::parseAggrOptions(cli::AggrMode::Count, {"syscall:read", "--format", "chrome"});
    ASSERT_FALSE(no_file);
    EXPECT_NE(no_file.error().message.find("-o FILE"), std::string::npos)
        << no_file.error().message;
    auto from = cli::parseAggrOptions(cli::AggrMode::Count,
                                      {"--from", "r.prb", "--format", "perfetto", "-o", "x"});
    ASSERT_FALSE(from);
    EXPECT_NE(from.error().message.find("probectl report"), std::string::npos);
    EXPECT_FALSE(cli::parseAggrOptions(cli::AggrMode::Count,
                                       {"syscall:read", "--format", "ctf", "-o", "d"}));
}
