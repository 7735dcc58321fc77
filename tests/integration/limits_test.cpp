// The module's per-session limits (max_probes, max_map_kb, max_sessions): a request over one
// fails with ENOSPC naming the parameter and how to raise it, removing or closing gives the
// budget back, and the CLI says the same. Each test lowers a parameter and restores it.
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "uapi/probectl.h"

using itest::why;
using ::testing::HasSubstr;

namespace {

// Closed sessions' kprobes are unregistered by a work item that every request waits for:
// one request, then the kprobe list is current.
std::vector<std::string> kprobesNowListed(const std::string& symbol) {
    auto c = itest::connectOrDie();
    itest::listOrDie(c);
    return itest::kprobesListed(symbol);
}

probectl::ProbeRequest kprobe(const std::string& sym) {
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Kprobe;
    req.symbol = sym;
    return req;
}

void expectLimit(const probectl::Result<probectl::AddedProbe>& r, const std::string& name) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, ENOSPC) << why(r);
    EXPECT_THAT(r.error().extack, HasSubstr("(limit: " + name + ")"));
    EXPECT_THAT(r.error().describe(), HasSubstr("/sys/module/probectl/parameters/" + name));
}

}  // namespace

TEST(Limits, MaxProbesRefusesTheNextProbeAndRemovalGivesItBack) {
    itest::ModuleParam lim("max_probes", "3");
    ASSERT_TRUE(lim.ok()) << "max_probes";
    auto c = itest::connectOrDie();
    std::vector<std::uint32_t> ids;
    for (const char* sym : {"vfs_read", "vfs_write", "vfs_open"}) {
        auto r = c.addProbe(kprobe(sym));
        ASSERT_TRUE(r.ok()) << sym << ": " << why(r);
        ids.push_back(r->id);
    }
    auto over = c.addProbe(kprobe("vfs_fsync"));
    expectLimit(over, "max_probes");
    EXPECT_THAT(over.error().extack, HasSubstr("session holds 3 probes"));
    // The refused probe was never armed.
    EXPECT_TRUE(kprobesNowListed("vfs_fsync").empty());
    // Another session has its own budget.
    auto other = itest::connectOrDie();
    auto r = other.addProbe(kprobe("vfs_fsync"));
    EXPECT_TRUE(r.ok()) << why(r);
    ASSERT_TRUE(c.removeProbe(ids.back()).ok());
    r = c.addProbe(kprobe("vfs_fsync"));
    EXPECT_TRUE(r.ok()) << why(r);
}

TEST(Limits, PersistentProbesShareOneBudget) {
    itest::ModuleParam lim("max_probes", "2");
    ASSERT_TRUE(lim.ok()) << "max_probes";
    std::vector<std::uint32_t> ids;
    {
        auto c = itest::connectOrDie();
        for (const char* sym : {"vfs_read", "vfs_write"}) {
            auto req = kprobe(sym);
            req.flags = PROBECTL_PROBE_F_PERSISTENT;
            auto r = c.addProbe(req);
            ASSERT_TRUE(r.ok()) << why(r);
            ids.push_back(r->id);
        }
    }
    auto c = itest::connectOrDie();
    auto req = kprobe("vfs_open");
    req.flags = PROBECTL_PROBE_F_PERSISTENT;
    auto over = c.addProbe(req);
    expectLimit(over, "max_probes");
    EXPECT_THAT(over.error().extack, HasSubstr("2 persistent probes exist"));
    for (auto id : ids)
        EXPECT_TRUE(c.removeProbe(id).ok());
    auto r = c.addProbe(req);
    ASSERT_TRUE(r.ok()) << why(r);
    EXPECT_TRUE(c.removeProbe(r->id).ok());
}

TEST(Limits, MaxMapKbRefusesAnOversizedMapAndTheSessionsTotal) {
    itest::ModuleParam lim("max_map_kb", "1024");
    ASSERT_TRUE(lim.ok()) << "max_map_kb";
    auto c = itest::connectOrDie();
    // One map alone over the limit: refused before anything is allocated.
    auto big = c.addProbe(itest::pidMapProbe(65536));
    expectLimit(big, "max_map_kb");
    EXPECT_THAT(big.error().extack, HasSubstr("map of "));
    EXPECT_TRUE(kprobesNowListed("vfs_read").empty());
    // Small maps until the session's total is over: some fit, then one is refused.
    std::vector<std::uint32_t> ids;
    std::optional<probectl::Result<probectl::AddedProbe>> refused;
    for (int i = 0; i < 64 && !refused; i++) {
        auto r = c.addProbe(itest::pidMapProbe(512));
        if (r.ok())
            ids.push_back(r->id);
        else
            refused = std::move(r);
    }
    ASSERT_TRUE(refused.has_value()) << "64 maps of 512 keys fit in 1 MiB";
    EXPECT_GE(ids.size(), 1u);
    expectLimit(*refused, "max_map_kb");
    EXPECT_THAT(refused->error().extack, HasSubstr("maps need "));
    // Removing one gives its memory back.
    ASSERT_TRUE(c.removeProbe(ids.back()).ok());
    auto again = c.addProbe(itest::pidMapProbe(512));
    EXPECT_TRUE(again.ok()) << why(again);
}

TEST(Limits, MaxSessionsRefusesTheNextSessionAndCloseGivesItBack) {
    itest::ModuleParam lim("max_sessions", "1");
    ASSERT_TRUE(lim.ok()) << "max_sessions";
    const std::vector<std::uint32_t> me{static_cast<std::uint32_t>(getpid())};
    {
        auto first = itest::connectOrDie();
        auto r = first.setSessionTgids(me);
        ASSERT_TRUE(r.ok()) << why(r);
        auto second = itest::connectOrDie();
        auto refused = second.setSessionTgids(me);
        ASSERT_FALSE(refused.ok());
        EXPECT_EQ(refused.error().err, ENOSPC);
        EXPECT_THAT(refused.error().extack, HasSubstr("(limit: max_sessions)"));
        EXPECT_THAT(refused.error().describe(), HasSubstr("parameters/max_sessions"));
    }
    // Both sockets closed: the next session fits again.
    auto third = itest::connectOrDie();
    auto r = third.setSessionTgids(me);
    EXPECT_TRUE(r.ok()) << why(r);
}

TEST(Limits, TheCliNamesTheParameter) {
    itest::ModuleParam lim("max_probes", "2");
    ASSERT_TRUE(lim.ok()) << "max_probes";
    auto ran = itest::sh(
        "probectl trace 'kprobe:vfs_read' 'kprobe:vfs_write' 'kprobe:vfs_open' "
        "--duration 1 2>&1");
    EXPECT_EQ(ran.status, 1) << ran.out;
    EXPECT_THAT(ran.out, HasSubstr("max_probes"));
    EXPECT_THAT(ran.out, HasSubstr("/sys/module/probectl/parameters/max_probes"));
    EXPECT_TRUE(kprobesNowListed("vfs_read").empty()) << "left armed after the refusal";
}

// A glob over the limit attaches what fits, and its summary names the limit: the refusals
// once read "N refused by the kernel", the parameter only under -v.
TEST(Limits, AGlobOverALimitSaysWhichInItsSummary) {
    itest::ModuleParam lim("max_probes", "3");
    ASSERT_TRUE(lim.ok()) << "max_probes";
    auto ran = itest::sh("probectl count 'kprobe:vfs_*' --duration 0.5 2>&1");
    EXPECT_EQ(ran.status, 0) << ran.out;
    EXPECT_THAT(ran.out, ::testing::ContainsRegex(
                             "kprobe:vfs_\\*: attached 3 of [0-9]+; [0-9]+ refused: [0-9]+ over "
                             "the module's max_probes limit"))
        << ran.out;
}
