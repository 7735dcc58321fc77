// Wildcard specs against the real kernel: a glob over functions that include blacklisted
// ones attaches the rest and says what it skipped (numbers from /proc/kallsyms and the
// kprobes blacklist, read here on their own); 1 000 kprobes attach, fire and go away with
// their session; user-space and CLI globs.
#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "probectl/expand.hpp"
#include "probectl/session.hpp"

using itest::why;
using itest::Workload;
using probectl::Session;
using probectl::SessionOptions;
using probectl::SpecExpander;

namespace {

struct GlobTruth {
    std::set<std::string> functions;             // text names, one address each, not blacklisted
    std::set<std::string> blacklisted;           // text names in the kprobes blacklist
    std::set<std::string> data;                  // names with no text symbol
    std::size_t duplicates = 0;                  // text names at several addresses
    std::size_t aliases = 0;                     // further names of an address in `functions`
    std::map<std::string, std::string> address;  // of each name in `functions` or an alias
    std::size_t matched() const {
        return functions.size() + blacklisted.size() + data.size() + duplicates + aliases;
    }
};

// What a kernel glob should do, from the kernel's files.
GlobTruth kernelTruth(const std::string& glob) {
    std::set<std::string> bl;
    std::istringstream b(itest::readFile("/sys/kernel/debug/kprobes/blacklist"));
    for (std::string line; std::getline(b, line);)
        if (auto tab = line.find('\t'); tab != std::string::npos)
            bl.insert(line.substr(tab + 1, line.find_first_of(" \t", tab + 1) - tab - 1));
    std::map<std::string, std::set<std::string>> text_addrs;
    std::set<std::string> any;
    std::istringstream k(itest::readFile("/proc/kallsyms"));
    for (std::string line; std::getline(k, line);) {
        std::istringstream f(line);
        std::string addr, type, name;
        f >> addr >> type >> name;
        if (name.rfind("__pfx_", 0) == 0 || fnmatch(glob.c_str(), name.c_str(), 0) != 0)
            continue;
        any.insert(name);
        if (type == "T" || type == "t" || type == "W" || type == "w")
            text_addrs[name].insert(addr);
    }
    GlobTruth t;
    for (const auto& n : any) {
        auto it = text_addrs.find(n);
        if (it == text_addrs.end())
            t.data.insert(n);
        else if (bl.count(n))
            t.blacklisted.insert(n);
        else if (it->second.size() > 1)
            t.duplicates++;
        else
            t.functions.insert(n);
    }
    // One name per address is probed; the rest are its aliases.
    std::set<std::string> addrs;
    for (auto it = t.functions.begin(); it != t.functions.end();) {
        const std::string addr = *text_addrs[*it].begin();
        t.address[*it] = addr;
        if (addrs.insert(addr).second) {
            ++it;
        } else {
            t.aliases++;
            it = t.functions.erase(it);
        }
    }
    return t;
}

std::size_t reason(const probectl::AttachReport& r, const std::string& why) {
    std::size_t n = 0;
    for (const auto& s : r.skipped)
        n += s.reason == why;
    return n;
}

}  // namespace

TEST(Glob, KernelGlobSkipsTheBlacklistedAndAttachesTheRest) {
    // do_syscall_64 is in the blacklist of every test kernel (noinstr entry code).
    const GlobTruth truth = kernelTruth("do_sys*");
    ASSERT_TRUE(truth.blacklisted.count("do_syscall_64"));
    ASSERT_TRUE(truth.functions.count("do_sys_openat2"));

    Workload w({itest::workload("open_file"), "/etc/passwd"});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    SpecExpander x;
    auto spec = probectl::parseProbeSpec("kprobe:do_sys*");
    ASSERT_TRUE(spec.ok());
    auto r = x.attach(*s, *spec);
    ASSERT_TRUE(r.ok()) << why(r);
    EXPECT_EQ(r->matched, truth.matched());
    EXPECT_EQ(reason(*r, "blacklisted"), truth.blacklisted.size());
    EXPECT_EQ(reason(*r, "data"), truth.data.size());
    EXPECT_EQ(reason(*r, "duplicate"), truth.duplicates);
    EXPECT_EQ(reason(*r, "alias"), truth.aliases);
    EXPECT_EQ(reason(*r, "refused by the kernel"), 0u) << r->details();
    EXPECT_EQ(r->ids.size(), truth.functions.size());
    EXPECT_EQ(s->probes().size(), truth.functions.size());
    EXPECT_NE(r->summary().find(fmt::format("kprobe:do_sys*: attached {} of {}; ",
                                            truth.functions.size(), truth.matched())),
              std::string::npos)
        << r->summary();

    // The same glob again attaches nothing new: every name is there already.
    auto again = x.attach(*s, *spec);
    EXPECT_FALSE(again.ok());

    w.release();
    std::string out;
    ASSERT_EQ(w.wait(&out), 0);
    auto st = s->stop({});
    ASSERT_TRUE(st.ok()) << why(st);
    // open_file opens one file, through openat -> do_sys_openat2 (once per open).
    for (const auto& p : st->probes) {
        if (p.spec == "kprobe:do_sys_openat2") {
            EXPECT_GE(p.hits, 1u);
        }
    }
}

TEST(Glob, ThousandKprobesAttachFireAndDetach) {
    // The same path with 200 on the debug kernel, where 1000 registrations under KASAN and
    // lockdep take most of its suite's time budget.
    const std::size_t kProbes = itest::debugKernel() ? 200 : 1000;
    constexpr int kCalls = 500;
    SpecExpander x;
    std::vector<probectl::ProbeSpec> specs;
    for (const char* glob : {"kprobe:__x64_sys_*", "kprobe:*_show"}) {
        auto e = x.expand(*probectl::parseProbeSpec(glob));
        ASSERT_TRUE(e.ok()) << why(e);
        specs.insert(specs.end(), e->specs.begin(), e->specs.end());
    }
    ASSERT_GE(specs.size(), kProbes);
    // The one the workload calls goes first, so it is among the kProbes attached.
    std::stable_partition(specs.begin(), specs.end(), [](const probectl::ProbeSpec& sp) {
        return sp.symbol == "__x64_sys_getppid";
    });
    ASSERT_EQ(specs.front().symbol, "__x64_sys_getppid");

    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls)});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    o.symbols = x.symbols();
    auto opened = Session::open(o);
    ASSERT_TRUE(opened.ok()) << why(opened);
    std::optional<Session> s(std::move(*opened));
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t refused = 0;
    for (const auto& spec : specs) {
        if (s->probes().size() == kProbes)
            break;
        refused += !s->add(spec).ok();
    }
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(s->probes().size(), kProbes);
    EXPECT_LE(refused, 10u);
    w.release();
    ASSERT_EQ(w.wait(), 0);
    auto st = s->stop({});
    ASSERT_TRUE(st.ok()) << why(st);
    std::uint64_t getppid = 0;
    for (const auto& p : st->probes)
        if (p.spec == "kprobe:__x64_sys_getppid")
            getppid = p.hits;
    EXPECT_EQ(getppid, static_cast<std::uint64_t>(kCalls));

    auto c = itest::connectOrDie();
    const std::size_t before = itest::listOrDie(c).size();
    const auto t2 = std::chrono::steady_clock::now();
    s.reset();  // closes the socket: the kernel removes its probes in one batch
    const auto t3 = std::chrono::steady_clock::now();
    EXPECT_EQ(itest::listOrDie(c).size(), before - kProbes);
    auto ms = [](auto a, auto b) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
    };
    std::printf("%zu kprobes: attach %lld ms, detach %lld ms\n", kProbes,
                static_cast<long long>(ms(t0, t1)), static_cast<long long>(ms(t2, t3)));
}

// A zero-argument syscall's __x64_sys_, __ia32_sys_ and __do_sys_ functions are often one
// function with three names: a glob over them probed each, and every call counted once per
// name. One probe per address now, the rest said as aliases.
TEST(Glob, NamesOfOneAddressAreProbedOnce) {
    constexpr int kCalls = 300;
    const GlobTruth truth = kernelTruth("*sys_getppid");
    ASSERT_TRUE(truth.blacklisted.empty() && truth.duplicates == 0 && truth.data.empty());
    std::printf("*sys_getppid: %zu addresses, %zu aliases\n", truth.functions.size(),
                truth.aliases);
    Workload w({itest::workload("getppid_loop"), std::to_string(kCalls)});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    SpecExpander x;
    auto r = x.attach(*s, *probectl::parseProbeSpec("kprobe:*sys_getppid"));
    ASSERT_TRUE(r.ok()) << why(r);
    EXPECT_EQ(r->ids.size(), truth.functions.size()) << r->summary();
    EXPECT_EQ(reason(*r, "alias"), truth.aliases) << r->details();
    w.release();
    ASSERT_EQ(w.wait(), 0);
    auto st = s->stop({});
    ASSERT_TRUE(st.ok()) << why(st);
    // Each address is entered once per call (the x64 wrapper, and __do_sys_getppid when it
    // is a function of its own).
    std::set<std::string> probed;
    for (const auto& p : st->probes) {
        const std::string name = p.spec.substr(p.spec.find(':') + 1);
        ASSERT_TRUE(truth.address.count(name)) << p.spec;
        EXPECT_TRUE(probed.insert(truth.address.at(name)).second) << p.spec;
        if (name.starts_with("__ia32"))
            EXPECT_EQ(p.hits, 0u) << p.spec;
        else
            EXPECT_EQ(p.hits, static_cast<std::uint64_t>(kCalls)) << p.spec;
    }
}

TEST(Glob, UserGlobAttachesEveryMatchingFunction) {
    const std::string t = itest::workload("aggr_target");
    Workload w({t, "values", "6"});
    SessionOptions o;
    o.tgids = {static_cast<std::uint32_t>(w.pid())};
    auto s = Session::open(o);
    ASSERT_TRUE(s.ok()) << why(s);
    SpecExpander x;
    auto r = x.attach(*s, *probectl::parseProbeSpec("uprobe:" + t + ":ag_*"));
    ASSERT_TRUE(r.ok()) << why(r);
    EXPECT_EQ(r->summary(), "uprobe:" + t + ":ag_*: attached 3 of 3");
    w.release();
    ASSERT_EQ(w.wait(), 0);
    auto st = s->stop({});
    ASSERT_TRUE(st.ok()) << why(st);
    std::map<std::string, std::uint64_t> hits;
    for (const auto& p : st->probes)
        hits[p.spec] = p.hits;
    EXPECT_EQ(hits["uprobe:" + t + ":ag_val"], 6u);
    EXPECT_EQ(hits["uprobe:" + t + ":ag_sleep"], 0u);
    EXPECT_EQ(hits["uprobe:" + t + ":ag_str"], 0u);
}

TEST(Glob, CliReportsTheSkippedAndNoneAttachedIsAnError) {
    const GlobTruth truth = kernelTruth("do_sys*");
    auto r = itest::sh("probectl count -v 'kprobe:do_sys*' -- " + itest::workload("open_file") +
                       " /etc/passwd 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(fmt::format(
                  "kprobe:do_sys*: attached {} of {}; {} refused: ", truth.functions.size(),
                  truth.matched(), truth.matched() - truth.functions.size())),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  do_syscall_64: blacklisted\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kprobe:do_sys_openat2 "), std::string::npos) << r.out;

    auto none = itest::sh("probectl trace 'kprobe:no_such_function_*' -- true 2>&1");
    EXPECT_NE(none.status, 0);
    EXPECT_NE(none.out.find("kprobe:no_such_function_*: the glob matches no kernel symbol"),
              std::string::npos)
        << none.out;
}

// Syscall metadata is data, on every kernel: 7.2 gives it the text letter ('t') in its data
// section, and a glob called it "refused by the kernel" there and "data" on 6.12.
TEST(Glob, SyscallMetadataIsDataOnEveryKernel) {
    const GlobTruth truth = kernelTruth("__syscall_meta__getp*");
    if (truth.matched() == 0)
        GTEST_SKIP() << "no __syscall_meta__ symbols (a kernel without syscall trace events)";
    // -v lists each refused name, also when none attached (it once printed the error alone).
    auto r = itest::sh("probectl trace -v 'kprobe:__syscall_meta__getp*' --duration 1 2>&1");
    EXPECT_NE(r.status, 0) << r.out;
    // By its letter 7.2's metadata is text (in truth.functions), 6.12's data.
    for (const auto* names : {&truth.functions, &truth.data})
        for (const auto& name : *names)
            EXPECT_NE(r.out.find("  " + name + ": data\n"), std::string::npos) << name << r.out;
    EXPECT_NE(
        r.out.find(fmt::format("(attached 0 of {0}; {0} refused: {0} data)", truth.matched())),
        std::string::npos)
        << r.out;
}

// syscall: names are x86-64's: uname is the kernel's __x64_sys_newuname (the kernel's own
// __x64_sys_uname is the old 32-bit one, which a 64-bit uname never enters), and a glob
// leaves out the 32-bit syscalls' wrappers (gethostname, chown16). Before, syscall:uname
// counted 0 calls of `uname -r` and *name matched uname, newuname and gethostname.
TEST(Glob, SyscallNamesAreX64Syscalls) {
    auto r = itest::sh("probectl count -v 'syscall:*name' -- uname -r 2>&1");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("syscall:*name: attached "), std::string::npos) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\nsyscall:uname +([0-9]+) "))) << r.out;
    EXPECT_EQ(m[1], "1") << r.out;
    for (const char* not_x64 : {"newuname", "gethostname"})
        EXPECT_EQ(r.out.find(not_x64), std::string::npos) << not_x64 << "\n" << r.out;

    auto t = itest::sh("probectl trace syscall:uname -- uname -r 2>&1");
    ASSERT_EQ(t.status, 0) << t.out;
    EXPECT_TRUE(std::regex_search(t.out, std::regex("syscall:uname +uname\\(.*\\) = 0\n")))
        << t.out;

    auto k = itest::sh("probectl trace syscall:newuname -- true 2>&1");
    EXPECT_NE(k.status, 0);
    EXPECT_NE(k.out.find("'newuname' is the kernel's name of the x86-64 syscall 'uname': use "
                         "syscall:uname"),
              std::string::npos)
        << k.out;
}

// A glob over every syscall is answered whole, as bpftrace's and perf trace -s's are: latency
// 'syscall:*' attached 54 of 361 in a 1 GiB VM, each probe's map (no key) made for 1024 keys,
// 2.2 MiB of latency histograms on 2 CPUs, until max_map_kb (an eighth of RAM) refused the
// rest. A map without keys is made for its one key now, and keyed maps that would not fit
// together are made for what an even share holds (said in a note). Only exit and exit_group
// (they never return, for latency) and names the kernel itself refuses are left out.
TEST(Glob, EverySyscallFitsUnderTheMapLimit) {
    // The largest maps of each kind: latency's histograms, without a key and keyed (count's
    // maps are smaller than either). Not run on the debug kernel (tests/vm/debug.skip).
    const std::vector<std::string> cmds = {"latency 'syscall:*'", "latency 'syscall:*' --by comm"};
    for (const std::string& cmd : cmds) {
        SCOPED_TRACE(cmd);
        auto r =
            itest::sh("probectl " + cmd + " -v -- " + itest::aggrTarget() + " syscalls 3 2>&1");
        ASSERT_EQ(r.status, 0) << r.out;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(
            r.out, m,
            std::regex(
                "syscall:\\*: attached ([0-9]+) of ([0-9]+)(; ([0-9]+) refused: ([^\n]*))?\n")))
            << r.out;
        const auto attached = std::stoul(m[1]), matched = std::stoul(m[2]);
        const auto refused = m[4].matched ? std::stoul(m[4]) : 0ul;
        EXPECT_EQ(attached + refused, matched) << r.out;
        EXPECT_GT(attached, 300u) << r.out;
        EXPECT_EQ(r.out.find("over the module's"), std::string::npos) << r.out;
        // What -v lists is refused for its own reason, never for room.
        const std::regex listed("\n  ([a-z0-9_]+): ([^\n]+)");
        for (std::sregex_iterator it(r.out.begin(), r.out.end(), listed), end; it != end; ++it) {
            const std::string reason = (*it)[2];
            EXPECT_TRUE(reason.find("never returns") != std::string::npos ||
                        reason.starts_with("refused by the kernel"))
                << (*it)[1] << ": " << reason << "\n"
                << r.out;
        }
        if (cmd.starts_with("latency")) {
            EXPECT_NE(r.out.find("2 never return (exit, exit_group)"), std::string::npos) << r.out;
        }
        EXPECT_NE(r.out.find("syscall:getppid"), std::string::npos) << r.out;
    }
}

// vmlinux's init code (vfs_caches_init, vfs_caches_init_early: __init) is freed once the
// kernel has booted, and the kernel refuses probes there from then on, as ftrace's own
// kprobe_events shows; kallsyms still lists it as text. `count -v 'kprobe:vfs_*'` tried each
// and listed it as "refused by the kernel: ... blacklisted or unprobeable", and `resolve`
// and `symbols` said "yes". They are skipped as init code, and resolve says why.
TEST(Glob, InitCodeIsSkippedOnEveryKernel) {
    std::map<std::string, std::uint64_t> addr;
    std::istringstream k(itest::readFile("/proc/kallsyms"));
    for (std::string line; std::getline(k, line);) {
        std::istringstream f(line);
        std::string a, type, name, module;
        f >> a >> type >> name >> module;
        if (module.empty())
            addr[name] = std::stoull(a, nullptr, 16);
    }
    ASSERT_TRUE(addr.count("_sinittext") && addr.count("_einittext"));
    std::vector<std::string> init;
    for (const char* name : {"vfs_caches_init", "vfs_caches_init_early"})
        if (addr.count(name) && addr[name] >= addr["_sinittext"] && addr[name] < addr["_einittext"])
            init.push_back(name);
    ASSERT_EQ(init.size(), 2u) << "vfs_caches_init and vfs_caches_init_early in .init.text";

    // The kernel's own verdict, through ftrace: the probe is refused (EINVAL).
    const auto ftrace = itest::sh(
        "echo 'p:probectl_itest/init vfs_caches_init' >> /sys/kernel/tracing/kprobe_events");
    EXPECT_NE(ftrace.status, 0) << ftrace.out;
    itest::sh("echo '-:probectl_itest/init' >> /sys/kernel/tracing/kprobe_events 2>/dev/null");

    auto r = itest::sh("probectl count -v 'kprobe:vfs_caches_init*' -- true 2>&1");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("attached 0 of 2; 2 refused: 2 init code"), std::string::npos) << r.out;
    for (const auto& name : init)
        EXPECT_NE(r.out.find("  " + name + ": init code: freed after boot\n"), std::string::npos)
            << name << "\n"
            << r.out;
    EXPECT_EQ(r.out.find("refused by the kernel"), std::string::npos) << r.out;

    auto res = itest::sh("probectl resolve kprobe:vfs_caches_init 2>&1");
    EXPECT_NE(res.status, 0) << res.out;
    EXPECT_NE(res.out.find("probe-able: no"), std::string::npos) << res.out;
    EXPECT_NE(res.out.find("'vfs_caches_init' is init code (in the kernel's .init.text), freed "
                           "after boot: the kernel refuses probes there"),
              std::string::npos)
        << res.out;
    auto sym = itest::sh("probectl symbols 'vfs_caches_init' 2>&1");
    EXPECT_NE(sym.out.find("no: init code (freed after boot)  vfs_caches_init\n"),
              std::string::npos)
        << sym.out;
}
