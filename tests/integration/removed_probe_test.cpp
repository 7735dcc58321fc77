// A probe removed by another client (CAP_SYS_ADMIN may remove anyone's) while its session
// traces: the owner keeps the probe's final counters and is told, instead of reading zero
// hits and zero drops for a probe that fired.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "probectl/aggr.hpp"
#include "probectl/client.hpp"
#include "probectl/session.hpp"
#include "stack_text.hpp"
#include "uapi/probectl.h"

using itest::why;
using itest::Workload;
using probectl::Client;
using probectl::ProbeRequest;

namespace {

// getppid_loop held at its gate, already the only process the session traces.
std::unique_ptr<Workload> heldLoop(std::uint32_t calls, Client& session) {
    auto w = std::make_unique<Workload>(
        std::vector<std::string>{itest::workload("getppid_loop"), std::to_string(calls)});
    auto r = session.setSessionTgids({static_cast<std::uint32_t>(w->pid())});
    EXPECT_TRUE(r.ok()) << why(r);
    return w;
}

void run(Workload& w) {
    w.release();
    ASSERT_EQ(w.wait(), 0);
}

// aggr_target's ag_val(i % 4, i) for i < n, as a finished workload.
void aggrValues(int n) {
    Workload w({itest::workload("aggr_target"), "values", std::to_string(n)});
    run(w);
}

// count --by k of `aggr_target values 10`: keys 0..3 counted 3, 3, 2, 2 times.
const std::map<std::int64_t, std::uint64_t> kValues10{{0, 3}, {1, 3}, {2, 2}, {3, 2}};

std::map<std::int64_t, std::uint64_t> counts(const probectl::AggrTable& t) {
    std::map<std::int64_t, std::uint64_t> m;
    for (const auto& e : t.entries)
        m[probectl::fetchedSigned(e.key.at(0).type, e.key.at(0).raw)] += e.count;
    return m;
}

std::string selfComm() {
    std::ifstream f("/proc/self/comm");
    std::string comm;
    std::getline(f, comm);
    return comm;
}

}  // namespace

TEST(RemovedProbe, TheOwnerKeepsTheCountersOfAProbeAnotherClientRemoved) {
    Client owner = itest::connectOrDie();
    auto first = heldLoop(1000, owner);
    ProbeRequest req;
    req.symbol = "__x64_sys_getppid";
    req.flags = PROBECTL_PROBE_F_SYSCALL;
    auto added = owner.addProbe(req);
    ASSERT_TRUE(added.ok()) << why(added);
    const std::uint32_t id = added->id;
    run(*first);

    Client admin = itest::connectOrDie();
    ASSERT_TRUE(admin.removeProbe(id).ok());
    // Hits after the removal are not the probe's.
    run(*heldLoop(500, owner));

    bool listed = false;
    for (const auto& p : itest::listOrDie(owner))
        if (p.id == id) {
            listed = true;
            EXPECT_EQ(p.hits, 1000u);
            EXPECT_EQ(p.removed_by, admin.portid());
            EXPECT_EQ(p.owner, owner.portid());
            EXPECT_TRUE(p.flags & PROBECTL_PROBE_F_REMOVED);
            EXPECT_FALSE(p.enabled());
            EXPECT_EQ(p.symbol, "__x64_sys_getppid");
        }
    EXPECT_TRUE(listed) << "the owner's list lost probe " << id;
    auto one = owner.getProbe(id);
    ASSERT_TRUE(one.ok()) << why(one);
    EXPECT_EQ(one->hits, 1000u);
    EXPECT_EQ(one->removed_by, admin.portid());

    // Nobody else sees it, and it cannot be removed twice.
    EXPECT_FALSE(itest::hasProbe(itest::listOrDie(admin), id));
    auto other = admin.getProbe(id);
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().err, ENOENT);
    auto again = owner.removeProbe(id);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().err, ENOENT);
}

// Its owner removing a probe keeps nothing: the owner knows.
TEST(RemovedProbe, ItsOwnersRemovalKeepsNothing) {
    Client owner = itest::connectOrDie();
    ProbeRequest req;
    req.symbol = "__x64_sys_getppid";
    auto added = owner.addProbe(req);
    ASSERT_TRUE(added.ok()) << why(added);
    ASSERT_TRUE(owner.removeProbe(added->id).ok());
    EXPECT_FALSE(itest::hasProbe(itest::listOrDie(owner), added->id));
    EXPECT_FALSE(owner.getProbe(added->id).ok());
}

// The CLI: trace and count end with the probe's counters at its removal and say why they
// stopped; count prints the table of the removed probe, which its session kept. trace's
// run ends by SIGTERM once the probe is removed (the debug kernel takes seconds to list);
// count's ends by itself, since no probe is left to count.
TEST(RemovedProbe, TraceAndCountSayAnotherClientRemovedTheirProbe) {
    for (const std::string cmd : {"trace syscall:getppid -o /dev/null", "count syscall:getppid"}) {
        const bool count = cmd.starts_with("count");
        const std::string script =
            "probectl " + cmd + " -- " + itest::workload("getppid_loop") +
            " 1000000000 >/dev/null 2>/tmp/removed.err & t=$!; id=; i=0; "
            "while [ -z \"$id\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
            "id=$(probectl list | awk '$2 == \"syscall\" { print $1; exit }'); done; "
            "sleep 1; probectl remove \"$id\" || echo REMOVE FAILED; " +
            (count ? "i=0; while kill -0 $t 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; "
                     "i=$((i+1)); done; kill -0 $t 2>/dev/null && echo STILL RUNNING; "
                   : "") +
            "kill $t; wait $t; echo status $?; cat /tmp/removed.err";
        auto r = itest::sh(script);
        SCOPED_TRACE(cmd + "\n" + r.out);
        EXPECT_EQ(r.out.find("REMOVE FAILED"), std::string::npos);
        EXPECT_EQ(r.out.find("STILL RUNNING"), std::string::npos);
        EXPECT_NE(r.out.find(count ? "status 0\n" : "status 143\n"), std::string::npos);
        if (count) {
            EXPECT_NE(r.out.find("probectl count: every probe was removed by another client: "
                                 "nothing left to count, the run ends\n"),
                      std::string::npos);
        }
        EXPECT_NE(r.out.find("was removed by another client, pid "), std::string::npos);
        EXPECT_EQ(r.out.find("not found"), std::string::npos);
        // count prints the kept table: the PROBE COUNT FILTERED row of syscall:getppid.
        if (count) {
            EXPECT_TRUE(
                std::regex_search(r.out, std::regex("syscall:getppid +[1-9][0-9]* +[0-9]+\n")));
        }
        EXPECT_EQ(r.out.find("has no table"), std::string::npos);
    }
}

// An aggregation whose probe another client removed keeps its map with the owner's session:
// the table reads (and clears) by the probe's id as it was at the removal, hits after it
// are not in it, nobody else can read it, and the remover is named by pid and comm. Before,
// the map was freed with the probe and the owner's table was lost.
TEST(RemovedProbe, TheOwnerStillReadsTheTableOfAnAggregationAnotherClientRemoved) {
    probectl::AggrSpec a;
    a.keys = {"k"};
    probectl::SessionOptions o;
    o.prepare = [&a](ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::prepareAggregation(a, req, args);
    };
    std::optional<probectl::Session> s;
    {
        auto opened = probectl::Session::open(o);
        ASSERT_TRUE(opened.ok()) << why(opened);
        s.emplace(std::move(*opened));
    }
    auto added = s->add("uprobe:" + itest::workload("aggr_target") + ":ag_val k=$arg1:s64");
    ASSERT_TRUE(added.ok()) << why(added);
    const probectl::SessionProbe p = s->probes().at(0);
    const std::uint32_t id = p.id;
    aggrValues(10);
    auto read = [&](probectl::Client& c, bool clear = false) {
        return probectl::readAggregation(c, id, p.resolution.request, p.fetch_args, clear);
    };
    auto before = read(s->client());
    ASSERT_TRUE(before.ok()) << why(before);
    EXPECT_EQ(counts(*before), kValues10);

    Client admin = itest::connectOrDie();
    ASSERT_TRUE(admin.removeProbe(id).ok());
    aggrValues(8);  // not the probe's any more

    auto after = read(s->client());
    ASSERT_TRUE(after.ok()) << why(after);
    EXPECT_EQ(counts(*after), kValues10) << "the table read after the removal";
    EXPECT_EQ(counts(*after), counts(*before));
    ASSERT_TRUE(after->read_counts.has_value());
    EXPECT_EQ(after->read_counts->hits, 10u);
    EXPECT_EQ(after->keys, 4u);
    EXPECT_EQ(after->overflow + after->nested + after->faulted, 0u);

    auto info = s->client().getProbe(id);
    ASSERT_TRUE(info.ok()) << why(info);
    EXPECT_EQ(info->removed_by, admin.portid());
    EXPECT_EQ(info->removed_by_pid, static_cast<std::uint32_t>(::getpid()));
    EXPECT_EQ(info->removed_by_comm, selfComm());
    auto stats = s->stats();
    ASSERT_TRUE(stats.ok()) << why(stats);
    ASSERT_EQ(stats->notes.size(), 1u);
    EXPECT_NE(stats->notes[0].find(fmt::format("was removed by another client, pid {} ({})",
                                               ::getpid(), selfComm())),
              std::string::npos)
        << stats->notes[0];

    // The owner's alone.
    auto other = read(admin);
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().err, ENOENT);

    // A clearing read has it all once; the next one has nothing left.
    auto cleared = read(s->client(), true);
    ASSERT_TRUE(cleared.ok()) << why(cleared);
    EXPECT_EQ(counts(*cleared), kValues10);
    auto empty = read(s->client(), true);
    ASSERT_TRUE(empty.ok()) << why(empty);
    EXPECT_TRUE(empty->entries.empty());
    ASSERT_TRUE(empty->read_counts.has_value());
    EXPECT_EQ(empty->read_counts->hits, 10u) << "the probe's counters stay final";

    // The session's end frees it (kmemleak on the debug kernel checks the freeing).
    s.reset();
    Client later = itest::connectOrDie();
    auto gone = read(later);
    ASSERT_FALSE(gone.ok());
    EXPECT_EQ(gone.error().err, ENOENT);
}

// The kept map still holds its memory, so it stays charged to the owner's max_map_kb until
// the session ends: another client's removal must not let the owner exceed its budget.
TEST(RemovedProbe, AKeptMapStaysChargedToItsSession) {
    itest::ModuleParam lim("max_map_kb", "1024");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    Client owner = itest::connectOrDie();
    std::vector<std::uint32_t> ids;
    bool full = false;
    for (int i = 0; i < 64 && !full; i++) {
        auto r = owner.addProbe(itest::pidMapProbe(512));
        if (r.ok())
            ids.push_back(r->id);
        else
            full = r.error().err == ENOSPC;
    }
    ASSERT_TRUE(full) << "64 maps of 512 keys fit in 1 MiB";
    ASSERT_GE(ids.size(), 2u);
    Client admin = itest::connectOrDie();
    ASSERT_TRUE(admin.removeProbe(ids.back()).ok());
    auto still = owner.addProbe(itest::pidMapProbe(512));
    ASSERT_FALSE(still.ok()) << "the removed probe's kept map was uncharged";
    EXPECT_EQ(still.error().err, ENOSPC);
    // Its own removal frees its map, and the budget with it.
    ASSERT_TRUE(owner.removeProbe(ids.front()).ok());
    auto again = owner.addProbe(itest::pidMapProbe(512));
    EXPECT_TRUE(again.ok()) << why(again);
}

// The CLI: count --by k of a probe another client removed prints the kept table, exact, and
// warns that it ends at the removal, naming the remover (probectl remove) by pid and comm.
// With every probe removed the run ends by itself (a SIGTERM sent as well, as this test
// once did, could reach probectl as it exited: status 143 on the debug kernel). Polled: a
// background watchdog's sleep would hold the output pipe open for its whole minute.
TEST(RemovedProbe, CountPrintsTheTableOfARemovedProbe) {
    const std::string target = itest::workload("aggr_target");
    const std::string script =
        "probectl count 'uprobe:" + target +
        ":ag_val k=$arg1:s64' --by k >/tmp/kept.out 2>/tmp/kept.err & t=$!; id=; i=0; "
        "while [ -z \"$id\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
        "id=$(probectl list | awk '$2 == \"uprobe\" { print $1; exit }'); done; " +
        target + " values 10 >/dev/null; probectl remove \"$id\" || echo REMOVE FAILED; " + target +
        " values 8 >/dev/null; i=0; while kill -0 $t 2>/dev/null && [ $i -lt 600 ]; do "
        "sleep 0.1; i=$((i+1)); done; kill -0 $t 2>/dev/null && echo STILL RUNNING; kill $t; "
        "wait $t; echo status $?; cat /tmp/kept.out; echo STDERR; cat /tmp/kept.err";
    auto r = itest::sh(script);
    SCOPED_TRACE(r.out);
    EXPECT_EQ(r.out.find("REMOVE FAILED"), std::string::npos);
    EXPECT_EQ(r.out.find("STILL RUNNING"), std::string::npos) << "60 s after every probe went";
    EXPECT_NE(r.out.find("status 0"), std::string::npos);
    EXPECT_NE(r.out.find("every probe was removed by another client: nothing left to count, the "
                         "run ends"),
              std::string::npos);
    const std::string out = r.out.substr(0, r.out.find("STDERR"));
    // The key rows: "K COUNT", one per key, as counted before the removal.
    for (const auto& [k, n] : kValues10)
        EXPECT_TRUE(std::regex_search(out, std::regex(fmt::format("(^|\n) *{} +{} *(\n|$)", k, n))))
            << "key " << k << " count " << n;
    EXPECT_EQ(r.out.find("has no table"), std::string::npos);
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex("was removed by another client, pid [0-9]+ \\(probectl\\), during the "
                          "trace: its counters \\(and table\\) are those at its removal")));
}

// --interval: the read-out where the removal is noticed has the probe's last table and says
// so once, naming the remover; the later ones leave the probe out instead of printing empty
// tables without a word. Several probes: the PROBE COUNT table has the removed probe's hits.
// The end said it a second time, as a run without --interval says it (seen failing: two
// warnings for the one removal).
TEST(RemovedProbe, CountIntervalsSayOnceThatTheProbeWasRemoved) {
    const std::string target = itest::workload("aggr_target");
    const std::string script =
        "probectl count 'uprobe:" + target + ":ag_val' 'uprobe:" + target +
        ":ag_str' --interval 0.3 >/tmp/kept.out 2>/tmp/kept.err & t=$!; id=; i=0; "
        "while [ -z \"$id\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
        "id=$(probectl list | awk '$2 == \"uprobe\" && /ag_val/ { print $1; exit }'); done; " +
        target +
        " values 10 >/dev/null; sleep 1; probectl remove \"$id\" || echo REMOVE FAILED; "
        "sleep 1.5; kill $t; wait $t; echo status $?; cat /tmp/kept.out; echo STDERR; "
        "cat /tmp/kept.err";
    auto r = itest::sh(script);
    SCOPED_TRACE(r.out);
    EXPECT_EQ(r.out.find("REMOVE FAILED"), std::string::npos);
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex("was removed by another client, pid [0-9]+ \\(probectl\\): its table "
                          "above ends at the removal; the next read-outs leave it out\n")));
    const std::string said = "was removed by another client";
    const auto first = r.out.find(said);
    ASSERT_NE(first, std::string::npos);
    EXPECT_EQ(r.out.find(said, first + 1), std::string::npos) << "said once";
    const std::string out = r.out.substr(0, r.out.find("STDERR"));
    // ag_val's 10 hits are in the read-outs' PROBE COUNT tables (one, unless a read-out
    // fell while the workload ran)...
    const std::string row = fmt::format("uprobe:{}:ag_val", target);
    const std::regex counted(
        std::regex_replace(row, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + " +([0-9]+)\n");
    std::uint64_t hits = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), counted);
         it != std::sregex_iterator(); ++it)
        hits += std::stoull((*it)[1]);
    EXPECT_EQ(hits, 10u);
    // ...and no read-out after the removal was noticed lists it: the last read-out holds
    // only ag_str, hidden with no hits.
    const auto last = out.rfind("PROBE");
    ASSERT_NE(last, std::string::npos);
    EXPECT_EQ(out.find(row, last), std::string::npos) << out.substr(last);
}

// hist --interval once another client removed its only probe: it went on printing empty
// read-outs (the time of day alone) until a signal; now it ends, saying why. An interval
// without hits said "1 key" (the key the map still holds) over an empty table; a keyed map
// (--by comm: a map without keys has no such line).
TEST(RemovedProbe, IntervalsEndOnceEveryProbeWasRemoved) {
    const std::string target = itest::workload("aggr_target");
    const std::string script =
        "rm -f /tmp/gone.err; probectl hist 'uprobe:" + target +
        ":ag_val v=$arg2:s64' v --by comm --interval 0.3 >/tmp/gone.out 2>/tmp/gone.err & t=$!; "
        "id=; "
        "i=0; while { [ -z \"$id\" ] || ! grep -q Aggregating /tmp/gone.err; } && "
        "[ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
        "id=$(probectl list | awk '$2 == \"uprobe\" && /ag_val/ { print $1; exit }'); done; " +
        target +
        " values 10 >/dev/null; sleep 1; probectl remove \"$id\" || echo REMOVE FAILED; i=0; "
        "while kill -0 $t 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
        "kill -0 $t 2>/dev/null && { echo STILL RUNNING; kill $t; }; wait $t; echo status $?; "
        "cat /tmp/gone.out; echo STDERR; cat /tmp/gone.err";
    auto r = itest::sh(script);
    SCOPED_TRACE(r.out);
    EXPECT_EQ(r.out.find("REMOVE FAILED"), std::string::npos);
    EXPECT_EQ(r.out.find("STILL RUNNING"), std::string::npos);
    EXPECT_NE(r.out.find("status 0\n"), std::string::npos);
    EXPECT_NE(r.out.find("probectl hist: every probe was removed by another client: nothing "
                         "left to count, the run ends\n"),
              std::string::npos);
    const std::string out = r.out.substr(0, r.out.find("STDERR"));
    // The 10 hits, then intervals without any: the key the map holds is not the table's.
    EXPECT_NE(out.find("0 keys (1 held in the map, capacity "), std::string::npos);
    for (std::size_t at = 0, end; at < out.size(); at = end + 2) {
        end = std::min(out.find("\n\n", at), out.size());
        const std::string block = out.substr(at, end - at);
        if (block.find(" hits 0,") != std::string::npos) {
            EXPECT_EQ(block.find("1 key ("), std::string::npos) << block;
        }
    }
    // No read-out is the time of day alone.
    EXPECT_FALSE(std::regex_search(out, std::regex("[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\n\n")));
}

namespace {

// `probectl count SPECS OPTIONS --format json` system-wide, with `before` run once both probes
// are attached, then the first probe (the one whose list line matches `first`, an awk
// pattern) removed by `probectl remove`, then `after`, then SIGTERM: the JSON lines, then
// "STDERR" and count's stderr.
std::string countRemovingTheFirst(const std::string& specs, const std::string& first,
                                  const std::string& before, const std::string& after) {
    const std::string script =
        "rm -f /tmp/kept-stacks.err; probectl count " + specs +
        " --format json -o /tmp/kept-stacks.json 2>/tmp/kept-stacks.err & t=$!; id=; i=0; "
        "while { [ -z \"$id\" ] || ! grep -q Aggregating /tmp/kept-stacks.err; } && "
        "[ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
        "id=$(probectl list | awk '" +
        first + " { print $1; exit }'); done; " + before +
        " >/dev/null; probectl remove \"$id\" || echo REMOVE FAILED; " + after +
        " >/dev/null; kill $t; wait $t; echo status $?; cat /tmp/kept-stacks.json; "
        "echo STDERR; cat /tmp/kept-stacks.err";
    return itest::sh(script).out;
}

// The table of probe `spec` among count's JSON lines; null when there is none.
nlohmann::json tableOf(const std::string& out, const std::string& spec) {
    for (auto& t : itest::jsonLines(out, "aggregation"))
        if (t.value("probe", "") == spec)
            return t;
    return nullptr;
}

// Every entry's `key` stack (kstack, ustack) as frame texts; the counts add up to `calls`.
std::vector<std::vector<std::string>> stacksOf(const nlohmann::json& table, const std::string& key,
                                               std::uint64_t calls) {
    std::vector<std::vector<std::string>> out;
    std::uint64_t sum = 0;
    for (const auto& e : table["entries"]) {
        sum += e["count"].get<std::uint64_t>();
        EXPECT_TRUE(e[key].is_array()) << e.dump();
        out.push_back(e[key].is_array() ? e[key].get<std::vector<std::string>>()
                                        : std::vector<std::string>{});
    }
    EXPECT_EQ(sum, calls) << table.dump();
    return out;
}

// A kernel stack's innermost frame is one of `leaf` and it has the syscall entry.
void expectSyscallStack(const std::vector<std::string>& frames,
                        const std::vector<std::string>& leaf) {
    ASSERT_FALSE(frames.empty());
    const std::string inner = itest::frameName(frames.front());
    EXPECT_NE(std::find(leaf.begin(), leaf.end(), inner), leaf.end()) << inner;
    EXPECT_TRUE(std::any_of(frames.begin(), frames.end(), [](const std::string& f) {
        return itest::frameName(f) == "do_syscall_64";
    }));
}

}  // namespace

// count --by kstack: the stacks of a probe another client removed are named like the
// others, read through its id from the session's stack map, which stays with the session;
// calls after the removal are not in its table. Before, its rows read "[stack not kept:
// stack map full]" (text) or null (JSON): the stack read-out by its id was refused.
TEST(RemovedProbe, CountByKstackNamesTheStacksOfARemovedProbe) {
    const int n = itest::debugKernel() ? 20 : 300;
    const std::string loop = itest::workload("getppid_loop") + " " + std::to_string(n);
    const std::string out = countRemovingTheFirst(
        "kprobe:__x64_sys_getppid kprobe:__x64_sys_exit_group --by kstack --comm getppid_loop",
        "$1 ~ /^[0-9]/ && /getppid/", loop, loop);
    SCOPED_TRACE(out);
    EXPECT_EQ(out.find("REMOVE FAILED"), std::string::npos);
    EXPECT_NE(out.find("status 0"), std::string::npos) << "SIGTERM of a system-wide count";
    EXPECT_NE(out.find("was removed by another client, pid "), std::string::npos);
    EXPECT_EQ(out.find("[stack"), std::string::npos) << "a stack not named";

    const auto removed = tableOf(out, "kprobe:__x64_sys_getppid");
    ASSERT_TRUE(removed.is_object());
    for (const auto& frames : stacksOf(removed, "kstack", static_cast<std::uint64_t>(n)))
        expectSyscallStack(frames, {"__x64_sys_getppid", "__do_sys_getppid"});
    // The probe that stayed: both runs' exits.
    const auto kept = tableOf(out, "kprobe:__x64_sys_exit_group");
    ASSERT_TRUE(kept.is_object());
    for (const auto& frames : stacksOf(kept, "kstack", 2))
        expectSyscallStack(frames, {"__x64_sys_exit_group", "__do_sys_exit_group"});
}

// count --by ustack of uprobes: the removed probe's user stacks are named from the address
// space the session kept for the process (read through the removed probe's id too), after
// the process has exited.
TEST(RemovedProbe, CountByUstackNamesTheStacksOfARemovedProbe) {
    const int n = itest::debugKernel() ? 10 : 100;
    const std::string w = itest::workload("ustack_fp");
    const std::string run = w + " " + std::to_string(n) + " now";
    const std::string out =
        countRemovingTheFirst("uprobe:" + w + ":leaf uprobe:" + w + ":mid --by ustack",
                              "$2 == \"uprobe\" && /:leaf/", run, run);
    SCOPED_TRACE(out);
    EXPECT_EQ(out.find("REMOVE FAILED"), std::string::npos);
    EXPECT_NE(out.find("status 0"), std::string::npos);
    EXPECT_NE(out.find("was removed by another client, pid "), std::string::npos);
    EXPECT_EQ(out.find("[stack"), std::string::npos) << "a stack not named";

    const auto removed = tableOf(out, "uprobe:" + w + ":leaf");
    ASSERT_TRUE(removed.is_object());
    for (const auto& frames : stacksOf(removed, "ustack", static_cast<std::uint64_t>(n)))
        EXPECT_EQ(itest::workloadFrames(frames, w), itest::kChain);
    const auto kept = tableOf(out, "uprobe:" + w + ":mid");
    ASSERT_TRUE(kept.is_object());
    const std::vector<std::string> from_mid(itest::kChain.begin() + 1, itest::kChain.end());
    for (const auto& frames : stacksOf(kept, "ustack", 2u * static_cast<std::uint64_t>(n)))
        EXPECT_EQ(itest::workloadFrames(frames, w), from_mid);
}
