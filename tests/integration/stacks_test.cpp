// Kernel stacks against the real module: a syscall's kernel function has the syscall entry
// path on its stack, in records (trace --kstack, text and JSON, and through the library) and
// as aggregation keys (count --by kstack, whose per-stack counts add up to the calls made);
// a depth below the stack's is counted as truncated and shown. syscall: specs take theirs
// at the entry, with the strace line unchanged.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/session.hpp"
#include "stack_text.hpp"

using itest::Ran;
using itest::sh;
using itest::why;
using itest::Workload;

namespace {

using itest::jsonLines;

bool hasFrame(const std::vector<std::string>& frames, const std::string& prefix) {
    return std::any_of(frames.begin(), frames.end(),
                       [&](const std::string& f) { return f.starts_with(prefix); });
}

// `probectl count ... --by kstack --format folded` lines: (frames root first, count).
std::vector<std::pair<std::string, std::uint64_t>> kstackFoldedLines(const std::string& text) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string line = text.substr(at, nl - at);
        const auto sp = line.rfind(' ');
        if (sp == std::string::npos || line.find(';') == std::string::npos)
            continue;
        out.emplace_back(line.substr(0, sp), std::stoull(line.substr(sp + 1)));
    }
    return out;
}

}  // namespace

// Every openat of the workload (the loader's and its own) reaches do_sys_openat2 from the
// syscall entry: the stack starts at the probed function and has do_syscall_64 in it.
TEST(KernelStacks, TraceShowsTheSyscallEntryPath) {
    const std::string file = "/tmp/kstack.json";
    Ran r = sh("probectl trace kprobe:do_sys_openat2 --kstack --format json -o " + file + " -- " +
               itest::workload("open_file") + " /etc/hostname");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("kernel stacks: "), std::string::npos) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_FALSE(events.empty()) << itest::readFile(file);
    for (const auto& ev : events) {
        ASSERT_TRUE(ev.contains("kstack") && ev["kstack"].is_array()) << ev.dump();
        const auto frames = ev["kstack"].get<std::vector<std::string>>();
        ASSERT_FALSE(frames.empty()) << ev.dump();
        EXPECT_TRUE(frames.front().starts_with("do_sys_openat2")) << ev.dump();
        EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << ev.dump();
        EXPECT_GT(ev["kstack_id"].get<std::uint32_t>(), 0u);
    }
    const auto summary = jsonLines(itest::readFile(file), "summary");
    ASSERT_EQ(summary.size(), 1u);
    EXPECT_EQ(summary[0]["probes"][0]["hits"].get<std::size_t>(), events.size());
}

// A kprobe on a syscall wrapper reads the syscall's arguments from the user's registers
// (the syscall flag); its stack is taken all the same. It was refused once, with the advice
// to use the very spec it was given.
TEST(KernelStacks, SyscallWrapperKprobeHasItsStack) {
    const std::string file = "/tmp/kstack-wrapper.json";
    Ran r = sh("probectl trace kprobe:__x64_sys_getppid --kstack --format json -o " + file +
               " -- " + itest::workload("aggr_target") + " syscalls 3");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), 3u) << itest::readFile(file);
    for (const auto& ev : events) {
        const auto frames = ev["kstack"].get<std::vector<std::string>>();
        ASSERT_FALSE(frames.empty()) << ev.dump();
        EXPECT_TRUE(frames.front().starts_with("__x64_sys_getppid")) << ev.dump();
        EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << ev.dump();
    }
}

// At a tracepoint the stack is the one the kernel was on when it fired: a fork's goes
// through kernel_clone from the syscall entry.
TEST(KernelStacks, TracepointStackIsTheFiringPath) {
    const std::string file = "/tmp/kstack-tp.json";
    Ran r = sh("probectl trace tracepoint:sched:sched_process_fork --kstack --format json -o " +
               file + " -- " + itest::workload("uprobe_target") + " fork 1");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_EQ(events.size(), 1u) << itest::readFile(file);  // the command's one fork
    const auto frames = events[0]["kstack"].get<std::vector<std::string>>();
    EXPECT_TRUE(hasFrame(frames, "kernel_clone")) << events[0].dump();
    EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << events[0].dump();
    // Nothing of probectl's own handler is shown as the firing path.
    for (const auto& f : frames)
        EXPECT_EQ(f.find("[probectl]"), std::string::npos) << events[0].dump();
}

// Text: the frames one per line, indented, under the event line.
TEST(KernelStacks, TextPrintsOneFramePerLineUnderTheEvent) {
    Ran r = sh("probectl trace kprobe:do_sys_openat2 --kstack -o /tmp/kstack.txt -- " +
               itest::workload("open_file") + " /etc/hostname");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string text = itest::readFile("/tmp/kstack.txt");
    EXPECT_NE(text.find(" kprobe:do_sys_openat2  arg1="), std::string::npos) << text;
    EXPECT_NE(text.find("\n             do_sys_openat2"), std::string::npos) << text;
    EXPECT_NE(text.find("\n             do_syscall_64+0x"), std::string::npos) << text;
}

// The library: ids in the values, frames from the map; a depth of 1 keeps the innermost
// frame (at a return, the caller's return address) and counts the rest as truncated.
TEST(KernelStacks, LibraryDepthAndTruncation) {
    Workload w({itest::workload("open_file"), "/etc/hostname"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.prepare = [](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::appendKernelStackArg(req, args, 1);
    };
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("kretprobe:do_sys_openat2");
    ASSERT_TRUE(id) << why(id);
    w.release();
    EXPECT_EQ(w.wait(), 0);
    std::vector<std::uint32_t> ids;
    auto st = s->stop([&](const probectl::Event& ev) {
        ASSERT_EQ(ev.values.size(), 1u);
        EXPECT_EQ(ev.values[0].name, "kstack");
        ids.push_back(static_cast<std::uint32_t>(ev.values[0].raw));
    });
    ASSERT_TRUE(st) << why(st);
    ASSERT_FALSE(ids.empty());
    auto ks = probectl::KernelStacks::open();
    ASSERT_TRUE(ks) << why(ks);
    ASSERT_TRUE(ks->read(*id));
    EXPECT_GE(ks->truncated(), ids.size());
    EXPECT_EQ(ks->lost(), 0u);
    for (auto sid : ids) {
        const probectl::KernelStack* k = ks->stack(sid);
        ASSERT_NE(k, nullptr) << sid;
        EXPECT_EQ(k->frames.size(), 1u);
        EXPECT_TRUE(k->truncated);
        const auto* lines = ks->lines(*id, sid);
        ASSERT_NE(lines, nullptr);
        EXPECT_EQ(lines->back(), "...");
    }
    // A probe of a session without stacks has no map.
    probectl::SessionOptions plain;
    plain.tgids = {static_cast<std::uint32_t>(getpid())};
    auto other = probectl::Session::open(plain);
    ASSERT_TRUE(other) << why(other);
    auto oid = other->add("kprobe:do_sys_openat2");
    ASSERT_TRUE(oid) << why(oid);
    auto none = ks->read(*oid);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().err, EINVAL);
}

// Refusals: user-space probes have no kernel stack worth taking; the module refuses a
// persistent probe (no session, no map) and a depth out of range.
TEST(KernelStacks, Refusals) {
    Ran r = sh("probectl trace --kstack uprobe:" + itest::workload("uprobe_target") +
               ":pc_add -- true");
    EXPECT_EQ(r.status, 2) << r.out;
    Ran d = sh("probectl trace --kstack --stack-depth 0 kprobe:do_sys_openat2 -- true");
    EXPECT_EQ(d.status, 2) << d.out;

    auto c = itest::connectOrDie();
    probectl::ProbeRequest req;
    req.kind = probectl::ProbeKind::Kprobe;
    req.symbol = "do_sys_openat2";
    req.flags = probectl::kProbeFlagPersistent;
    std::vector<probectl::FetchArg> args;
    ASSERT_TRUE(probectl::appendKernelStackArg(req, args, 0));
    auto p = c.addProbe(req);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().err, EINVAL);
    req.flags = 0;
    req.fetch[0].operand = probectl::kStackMaxDepth + 1;
    auto q = c.addProbe(req);
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().err, EINVAL);
}

// count --by kstack: the calls the workload made, all from the syscall entry, and the
// per-stack counts (folded, JSON) add up to them exactly: nothing dropped, nothing twice.
TEST(KernelStacks, CountByStackAddsUpToTheCalls) {
    const int n = itest::debugKernel() ? 20 : 500;
    const std::string run = " -- " + itest::workload("getppid_loop") + " " + std::to_string(n);
    Ran r =
        sh("probectl count kprobe:__x64_sys_getppid --by kstack --format folded "
           "-o /tmp/kstack.folded" +
           run);
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string folded = itest::readFile("/tmp/kstack.folded");
    const auto lines = kstackFoldedLines(folded);
    ASSERT_FALSE(lines.empty()) << folded;
    std::uint64_t total = 0;
    for (const auto& [frames, count] : lines) {
        total += count;
        // Root first: the entry path, then the probed function last.
        EXPECT_NE(frames.find("do_syscall_64"), std::string::npos) << folded;
        const std::string leaf = frames.substr(frames.rfind(';') + 1);
        EXPECT_TRUE(leaf.starts_with("__x64_sys_getppid") || leaf.starts_with("__do_sys_getppid"))
            << folded;
    }
    EXPECT_EQ(total, static_cast<std::uint64_t>(n)) << folded;

    Ran j =
        sh("probectl count kprobe:__x64_sys_getppid --by comm,kstack --format json -o "
           "/tmp/kstack-count.json" +
           run);
    ASSERT_EQ(j.status, 0) << j.out;
    const auto tables = jsonLines(itest::readFile("/tmp/kstack-count.json"), "aggregation");
    ASSERT_EQ(tables.size(), 1u) << itest::readFile("/tmp/kstack-count.json");
    std::uint64_t sum = 0;
    for (const auto& e : tables[0]["entries"]) {
        sum += e["count"].get<std::uint64_t>();
        EXPECT_EQ(e["key"]["comm"], "getppid_loop") << e.dump();
        ASSERT_TRUE(e["kstack"].is_array()) << e.dump();
        EXPECT_TRUE(hasFrame(e["kstack"].get<std::vector<std::string>>(), "do_syscall_64"))
            << e.dump();
    }
    EXPECT_EQ(sum, static_cast<std::uint64_t>(n));
    EXPECT_EQ(tables[0]["hits"].get<std::uint64_t>(), static_cast<std::uint64_t>(n));

    Ran t = sh("probectl count kprobe:__x64_sys_getppid --by kstack" + run);
    ASSERT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("\n    do_syscall_64+0x"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("kernel stacks: "), std::string::npos) << t.out;
}

TEST(KernelStacks, CountRefusals) {
    EXPECT_EQ(sh("probectl count kprobe:do_sys_openat2 --format folded -- true").status, 2);
    EXPECT_EQ(
        sh("probectl count kprobe:do_sys_openat2 --by kstack --stack-depth 200 -- true").status, 2);
    EXPECT_EQ(sh("probectl hist 'kprobe:vfs_read n=$arg3' n --by kstack -- true").status, 2);
}

// A syscall: spec's stack is taken at the syscall's entry, in the kretprobe's entry handler:
// the wrapper is the innermost frame, over the entry path; the strace line is unchanged.
// It was refused once (the return has only the entry path left, and the stack's value
// would have shifted the ones the strace line is decoded from).
TEST(KernelStacks, SyscallStackIsTakenAtTheEntry) {
    const std::string file = "/tmp/kstack-sys.json";
    Ran r = sh("probectl trace syscall:openat --kstack --format json -o " + file + " -- " +
               itest::workload("open_file") + " /etc/hostname");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto events = jsonLines(itest::readFile(file), "event");
    ASSERT_FALSE(events.empty()) << itest::readFile(file);
    bool ours = false;
    for (const auto& ev : events) {
        ours = ours || ev.value("syscall", "")
                           .starts_with(
                               "openat(AT_FDCWD, \"/etc/hostname\", "
                               "O_RDONLY) = ");
        ASSERT_TRUE(ev.contains("kstack") && ev["kstack"].is_array()) << ev.dump();
        const auto frames = ev["kstack"].get<std::vector<std::string>>();
        ASSERT_FALSE(frames.empty()) << ev.dump();
        EXPECT_TRUE(frames.front().starts_with("__x64_sys_openat")) << ev.dump();
        EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << ev.dump();
        EXPECT_TRUE(hasFrame(frames, "entry_SYSCALL_64")) << ev.dump();
        EXPECT_GT(ev["kstack_id"].get<std::uint32_t>(), 0u);
        // The stack is no value of the call's: the arguments are the syscall's alone.
        EXPECT_FALSE(ev.contains("args")) << ev.dump();
    }
    EXPECT_TRUE(ours) << itest::readFile(file);
    const auto summary = jsonLines(itest::readFile(file), "summary");
    ASSERT_EQ(summary.size(), 1u);
    EXPECT_EQ(summary[0]["probes"][0]["hits"].get<std::size_t>(), events.size());

    // Text: the strace line, then the frames under it.
    Ran t =
        sh("probectl trace syscall:openat --kstack -o /tmp/kstack-sys.txt -- cat "
           "/etc/hostname");
    ASSERT_EQ(t.status, 0) << t.out;
    const std::string text = itest::readFile("/tmp/kstack-sys.txt");
    EXPECT_NE(text.find("openat(AT_FDCWD, \"/etc/hostname\", O_RDONLY) = 3\n"
                        "             __x64_sys_openat"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\n             do_syscall_64+0x"), std::string::npos) << text;
}

// --syscalls with --kstack: every call decodes as it does without (the stack among the
// values read at the entry moves none of the strace plan's), and each has its own wrapper
// on top. Compared on a fixed workload from its marker on.
TEST(KernelStacks, SyscallLinesUnchangedByTheStack) {
    const std::string in = "/tmp/kstack-sys.in", out = "/tmp/kstack-sys.out";
    std::ofstream(in) << "probectl syscall workload input\n";
    const std::string cmd = itest::workload("sys_workload") + " " + in + " " + out;
    auto calls = [&](const std::string& flags, std::vector<nlohmann::json>& events) {
        const std::string file = "/tmp/kstack-lines.json";
        Ran r = sh("probectl trace --syscalls=openat,read --format json -o " + file + " " + flags +
                   " -- " + cmd);
        ASSERT_EQ(r.status, 0) << r.out;
        bool on = false;
        for (auto& ev : jsonLines(itest::readFile(file), "event")) {
            on = on || ev.value("syscall", "").find("/probectl-syscall-workload-begin") !=
                           std::string::npos;
            if (on)
                events.push_back(std::move(ev));
        }
    };
    std::vector<nlohmann::json> plain, stacked;
    calls("", plain);
    calls("--kstack", stacked);
    // The marker, 2 more opens (one fails) and 2 reads, as syscall_test.cpp counts them.
    ASSERT_GE(plain.size(), 5u);
    ASSERT_EQ(stacked.size(), plain.size());
    for (std::size_t i = 0; i < plain.size(); i++) {
        EXPECT_EQ(stacked[i]["syscall"], plain[i]["syscall"]) << i;
        // Each argument as decoded (raw pointers differ from run to run).
        ASSERT_EQ(stacked[i]["syscall_args"].size(), plain[i]["syscall_args"].size());
        for (std::size_t a = 0; a < plain[i]["syscall_args"].size(); a++)
            EXPECT_EQ(stacked[i]["syscall_args"][a]["decoded"],
                      plain[i]["syscall_args"][a]["decoded"])
                << stacked[i].dump();
        const std::string name = stacked[i]["probe"].get<std::string>().substr(8);
        const auto frames = stacked[i]["kstack"].get<std::vector<std::string>>();
        ASSERT_FALSE(frames.empty()) << stacked[i].dump();
        EXPECT_TRUE(frames.front().starts_with("__x64_sys_" + name)) << stacked[i].dump();
        EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << stacked[i].dump();
        EXPECT_FALSE(plain[i].contains("kstack"));
    }
}

// count syscall:NAME --by kstack: the stacks are the entry's, and their counts add up to
// the hits (exactly the calls made, for getppid).
TEST(KernelStacks, CountSyscallByStackAddsUpToTheHits) {
    const int n = itest::debugKernel() ? 20 : 300;
    auto table = [](const std::string& cmd) {
        const std::string file = "/tmp/kstack-sys-count.json";
        Ran r = sh("probectl count " + cmd.substr(0, cmd.find(" -- ")) +
                   " --by kstack --format json -o " + file + cmd.substr(cmd.find(" -- ")));
        EXPECT_EQ(r.status, 0) << r.out;
        const auto tables = jsonLines(itest::readFile(file), "aggregation");
        EXPECT_EQ(tables.size(), 1u) << itest::readFile(file);
        return tables.empty() ? nlohmann::json() : tables[0];
    };
    for (const auto& [cmd, wrapper] :
         {std::pair<std::string, std::string>{
              "syscall:getppid -- " + itest::workload("getppid_loop") + " " + std::to_string(n),
              "__x64_sys_getppid"},
          {"syscall:openat -- " + itest::workload("open_file") + " /etc/hostname",
           "__x64_sys_openat"}}) {
        const nlohmann::json t = table(cmd);
        ASSERT_TRUE(t.contains("entries")) << cmd;
        std::uint64_t sum = 0;
        for (const auto& e : t["entries"]) {
            sum += e["count"].get<std::uint64_t>();
            ASSERT_TRUE(e["kstack"].is_array()) << e.dump();
            const auto frames = e["kstack"].get<std::vector<std::string>>();
            ASSERT_FALSE(frames.empty()) << e.dump();
            EXPECT_TRUE(frames.front().starts_with(wrapper)) << e.dump();
            EXPECT_TRUE(hasFrame(frames, "do_syscall_64")) << e.dump();
        }
        EXPECT_GT(sum, 0u) << cmd;
        EXPECT_EQ(sum, t["hits"].get<std::uint64_t>()) << t.dump();
        if (wrapper == "__x64_sys_getppid") {
            EXPECT_EQ(sum, static_cast<std::uint64_t>(n));
        }
    }
    // Folded: the wrapper is the leaf.
    Ran f = sh("probectl count syscall:openat --by kstack --format folded -o /tmp/sys.folded -- " +
               itest::workload("open_file") + " /etc/hostname");
    ASSERT_EQ(f.status, 0) << f.out;
    const auto lines = kstackFoldedLines(itest::readFile("/tmp/sys.folded"));
    ASSERT_FALSE(lines.empty()) << itest::readFile("/tmp/sys.folded");
    for (const auto& [frames, count] : lines)
        EXPECT_TRUE(frames.substr(frames.rfind(';') + 1).starts_with("__x64_sys_openat")) << frames;
}

// The library: a syscall spec's own arguments keep their order with the stack added among
// the entry reads ($retval's is read at the return, after it); a $kstack of the spec's own,
// read at the entry, is kept in the session's map too (the entry handler once had no map:
// id 0, "stack map full").
TEST(KernelStacks, SyscallOwnArgumentsAndEntryStack) {
    Workload w({itest::workload("open_file"), "/etc/hostname"});
    probectl::SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.prepare = [](probectl::ProbeRequest& req, std::vector<probectl::FetchArg>& args) {
        return probectl::appendKernelStackArg(req, args, 0);
    };
    auto s = probectl::Session::open(o);
    ASSERT_TRUE(s) << why(s);
    auto id = s->add("syscall:openat r=$retval f=+0($arg2):ustring k=$kstack3");
    ASSERT_TRUE(id) << why(id);
    w.release();
    EXPECT_EQ(w.wait(), 0);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ids;  // (k, kstack)
    bool ours = false;
    auto st = s->stop([&](const probectl::Event& ev) {
        ASSERT_EQ(ev.values.size(), 4u);
        EXPECT_EQ(ev.values[0].name, "r");
        EXPECT_EQ(ev.values[1].name, "f");
        EXPECT_EQ(ev.values[2].name, "k");
        EXPECT_EQ(ev.values[3].name, "kstack");
        if (ev.values[1].str == "/etc/hostname") {
            ours = true;
            EXPECT_GE(static_cast<std::int64_t>(ev.values[0].raw), 3) << ev.values[0].raw;
        }
        ids.emplace_back(static_cast<std::uint32_t>(ev.values[2].raw),
                         static_cast<std::uint32_t>(ev.values[3].raw));
    });
    ASSERT_TRUE(st) << why(st);
    EXPECT_TRUE(ours);
    auto ks = probectl::KernelStacks::open();
    ASSERT_TRUE(ks) << why(ks);
    ASSERT_TRUE(ks->read(*id));
    EXPECT_EQ(ks->lost(), 0u);
    for (const auto& [k, kstack] : ids) {
        for (auto sid : {k, kstack}) {
            const auto* lines = ks->lines(*id, sid);
            ASSERT_NE(lines, nullptr) << sid;
            ASSERT_FALSE(lines->empty());
            EXPECT_TRUE(lines->front().starts_with("__x64_sys_openat")) << lines->front();
        }
        EXPECT_TRUE(hasFrame(*ks->lines(*id, kstack), "do_syscall_64"));
        EXPECT_EQ(ks->stack(k)->frames.size(), 3u);  // $kstack3: the depth asked for
    }
}
