// The netlink fuzzer (nl_fuzz.hpp) against the loaded module: every request is answered, the
// module still works afterwards and nothing the fuzzer added stays. The suite's kernel-log
// check (and kmemleak on the debug kernel) catches oopses, WARNs and leaks. Reproduce a run
// with PROBECTL_FUZZ_SEED=N; PROBECTL_FUZZ_REQUESTS and PROBECTL_FUZZ_SECONDS make it longer.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "itest_util.hpp"
#include "nl_fuzz.hpp"

using itest::why;

namespace {

std::uint64_t envOr(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::stoull(v) : fallback;
}

}  // namespace

TEST(Fuzz, EveryRequestIsAnsweredAndNothingStays) {
    itest::FuzzOptions opt;
    opt.seed = envOr("PROBECTL_FUZZ_SEED", std::random_device{}());
    opt.requests =
        static_cast<unsigned>(envOr("PROBECTL_FUZZ_REQUESTS", itest::debugKernel() ? 4000 : 10000));
    opt.seconds = static_cast<unsigned>(envOr("PROBECTL_FUZZ_SECONDS", 90));
    // Uprobes go into a copy nothing runs, so no other test meets a fuzzed breakpoint.
    opt.uprobe_file = "/tmp/nlfuzz-target";
    opt.log_requests = envOr("PROBECTL_FUZZ_LOG", 0) != 0;
    std::filesystem::copy_file("/bin/true", opt.uprobe_file,
                               std::filesystem::copy_options::overwrite_existing);
    std::cout << "fuzz seed " << opt.seed << " (PROBECTL_FUZZ_SEED reproduces it)\n";

    const itest::FuzzStats s = itest::fuzzFamily(opt);
    ASSERT_TRUE(s.failure.empty()) << s.failure;
    std::cout << "fuzz: " << s.ops << " operations, " << s.sent << " requests, " << s.answered
              << " answered, " << s.accepted << " accepted, " << s.unanswered << " unanswered, "
              << s.discarded << " shorter than a header (not answered, as due), " << s.overruns
              << " receive overruns\n  errors:";
    for (const auto& [err, n] : s.errors)
        std::cout << ' ' << err << 'x' << n;
    std::cout << "\n  accepted by command:";
    for (const auto& [cmd, n] : s.accepted_by_op)
        std::cout << ' ' << cmd << 'x' << n;
    std::cout << '\n';
    EXPECT_GE(s.ops, 10u) << "the family should list every command";
    EXPECT_GE(s.sent, std::min(opt.requests, 200u));
    std::string which;
    for (const auto& r : s.unanswered_requests)
        which += "\n  " + r;
    EXPECT_EQ(s.unanswered, 0u) << "requests without an ack, an error or a dump's end:" << which;
    EXPECT_GE(s.answered + s.discarded + s.overruns, s.sent);
    // Both sides of the policy were reached: some requests passed validation, some did not.
    EXPECT_GT(s.accepted, 0u);
    EXPECT_GT(s.errors.count(EINVAL), 0u);

    // Nothing stays: the fuzzer's socket is closed (its probes go with it) and persistent
    // probes it added are removed; then the module serves a plain request.
    itest::removePersistentProbes();
    auto c = itest::connectOrDie();
    auto left = itest::listOrDie(c);
    EXPECT_TRUE(left.empty()) << left.size() << " probes left, the first on "
                              << left.front().symbol;
    for (const char* sym : {"vfs_read", "do_sys_openat2", "schedule", "kfree"})
        EXPECT_TRUE(itest::kprobesListed(sym).empty()) << sym << " is still probed";
    probectl::ProbeRequest req;
    req.symbol = "vfs_read";
    auto added = c.addProbe(req);
    ASSERT_TRUE(added.ok()) << why(added);
    EXPECT_TRUE(c.removeProbe(added->id).ok());
    std::filesystem::remove(opt.uprobe_file);
}
