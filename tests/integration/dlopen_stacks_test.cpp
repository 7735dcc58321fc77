// User stacks with frames in a library the process dlopen()s after probectl read its maps
// for an earlier stack: probectl read a process's mappings once per address space, so such
// frames printed "[unknown]" (and DWARF walks stopped there). dlopen_target calls probed()
// from the program, waits until probectl has shown that stack (its maps are read by then),
// then dlopen()s dlopen_lib, which calls probed() back: the second stack must name the
// library's lib_calls_back. With the kernel backend the process is gone when that stack is
// read (the module keeps its address space again: mm_pin.c); the ptrace backend reads /proc,
// so there the workload waits until the second stack is shown too.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "stack_text.hpp"
#include "uapi/probectl.h"

using itest::Ran;
using itest::sh;

namespace {

const std::vector<std::string> kBefore = {"probed", "before_dlopen", "main"};
const std::vector<std::string> kFromLib = {"probed", "lib_calls_back", "main"};

std::string target() {
    return itest::workload("dlopen_target");
}
std::string library() {
    return itest::workload("libdlopen_lib.so");
}

// Runs `probectl` (a probectl command line ending in " -- ", its output sent where it says)
// on dlopen_target, letting the workload go on to its dlopen() once `shown` holds
// before_dlopen, and with `hold` exit once it holds lib_calls_back. A wait that never ends
// (probectl failed) still lets it go after a minute, for the checks to say what is missing.
Ran runGated(const std::string& probectl, const std::string& shown, bool hold) {
    const std::string fifo = "/tmp/dlopen-stacks.fifo";
    const std::string wait = "w() { i=0; until grep -q \"$1\" " + shown +
                             " 2>/dev/null; do i=$((i+1)); [ $i -ge 1200 ] && return 1; "
                             "sleep 0.05; done; }; ";
    return sh("rm -f " + fifo + " " + shown + "; mkfifo " + fifo + " && exec 3<>" + fifo + "; " +
              wait + probectl + target() + " " + fifo + " " + library() + (hold ? " hold" : "") +
              " & p=$!; w before_dlopen; echo go >&3; " +
              (hold ? "w lib_calls_back; echo go >&3; " : "") +
              "wait $p; rc=$?; exec 3>&-; rm -f " + fifo + "; exit $rc");
}

// The names of `wanted` among the frames in the workload or the library, innermost first.
std::vector<std::string> chain(const std::vector<std::string>& frames,
                               const std::vector<std::string>& wanted) {
    std::vector<std::string> out;
    for (const auto& f : frames)
        if ((f.ends_with("(" + target() + ")") || f.ends_with("(" + library() + ")")) &&
            std::find(wanted.begin(), wanted.end(), itest::frameName(f)) != wanted.end())
            out.push_back(itest::frameName(f));
    return out;
}

// trace's two events: the first through before_dlopen, the second through the library.
void expectTraceEvents(const std::string& file, const Ran& r) {
    const std::string text = itest::readFile(file);
    const auto evs = itest::jsonLines(text, "event");
    ASSERT_EQ(evs.size(), 2u) << text << r.out;
    for (std::size_t i = 0; i < 2; i++) {
        ASSERT_TRUE(evs[i]["ustack"].is_array()) << evs[i].dump();
        const auto frames = evs[i]["ustack"].get<std::vector<std::string>>();
        EXPECT_EQ(chain(frames, i == 0 ? kBefore : kFromLib), i == 0 ? kBefore : kFromLib)
            << evs[i].dump();
        for (const auto& f : frames)
            EXPECT_FALSE(f.ends_with("[unknown]")) << evs[i].dump();
    }
}

// The stacks of count's text tables (each stack's frame lines, then its count line), every
// read-out's.
std::vector<std::vector<std::string>> countStacks(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> cur;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string line = text.substr(at, nl - at);
        if (line.starts_with("    ")) {
            cur.push_back(line.substr(4));
        } else if (!cur.empty()) {
            out.push_back(std::move(cur));
            cur.clear();
        }
    }
    return out;
}

}  // namespace

// trace --ustack and --ustack=dwarf: the stack taken after the dlopen names the library's
// function, and the walk goes on through it to main.
TEST(DlopenStacks, TraceNamesFramesInALibraryLoadedLater) {
    for (const std::string mode : {"--ustack", "--ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string file = "/tmp/dlopen-stacks.json";
        Ran r = runGated("probectl trace uprobe:" + target() + ":probed " + mode +
                             " --format json -o " + file + " -- ",
                         file, false);
        ASSERT_EQ(r.status, 0) << r.out;
        expectTraceEvents(file, r);
    }
}

// The ptrace backend (--ustack=dwarf, maps from /proc while the process lives).
TEST(DlopenStacks, PtraceTraceNamesFramesInALibraryLoadedLater) {
    const std::string file = "/tmp/dlopen-stacks-ptrace.json";
    Ran r = runGated("probectl trace --backend=ptrace uprobe:" + target() +
                         ":probed --ustack=dwarf --format json -o " + file + " -- ",
                     file, true);
    ASSERT_EQ(r.status, 0) << r.out;
    expectTraceEvents(file, r);
}

// count --by ustack, both modes: the tables of each read-out (--interval, so that the first
// stack is symbolized before the dlopen) hold the stack through the library, named.
TEST(DlopenStacks, CountByUstackNamesFramesInALibraryLoadedLater) {
    for (const std::string mode : {"", " --ustack=dwarf"}) {
        SCOPED_TRACE(mode);
        const std::string file = "/tmp/dlopen-stacks.txt";
        Ran r = runGated("probectl count uprobe:" + target() + ":probed --by ustack" + mode +
                             " --interval 100ms --cumulative -o " + file + " -- ",
                         file, false);
        ASSERT_EQ(r.status, 0) << r.out;
        const std::string text = itest::readFile(file);
        int before = 0, from_lib = 0;
        for (const auto& frames : countStacks(text)) {
            if (chain(frames, kBefore) == kBefore)
                before++;
            if (std::any_of(frames.begin(), frames.end(),
                            [](const std::string& f) { return f.ends_with("[unknown]"); }))
                ADD_FAILURE() << "a frame not named:\n" << text;
            from_lib += chain(frames, kFromLib) == kFromLib;
        }
        EXPECT_GE(before, 1) << text << r.out;
        EXPECT_GE(from_lib, 1) << text << r.out;
    }
}

// More processes that dlopen() after their maps were read than the module keeps again at
// once (PROBECTL_MM_PIN_AGAIN), all gone before their second stack is read (records held
// back by a slow drain): the frames of those not kept again cannot be named, and the
// summary must count them. They once printed "[unknown]" with nothing said.
TEST(DlopenStacks, ProcessesNotKeptAgainAreCounted) {
    itest::ModuleParam slow("drain_interval_ms", "5000");
    ASSERT_TRUE(slow.ok());
    const int procs = PROBECTL_MM_PIN_AGAIN + 8;
    const std::string file = "/tmp/dlopen-again.json";
    const std::string fifo = "/tmp/dlopen-again.fifo";
    // Each process waits on its own FIFO, released once every first stack was shown.
    const std::string script = fmt::format(
        "i=0; while [ $i -lt {0} ]; do rm -f {1}$i; mkfifo {1}$i; {2} {1}$i {3} & "
        "i=$((i+1)); done; "
        "n=0; until [ \"$(grep -c before_dlopen {4} 2>/dev/null)\" -ge {0} ]; do "
        "n=$((n+1)); [ $n -ge 1200 ] && break; sleep 0.05; done; "
        "i=0; while [ $i -lt {0} ]; do echo go > {1}$i; i=$((i+1)); done; wait; "
        "rm -f {1}*",
        procs, fifo, target(), library(), file);
    Ran r = sh("rm -f " + file + "; probectl trace uprobe:" + target() +
               ":probed --ustack --format json -o " + file + " -f -- sh -c '" + script + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string text = itest::readFile(file);
    const auto evs = itest::jsonLines(text, "event");
    ASSERT_EQ(evs.size(), static_cast<std::size_t>(2 * procs)) << text << r.out;
    int named = 0, unnamed = 0;
    for (const auto& ev : evs) {
        const auto frames = ev["ustack"].get<std::vector<std::string>>();
        if (chain(frames, kBefore) == kBefore)
            continue;
        if (chain(frames, kFromLib) == kFromLib)
            named++;
        else if (std::any_of(frames.begin(), frames.end(),
                             [](const std::string& f) { return f.ends_with("[unknown]"); }))
            unnamed++;
        else
            ADD_FAILURE() << "neither stack: " << ev.dump();
    }
    std::smatch m;
    std::uint64_t counted = 0;
    if (std::regex_search(r.out, m,
                          std::regex("([0-9]+) hits? in processes whose maps were not kept")))
        counted = std::stoull(m[1]);
    // Every unnamed frame is one of the counted hits; the bound was reached.
    EXPECT_LE(static_cast<std::uint64_t>(unnamed), counted) << r.out;
    EXPECT_GE(counted, 1u) << text << r.out;
    EXPECT_GE(named, PROBECTL_MM_PIN_AGAIN) << text << r.out;
}

// count through a library unloaded and loaded again (the ptrace tests' redlopen: dlopen, 7
// calls, dlclose, dlopen, 7 calls): a kernel uprobe is on the file's inode, so it sees the
// second copy's calls too, 14 in all.
TEST(DlopenStacks, CountSeesALibraryLoadedAgain) {
    const std::string probe = "uprobe:" + library() + ":lib_calls_back";
    auto r = sh(itest::tablesOnly("probectl count " + probe + " -- " + itest::workload("redlopen") +
                                  " " + library() + " 7 again"));
    ASSERT_EQ(r.status, 0) << r.out;
    // PROBE COUNT FILTERED
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + probe + " +14 +0\n"))) << r.out;
}
