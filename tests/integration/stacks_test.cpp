// Kernel stacks against the real module: a syscall's kernel function has the syscall entry
// path on its stack, in records (trace --kstack, text and JSON, and through the library) and
// as aggregation keys (count --by kstack, whose per-stack counts add up to the calls made);
// a depth below the stack's is counted as truncated and shown.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "itest_util.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/session.hpp"

using itest::Ran;
using itest::sh;
using itest::why;
using itest::Workload;

namespace {

bool hasFrame(const std::vector<std::string>& frames, const std::string& prefix) {
    return std::any_of(frames.begin(), frames.end(),
                       [&](const std::string& f) { return f.starts_with(prefix); });
}

std::vector<nlohmann::json> jsonLines(const std::string& text, const std::string& type) {
    std::vector<nlohmann::json> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
        auto j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
        if (!j.is_discarded() && j.value("type", "") == type)
            out.push_back(std::move(j));
    }
    return out;
}

// `probectl count ... --by kstack --format folded` lines: (frames root first, count).
std::vector<std::pair<std::string, std::uint64_t>> foldedLines(const std::string& text) {
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
    const auto lines = foldedLines(folded);
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
