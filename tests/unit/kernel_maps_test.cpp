// KernelMapsSource on the host, over a fake MAPS_GET: which probe it asks through, what it
// answers when the kernel has nothing, the unpinned counter, and its sources (for
// UserSymbolizer and SnapshotStacks) across a move.
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "probectl/kernel_maps.hpp"
#include "probectl/user_stacks.hpp"

using namespace probectl;

namespace {

// The module's side of MAPS_GET: address spaces kept per (tgid, maps_seq), each let go once
// read, and the session's unpinned counter; every request is logged as (probe, tgid).
struct FakeKernel {
    std::map<UserImage, std::string> kept;
    std::uint64_t unpinned = 0;
    bool fail = false;  // every request fails (a socket error)
    std::vector<std::pair<std::uint32_t, pid_t>> asked;
    std::vector<std::uint32_t> seqs;  // maps_seq of each request

    KernelMapsSource::Take take() {
        return [this](std::uint32_t probe, UserImage image,
                      std::uint64_t* out) -> Result<std::string> {
            asked.emplace_back(probe, image.tgid);
            seqs.push_back(image.maps_seq);
            if (fail)
                return makeError(ECONNRESET, "fake MAPS_GET");
            *out = unpinned;
            if (image.tgid == 0)
                return std::string();
            auto it = kept.find(image);
            if (it == kept.end())
                return makeError(ENOENT, fmt::format("nothing kept for {}", image.tgid));
            std::string text = std::move(it->second);
            kept.erase(it);
            return text;
        };
    }
};

const std::string kMaps = "55d0c0a00000-55d0c0a01000 r-xp 00000000 08:01 4242 /usr/bin/fake\n";
using Asked = std::vector<std::pair<std::uint32_t, pid_t>>;

}  // namespace

// Until a probe of the session is known there is nothing to ask through: no request, no
// maps (the symbolizer reads /proc), and the counter stays 0.
TEST(KernelMapsSource, AsksNothingBeforeAProbeIsKnown) {
    FakeKernel k;
    k.kept[UserImage(42, 1)] = kMaps;
    k.unpinned = 3;
    KernelMapsSource km(k.take());
    EXPECT_EQ(km.probe(), 0u);
    EXPECT_EQ(km.maps(UserImage(42, 1)), std::nullopt);
    EXPECT_EQ(km.refreshUnpinned(), 0u);
    EXPECT_TRUE(k.asked.empty());
}

// Maps are asked through the latest probe; 0 keeps it. The kernel lets an address space go
// once read, so a second request is ENOENT: none, and the caller falls back to /proc.
TEST(KernelMapsSource, TakesThroughTheLatestProbeOnce) {
    FakeKernel k;
    k.kept[UserImage(42, 1)] = kMaps;
    k.unpinned = 2;
    KernelMapsSource km(k.take());
    km.setProbe(7);
    km.setProbe(0);
    EXPECT_EQ(km.probe(), 7u);
    EXPECT_EQ(km.maps(UserImage(42, 1)), kMaps);
    EXPECT_EQ(km.unpinned(), 2u);
    EXPECT_EQ(km.maps(UserImage(42, 1)), std::nullopt);
    km.setProbe(9);
    EXPECT_EQ(km.maps(UserImage(43, 1)), std::nullopt);
    EXPECT_EQ(k.asked, (Asked{{7, 42}, {7, 42}, {9, 43}}));
}

// The counter alone is a request for tgid 0 (nothing let go); a failed request leaves the
// last count as it was.
TEST(KernelMapsSource, RefreshesTheUnpinnedCounter) {
    FakeKernel k;
    KernelMapsSource km(k.take());
    km.setProbe(5);
    k.unpinned = 4;
    EXPECT_EQ(km.refreshUnpinned(), 4u);
    EXPECT_EQ(k.asked, (Asked{{5, 0}}));
    k.fail = true;
    k.unpinned = 9;
    EXPECT_EQ(km.refreshUnpinned(), 4u);
    EXPECT_EQ(km.maps(UserImage(42, 1)), std::nullopt);
    EXPECT_EQ(km.unpinned(), 4u);
}

// SnapshotStacks's source names the event's probe with each request, which becomes the
// probe of later requests too (the end-of-run counter); 0 keeps the one before.
TEST(KernelMapsSource, ProbeSourceSetsTheProbe) {
    FakeKernel k;
    k.kept[UserImage(42, 1)] = kMaps;
    KernelMapsSource km(k.take());
    auto source = km.probeSource();
    EXPECT_EQ(source(11, UserImage(42, 1)), kMaps);
    EXPECT_EQ(source(0, UserImage(43, 1)), std::nullopt);
    EXPECT_EQ(km.probe(), 11u);
    (void)km.refreshUnpinned();
    EXPECT_EQ(k.asked, (Asked{{11, 42}, {11, 43}, {11, 0}}));
}

// As a UserSymbolizer's source: the kept maps of a process /proc does not have (it exited)
// are captured once a probe is known, and the source handed out before a move still serves
// the moved-to object's state.
TEST(KernelMapsSource, FeedsAUserSymbolizerAcrossAMove) {
    const auto proc =
        std::filesystem::temp_directory_path() / fmt::format("probectl-kmaps-{}", getpid());
    std::filesystem::create_directories(proc);  // holds no process at all
    FakeKernel k;
    k.kept[UserImage(42, 1)] = kMaps;
    KernelMapsSource first(k.take());
    UserSymbolizer sym(proc.string());
    sym.setMapsSource(first.source());
    EXPECT_FALSE(sym.capture(UserImage(42, 1)));  // no probe yet: /proc, which has none
    KernelMapsSource km(std::move(first));
    km.setProbe(3);
    EXPECT_TRUE(sym.capture(UserImage(42, 1)));
    EXPECT_TRUE(sym.hasMaps(UserImage(42, 1)));
    EXPECT_EQ(sym.frameText(UserImage(42, 1), 0x55d0c0a00010, false).find("[unknown]"),
              std::string::npos);
    EXPECT_EQ(k.asked, (Asked{{3, 42}}));
    std::filesystem::remove_all(proc);
}

// A process that execs keeps two address spaces under one tgid: each is taken by its own
// number (MAPS_GET maps-seq), the one before the exec too. A stack whose hit kept nothing
// (maps_seq 0) asks nothing: the newest would be taken, and every other one let go.
TEST(KernelMapsSource, TakesEachAddressSpaceOfATgidByItsNumber) {
    FakeKernel k;
    const std::string after = "7f0000000000-7f0000001000 r-xp 00000000 08:01 4243 /usr/bin/b\n";
    k.kept[UserImage(42, 1)] = kMaps;
    k.kept[UserImage(42, 2)] = after;
    KernelMapsSource km(k.take());
    km.setProbe(7);
    EXPECT_EQ(km.maps(42), std::nullopt);
    EXPECT_TRUE(k.asked.empty());
    EXPECT_EQ(km.maps(UserImage(42, 2)), after);
    EXPECT_EQ(km.maps(UserImage(42, 1)), kMaps);
    EXPECT_EQ(k.seqs, (std::vector<std::uint32_t>{2, 1}));
}
