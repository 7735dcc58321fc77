// Inlined copies of a function as uprobe sites (resolveUserSpecAll): each copy readelf's
// DWARF dump lists is a site, and what cannot work at a copy (a return probe, fetch
// arguments) keeps to the out-of-line copy with a note naming the calls it misses.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <sstream>

#include "probectl/user_target.hpp"
#include "readelf_util.hpp"

using namespace probectl;
using namespace probectl::test;
using ::testing::HasSubstr;

namespace {

const std::string kDwarf = FX_INLINE_PATH;
const std::string kNoDwarf = FX_INLINE_NODWARF_PATH;

Result<std::vector<UserTarget>> sites(const std::string& text) {
    auto spec = parseProbeSpec(text);
    if (!spec) {
        ADD_FAILURE() << spec.error().render();
        return makeError(EINVAL, "bad spec");
    }
    return resolveUserSpecAll(*spec);
}

// The DW_AT_entry_pc of every DW_TAG_inlined_subroutine whose abstract origin is the
// subprogram named `name`, from readelf's dump of the DWARF.
std::set<std::uint64_t> readelfInlinedEntries(const std::string& file, const std::string& name) {
    std::istringstream in(run("readelf --debug-dump=info " + file));
    std::string line, tag, die, origin;
    std::set<std::string> subprograms;
    std::vector<std::pair<std::string, std::uint64_t>> copies;
    auto field = [](const std::string& l) { return l.substr(l.find(": ") + 2); };
    while (std::getline(in, line)) {
        if (line.find("DW_TAG_") != std::string::npos) {
            tag = line.substr(line.find("DW_TAG_"));
            tag = tag.substr(0, tag.find(')'));
            die = line.substr(line.find("><") + 2);
            die = "0x" + die.substr(0, die.find('>'));
        } else if (tag == "DW_TAG_subprogram" && line.find("DW_AT_name") != std::string::npos &&
                   line.ends_with(": " + name)) {
            subprograms.insert(die);
        } else if (tag == "DW_TAG_inlined_subroutine" &&
                   line.find("DW_AT_abstract_origin") != std::string::npos) {
            origin = field(line);
            origin = origin.substr(origin.find('<') + 1);
            origin = origin.substr(0, origin.find('>'));
        } else if (tag == "DW_TAG_inlined_subroutine" &&
                   line.find("DW_AT_entry_pc") != std::string::npos) {
            copies.emplace_back(origin, std::stoull(field(line), nullptr, 16));
        }
    }
    std::set<std::uint64_t> out;
    for (const auto& [o, pc] : copies)
        if (subprograms.count(o))
            out.insert(pc);
    return out;
}

}  // namespace

TEST(InlinedCopies, EveryCopyDwarfListsIsASiteAfterTheOutOfLineOne) {
    auto all = sites("uprobe:" + kDwarf + ":helper");
    ASSERT_TRUE(all) << all.error().message;
    const auto expected = readelfInlinedEntries(kDwarf, "helper");
    ASSERT_GE(expected.size(), 2u) << "the workload's helper() should be inlined";
    ASSERT_EQ(all->size(), expected.size() + 1);
    const UserTarget& own = all->front();
    EXPECT_EQ(own.symbol, "helper");
    EXPECT_TRUE(own.inlined_from.empty());
    EXPECT_THAT(own.note, HasSubstr(fmt::format("{} inlined copies of 'helper'", expected.size())));
    EXPECT_THAT(own.note, HasSubstr("probed too"));
    std::set<std::uint64_t> got;
    std::set<std::string> callers;
    const auto loads = readelfLoads(kDwarf);
    for (std::size_t i = 1; i < all->size(); ++i) {
        const UserTarget& t = (*all)[i];
        got.insert(t.vaddr);
        callers.insert(t.symbol);
        EXPECT_EQ(t.inlined_from, "helper");
        EXPECT_THAT(t.call_site, HasSubstr("inline_target.c:"));
        EXPECT_EQ(t.file_offset, expectedOffset(loads, t.vaddr).value());
        EXPECT_THAT(t.how, HasSubstr("DW_TAG_inlined_subroutine"));
        EXPECT_TRUE(t.note.empty());
    }
    EXPECT_EQ(got, expected);
    EXPECT_EQ(callers, (std::set<std::string>{"thrice", "twice"}));
}

TEST(InlinedCopies, AFunctionWithoutAnOutOfLineCopyIsItsCopies) {
    auto all = sites("uprobe:" + kDwarf + ":bump");
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_EQ(all->size(), readelfInlinedEntries(kDwarf, "bump").size());
    EXPECT_EQ(all->front().inlined_from, "bump");
    EXPECT_EQ(all->front().symbol, "thrice");
    EXPECT_THAT(all->front().note, HasSubstr("no out-of-line copy of 'bump'"));
}

TEST(InlinedCopies, AReturnProbeKeepsToTheOutOfLineCopyAndSaysWhatItMisses) {
    auto all = sites("uretprobe:" + kDwarf + ":helper");
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_EQ(all->size(), 1u);
    EXPECT_THAT(all->front().note, HasSubstr("not probed"));
    EXPECT_THAT(all->front().note, HasSubstr("a return probe needs a call and a return"));
    EXPECT_THAT(all->front().note, HasSubstr("in twice+"));
    EXPECT_THAT(all->front().note, HasSubstr("(uprobe:" + kDwarf + ":elf=0x"));
}

TEST(InlinedCopies, FetchArgumentsKeepToTheOutOfLineCopy) {
    auto all = sites("uprobe:" + kDwarf + ":helper x=$arg1");
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_EQ(all->size(), 1u);
    EXPECT_THAT(all->front().note, HasSubstr("fetch arguments read the calling convention"));
}

TEST(InlinedCopies, OnlyInlinedAndAReturnProbeIsRefusedWithTheCopies) {
    auto all = sites("uretprobe:" + kDwarf + ":bump");
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().err, EINVAL);
    EXPECT_THAT(all.error().message, HasSubstr("'bump' has no out-of-line copy"));
    EXPECT_THAT(all.error().message, HasSubstr("in thrice"));
}

TEST(InlinedCopies, AnAddressInsideACopyIsOneSite) {
    auto all = sites("uprobe:" + kDwarf + ":helper");
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_GE(all->size(), 2u);
    auto one = sites(fmt::format("uprobe:{}:elf={:#x}", kDwarf, (*all)[1].vaddr));
    ASSERT_TRUE(one) << one.error().message;
    ASSERT_EQ(one->size(), 1u);
    EXPECT_EQ(one->front().file_offset, (*all)[1].file_offset);
    EXPECT_TRUE(one->front().note.empty());
}

TEST(InlinedCopies, WithoutDwarfAStaticFunctionSaysInlinedCallsAreNotSeen) {
    auto all = sites("uprobe:" + kNoDwarf + ":helper");
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_EQ(all->size(), 1u);
    EXPECT_THAT(all->front().note, HasSubstr("'helper' is a static function"));
    EXPECT_THAT(all->front().note, HasSubstr("has no DWARF"));
    auto global = sites("uprobe:" + kNoDwarf + ":twice");
    ASSERT_TRUE(global) << global.error().message;
    EXPECT_TRUE(global->front().note.empty()) << "a global function: nothing suggests inlining";
}

TEST(InlinedCopies, ResolveUserSpecNamesTheCopiesItCannotReturnAlone) {
    auto spec = parseProbeSpec("uprobe:" + kDwarf + ":helper");
    ASSERT_TRUE(spec);
    auto one = resolveUserSpec(*spec);
    ASSERT_FALSE(one);
    EXPECT_EQ(one.error().err, ENOTUNIQ);
    EXPECT_THAT(one.error().message, HasSubstr("the function has"));
    EXPECT_THAT(one.error().message, HasSubstr("(inlined copy)"));
}

namespace {

const std::string kCxx = FX_INLINE_CXX_PATH;

std::set<std::uint64_t> copyAddresses(const std::vector<UserTarget>& all) {
    std::set<std::uint64_t> out;
    for (const UserTarget& t : all)
        if (!t.inlined_from.empty())
            out.insert(t.vaddr);
    return out;
}

}  // namespace

// DWARF spells the template's arguments "tw<long int>", the demangled ELF name "tw<long>":
// every spelling is one function, its out-of-line copy and its inlined ones.
TEST(InlinedCopies, EverySpellingOfACxxTemplateIsItsOutOfLineAndInlinedCopies) {
    const auto expected = readelfInlinedEntries(kCxx, "tw<long int>");
    ASSERT_GE(expected.size(), 1u) << "the fixture's tw<long> should be inlined";
    for (const std::string name : {"'tw<long>'", "'tw<long>(long)'", "'long tw<long>(long)'",
                                   "'tw<long int>'", "_Z2twIlET_S0_"}) {
        SCOPED_TRACE(name);
        auto all = sites("uprobe:" + kCxx + ":" + name);
        ASSERT_TRUE(all) << all.error().message;
        ASSERT_EQ(all->size(), expected.size() + 1);
        EXPECT_TRUE(all->front().inlined_from.empty());
        EXPECT_THAT(all->front().symbol, HasSubstr("tw<long>"));
        EXPECT_THAT(all->front().note, HasSubstr("probed too"));
        EXPECT_EQ(copyAddresses(*all), expected);
    }
}

// A template only inlined: named as c++filt prints it, as DWARF does, or mangled.
TEST(InlinedCopies, AnInlinedOnlyTemplateIsFoundByItsDemangledName) {
    const auto expected = readelfInlinedEntries(kCxx, "sum<long int>");
    ASSERT_GE(expected.size(), 2u) << "the fixture's sum<long> should be inlined twice";
    for (const std::string name :
         {"'sum<long>'", "'sum<long>(long, long)'", "'sum<long int>'", "_Z3sumIlET_S0_S0_"}) {
        SCOPED_TRACE(name);
        auto all = sites("uprobe:" + kCxx + ":" + name);
        ASSERT_TRUE(all) << all.error().message;
        EXPECT_EQ(copyAddresses(*all), expected);
        EXPECT_EQ(all->size(), expected.size());
        EXPECT_THAT(all->front().note, HasSubstr("no out-of-line copy"));
    }
}

// a::h and b::h are two functions: a bare h matches neither (as for out-of-line functions),
// each qualified name its own copies.
TEST(InlinedCopies, InlinedFunctionsInTwoNamespacesAreNotMerged) {
    auto bare = sites("uprobe:" + kCxx + ":h");
    ASSERT_FALSE(bare);
    EXPECT_THAT(bare.error().message, HasSubstr("no function 'h'"));
    auto a = sites("uprobe:" + kCxx + ":'a::h'");
    auto b = sites("uprobe:" + kCxx + ":'b::h(int)'");
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    ASSERT_FALSE(copyAddresses(*a).empty());
    ASSERT_FALSE(copyAddresses(*b).empty());
    EXPECT_EQ(copyAddresses(*a).size(), a->size());
    for (std::uint64_t v : copyAddresses(*a))
        EXPECT_EQ(copyAddresses(*b).count(v), 0u) << std::hex << v;
}

// ov(int) and ov(double) are both only inlined: a bare ov is refused with both listed, not
// counted as one function.
TEST(InlinedCopies, ANameOfTwoInlinedOverloadsIsRefusedWithBoth) {
    auto both = sites("uprobe:" + kCxx + ":ov");
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().err, ENOTUNIQ);
    EXPECT_THAT(both.error().message, HasSubstr("ov(int)"));
    EXPECT_THAT(both.error().message, HasSubstr("ov(double)"));
    auto one = sites("uprobe:" + kCxx + ":'ov(int)'");
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_FALSE(copyAddresses(*one).empty());
}
