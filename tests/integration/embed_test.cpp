// examples/probectl-count, built by `make check-install` against the staged install (once
// through pkg-config, once through find_package) into build/tests/integration/embed/, so
// the suite copies both builds (and the staged libprobectl.so.0 they run with) into the VM.
// Also `probectl --version` against the loaded module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "itest_util.hpp"
#include "probectl/version.hpp"
#include "uapi/probectl.h"

using ::testing::HasSubstr;

namespace {

// EVENTS and HITS of the summary line of `spec`, or {-1, -1}.
std::pair<long, long> countsOf(const std::string& out, const std::string& spec) {
    std::smatch m;
    const std::regex line("(^|\n)" +
                          std::regex_replace(spec, std::regex(R"([.^$|()\[\]*+?{}\\])"), R"(\$&)") +
                          R"( +([0-9]+) +([0-9]+)\n)");
    if (!std::regex_search(out, m, line))
        return {-1, -1};
    return {std::stol(m[2]), std::stol(m[3])};
}

void runExample(const char* build) {
    const std::string bin = std::string(PROBECTL_EMBED_DIR) + "/probectl-count-" + build;
    if (!std::filesystem::exists(bin))
        GTEST_SKIP() << bin << " not built: make check-install builds it";
    const std::string target = itest::workload("uprobe_target");
    const std::string kspec = "kprobe:do_sys_openat2";
    const std::string uspec = "uprobe:" + target + ":pc_add";
    const itest::Ran r = itest::sh(bin + " " + kspec + " " + uspec + " -- " + target + " calls 5");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("libprobectl " PROBECTL_VERSION_STRING
                                 " (built against " PROBECTL_VERSION_STRING ")"));
    // pc_add runs exactly 5 times; the workload's exec opens at least its libc.
    const auto [uev, uhits] = countsOf(r.out, uspec);
    EXPECT_EQ(uev, 5) << r.out;
    EXPECT_EQ(uhits, 5) << r.out;
    const auto [kev, khits] = countsOf(r.out, kspec);
    EXPECT_GE(kev, 1) << r.out;
    EXPECT_EQ(kev, khits) << r.out;
    EXPECT_THAT(r.out, HasSubstr("command exit status 0"));
}

}  // namespace

TEST(Embed, ExampleBuiltWithPkgConfigCountsKprobeAndUprobe) {
    runExample("pkgconfig");
}

TEST(Embed, ExampleBuiltWithFindPackageCountsKprobeAndUprobe) {
    runExample("cmake");
}

TEST(Embed, VersionNamesTheLoadedModule) {
    const itest::Ran r = itest::sh("probectl --version");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("libprobectl " PROBECTL_VERSION_STRING ", protocol " +
                                 std::to_string(PROBECTL_GENL_VERSION)));
    EXPECT_THAT(r.out, HasSubstr("\nprobectl.ko " PROBECTL_VERSION_STRING ", protocol " +
                                 std::to_string(PROBECTL_GENL_VERSION) + "\n"));
    EXPECT_EQ(itest::readFile("/sys/module/probectl/version"), PROBECTL_VERSION_STRING "\n");
}
