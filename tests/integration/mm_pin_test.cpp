// User stacks of processes that exit before probectl reads their maps: the module keeps the
// address space of a process whose user stack a probe captured (mm_pin.c) until probectl
// reads its mappings (MAPS_GET), so the stacks are still symbolized. The records are held
// in the kernel for seconds (drain_interval_ms) so that the workload, which exits at once,
// is surely gone when they are read. More processes than the kernel keeps at once: the
// rest are counted and said, nothing breaks.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "stack_text.hpp"
#include "uapi/probectl.h"

using itest::Ran;
using itest::sh;

using Param = itest::ModuleParam;

namespace {

using itest::frameName;
using itest::kChain;

std::vector<nlohmann::json> events(const std::string& text) {
    std::vector<nlohmann::json> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        auto j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
        if (!j.is_discarded() && j.value("type", "") == "event")
            out.push_back(std::move(j));
    }
    return out;
}

// The chain's functions among the frames in the workload's file, in their order (DWARF
// also reaches _start, frame pointers stop at main).
std::vector<std::string> workloadNames(const std::vector<std::string>& frames,
                                       const std::string& w) {
    std::vector<std::string> out;
    for (const auto& f : frames)
        if (f.ends_with("(" + w + ")") &&
            std::find(kChain.begin(), kChain.end(), frameName(f)) != kChain.end())
            out.push_back(frameName(f));
    return out;
}

// Records wait in the kernel this long unless a quarter of the ring fills.
constexpr const char* kSlowDrainMs = "60000";

}  // namespace

// trace --ustack (frame pointers) and --ustack=dwarf: every event of the process, gone
// long before, has the whole chain, and no line says its maps were missing.
TEST(MmPin, TraceSymbolizesAProcessThatExitedAtOnce) {
    Param slow("drain_interval_ms", kSlowDrainMs);
    ASSERT_TRUE(slow.ok());
    for (const std::string mode : {"--ustack", "--ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string w = itest::workload(mode == "--ustack" ? "ustack_fp" : "ustack_nofp");
        const std::string file = "/tmp/mm-pin-trace.json";
        Ran r = sh("probectl trace uprobe:" + w + ":leaf " + mode + " --format json -o " + file +
                   " -- " + w + " 3 now");
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        const auto evs = events(text);
        ASSERT_EQ(evs.size(), 3u) << text << r.out;
        for (const auto& ev : evs) {
            ASSERT_TRUE(ev["ustack"].is_array()) << ev.dump();
            const auto frames = ev["ustack"].get<std::vector<std::string>>();
            EXPECT_EQ(workloadNames(frames, w), kChain) << ev.dump();
            for (const auto& f : frames)
                EXPECT_EQ(f.find("no maps"), std::string::npos) << ev.dump();
        }
        EXPECT_EQ(r.out.find("maps were not kept"), std::string::npos) << r.out;
    }
}

// count --by ustack, both modes: the one stack of the short process is its whole chain.
TEST(MmPin, CountByUstackOfAProcessThatExitedAtOnce) {
    for (const std::string mode : {"", " --ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string w = itest::workload(mode.empty() ? "ustack_fp" : "ustack_nofp");
        const std::string file = "/tmp/mm-pin-count.folded";
        Ran r = sh("probectl count uprobe:" + w + ":leaf --by ustack" + mode +
                   " --format folded -o " + file + " -- " + w + " 5 now");
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        // root first: main;top;mid;leaf, each "NAME... (w)"
        std::vector<std::string> names;
        const std::string line = text.substr(0, text.find('\n'));
        for (std::size_t b = 0, e; b < line.size(); b = e + 1) {
            e = std::min(line.find(';', b), line.rfind(' '));
            const std::string f = line.substr(b, e - b);
            if (f.ends_with("(" + w + ")") &&
                std::find(kChain.begin(), kChain.end(), frameName(f)) != kChain.end())
                names.push_back(frameName(f));
            if (e == line.rfind(' '))
                break;
        }
        std::reverse(names.begin(), names.end());
        EXPECT_EQ(names, kChain) << text << r.out;
        EXPECT_NE(line.substr(line.rfind(' ') + 1), "") << text;
        EXPECT_EQ(std::stoull(line.substr(line.rfind(' ') + 1)), 5u) << text;
    }
}

// More short processes than the kernel keeps at once, their records held back until the
// end: the first PROBECTL_MM_PIN_SLOTS are symbolized, the others' hits are counted and the
// summary says how many; no crash, and the trace ends normally.
TEST(MmPin, MoreProcessesThanSlotsAreCountedAndSaid) {
    Param slow("drain_interval_ms", kSlowDrainMs);
    ASSERT_TRUE(slow.ok());
    const std::string w = itest::workload("ustack_fp");
    const int procs = PROBECTL_MM_PIN_SLOTS + 20;
    const std::string file = "/tmp/mm-pin-many.json";
    Ran r =
        sh(fmt::format("probectl trace uprobe:{}:leaf --ustack --format json -o {} -f -- "
                       "sh -c 'i=0; while [ $i -lt {} ]; do {} 1 now; i=$((i+1)); done'",
                       w, file, procs, w));
    ASSERT_EQ(r.status, 0) << r.out;
    const auto evs = events(itest::readFile(file));
    ASSERT_EQ(evs.size(), static_cast<std::size_t>(procs)) << r.out;
    int named = 0;
    for (const auto& ev : evs) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        named += workloadNames(frames, w) == kChain;
    }
    EXPECT_EQ(named, PROBECTL_MM_PIN_SLOTS) << r.out;
    EXPECT_NE(r.out.find(fmt::format("{} hits in processes whose maps were not kept",
                                     procs - PROBECTL_MM_PIN_SLOTS)),
              std::string::npos)
        << r.out;
}

// A session that ends with address spaces still kept lets them go: the tracer is killed with
// two kept, and a new session works. A reference left behind would leave an address space
// nothing points to, which the debug kernel's kmemleak scan (after the suite's rmmod)
// reports.
TEST(MmPin, KeptAddressSpacesGoWithTheSession) {
    Param slow("drain_interval_ms", kSlowDrainMs);
    ASSERT_TRUE(slow.ok());
    const std::string w = itest::workload("ustack_fp");
    Ran k = sh("probectl trace uprobe:" + w + ":leaf --ustack -o /dev/null -- sh -c '" + w +
               " 2 now; " + w +
               " 2 now; sleep 8' >/dev/null 2>&1 & pid=$!; sleep 5; kill -9 $pid; "
               "wait $pid; echo killed $?");
    EXPECT_NE(k.out.find("killed 137"), std::string::npos) << k.out;
    Ran t = sh("probectl trace uprobe:" + w + ":leaf --ustack -o /dev/null -- " + w + " 2 now");
    EXPECT_EQ(t.status, 0) << t.out;
}
