// User-space function names the source has but the file does not: compiler clones
// (workloads/clone_target.c has only use.constprop.0.isra.0) are named in the refusal, and
// probing the clone counts every call; stripped files find their symbols in the debug file
// their .gnu_debuglink names, only when its CRC matches.
#include <cerrno>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/session.hpp"
#include "probectl/user_target.hpp"

using itest::why;
using ::testing::HasSubstr;

namespace {

std::string cloneTarget() {
    return itest::workload("clone_target");
}

// The COUNT of a count table's row for `probe`, the column after it ("" when no row has it).
std::string rowCount(const std::string& table, const std::string& probe) {
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(probe + " ")) {
            std::istringstream row(line.substr(probe.size()));
            std::string count;
            row >> count;
            return count;
        }
    return "";
}

}  // namespace

TEST(UserNames, AFunctionOnlyClonedNamesItsClones) {
    auto s = probectl::Session::open({});
    ASSERT_TRUE(s) << why(s);
    auto r = s->add("uprobe:" + cloneTarget() + ":use");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT) << why(r);
    EXPECT_THAT(r.error().message, HasSubstr("only compiler clones of it"));
    EXPECT_THAT(r.error().message, HasSubstr(":use.constprop.0.isra.0"));
}

TEST(UserNames, TheCloneSeesEveryCall) {
    itest::Workload w({cloneTarget(), "9"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("uprobe:" + cloneTarget() + ":use.constprop.0.isra.0");
    ASSERT_TRUE(id) << why(id);
    w.release();
    std::string out;
    ASSERT_EQ(w.wait(&out), 0) << out;
    EXPECT_THAT(out, HasSubstr("sum=180"));
    auto st = s->stop([](const probectl::Event&) {});
    ASSERT_TRUE(st) << why(st);
    EXPECT_EQ(st->probes.at(0).hits, 9u);
}

TEST(UserNames, AStrippedFileFindsItsSymbolsByDebuglink) {
    const std::string t = itest::workload("debuglink_target");
    auto spec = probectl::parseProbeSpec("uprobe:" + t + ":dl_local");
    ASSERT_TRUE(spec);
    auto r = probectl::resolveUserSpec(*spec);
    ASSERT_TRUE(r) << why(r);
    EXPECT_THAT(r->how,
                HasSubstr(".symtab of " + itest::workload(".debug/debuglink_target.debug")));

    itest::Workload w({t, "6"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("uprobe:" + t + ":dl_local");
    ASSERT_TRUE(id) << why(id);
    w.release();
    std::string out;
    ASSERT_EQ(w.wait(&out), 0) << out;
    EXPECT_THAT(out, HasSubstr("sum=36"));
    auto st = s->stop([](const probectl::Event&) {});
    ASSERT_TRUE(st) << why(st);
    EXPECT_EQ(st->probes.at(0).hits, 6u);
}

TEST(UserNames, ADebuglinkWithAnotherCrcIsNotUsedAndSaysWhy) {
    auto spec =
        probectl::parseProbeSpec("uprobe:" + itest::workload("debuglink_stale") + ":dl_local");
    ASSERT_TRUE(spec);
    auto r = probectl::resolveUserSpec(*spec);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, ENOENT) << why(r);
    EXPECT_THAT(r.error().message, HasSubstr(".gnu_debuglink names 'debuglink_stale.debug'"));
    EXPECT_THAT(r.error().message, HasSubstr("not the debug file of this build"));
}

// C++ operators by name on the kernel backend (workload cxx_names, the unit tests' fx_cxx, N
// = 3): 'fx::Vec::operator[](unsigned long)' (6 calls) was refused as a glob with an
// unterminated '['; its const overload (4 calls) is a function of its own.
TEST(UserNames, CxxOperatorIndexCountsItsOwnCalls) {
    const std::string t = itest::workload("cxx_names");
    const std::string plain = "uprobe:" + t + ":'fx::Vec::operator[](unsigned long)'";
    const std::string konst = "uprobe:" + t + ":'fx::Vec::operator[](unsigned long) const'";
    auto r = itest::sh(
        itest::tablesOnly("probectl count \"" + plain + "\" \"" + konst + "\" -- " + t + " 3"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(rowCount(r.out, plain), "6") << r.out;
    EXPECT_EQ(rowCount(r.out, konst), "4") << r.out;
}
