// The CLI's lines on what a glob attached (attach.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attach.hpp"

namespace probectl::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

AttachReport report(std::size_t attached, std::vector<SkippedName> skipped) {
    AttachReport r;
    r.spec = "kprobe:*";
    r.glob = true;
    for (std::uint32_t i = 0; i < attached; ++i)
        r.ids.push_back(i + 1);
    r.skipped = std::move(skipped);
    r.matched = attached + r.skipped.size();
    return r;
}

// A glob cut short by a module limit once exited 0 saying only how many names the limit
// refused; what to change was under -v, per name. The summary line names it.
TEST(AttachSummary, NamesWhatToChangeForEachModuleLimit) {
    const AttachReport r = report(2, {{"a", "over the module's max_map_kb limit", "map of ..."},
                                      {"b", "over the module's max_map_kb limit", "map of ..."},
                                      {"c", "blacklisted", ""},
                                      {"d", "over the module's max_probes limit", "session ..."}});
    const std::string count = attachSummary(r, true);
    EXPECT_EQ(count,
              "kprobe:*: attached 2 of 6; 4 refused: 2 over the module's max_map_kb limit, 1 "
              "blacklisted, 1 over the module's max_probes limit; to attach more: raise the "
              "module parameter max_map_kb (echo N > /sys/module/probectl/parameters/max_map_kb) "
              "or lower --max-entries (each probe's map); raise the module parameter max_probes "
              "(echo N > /sys/module/probectl/parameters/max_probes) or narrow the glob");
    EXPECT_EQ(count.find('\n'), std::string::npos) << "one line";
    // trace -c has no --max-entries to lower.
    EXPECT_THAT(attachSummary(r, false), Not(HasSubstr("--max-entries")));
}

TEST(AttachSummary, NoAdviceWithoutALimit) {
    const AttachReport r =
        report(8, {{"do_syscall_64", "blacklisted", ""}, {"x", "refused by the kernel", "EINVAL"}});
    EXPECT_EQ(attachSummary(r, true), r.summary());
    EXPECT_THAT(attachSummary(r, true), Not(HasSubstr("to attach more")));
    EXPECT_EQ(attachSummary(report(3, {}), true), "kprobe:*: attached 3 of 3");
}

}  // namespace
}  // namespace probectl::cli
