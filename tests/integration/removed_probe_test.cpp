// A probe removed by another client (CAP_SYS_ADMIN may remove anyone's) while its session
// traces: the owner keeps the probe's final counters and is told, instead of reading zero
// hits and zero drops for a probe that fired.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/client.hpp"
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
// stopped; count's table of the removed probe is gone with its map, which it says too. The
// run ends by SIGTERM once the probe is removed (the debug kernel takes seconds to list).
TEST(RemovedProbe, TraceAndCountSayAnotherClientRemovedTheirProbe) {
    for (const std::string cmd : {"trace syscall:getppid -o /dev/null", "count syscall:getppid"}) {
        const std::string script =
            "probectl " + cmd + " -- " + itest::workload("getppid_loop") +
            " 1000000000 >/dev/null 2>/tmp/removed.err & t=$!; id=; i=0; "
            "while [ -z \"$id\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
            "id=$(probectl list | awk '$2 == \"syscall\" { print $1; exit }'); done; "
            "sleep 1; probectl remove \"$id\" || echo REMOVE FAILED; kill $t; wait $t; "
            "echo status $?; cat /tmp/removed.err";
        auto r = itest::sh(script);
        SCOPED_TRACE(cmd + "\n" + r.out);
        EXPECT_EQ(r.out.find("REMOVE FAILED"), std::string::npos);
        EXPECT_NE(r.out.find("status 143"), std::string::npos);
        EXPECT_NE(r.out.find("was removed by another client"), std::string::npos);
        EXPECT_EQ(r.out.find("not found"), std::string::npos);
        const bool table_noted = r.out.find("has no table: its map was freed") != std::string::npos;
        EXPECT_EQ(table_noted, cmd.starts_with("count"));
    }
}
