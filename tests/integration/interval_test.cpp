// --interval: clearing reads of a map while its probe fires. The kernel's hits counter is
// independent of the map, so the sum over every interval must equal it exactly: a hit
// that fell between a read and its clear would be missing, one read twice would be extra.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "probectl/aggr.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::AggrSpec;
using probectl::Session;
using probectl::SessionOptions;

TEST(Interval, ClearingReadsSumToTheHits) {
    // The reader and the workload on one CPU: no hit of another CPU falls between the
    // kernel's read of the counters and its switch of banks (under TCG the other vCPU can
    // run any number of instructions there).
    cpu_set_t was, cpu0;
    ASSERT_EQ(sched_getaffinity(0, sizeof(was), &was), 0);
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    ASSERT_EQ(sched_setaffinity(0, sizeof(cpu0), &cpu0), 0);
    struct Restore {
        cpu_set_t* mask;
        ~Restore() { sched_setaffinity(0, sizeof(*mask), mask); }
    } restore{&was};
    Workload w({itest::workload("spin_getppid")});
    AggrSpec a;
    a.keys = {"cpu"};
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::prepareAggregation(a, req, args);
    };
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("kprobe:__x64_sys_getppid").ok());
    w.release();
    const auto& p = s->probes().at(0);
    std::uint64_t sum = 0, before = 0;
    int nonempty = 0;
    // Until 10 reads found hits: on the debug kernel under a loaded host, 9 of 20 reads 50 ms
    // apart once did.
    for (int i = 0; i < 400 && nonempty < 10; i++) {
        usleep(50 * 1000);
        auto t =
            probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args, true);
        ASSERT_TRUE(t.ok()) << why(t);
        nonempty += t->totalCount() > 0;
        sum += t->totalCount();
        // Each read carries the probe's hits of the moment it switched banks: the change
        // between two reads is what the read holds, but for a hit in flight at the switch
        // (one workload thread on the reader's CPU: at most one). The session's counters,
        // read apart, once differed from the table by thousands of hits per --interval.
        ASSERT_TRUE(t->read_counts);
        const std::uint64_t hits = t->read_counts->hits - before;
        before = t->read_counts->hits;
        EXPECT_LE(hits > t->totalCount() ? hits - t->totalCount() : t->totalCount() - hits, 1u)
            << "read " << i << ": hits " << hits << ", the entries " << t->totalCount();
    }
    kill(w.pid(), SIGKILL);
    w.wait();
    auto st = s->stop({});
    ASSERT_TRUE(st.ok()) << why(st);
    auto last =
        probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args, true);
    ASSERT_TRUE(last.ok()) << why(last);
    sum += last->totalCount();
    EXPECT_GE(nonempty, 10) << "the workload was not running during the reads";
    EXPECT_EQ(last->overflow + last->nested + last->faulted, 0u);
    EXPECT_EQ(sum, st->probes.at(0).hits);
    EXPECT_EQ(last->read_counts->hits, st->probes.at(0).hits);  // stopped: exactly
    // Everything was read: a further clearing read is empty, a plain one too.
    auto again =
        probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args, true);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->totalCount(), 0u);
}

// Each CPU remembers the last integer key it added and that key's place in the map. A
// clearing read zeroes the values behind those places, not the keys: the same key right
// after it must count from zero in its own entry, with no trace of the hits before.
TEST(Interval, RememberedKeyCountsAfreshAfterAClearingRead) {
    const std::string target = itest::workload("aggr_target");
    Workload first({target, "keys", "3"});  // keys 0, 1, 2, then 0 again: value 1 each
    Workload second({target, "signed"});    // key 0 seven times: values -3..3
    AggrSpec a;
    a.keys = {"k"};
    a.value = probectl::AggrValue::Arg;
    a.value_arg = "v";
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(first.pid()), static_cast<std::uint32_t>(second.pid())};
    o.prepare = [&a](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::prepareAggregation(a, req, args);
    };
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    ASSERT_TRUE(s->add("uprobe:" + target + ":ag_val k=$arg1:s64 v=$arg2:s64").ok());
    const auto& p = s->probes().at(0);
    auto read = [&] {
        return probectl::readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args,
                                         true);
    };
    first.release();
    EXPECT_EQ(first.wait(), 0);
    auto t1 = read();
    ASSERT_TRUE(t1.ok()) << why(t1);
    EXPECT_EQ(t1->totalCount(), 4u);
    EXPECT_EQ(t1->entries.size(), 3u);
    second.release();
    EXPECT_EQ(second.wait(), 0);
    auto t2 = read();
    ASSERT_TRUE(t2.ok()) << why(t2);
    ASSERT_EQ(t2->entries.size(), 1u) << "keys without a hit since the clear came back";
    const auto& e = t2->entries[0];
    EXPECT_EQ(e.key.at(0).raw, 0u);
    EXPECT_EQ(e.count, 7u);
    EXPECT_EQ(static_cast<std::int64_t>(e.sum), 0);
    EXPECT_EQ(static_cast<std::int64_t>(e.min), -3);
    EXPECT_EQ(static_cast<std::int64_t>(e.max), 3);
    EXPECT_EQ(t2->overflow + t2->nested + t2->faulted, 0u);
    ASSERT_TRUE(s->stop({}).ok());
}

TEST(Interval, CliIntervalsAddUpToTheCalls) {
    constexpr int kCalls = 100000;
    auto r = itest::sh(itest::tablesOnly("probectl count syscall:getppid --interval 100ms -- " +
                                         itest::workload("getppid_loop") + " " +
                                         std::to_string(kCalls)) +
                       " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << r.out;
    // Each interval: "HH:MM:SS.mmm" (milliseconds: the interval is under a second),
    // "PROBE  COUNT[  FILTERED]", "syscall:getppid  N[  F]", "".
    std::istringstream in(r.out);
    std::uint64_t sum = 0;
    int headers = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.size() == 12 && line[2] == ':' && line[5] == ':' && line[8] == '.')
            headers++;
        if (line.rfind("syscall:getppid ", 0) == 0) {
            std::istringstream row(line);
            std::string spec;
            std::uint64_t count = 0;
            row >> spec >> count;
            sum += count;
        }
    }
    EXPECT_GE(headers, 2) << r.out;
    EXPECT_EQ(sum, static_cast<std::uint64_t>(kCalls)) << r.out;
}

// The CLI's intervals: each probe's header counts the hits its table holds (a uprobe, as
// it was found; one workload thread on probectl's CPU, so at most one hit in flight).
TEST(Interval, CliHeaderAndTableCountTheSameHits) {
    const std::string t = itest::workload("aggr_target");
    // A tenth on the debug kernel, where each uprobe hit is ten times slower: still dozens
    // of 100 ms intervals.
    const std::uint64_t calls = itest::debugKernel() ? 20000 : 200000;
    auto r = itest::sh(itest::tablesOnly("taskset -c 0 probectl count 'uprobe:" + t +
                                         ":ag_val k=$arg1:s64' --by k --interval 100ms "
                                         "--format json -- " +
                                         t + " values " + std::to_string(calls)) +
                       " 2>/dev/null");
    ASSERT_EQ(r.status, 0) << r.out;
    std::istringstream in(r.out);
    int intervals = 0;
    std::uint64_t sum = 0;
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || j.value("type", "") != "aggregation")
            continue;
        std::uint64_t counts = 0;
        for (const auto& e : j["entries"])
            counts += e["count"].get<std::uint64_t>();
        const std::uint64_t hits = j["hits"];
        const std::uint64_t held =
            counts + j["overflow"].get<std::uint64_t>() + j["nested"].get<std::uint64_t>() +
            j["faulted"].get<std::uint64_t>() + j["rejected"].get<std::uint64_t>();
        EXPECT_LE(hits > held ? hits - held : held - hits, 1u) << line;
        sum += counts;
        intervals++;
    }
    EXPECT_GE(intervals, 2) << r.out;
    EXPECT_EQ(sum, calls) << r.out;
}

// A call entered in one interval and returned in a later one (the workload blocks in
// un_wait() until the interval that counted its entry was printed): an interval before
// the last said "never returned 1" of it, and the one it returned in "hits 0" with count
// 1. Every interval balances: hits + entered before = count + not returned yet.
TEST(Interval, CliCallReturningInALaterIntervalBalances) {
    const std::string t = itest::workload("unwind_target");
    auto run = [&](const std::string& format, const std::string& entered) {
        // The FIFO held open for reading and writing: the workload's open does not wait,
        // its read does until a line of the tables holds `entered`.
        return itest::sh(
            "rm -f /tmp/ctl-wait-fifo && mkfifo /tmp/ctl-wait-fifo && "
            "exec 3<>/tmp/ctl-wait-fifo && probectl latency 'uretprobe:" +
            t + ":un_wait' --interval 100ms --duration 300 --format " + format + " -o - -- " + t +
            " wait /tmp/ctl-wait-fifo 2>/dev/null | while IFS= read -r l; do "
            "printf '%s\\n' \"$l\"; case \"$l\" in *'" +
            entered + "'*) printf x >&3;; esac; done");
    };
    auto json = run("json", "\"hits\":1,");
    ASSERT_EQ(json.status, 0) << json.out;
    std::istringstream in(json.out);
    std::vector<nlohmann::json> intervals;
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.value("type", "") == "aggregation")
            intervals.push_back(j);
    }
    ASSERT_GE(intervals.size(), 2u) << json.out;
    std::uint64_t hits = 0, count = 0;
    for (std::size_t i = 0; i < intervals.size(); i++) {
        const auto& j = intervals[i];
        std::uint64_t c = 0;
        for (const auto& e : j["entries"])
            c += e["count"].get<std::uint64_t>();
        EXPECT_EQ(j["hits"].get<std::uint64_t>() + j.value("entered_before", std::uint64_t{0}),
                  c + j["unreturned"].get<std::uint64_t>())
            << "interval " << i << ": " << j.dump();
        EXPECT_EQ(j.value("final", false), i + 1 == intervals.size()) << j.dump();
        hits += j["hits"].get<std::uint64_t>();
        count += c;
    }
    EXPECT_EQ(hits, 1u) << json.out;
    EXPECT_EQ(count, 1u) << json.out;
    EXPECT_EQ(intervals.back()["unreturned"], 0u) << json.out;

    auto text = run("text", "un_wait  hits 1,");
    ASSERT_EQ(text.status, 0) << text.out;
    const auto last = text.out.rfind("un_wait  hits ");
    ASSERT_NE(last, std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("never returned"), text.out.find("never returned", last))
        << "only the last interval's calls never returned:\n"
        << text.out;
    EXPECT_NE(text.out.find(", entered before 0, not returned yet 1 (this interval)"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find(", never returned 0 (this interval)", last), std::string::npos)
        << text.out;
}
