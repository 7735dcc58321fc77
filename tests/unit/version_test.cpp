// --version and the library's version call: the header, the runtime call and the CLI's
// text agree with kmod/version.h; module facts come from sysfs; a protocol mismatch is
// named with both sides' releases and exits 1.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "build_info.hpp"
#include "probectl/version.hpp"
#include "uapi/probectl.h"
#include "version.h"
#include "version.hpp"

using namespace probectl;
using namespace probectl::cli;

TEST(Version, HeaderRuntimeAndModuleReleaseAgree) {
    const Version v = version();
    EXPECT_STREQ(v.string, PROBECTL_RELEASE);
    EXPECT_STREQ(PROBECTL_VERSION_STRING, PROBECTL_RELEASE);
    EXPECT_EQ(
        std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch),
        PROBECTL_RELEASE);
    EXPECT_EQ(v.major, PROBECTL_VERSION_MAJOR);
    EXPECT_EQ(v.protocol, PROBECTL_GENL_VERSION);
    EXPECT_EQ(PROBECTL_VERSION_NUMBER, (PROBECTL_VERSION_MAJOR << 16) |
                                           (PROBECTL_VERSION_MINOR << 8) | PROBECTL_VERSION_PATCH);
    EXPECT_STRNE(kCliGitDescribe, "");
}

namespace {

std::string run(const ModuleFacts& facts, int& rc, std::string* err = nullptr) {
    std::ostringstream out, e;
    Io io{out, e};
    rc = printVersion(facts, io);
    if (err)
        *err = e.str();
    return out.str();
}

}  // namespace

TEST(Version, NotLoaded) {
    int rc = -1;
    const std::string out = run(ModuleFacts{}, rc);
    EXPECT_EQ(rc, kExitOk);
    EXPECT_EQ(out, std::string("probectl ") + PROBECTL_RELEASE + " (" + kCliGitDescribe +
                       ")\nlibprobectl " PROBECTL_RELEASE ", protocol " +
                       std::to_string(PROBECTL_GENL_VERSION) + "\nprobectl.ko: not loaded\n");
}

TEST(Version, LoadedModule) {
    int rc = -1;
    ModuleFacts f;
    f.release = "0.1.0";
    f.protocol = std::uint32_t{PROBECTL_GENL_VERSION};
    const std::string out = run(f, rc);
    EXPECT_EQ(rc, kExitOk);
    EXPECT_NE(
        out.find("\nprobectl.ko 0.1.0, protocol " + std::to_string(PROBECTL_GENL_VERSION) + "\n"),
        std::string::npos)
        << out;
}

TEST(Version, ProtocolMismatchNamesBothReleases) {
    int rc = -1;
    std::string err;
    ModuleFacts f;
    f.release = "0.0.7";
    f.protocol = makeError(EPROTO, "probectl.ko speaks protocol version 9, this libctl version 1");
    const std::string out = run(f, rc, &err);
    EXPECT_EQ(rc, kExitRuntime);
    EXPECT_NE(out.find("probectl.ko 0.0.7, protocol unknown"), std::string::npos) << out;
    EXPECT_NE(err.find("probectl.ko 0.0.7 cannot serve probectl " PROBECTL_RELEASE
                       ": probectl.ko speaks protocol version 9"),
              std::string::npos)
        << err;
}

TEST(Version, ModuleFactsFromSysfs) {
    const auto root = std::filesystem::temp_directory_path() / "probectl-version-test";
    std::filesystem::remove_all(root);
    EXPECT_FALSE(readModuleFacts(root.string()).release);  // no module folder: not loaded
    std::filesystem::create_directories(root / "module/probectl");
    std::ofstream(root / "module/probectl/version") << "0.1.0\n";
    const ModuleFacts f = readModuleFacts(root.string());
    std::filesystem::remove_all(root);
    ASSERT_TRUE(f.release);
    EXPECT_EQ(*f.release, "0.1.0");
}
