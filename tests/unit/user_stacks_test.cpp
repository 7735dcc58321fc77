// User stacks on the host: $ustack parsing and its program, the function-entry flag, the
// stack map's user entries, frames symbolized from synthetic maps over a real ELF file
// (fx_pie, built by this build), folded rows with kernel and user stacks, printed events,
// and trace/count option refusals.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "aggr_cli.hpp"
#include "aggr_rows.hpp"
#include "elf/inlined_copies.hpp"
#include "probectl/aggr.hpp"
#include "probectl/elf_resolver.hpp"
#include "probectl/event_print.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/printer.hpp"
#include "probectl/user_stacks.hpp"
#include "readelf_util.hpp"
#include "subcommands.hpp"
#include "uapi/probectl.h"

using namespace probectl;
using probectl::test::entry;
using probectl::test::u32;

namespace {

constexpr std::uint64_t kBase = 0x555555554000;  // where the synthetic maps load fx_pie

// /proc/PID/maps lines for fx_pie loaded at kBase: one per PT_LOAD, page-aligned as the
// kernel maps them, then an anonymous mapping and the stack.
std::string pieMaps(const ElfResolver& elf, const std::string& path = FX_PIE_PATH) {
    std::string out;
    for (const auto& s : elf.loadSegments()) {
        const std::uint64_t start = kBase + (s.vaddr & ~0xfffULL);
        const std::uint64_t end = kBase + ((s.vaddr + s.memsz + 0xfff) & ~0xfffULL);
        out += fmt::format("{:x}-{:x} r{}{}p {:08x} fd:01 4242 {}\n", start, end,
                           s.writable() ? 'w' : '-', s.executable() ? 'x' : '-',
                           s.offset & ~0xfffULL, path);
    }
    out += "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n";
    out += "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n";
    return out;
}

struct Pie {
    ElfResolver elf;
    const ElfSymbol* work = nullptr;
    const ElfSymbol* main = nullptr;
};

Pie openPie() {
    auto e = ElfResolver::open(FX_PIE_PATH);
    EXPECT_TRUE(e) << e.error().message;
    Pie p{std::move(*e)};
    auto w = p.elf.functionsNamed("fx_work");
    auto m = p.elf.functionsNamed("main");
    EXPECT_EQ(w.size(), 1u);
    EXPECT_EQ(m.size(), 1u);
    p.work = w.at(0);
    p.main = m.at(0);
    return p;
}

}  // namespace

TEST(UserStackSpec, UstackIsAU32StackIdWithADepth) {
    auto a = parseFetchArg("s=$ustack9");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->source->kind, FetchSource::Kind::UStack);
    EXPECT_EQ(a->str(), "s=$ustack9:u32");
    auto p = compileFetchArg(*a);
    ASSERT_TRUE(p) << p.error().message;
    ASSERT_EQ(p->insns.size(), 2u);
    EXPECT_EQ(p->insns[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadUstack));
    EXPECT_EQ(p->insns[0].operand, 9u);
    EXPECT_EQ(p->insns[0].size, 4);
    EXPECT_FALSE(parseFetchArg("s=$ustack0"));
    EXPECT_FALSE(parseFetchArg("s=$ustack128"));
    EXPECT_FALSE(parseFetchArg("s=$ustack:u64"));
}

// A uprobe at a function's first instruction gets the function-entry flag (the caller's
// return address is at the stack pointer); elsewhere, and other kinds, do not.
TEST(UserStackArg, FunctionEntryFlagOnlyAtAUprobeOnAFunctionStart) {
    ProbeRequest req;
    req.kind = ProbeKind::Uprobe;
    req.function_entry = true;
    std::vector<FetchArg> args;
    ASSERT_TRUE(appendUserStackArg(req, args, 0));
    ASSERT_EQ(req.fetch.size(), 2u);
    EXPECT_EQ(req.fetch[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadUstack));
    EXPECT_EQ(req.fetch[0].flags, kFetchFlagFuncEntry);
    EXPECT_EQ(req.fetch[0].operand, PROBECTL_STACK_DEFAULT_DEPTH);
    EXPECT_EQ(args.back().name, "ustack");
    EXPECT_TRUE(validateFetchProgram(req.fetch)) << toString(req.fetch[0]);
    // Twice: refused, an argument is already named ustack.
    auto again = appendUserStackArg(req, args, 0);
    ASSERT_FALSE(again);
    EXPECT_TRUE(again.error().usage);

    for (ProbeKind k : {ProbeKind::Uretprobe, ProbeKind::Kprobe, ProbeKind::Tracepoint}) {
        ProbeRequest other;
        other.kind = k;
        other.symbol = "x";
        other.function_entry = true;
        std::vector<FetchArg> a;
        ASSERT_TRUE(appendUserStackArg(other, a, 5));
        EXPECT_EQ(other.fetch[0].flags, 0u);
        EXPECT_EQ(other.fetch[0].operand, 5u);
    }
    ProbeRequest inside;
    inside.kind = ProbeKind::Uprobe;
    std::vector<FetchArg> b;
    ASSERT_TRUE(appendUserStackArg(inside, b, 0));
    EXPECT_EQ(inside.fetch[0].flags, 0u);
}

// The wire form: the user flag and the tgid come back with the frames.
TEST(UserStackMap, DecodesTheTgid) {
    std::vector<std::uint8_t> entries;
    probectl_stack hdr{};
    hdr.id = 7;
    hdr.nr = 2;
    hdr.flags = PROBECTL_STACK_F_USER | PROBECTL_STACK_F_TRUNCATED;
    hdr.tgid = 4321;
    const std::uint64_t frames[2] = {0x1000, 0x2000};
    const auto* h = reinterpret_cast<const std::uint8_t*>(&hdr);
    entries.insert(entries.end(), h, h + sizeof(hdr));
    const auto* f = reinterpret_cast<const std::uint8_t*>(frames);
    entries.insert(entries.end(), f, f + sizeof(frames));
    std::vector<KernelStack> out;
    ASSERT_TRUE(decodeKernelStacks(entries, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].user);
    EXPECT_TRUE(out[0].truncated);
    EXPECT_EQ(out[0].tgid, 4321u);
    EXPECT_EQ(out[0].frames, (std::vector<std::uint64_t>{0x1000, 0x2000}));
    EXPECT_EQ(sizeof(probectl_stack) % 8, 0u);  // frames stay 8-byte aligned
}

TEST(UserStackText, SymbolizedThroughMapsAndTheElfFile) {
    Pie pie = openPie();
    auto maps = ProcMaps::parse(pieMaps(pie.elf));
    ASSERT_TRUE(maps) << maps.error().message;
    UserSymbolizer sym;
    sym.setMaps(100, std::move(*maps));
    const std::string in = fmt::format(" ({})", FX_PIE_PATH);

    EXPECT_EQ(sym.frameText(100, kBase + pie.work->value, false), "fx_work" + in);
    EXPECT_EQ(sym.frameText(100, kBase + pie.work->value + 3, false), "fx_work+0x3" + in);
    EXPECT_EQ(sym.frameText(100, kBase + pie.main->value + 0x10, true), "main+0x10" + in);
    // A return address just past a function (its last instruction a call) is still its.
    const std::uint64_t end = kBase + pie.work->value + pie.work->size;
    EXPECT_EQ(sym.frameText(100, end, true), fmt::format("fx_work+{:#x}{}", pie.work->size, in));
    EXPECT_NE(sym.frameText(100, end, false).rfind("fx_work", 0), 0u);

    // In the file but in no function (the ELF header): the ELF address, the same whatever
    // the load address, as addr2line and objdump take it.
    EXPECT_EQ(sym.frameText(100, kBase + 0x10, false), std::string(FX_PIE_PATH) + "+0x10");
    // No function there, no file, no mapping, no maps: addresses, never a made-up name.
    EXPECT_EQ(sym.frameText(100, 0x7f0000000010, false), "0x7f0000000010 ([anon])");
    EXPECT_EQ(sym.frameText(100, 0x7ffffffde100, true), "0x7ffffffde100 ([stack])");
    EXPECT_EQ(sym.frameText(100, 0x10, false), "0x10 [unknown]");
    EXPECT_EQ(sym.frameText(101, kBase + pie.work->value, false),
              fmt::format("{:#x} [unknown]", kBase + pie.work->value));
}

// A mapped file that cannot be read as ELF: its file offset, said to be one.
TEST(UserStackText, UnreadableFileGivesTheFileOffset) {
    Pie pie = openPie();
    auto maps = ProcMaps::parse(pieMaps(pie.elf, "/nonexistent/app"));
    ASSERT_TRUE(maps);
    UserSymbolizer sym;
    sym.setMaps(100, std::move(*maps));
    EXPECT_EQ(
        sym.frameText(100, kBase + pie.work->value, false),
        fmt::format("/nonexistent/app+{:#x} (file offset)", *pie.elf.fileOffset(pie.work->value)));
}

// The vDSO has no file: its offset, which is also its ELF address.
TEST(UserStackText, VdsoFrameIsItsOffset) {
    auto maps = ProcMaps::parse("7ffc1000-7ffc3000 r-xp 00000000 00:00 0   [vdso]\n");
    ASSERT_TRUE(maps);
    UserSymbolizer sym;
    sym.setMaps(7, std::move(*maps));
    EXPECT_EQ(sym.frameText(7, 0x7ffc19a0, false), "[vdso]+0x9a0");
}

TEST(UserStackText, LinesFromAStack) {
    Pie pie = openPie();
    UserSymbolizer sym;
    auto maps = ProcMaps::parse(pieMaps(pie.elf));
    ASSERT_TRUE(maps);
    sym.setMaps(100, std::move(*maps));
    KernelStack st;
    st.user = true;
    st.tgid = 100;
    st.frames = {kBase + pie.work->value, kBase + pie.main->value + 0x20};
    // DWARF's line for each (the caller's one byte back), as addr2line reads it.
    auto line = [](std::uint64_t elf_addr) {
        std::string l = test::run(fmt::format("addr2line -e {} {:#x}", FX_PIE_PATH, elf_addr));
        l = l.substr(l.rfind('/') + 1);
        return l.substr(0, l.find_first_of(" \n"));
    };
    const std::string in = fmt::format(" ({}) at ", FX_PIE_PATH);
    const auto lines = userStackLines(sym, st);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_TRUE(lines[0].starts_with("fx_work" + in)) << lines[0];
    EXPECT_TRUE(lines[0].ends_with("/work.c:" + line(pie.work->value).substr(7))) << lines[0];
    EXPECT_TRUE(lines[1].starts_with("main+0x20" + in)) << lines[1];
    EXPECT_TRUE(lines[1].ends_with("/work.c:" + line(pie.main->value + 0x1f).substr(7)))
        << lines[1];
    st.truncated = true;
    EXPECT_EQ(userStackLines(sym, st).back(), "...");
    st.frames.clear();
    EXPECT_EQ(userStackLines(sym, st), (std::vector<std::string>{"[no user stack]"}));
}

// An address in a copy of helper() inlined into twice(): the inlined call is a line of its
// own, then twice+OFF at the line of the call, as DWARF's inlined-subroutine entry says.
TEST(UserStackText, InlinedCallsAreFramesOfTheirOwn) {
    auto e = ElfResolver::open(FX_INLINE_PATH);
    ASSERT_TRUE(e) << e.error().message;
    auto maps = ProcMaps::parse(pieMaps(*e, FX_INLINE_PATH));
    ASSERT_TRUE(maps);
    UserSymbolizer sym;
    sym.setMaps(100, std::move(*maps));
    auto twice = e->functionsNamed("twice");
    ASSERT_EQ(twice.size(), 1u);
    const InlinedSearch s = findInlinedCopies(FX_INLINE_PATH, "helper");
    int seen = 0, inlined = 0;
    for (const InlinedCopy& c : s.copies) {
        if (c.entry < twice[0]->value || c.entry >= twice[0]->value + twice[0]->size)
            continue;
        seen++;
        const auto lines = sym.frameLines(100, kBase + c.entry, false);
        const std::string own = sym.frameText(100, kBase + c.entry, false) + " at ";
        // GCC may put a copy's entry in an empty range (see inlined_copies.hpp): no scope
        // holds that address, so DWARF names no inlined call there and neither does this.
        ASSERT_GE(lines.size(), 1u);
        ASSERT_LE(lines.size(), 2u);
        EXPECT_TRUE(lines.back().starts_with(own)) << lines.back();
        if (lines.size() == 1)
            continue;
        inlined++;
        EXPECT_TRUE(lines[0].starts_with("helper (inlined) at ")) << lines[0];
        EXPECT_NE(lines[0].find("inline_target.c:"), std::string::npos) << lines[0];
        EXPECT_TRUE(lines[1].ends_with(fmt::format("inline_target.c:{}", c.call_line))) << lines[1];
    }
    EXPECT_EQ(seen, 2) << "helper is inlined twice into twice()";
    EXPECT_GE(inlined, 1);
    // No DWARF: the frame alone, as frameText gives it.
    auto n = ElfResolver::open(FX_INLINE_NODWARF_PATH);
    ASSERT_TRUE(n);
    auto nmaps = ProcMaps::parse(pieMaps(*n, FX_INLINE_NODWARF_PATH));
    ASSERT_TRUE(nmaps);
    sym.setMaps(101, std::move(*nmaps));
    auto ntwice = n->functionsNamed("twice");
    ASSERT_EQ(ntwice.size(), 1u);
    EXPECT_EQ(sym.frameLines(101, kBase + ntwice[0]->value + 1, false),
              std::vector<std::string>{sym.frameText(101, kBase + ntwice[0]->value + 1, false)});
}

// Inlined calls three deep: at the return address of outer()'s call of leaf(), inner() is
// inlined into middle(), itself inlined into outer(). Every level is a line of its own, in
// order, each at the line of the call it makes (as addr2line -i and gdb show them).
TEST(UserStackText, NestedInlinedCallsAreEachAFrame) {
    auto e = ElfResolver::open(FX_INLINE_NESTED_PATH);
    ASSERT_TRUE(e) << e.error().message;
    auto maps = ProcMaps::parse(pieMaps(*e, FX_INLINE_NESTED_PATH));
    ASSERT_TRUE(maps);
    UserSymbolizer sym;
    sym.setMaps(100, std::move(*maps));
    std::vector<std::uint64_t> rets;
    for (const auto& b : test::objdumpBranches(FX_INLINE_NESTED_PATH, "outer"))
        if (b.mnemonic == "call" && b.target == "leaf")
            rets.push_back(b.next);
    ASSERT_EQ(rets.size(), 1u) << "outer() calls leaf() once";
    const std::string src = std::string(PROBECTL_WORKLOADS) + "/inline_nested.c";
    auto at = [&](const char* text) {
        return fmt::format("inline_nested.c:{}", test::sourceLineOf(src, text));
    };
    const auto lines = sym.frameLines(100, kBase + rets[0], true);
    ASSERT_EQ(lines.size(), 3u) << fmt::format("{}", fmt::join(lines, "\n"));
    EXPECT_TRUE(lines[0].starts_with("inner (inlined) at ")) << lines[0];
    EXPECT_TRUE(lines[0].ends_with(at("long r = leaf(x);"))) << lines[0];
    EXPECT_TRUE(lines[1].starts_with("middle (inlined) at ")) << lines[1];
    EXPECT_TRUE(lines[1].ends_with(at("long r = inner(x + 1);"))) << lines[1];
    EXPECT_TRUE(lines[2].starts_with(sym.frameText(100, kBase + rets[0], true) + " at "))
        << lines[2];
    EXPECT_TRUE(lines[2].ends_with(at("long r = middle(x * 2);"))) << lines[2];
}

// capture() reads PROC/TGID/maps once and keeps it after the file is gone (the process
// exited); refresh() keeps the old maps when there is nothing to read.
TEST(UserStackText, CapturedMapsOutliveTheProcess) {
    Pie pie = openPie();
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("probectl-ustack-{}", getpid());
    std::filesystem::create_directories(dir / "55");
    std::ofstream(dir / "55" / "maps") << pieMaps(pie.elf);
    UserSymbolizer sym(dir.string());
    EXPECT_FALSE(sym.capture(56));
    ASSERT_TRUE(sym.capture(55));
    std::filesystem::remove_all(dir);
    EXPECT_TRUE(sym.refresh(55));
    EXPECT_EQ(sym.frameText(55, kBase + pie.work->value, false),
              fmt::format("fx_work ({})", FX_PIE_PATH));
}

// A maps source (the kernel backend's kept address spaces) is asked before procfs, by
// capture and refresh alike: its maps serve a process /proc no longer has; when it has none
// (nullopt, text that does not parse, no mapping) procfs is read as before; maps it gave
// are kept, so it is not asked again by capture.
TEST(UserStackText, MapsSourceComesBeforeProcfsAndFallsBackToIt) {
    Pie pie = openPie();
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("probectl-mapsrc-{}", getpid());
    std::filesystem::create_directories(dir / "57");
    std::ofstream(dir / "57" / "maps") << pieMaps(pie.elf);
    UserSymbolizer sym(dir.string());
    std::vector<pid_t> asked;
    sym.setMapsSource([&](UserImage image) -> std::optional<std::string> {
        const pid_t tgid = image.tgid;
        asked.push_back(tgid);
        if (tgid == 58)
            return pieMaps(pie.elf);
        if (tgid == 59)
            return std::string("not a maps line\n");
        if (tgid == 60)
            return std::string();
        return std::nullopt;
    });
    const std::string work = fmt::format("fx_work ({})", FX_PIE_PATH);
    ASSERT_TRUE(sym.capture(58));  // gone from procfs: only the source has it
    EXPECT_EQ(sym.frameText(58, kBase + pie.work->value, false), work);
    ASSERT_TRUE(sym.capture(57));  // the source has none: procfs
    EXPECT_EQ(sym.frameText(57, kBase + pie.work->value, false), work);
    EXPECT_FALSE(sym.capture(59));
    EXPECT_FALSE(sym.capture(60));
    EXPECT_EQ(sym.frameText(59, kBase + pie.work->value, false),
              fmt::format("{:#x} [unknown]", kBase + pie.work->value));
    EXPECT_EQ(asked, (std::vector<pid_t>{58, 57, 59, 60}));
    EXPECT_TRUE(sym.capture(58));  // kept: not asked again
    EXPECT_EQ(asked.size(), 4u);
    EXPECT_TRUE(sym.refresh(57));  // refresh asks the source first
    EXPECT_EQ(asked.back(), 57);
    std::filesystem::remove_all(dir);
}

// A process that execs has two address spaces under one tgid: maps are kept per image
// (tgid, maps_seq), each asked of the source with its own number, so the stack before the
// exec is named with the maps it had. Refreshing an image the kernel kept (maps_seq) never
// takes /proc's maps, which are those of whatever the process runs now.
TEST(UserStackText, EachImageOfATgidHasItsOwnMaps) {
    Pie pie = openPie();
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("probectl-images-{}", getpid());
    std::filesystem::create_directories(dir / "61");
    // What /proc has now: the program after the exec, mapped elsewhere.
    std::ofstream(dir / "61" / "maps")
        << fmt::format("7f0000000000-7f0000001000 r-xp 00000000 08:01 1 {}\n", "/nonexistent");
    UserSymbolizer sym(dir.string());
    std::vector<UserImage> asked;
    sym.setMapsSource([&](UserImage image) -> std::optional<std::string> {
        asked.push_back(image);
        if (image.maps_seq == 1)
            return pieMaps(pie.elf);
        return std::nullopt;
    });
    const std::string work = fmt::format("fx_work ({})", FX_PIE_PATH);
    const std::uint64_t addr = kBase + pie.work->value;
    ASSERT_TRUE(sym.capture(UserImage(61, 1)));
    ASSERT_TRUE(sym.capture(UserImage(61, 2)));  // not kept by the source: /proc's
    EXPECT_EQ(sym.frameText(UserImage(61, 1), addr, false), work);
    EXPECT_EQ(sym.frameText(UserImage(61, 2), addr, false), fmt::format("{:#x} [unknown]", addr));
    EXPECT_EQ(sym.frameText(61, addr, false), fmt::format("{:#x} [unknown]", addr));
    asked.clear();
    // The source has let image 1 go by now (nullopt); its maps stay.
    sym.setMapsSource([&](UserImage image) -> std::optional<std::string> {
        asked.push_back(image);
        return std::nullopt;
    });
    EXPECT_TRUE(sym.refresh(UserImage(61, 1)));
    EXPECT_EQ(sym.frameText(UserImage(61, 1), addr, false), work);
    EXPECT_EQ(asked, (std::vector<UserImage>{UserImage(61, 1)}));
    std::filesystem::remove_all(dir);
}

// The summaries say how many hits' processes the kernel could not keep, only when some.
TEST(UserStackText, SummariesSayWhenMapsWereNotKept) {
    const SnapshotWalks three{.unwound = 3};
    EXPECT_EQ(userSnapshotSummary(three, 3072),
              "user stacks (dwarf): 3 unwound, 0 stopped early, 0 filled the 3072-byte copy");
    EXPECT_NE(userSnapshotSummary(three, 3072, 2)
                  .find(fmt::format(", 2 hits in processes whose maps were not kept (more than {} "
                                    "at once, or more than {} that mapped code after their "
                                    "maps were read",
                                    PROBECTL_MM_PIN_SLOTS, PROBECTL_MM_PIN_AGAIN)),
              std::string::npos);
}

// count --by ustack: folded root first (main first, leaf last); with --by kstack,ustack the
// kernel frames are the innermost, above the user stack.
TEST(UserStackRows, FoldedRootFirstAndWithTheKernelStack) {
    const std::vector<std::string> u{"leaf (/w)", "mid+0x9 (/w)", "main+0x1d (/w)"};
    const std::vector<std::string> k{"__x64_sys_getppid+0x4", "do_syscall_64+0x87"};
    auto lines = [&](std::uint32_t, std::uint32_t id) -> const std::vector<std::string>* {
        return id == 1 ? &u : id == 2 ? &k : nullptr;
    };
    AggrTable t;
    t.key_names = {"ustack"};
    t.entries.push_back(entry({u32("ustack", 1)}, 7));
    EXPECT_EQ(formatFoldedRows(stackRows(t, lines)), "main+0x1d (/w);mid+0x9 (/w);leaf (/w) 7\n");

    AggrTable both;
    both.key_names = {"ustack", "kstack"};
    both.entries.push_back(entry({u32("ustack", 1), u32("kstack", 2)}, 3));
    both.entries.push_back(entry({u32("ustack", 1), u32("kstack", 0)}, 1));
    EXPECT_EQ(formatFoldedRows(stackRows(both, lines)),
              "main+0x1d (/w);mid+0x9 (/w);leaf (/w);do_syscall_64+0x87;__x64_sys_getppid+0x4 3\n"
              "main+0x1d (/w);mid+0x9 (/w);leaf (/w);[stack not kept] 1\n");
}

// trace --kstack --ustack: both stacks under the event (kernel first), both arrays in JSON.
TEST(UserStackPrint, KernelThenUserStackUnderTheEvent) {
    const std::vector<std::string> k{"__x64_sys_getppid+0x4"};
    const std::vector<std::string> u{"getppid+0x7 (/libc.so.6)", "main+0x1d (/w)"};
    EventFormat f;
    f.kernel_stack = [&](std::uint32_t, std::uint32_t id) {
        return id == 2 ? &k : id == 3 ? &u : nullptr;
    };
    Event ev;
    ev.probe_id = 1;
    ev.spec = "kprobe:__x64_sys_getppid";
    ev.comm = "w";
    ev.values = {u32("kstack", 2), u32("ustack", 3)};
    auto print = [&](bool json) {
        std::ostringstream os;
        auto p = makePrinter(json, os);
        printEvent(*p, ev, f);
        p->flush();
        return os.str();
    };
    const std::string text = print(false);
    EXPECT_NE(text.find("\n             __x64_sys_getppid+0x4\n             getppid+0x7 "
                        "(/libc.so.6)\n             main+0x1d (/w)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("ustack="), std::string::npos) << text;
    auto j = nlohmann::json::parse(print(true));
    EXPECT_EQ(j["kstack_id"], 2);
    EXPECT_EQ(j["ustack_id"], 3);
    EXPECT_EQ(j["ustack"], nlohmann::json(u));
    EXPECT_EQ(j["kstack"], nlohmann::json(k));
    // A user stack alone.
    ev.values = {u32("ustack", 0)};
    EXPECT_TRUE(nlohmann::json::parse(print(true))["ustack"].is_null());
}

TEST(UserStackOptions, TraceAndCountRefusals) {
    using cli::parseTraceOptions;
    auto ok = parseTraceOptions({"uprobe:/bin/true:main", "--ustack", "--stack-depth", "8"});
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->ustack, "fp");
    EXPECT_EQ(ok->stack_depth, 8u);
    EXPECT_TRUE(parseTraceOptions({"uprobe:/bin/true:main", "--ustack=fp"}));
    EXPECT_TRUE(parseTraceOptions({"kprobe:do_sys_openat2", "--kstack", "--ustack"}));

    auto dwarf = parseTraceOptions({"uprobe:/bin/true:main", "--ustack=dwarf"});
    ASSERT_TRUE(dwarf) << dwarf.error().message;
    EXPECT_EQ(dwarf->ustack, "dwarf");
    EXPECT_EQ(dwarf->stack_size, 0u);
    auto sized =
        parseTraceOptions({"uprobe:/bin/true:main", "--ustack=dwarf", "--stack-size", "512"});
    ASSERT_TRUE(sized) << sized.error().message;
    EXPECT_EQ(sized->stack_size, 512u);
    EXPECT_FALSE(parseTraceOptions({"uprobe:/bin/true:main", "--ustack", "--stack-size", "512"}));
    EXPECT_FALSE(
        parseTraceOptions({"uprobe:/bin/true:main", "--ustack=dwarf", "--stack-size", "0"}));
    EXPECT_FALSE(
        parseTraceOptions({"uprobe:/bin/true:main", "--ustack=dwarf", "--stack-size", "3585"}));
    EXPECT_TRUE(
        parseTraceOptions({"uprobe:/bin/true:main", "--ustack=dwarf", "--stack-depth", "8"}));
    // The ptrace backend copies the same snapshot; frame pointers are walked in the module.
    EXPECT_TRUE(parseTraceOptions(
        {"uprobe:/bin/true:main", "--ustack=dwarf", "--backend", "ptrace", "--", "true"}));
    EXPECT_FALSE(parseTraceOptions({"uprobe:/bin/true:main", "--ustack=lbr"}));
    EXPECT_FALSE(parseTraceOptions({"syscall:getppid", "--ustack"}));
    EXPECT_FALSE(parseTraceOptions({"uprobe:/bin/true:main", "--ustack", "--stack-depth", "0"}));
    EXPECT_FALSE(parseTraceOptions({"uprobe:/bin/true:main", "--ustack", "--backend", "ptrace"}));
    EXPECT_FALSE(parseTraceOptions(
        {"uprobe:/bin/true:main", "--ustack", "--format", "perfetto", "-o", "x.pftrace"}));

    using cli::AggrMode;
    using cli::parseAggrOptions;
    auto c = parseAggrOptions(AggrMode::Count,
                              {"uprobe:/bin/true:main", "--by", "ustack", "--format", "folded"});
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_TRUE(parseAggrOptions(AggrMode::Count,
                                 {"kprobe:x", "--by", "kstack,ustack", "--stack-depth", "3"}));
    EXPECT_FALSE(parseAggrOptions(
        AggrMode::Count, {"uprobe:/bin/true:main", "--by", "ustack", "--backend", "ptrace"}));
    EXPECT_FALSE(
        parseAggrOptions(AggrMode::Hist, {"uprobe:/bin/true:main n=$arg1", "n", "--by", "ustack"}));
}

TEST(UserStackSnapshot, EndOfTraceSummary) {
    EXPECT_EQ(userSnapshotSummary({5, 0, 0, 0}, 3072),
              "user stacks (dwarf): 5 unwound, 0 stopped early, 0 filled the 3072-byte copy");
    EXPECT_EQ(userSnapshotSummary({2, 2, 2, 2}, 8),
              "user stacks (dwarf): 2 unwound, 2 stopped early, 2 filled the 8-byte copy, 2 "
              "stopped at its end (--stack-size can take more)");
    // A main thread's copy is filled by its environment above main: the walks that end at
    // the outermost frame or elsewhere say nothing of --stack-size.
    EXPECT_EQ(userSnapshotSummary({239, 4, 239, 0}, 3072),
              "user stacks (dwarf): 239 unwound, 4 stopped early, 239 filled the 3072-byte copy");
}

// A library loaded after an image's maps were read (dlopen) is in none of them: its frames
// make refreshMissing ask the source again for that image (the kernel renders the address
// space it kept again), once per page not found; a page no mapping holds even then is not
// asked about again, another is.
TEST(UserStackText, RefreshMissingReadsAgainForCodeMappedSince) {
    Pie pie = openPie();
    const std::uint64_t lib = 0x7f1000000000;  // where the "library" (fx_pie again) goes
    std::string later = pieMaps(pie.elf);
    for (const auto& s : pie.elf.loadSegments())
        later +=
            fmt::format("{:x}-{:x} r{}{}p {:08x} fd:01 4243 {}\n", lib + (s.vaddr & ~0xfffULL),
                        lib + ((s.vaddr + s.memsz + 0xfff) & ~0xfffULL), s.writable() ? 'w' : '-',
                        s.executable() ? 'x' : '-', s.offset & ~0xfffULL, FX_PIE_PATH);
    UserSymbolizer sym("/nonexistent");
    int asked = 0;
    sym.setMapsSource([&](UserImage image) -> std::optional<std::string> {
        EXPECT_EQ(image, UserImage(62, 3));
        return ++asked == 1 ? pieMaps(pie.elf) : later;
    });
    const UserImage image(62, 3);
    ASSERT_TRUE(sym.capture(image));
    const std::uint64_t in_lib = lib + pie.work->value;
    const std::uint64_t in_pie = kBase + pie.main->value + 0x10;
    EXPECT_EQ(sym.frameText(image, in_lib, true), fmt::format("{:#x} [unknown]", in_lib));
    const std::vector<std::uint64_t> mapped{in_pie};
    EXPECT_FALSE(sym.refreshMissing(image, mapped));  // nothing missing: not asked
    EXPECT_EQ(asked, 1);
    const std::vector<std::uint64_t> frames{in_lib, in_pie};
    EXPECT_TRUE(sym.refreshMissing(image, frames));
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(sym.frameText(image, in_lib, false), fmt::format("fx_work ({})", FX_PIE_PATH));
    // Held by no mapping at all: one more read for its page, then none.
    const std::vector<std::uint64_t> nowhere{0x10, 0x20};
    EXPECT_TRUE(sym.refreshMissing(image, nowhere));
    EXPECT_EQ(asked, 3);
    EXPECT_FALSE(sym.refreshMissing(image, nowhere));
    EXPECT_EQ(asked, 3);
    const std::vector<std::uint64_t> elsewhere{0x5000};
    EXPECT_TRUE(sym.refreshMissing(image, elsewhere));
    EXPECT_EQ(asked, 4);
    EXPECT_FALSE(sym.refreshMissing(UserImage(63), frames));  // no maps kept: nothing to miss
}

// Without a kept address space (maps_seq 0: the ptrace backend) refreshMissing reads /proc
// again, and takes its maps only while they are the same address space: the program's
// first mapping and [vdso] where they were. After an exec they are not, and the frames stay
// unnamed rather than named from another program.
TEST(UserStackText, ProcRefreshTakesNoMapsOfAnotherExec) {
    Pie pie = openPie();
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("probectl-reexec-{}", getpid());
    std::filesystem::create_directories(dir / "64");
    const std::string vdso = "7ffc19a00000-7ffc19a02000 r-xp 00000000 00:00 0 [vdso]\n";
    const std::uint64_t lib = 0x7f1000000000;
    std::string lib_maps;
    for (const auto& s : pie.elf.loadSegments())
        lib_maps +=
            fmt::format("{:x}-{:x} r{}{}p {:08x} fd:01 4243 {}\n", lib + (s.vaddr & ~0xfffULL),
                        lib + ((s.vaddr + s.memsz + 0xfff) & ~0xfffULL), s.writable() ? 'w' : '-',
                        s.executable() ? 'x' : '-', s.offset & ~0xfffULL, FX_PIE_PATH);
    const auto write = [&](const std::string& text) {
        std::ofstream(dir / "64" / "maps", std::ios::trunc) << text;
    };
    write(pieMaps(pie.elf) + vdso);
    UserSymbolizer sym(dir.string());
    ASSERT_TRUE(sym.capture(64));
    const std::uint64_t in_lib = lib + pie.work->value;
    const std::vector<std::uint64_t> frames{in_lib};
    const std::string unknown = fmt::format("{:#x} [unknown]", in_lib);
    // Another exec: the same program, its [vdso] elsewhere.
    write(pieMaps(pie.elf) + lib_maps + "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n");
    EXPECT_TRUE(sym.refreshMissing(64, frames));
    EXPECT_EQ(sym.frameText(64, in_lib, false), unknown);
    // The same address space with the library mapped since.
    write(pieMaps(pie.elf) + lib_maps + vdso);
    const std::vector<std::uint64_t> again{lib, in_lib + 0x1000};  // pages not looked for
    EXPECT_TRUE(sym.refreshMissing(64, again));
    EXPECT_EQ(sym.frameText(64, in_lib, false), fmt::format("fx_work ({})", FX_PIE_PATH));
    std::filesystem::remove_all(dir);
}
