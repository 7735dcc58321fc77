// The kind table drives parsing, printing and help: every row must survive all three.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "probectl/probe_spec.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using ::testing::HasSubstr;

namespace {

// A location for each kind, as its spec writes it after "KIND:".
const std::map<SpecKind, std::string> kLocations = {
    {SpecKind::Kprobe, "do_sys_openat2+0x10"},
    {SpecKind::Kretprobe, "do_sys_openat2"},
    {SpecKind::Syscall, "openat"},
    {SpecKind::Uprobe, "/bin/x:main+0x4"},
    {SpecKind::Uretprobe, "libc:malloc"},
    {SpecKind::Usdt, "/bin/x:prov:name"},
    {SpecKind::Tracepoint, "sched:sched_process_fork"},
};

std::string helpOf(const std::string& name) {
    std::ostringstream os;
    cli::printHelp(*cli::findCommand(name), os);
    return os.str();
}

}  // namespace

TEST(ProbeKinds, EveryKindParsesAndPrintsBack) {
    ASSERT_EQ(probeKinds().size(), kLocations.size());
    for (const KindInfo& k : probeKinds()) {
        ASSERT_TRUE(kLocations.count(k.kind)) << k.name;
        const std::string text = std::string(k.name) + ":" + kLocations.at(k.kind);
        auto s = parseProbeSpec(text);
        ASSERT_TRUE(s.ok()) << text << ": " << s.error().render();
        EXPECT_EQ(s->kind, k.kind) << text;
        EXPECT_EQ(s->str(), text);
        EXPECT_EQ(toString(k.kind), k.name);
        EXPECT_EQ(&kindInfo(k.kind), &k);
        EXPECT_EQ(findKind(k.name), &k);
        if (!k.alias.empty()) {
            auto a = parseProbeSpec(std::string(k.alias) + ":" + kLocations.at(k.kind));
            ASSERT_TRUE(a.ok()) << k.alias;
            EXPECT_EQ(a->kind, k.kind);
            EXPECT_EQ(a->str(), text) << "the alias prints as the name";
            EXPECT_EQ(findKind(k.alias), &k);
        }
    }
    EXPECT_EQ(findKind("kprobes"), nullptr);
    EXPECT_EQ(findKind(""), nullptr);
}

TEST(ProbeKinds, EveryKindIsInTheHelpAndTheUnknownTypeMessage) {
    auto bad = parseProbeSpec("kporbe:x");
    ASSERT_FALSE(bad.ok());
    for (const KindInfo& k : probeKinds()) {
        EXPECT_THAT(bad.error().message, HasSubstr(std::string(k.name))) << k.name;
        EXPECT_THAT(kindsHelp(), HasSubstr(std::string(k.forms))) << k.name;
        for (const char* cmd : {"trace", "add"})
            EXPECT_THAT(helpOf(cmd), HasSubstr("  " + std::string(k.name))) << cmd;
    }
}

TEST(ProbeKinds, RowsAgreeWithTheKinds) {
    EXPECT_EQ(kindNames(true), "uprobe, uretprobe or usdt");
    EXPECT_EQ(kindNames(false), "kprobe, kretprobe, syscall or tracepoint");
    for (const KindInfo& k : probeKinds()) {
        EXPECT_EQ(k.user_space, k.family == KindFamily::UserElf) << k.name;
        EXPECT_EQ(k.user_space, isUserSpace(k.kind)) << k.name;
        // User kinds become the kernel's user kinds, kernel kinds the kernel's.
        const bool kernel_user =
            k.kernel_kind == PROBECTL_KIND_UPROBE || k.kernel_kind == PROBECTL_KIND_URETPROBE;
        EXPECT_EQ(k.user_space, kernel_user) << k.name;
        // A syscall's kretprobe is how it records the return, not a return probe's rules.
        const bool kernel_return =
            k.kernel_kind == PROBECTL_KIND_KRETPROBE || k.kernel_kind == PROBECTL_KIND_URETPROBE;
        if (k.kind != SpecKind::Syscall) {
            EXPECT_EQ(k.is_return, kernel_return) << k.name;
        }
    }
}
