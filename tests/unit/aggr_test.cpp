// Aggregation in libctl without a kernel: requests built from AggrSpec, the bucket rules of
// kmod/aggr.c, decoding of AGGR_ENTRIES payloads, and the table/histogram/JSON printers.
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "aggr/aggr_rules.hpp"
#include "aggr_cli.hpp"
#include "aggr_collect.hpp"
#include "aggr_print.hpp"
#include "probectl/aggr.hpp"
#include "probectl/aggr_events.hpp"
#include "probectl/event_json.hpp"
#include "probectl/expand.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/user_target.hpp"
#include "subcommands.hpp"

using namespace probectl;

namespace {

FetchArg arg(const std::string& text, bool ret = false) {
    FetchOptions o;
    o.is_return = ret;
    auto a = parseFetchArg(text, 1, o);
    EXPECT_TRUE(a) << text;
    return *a;
}

AggrTable log2Table(bool is_signed) {
    AggrTable t;
    t.hist = AggrHist::Log2;
    t.value = AggrValue::Arg;
    t.value_name = "v";
    t.is_signed = is_signed;
    return t;
}

AggrTable linearTable(std::int64_t lo, std::int64_t hi, std::int64_t step) {
    AggrTable t = log2Table(true);
    t.hist = AggrHist::Linear;
    t.lin_min = lo;
    t.lin_max = hi;
    t.lin_step = step;
    return t;
}

// Packs one entry as the kernel does: u64 fault mask, keys, value, buckets.
void packEntry(std::vector<std::uint8_t>& out, std::uint64_t faults,
               const std::vector<std::vector<std::uint8_t>>& keys, const AggrTotals& v,
               const std::vector<std::uint64_t>& buckets) {
    auto put = [&out](const void* p, std::size_t n) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    };
    put(&faults, 8);
    for (const auto& k : keys)
        put(k.data(), k.size());
    put(&v, sizeof(v));
    put(buckets.data(), buckets.size() * 8);
}

std::vector<std::uint8_t> intKey(std::uint64_t v) {
    std::vector<std::uint8_t> b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
}

std::vector<std::uint8_t> strKey(const std::string& s) {
    std::vector<std::uint8_t> b(kAggrStrLen, 0);
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

}  // namespace

TEST(AggrBuckets, Log2FollowsBpftrace) {
    AggrTable u = log2Table(false);
    EXPECT_EQ(bucketOf(u, 0), 1u);
    EXPECT_EQ(bucketOf(u, 1), 2u);
    EXPECT_EQ(bucketOf(u, 2), 3u);
    EXPECT_EQ(bucketOf(u, 3), 3u);
    EXPECT_EQ(bucketOf(u, 4), 4u);
    EXPECT_EQ(bucketOf(u, 1023), 11u);
    EXPECT_EQ(bucketOf(u, 1024), 12u);
    EXPECT_EQ(bucketOf(u, ~0ULL), 65u);  // unsigned: the top bucket, not negative
    AggrTable s = log2Table(true);
    EXPECT_EQ(bucketOf(s, static_cast<std::uint64_t>(-1)), 0u);
    EXPECT_EQ(bucketOf(s, static_cast<std::uint64_t>(INT64_MIN)), 0u);
    // every range holds exactly the values bucketOf puts there
    for (std::size_t b = 1; b < kAggrLog2Buckets; b++) {
        BucketRange r = bucketRange(u, b);
        EXPECT_EQ(bucketOf(u, static_cast<std::uint64_t>(r.lo)), b);
        EXPECT_EQ(bucketOf(u, r.hi), b);
        if (b > 1) {
            EXPECT_EQ(bucketOf(u, static_cast<std::uint64_t>(r.lo) - 1), b - 1);
        }
    }
    EXPECT_TRUE(bucketRange(s, 0).below);
}

TEST(AggrBuckets, LinearHasUnderAndOverAndACutLastStep) {
    AggrTable t = linearTable(-10, 25, 10);  // steps [-10,0) [0,10) [10,20) [20,25)
    EXPECT_EQ(bucketOf(t, static_cast<std::uint64_t>(-11)), 0u);
    EXPECT_EQ(bucketOf(t, static_cast<std::uint64_t>(-10)), 1u);
    EXPECT_EQ(bucketOf(t, static_cast<std::uint64_t>(-1)), 1u);
    EXPECT_EQ(bucketOf(t, 0), 2u);
    EXPECT_EQ(bucketOf(t, 24), 4u);
    EXPECT_EQ(bucketOf(t, 25), 5u);
    EXPECT_EQ(bucketRange(t, 4).lo, 20);
    EXPECT_EQ(bucketRange(t, 4).hi, 24u);
    EXPECT_TRUE(bucketRange(t, 5).above);
    EXPECT_EQ(bucketRange(t, 5).lo, 25);
    EXPECT_TRUE(bucketRange(t, 0).below);
    EXPECT_EQ(static_cast<std::int64_t>(bucketRange(t, 0).hi), -11);
}

// MIN and MAX at the ends of s64: MAX - MIN + STEP - 1 wraps 64 bits, which once gave 0 steps
// (2 buckets) while a value in the middle went to bucket 2 (kmod/aggr.c shares the rule).
TEST(AggrBuckets, LinearOverAllOfS64HasABucketForEveryValue) {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    // STEP and the steps it makes of the 2^64 - 1 between MIN and MAX.
    const std::pair<std::int64_t, std::size_t> steps[] = {
        {hi, 3}, {std::int64_t{1} << 62, 4}, {std::int64_t{1} << 61, 8}, {1000000000000000000, 19}};
    for (const auto& [step, n] : steps) {
        EXPECT_EQ(detail::linearSteps(lo, hi, step), n) << "step " << step;
        AggrTable t = linearTable(lo, hi, step);
        for (std::int64_t v : {lo, lo + 1, std::int64_t{-1}, std::int64_t{0}, step, hi - 1, hi}) {
            const std::size_t b = bucketOf(t, static_cast<std::uint64_t>(v));
            ASSERT_LE(b, n + 1) << "step " << step << " value " << v;
            const BucketRange r = bucketRange(t, b);
            if (r.above) {
                EXPECT_EQ(v, hi);
                continue;
            }
            EXPECT_LE(r.lo, v) << "step " << step << " bucket " << b;
            EXPECT_LE(v, static_cast<std::int64_t>(r.hi)) << "step " << step << " bucket " << b;
        }
    }
    // Every step of 1 over all of s64 is still too many.
    AggrSpec s;
    s.value = AggrValue::Arg;
    s.value_arg = "v";
    s.hist = AggrHist::Linear;
    s.lin_min = lo;
    s.lin_max = hi;
    s.lin_step = 1;
    EXPECT_FALSE(EventAggregator::create(s, "kprobe:vfs_read v=$arg3:s64"));
}

TEST(AggrRequest, TaskKeysBecomeHiddenFetchArguments) {
    ProbeRequest req;
    req.kind = ProbeKind::Uprobe;
    std::vector<FetchArg> args = {arg("size=$arg1:u64")};
    auto prog = compileFetchArgs(args);
    ASSERT_TRUE(prog);
    req.fetch = (*prog)[0].insns;
    AggrSpec a;
    a.keys = {"comm", "size"};
    a.value = AggrValue::Arg;
    a.value_arg = "size";
    a.hist = AggrHist::Log2;
    ASSERT_TRUE(prepareAggregation(a, req, args));
    ASSERT_EQ(args.size(), 2u);
    EXPECT_EQ(args[1].name, "comm");
    ASSERT_TRUE(req.aggr);
    EXPECT_EQ(req.aggr->nkeys, 2);
    EXPECT_EQ(req.aggr->keys[0], 1);
    EXPECT_EQ(req.aggr->keys[1], 0);
    EXPECT_EQ(req.aggr->value, AggrValue::Arg);
    EXPECT_EQ(req.aggr->value_arg, 0);
    EXPECT_EQ(req.aggr->hist, AggrHist::Log2);
    EXPECT_EQ(req.aggr->flags, 0);
    EXPECT_GT(req.fetch.size(), (*prog)[0].insns.size());  // $comm's program appended
}

// A map without keys holds one key, always: it is made for one (the kernel's default 1024
// held 1023 unused values per CPU, 2.2 MiB for a latency map on 2 CPUs, and a syscall:* glob
// outgrew max_map_kb). A size the user gave is sent as given; a keyed map gets the default.
TEST(AggrRequest, KeylessMapIsMadeForOneKeyUnlessASizeIsGiven) {
    auto capacity = [](const AggrSpec& a) -> std::uint32_t {
        ProbeRequest req;
        req.kind = ProbeKind::Kretprobe;
        std::vector<FetchArg> args;
        EXPECT_TRUE(prepareAggregation(a, req, args));
        return req.aggr ? req.aggr->max_entries : 0;
    };
    AggrSpec lat;
    lat.value = AggrValue::Latency;
    lat.hist = AggrHist::Log2;
    EXPECT_EQ(capacity(lat), 1u);
    AggrSpec count;
    EXPECT_EQ(capacity(count), 1u);
    lat.max_entries = 500;
    EXPECT_EQ(capacity(lat), 500u);
    AggrSpec keyed = count;
    keyed.keys = {"comm"};
    EXPECT_EQ(capacity(keyed), kAggrDefaultEntries);
    keyed.max_entries = 7;
    EXPECT_EQ(capacity(keyed), 7u);
}

// The module's charge for a map (kmod/aggr.c: slots, keys, two banks of per-CPU values): a
// latency map (log2, 560-byte values) of 1024 keys on 2 CPUs is 2.2 MiB, of its one key 2.2 KiB.
TEST(AggrBudget, MapBytesAreTheModulesCharge) {
    probectl::AggrMapSize lat;
    lat.val_size = 32 + 66 * 8;
    EXPECT_EQ(probectl::aggrMapBytes(lat, 1024, 2), 2048u * 4 + 1024 * 8 + 2u * 2 * 1024 * 560);
    EXPECT_EQ(probectl::aggrMapBytes(lat, 1024, 2), 2310144u);
    EXPECT_EQ(probectl::aggrMapBytes(lat, 1, 2), 2u * 4 + 8 + 2 * 2 * 560);
    EXPECT_EQ(probectl::aggrMapBytes(lat, 3, 1), 8u * 4 + 3 * 8 + 2 * 3 * 560);  // 8 slots

    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    std::vector<FetchArg> args;
    AggrSpec a;
    a.keys = {"comm", "pid"};
    a.value = AggrValue::Latency;
    a.hist = AggrHist::Log2;
    ASSERT_TRUE(prepareAggregation(a, req, args));
    const auto m = probectl::aggrMapSize(req, args);
    EXPECT_EQ(m.key_size, 8u + 32 + 8);
    EXPECT_EQ(m.val_size, 32u + 66 * 8);
    a.hist = AggrHist::Linear;
    a.lin_min = 0;
    a.lin_max = 10;
    a.lin_step = 3;  // 4 steps, the last short, one bucket below and one above
    req = ProbeRequest{};
    req.kind = ProbeKind::Kretprobe;
    args.clear();
    ASSERT_TRUE(prepareAggregation(a, req, args));
    EXPECT_EQ(probectl::aggrMapSize(req, args).val_size, 32u + 6 * 8);
}

// Each of a glob's maps gets the most keys that fit its share, and the shares together fit
// the budget: 361 syscalls' latency by comm in a VM of 1 GiB (a 122 MiB budget), where 54
// default maps were all that fit.
TEST(AggrBudget, EntriesWithinAShareFitTogether) {
    probectl::AggrMapSize m;
    m.key_size = 40;
    m.val_size = 560;
    for (std::uint64_t bytes :
         {0ull, 100ull, 2256ull, 5000ull, 346000ull, 2310144ull, 1ull << 40}) {
        SCOPED_TRACE(bytes);
        const std::uint32_t n = probectl::aggrEntriesWithin(m, bytes, 1024, 2);
        if (n) {
            EXPECT_LE(probectl::aggrMapBytes(m, n, 2), bytes);
        }
        if (n < 1024) {
            EXPECT_GT(probectl::aggrMapBytes(m, n + 1, 2), bytes);
        }
    }
    EXPECT_EQ(probectl::aggrEntriesWithin(m, 100, 1024, 2), 0u);
    EXPECT_EQ(probectl::aggrEntriesWithin(m, 1ull << 40, 1024, 2), 1024u);

    probectl::AggrBudget b;
    b.limit_bytes = 122ull << 20;
    b.ncpus = 2;
    const std::uint64_t share = probectl::aggrShare(b, 361);
    const std::uint32_t n = probectl::aggrEntriesWithin(m, share, 1024, b.ncpus);
    EXPECT_GT(n, 100u);
    EXPECT_LT(n, 1024u);
    EXPECT_LE(361 * probectl::aggrMapBytes(m, n, b.ncpus), b.limit_bytes);
    EXPECT_GT(361 * probectl::aggrMapBytes(m, 1024, b.ncpus), b.limit_bytes);
}

// The budget as the module reads it: max_map_kb, its 0 an eighth of RAM; possible CPUs from
// their list.
TEST(AggrBudget, ReadFromSysfs) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("aggr_budget_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir / "module/probectl/parameters");
    std::filesystem::create_directories(dir / "devices/system/cpu");
    auto put = [&](const std::string& path, const std::string& text) {
        std::ofstream(dir / path) << text;
    };
    EXPECT_FALSE(probectl::readAggrBudget(dir.string()));  // no module
    put("module/probectl/parameters/max_map_kb", "1024\n");
    put("devices/system/cpu/possible", "0-1\n");
    auto b = probectl::readAggrBudget(dir.string());
    ASSERT_TRUE(b);
    EXPECT_EQ(b->limit_bytes, 1024u * 1024);
    EXPECT_EQ(b->ncpus, 2u);
    put("devices/system/cpu/possible", "0,2-3,5\n");
    put("module/probectl/parameters/max_map_kb", "0\n");
    b = probectl::readAggrBudget(dir.string());
    ASSERT_TRUE(b);
    EXPECT_EQ(b->ncpus, 4u);
    struct sysinfo si {};
    ASSERT_EQ(sysinfo(&si), 0);
    EXPECT_EQ(b->limit_bytes, static_cast<std::uint64_t>(si.totalram) * si.mem_unit / 8);
    std::filesystem::remove_all(dir);
}

TEST(AggrRequest, SignedValuesAndErrors) {
    ProbeRequest req;
    req.kind = ProbeKind::Kprobe;
    std::vector<FetchArg> args = {arg("n=$arg3:s32"), arg("s=+0($arg2):string")};
    AggrSpec a;
    a.value = AggrValue::Arg;
    a.value_arg = "n";
    ASSERT_TRUE(prepareAggregation(a, req, args));
    EXPECT_EQ(req.aggr->flags, kAggrFlagSigned);

    a.value_arg = "s";
    auto r = prepareAggregation(a, req, args);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "value 's' is not an integer");
    EXPECT_TRUE(r.error().usage) << "a wrong spec is a usage error: the CLI exits 2";
    EXPECT_EQ(r.error().describe(), "value 's' is not an integer") << "no stray (Invalid argument)";

    AggrSpec lat;
    lat.value = AggrValue::Latency;
    r = prepareAggregation(lat, req, args);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("latency needs a return probe"), std::string::npos);

    AggrSpec k;
    k.keys = {"retval"};
    r = prepareAggregation(k, req, args);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("--by retval needs a return probe"), std::string::npos);

    k.keys = {"errno"};
    r = prepareAggregation(k, req, args);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("--by errno needs a return probe"), std::string::npos);

    // hist's FIELD retval: the value, in the words typed.
    AggrSpec v;
    v.value = AggrValue::Arg;
    v.value_arg = "retval";
    r = prepareAggregation(v, req, args);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "value 'retval' needs a return probe (kretprobe:, uretprobe:, syscall:)");

    k.keys = {"bogus"};
    r = prepareAggregation(k, req, args);
    ASSERT_FALSE(r);
    // a kprobe has no return value: the names listed are those it can take
    EXPECT_EQ(r.error().message,
              "no key or value named 'bogus' (there are: n, s, comm, pid, tid, uid, cpu, kstack, "
              "ustack)");

    // syscall:exit_group is a kprobe on the wrapper: it never returns, and says so
    ProbeRequest exit;
    exit.kind = ProbeKind::Kprobe;
    exit.symbol = "__x64_sys_exit_group";
    exit.flags = kProbeFlagSyscall;
    std::vector<FetchArg> none;
    r = prepareAggregation(lat, exit, none);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "exit_group never returns (the task ends in it), so it has no latency: count or "
              "trace it instead, or leave it out");
}

// hist's value is an integer: a stack's (the task keys kstack and ustack, or an argument
// of $kstack) fetched value is its id in the stack map, which the kernel summed and
// bucketed as if it were a number. Strings were refused already.
TEST(AggrRequest, HistValueMustBeAnInteger) {
    AggrSpec a;
    a.value = AggrValue::Arg;
    a.hist = AggrHist::Log2;
    for (const char* stack : {"kstack", "ustack", "st"}) {
        ProbeRequest req;
        req.kind = ProbeKind::Kprobe;
        std::vector<FetchArg> args = {arg("st=$kstack")};
        a.value_arg = stack;
        auto r = prepareAggregation(a, req, args);
        ASSERT_FALSE(r) << stack;
        EXPECT_TRUE(r.error().usage);
        const std::string by = std::string(stack) == "ustack" ? "ustack" : "kstack";
        EXPECT_EQ(r.error().message,
                  fmt::format("value '{}' is a stack, not an integer: count --by {} counts the "
                              "hits of each stack",
                              stack, by));
    }
    ProbeRequest req;
    req.kind = ProbeKind::Kprobe;
    std::vector<FetchArg> none;
    a.value_arg = "comm";
    auto c = prepareAggregation(a, req, none);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "value 'comm' is not an integer");
    a.value_arg = "pid";
    EXPECT_TRUE(prepareAggregation(a, req, none));
}

// errno is $retval with the kernel's errno flag on its load.
// The names events aggregated in user space may be keyed by: the spec's own arguments and
// the task fields; the first other name is refused as prepareAggregation refuses it.
TEST(AggrRequest, NamesCheckedForEventsAggregatedInUserSpace) {
    AggrSpec a;
    a.keys = {"size", "comm", "retval"};
    EXPECT_TRUE(checkAggrNames(a, {"size"}, true));
    auto missing = checkAggrNames(a, {}, true);
    ASSERT_FALSE(missing);
    EXPECT_TRUE(missing.error().usage);
    EXPECT_EQ(missing.error().message,
              "no key or value named 'size' (there are: comm, pid, tid, uid, cpu, retval, "
              "errno, kstack, ustack)");
    AggrSpec v;
    v.value = AggrValue::Arg;
    v.value_arg = "len";
    auto value = checkAggrNames(v, {"size", "n"}, true);
    ASSERT_FALSE(value);
    EXPECT_EQ(
        value.error().message.rfind("no key or value named 'len' (there are: size, n, comm", 0),
        0u);
}

// --by comm,comm_bytes: JSON writes a comm that is not UTF-8 with a sibling comm_bytes (its
// hex bytes), so the argument's value and comm's bytes went under one name and a reader kept
// one of them. Refused in the kernel's and in user space's aggregation alike; a spec argument
// named comm (not the task's) has no such sibling unless it is a string, which parsing refuses.
TEST(AggrRequest, CommBytesKeyBesideTheCommKeyIsRefused) {
    AggrSpec a;
    a.keys = {"comm", "comm_bytes"};
    const std::string want =
        "key 'comm_bytes' clashes with the JSON field 'comm_bytes' that carries the bytes of "
        "key 'comm' when they are not UTF-8; rename the argument 'comm_bytes'";
    auto user = checkAggrNames(a, {"comm_bytes"}, false);
    ASSERT_FALSE(user);
    EXPECT_TRUE(user.error().usage);
    EXPECT_EQ(user.error().message, want);

    ProbeRequest req;
    req.kind = ProbeKind::Kprobe;
    std::vector<FetchArg> args = {arg("comm_bytes=$arg1:u64")};
    auto kernel = prepareAggregation(a, req, args);
    ASSERT_FALSE(kernel);
    EXPECT_TRUE(kernel.error().usage);
    EXPECT_EQ(kernel.error().message, want);

    // each alone, or comm as the spec's own integer argument, is fine
    a.keys = {"comm_bytes"};
    EXPECT_TRUE(checkAggrNames(a, {"comm_bytes"}, false));
    a.keys = {"comm", "comm_bytes"};
    EXPECT_TRUE(checkAggrNames(a, {"comm", "comm_bytes"}, false));
    std::vector<FetchArg> own = {arg("comm=$arg2:u64"), arg("comm_bytes=$arg1:u64")};
    ProbeRequest req2;
    req2.kind = ProbeKind::Kprobe;
    EXPECT_TRUE(prepareAggregation(a, req2, own));
}

// At an entry there is no return value: $retval, $errno and latency are refused there as
// the kernel refuses them, unless the spec names an argument so.
TEST(AggrRequest, ReturnNamesCheckedForEventsAtAnEntry) {
    AggrSpec r;
    r.keys = {"retval"};
    EXPECT_TRUE(checkAggrNames(r, {}, true));
    auto entry = checkAggrNames(r, {}, false);
    ASSERT_FALSE(entry);
    EXPECT_TRUE(entry.error().usage);
    EXPECT_EQ(entry.error().message,
              "--by retval needs a return probe (kretprobe:, uretprobe:, syscall:)");
    EXPECT_TRUE(checkAggrNames(r, {"retval"}, false));
    AggrSpec lat;
    lat.value = AggrValue::Latency;
    auto no_latency = checkAggrNames(lat, {}, false);
    ASSERT_FALSE(no_latency);
    EXPECT_EQ(no_latency.error().message,
              "latency needs a return probe (kretprobe:, uretprobe:, syscall:)");
}

TEST(AggrRequest, ErrnoKeyLoadsTheRetvalWithTheErrnoFlag) {
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    std::vector<FetchArg> args;
    AggrSpec a;
    a.keys = {"errno"};
    a.value = AggrValue::Latency;
    ASSERT_TRUE(prepareAggregation(a, req, args));
    ASSERT_EQ(args.size(), 1u);
    EXPECT_EQ(args[0].name, "errno");
    EXPECT_TRUE(isSignedType(args[0].type));
    ASSERT_EQ(req.fetch.size(), 2u);
    EXPECT_EQ(req.fetch[0].op, static_cast<std::uint8_t>(FetchOpcode::LoadRetval));
    EXPECT_EQ(req.fetch[0].flags, kFetchFlagErrno);
    EXPECT_TRUE(validateFetchProgram(req.fetch));
}

// The table of a map keyed by retval and errno reads them as such; a spec's own argument
// keeps its plain number, whatever it reads.
TEST(AggrRequest, RetvalAndErrnoKeysGetTheirReadings) {
    ProbeRequest req;
    req.kind = ProbeKind::Uretprobe;
    std::vector<FetchArg> args = {arg("r32=$retval:s32", true)};
    auto prog = compileFetchArgs(args);
    ASSERT_TRUE(prog);
    req.fetch = (*prog)[0].insns;
    AggrSpec a;
    a.keys = {"retval", "errno", "r32"};
    ASSERT_TRUE(prepareAggregation(a, req, args));
    const AggrTable t = describeAggregation(req, args);
    EXPECT_EQ(t.key_names, (std::vector<std::string>{"retval", "errno", "r32"}));
    EXPECT_EQ(t.key_readings,
              (std::vector<AggrKeyReading>{AggrKeyReading::Retval, AggrKeyReading::Errno,
                                           AggrKeyReading::Plain}));
}

TEST(AggrRequest, SyscallPlanFetchIsDropped) {
    ProbeRequest req;
    req.kind = ProbeKind::Kretprobe;
    req.fetch = {FetchInsn{static_cast<std::uint8_t>(FetchOpcode::LoadPid), 4, 0, 0, 0},
                 FetchInsn{static_cast<std::uint8_t>(FetchOpcode::StoreInt), 4, 0, 0, 0}};
    req.fetch_entry = 1;
    std::vector<FetchArg> none;
    AggrSpec a;
    a.value = AggrValue::Latency;
    ASSERT_TRUE(prepareAggregation(a, req, none));
    EXPECT_TRUE(req.fetch.empty());
    EXPECT_EQ(req.fetch_entry, 0u);
    EXPECT_EQ(req.aggr->value, AggrValue::Latency);
}

TEST(AggrDecode, KeysValuesAndDuplicatesMerged) {
    std::vector<FetchArg> args = {arg("comm=$comm"), arg("fd=$arg1:s32")};
    AggrTable t = log2Table(true);
    t.key_names = {"comm", "fd"};
    std::vector<std::uint8_t> bytes;
    const std::vector<std::uint64_t> b1(2, 1), b2 = {0, 3};
    packEntry(bytes, 0, {strKey("ls"), intKey(0xfffffffe)},
              {2, static_cast<std::uint64_t>(-4), static_cast<std::uint64_t>(-2),
               static_cast<std::uint64_t>(-2)},
              b1);
    packEntry(bytes, 0, {strKey("sh"), intKey(3)}, {1, 3, 3, 3}, b1);
    // the same key again, as two CPUs inserting it at once leave it
    packEntry(bytes, 0, {strKey("ls"), intKey(0xfffffffe)},
              {3, static_cast<std::uint64_t>(-15), static_cast<std::uint64_t>(-9),
               static_cast<std::uint64_t>(-1)},
              b2);
    packEntry(bytes, 2, {strKey("x"), intKey(0)}, {1, 0, 0, 0}, b1);
    const std::uint32_t key_size = 8 + kAggrStrLen + 8;
    ASSERT_TRUE(decodeAggrEntries(t, args, {0, 1}, bytes, key_size, 2));
    ASSERT_EQ(t.entries.size(), 3u);
    const AggrEntry& ls = t.entries[0];
    EXPECT_EQ(ls.key[0].str, "ls");
    EXPECT_EQ(fetchedSigned(ls.key[1].type, ls.key[1].raw), -2);
    EXPECT_EQ(ls.count, 5u);
    EXPECT_EQ(static_cast<std::int64_t>(ls.sum), -19);
    EXPECT_EQ(static_cast<std::int64_t>(ls.min), -9);
    EXPECT_EQ(static_cast<std::int64_t>(ls.max), -1);
    EXPECT_EQ(ls.buckets, (std::vector<std::uint64_t>{1, 4}));
    EXPECT_TRUE(t.entries[2].key[1].faulted);
    EXPECT_FALSE(t.entries[2].key[0].faulted);

    AggrTable bad = log2Table(true);
    auto r = decodeAggrEntries(bad, args, {0, 1}, bytes, key_size + 8, 2);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, EBADMSG);
}

// A string key longer than the map keeps was shown whole, as if it were the string: the
// kernel marks it (bit 32 + i of the mask), and the table and JSON say it is cut.
TEST(AggrDecode, ACutStringKeySaysSo) {
    std::vector<FetchArg> args = {arg("path=+0($arg1):string"), arg("fd=$arg2:s32")};
    AggrTable t;
    t.key_names = {"path", "fd"};
    std::vector<std::uint8_t> bytes;
    const std::string head(kAggrStrLen - 1, 'a');
    packEntry(bytes, std::uint64_t{1} << 32, {strKey(head), intKey(3)}, {2, 0, 0, 0}, {});
    packEntry(bytes, 0, {strKey(head), intKey(3)}, {1, 0, 0, 0}, {});
    ASSERT_TRUE(decodeAggrEntries(t, args, {0, 1}, bytes, 8 + kAggrStrLen + 8, 0));
    ASSERT_EQ(t.entries.size(), 2u);  // a 31-byte string and a longer one are two keys
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), head + "..., 3");
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), head + ", 3");
    const auto j = aggrJson(t, 0);
    EXPECT_EQ(j["entries"][0]["key"]["path"], head);
    EXPECT_EQ(j["entries"][0]["key_cut"], nlohmann::ordered_json::array({"path"}));
    EXPECT_FALSE(j["entries"][1].contains("key_cut"));
}

// A key with a newline split its row; one with bytes that are not UTF-8 aborted --format
// json ("invalid UTF-8 byte"). The text quotes them as the trace line does; JSON replaces
// what is not UTF-8, as event lines do.
TEST(AggrFormat, StringKeysWithControlAndNonUtf8Bytes) {
    AggrTable t;
    t.key_names = {"s"};
    auto key = [](const std::string& s) {
        FetchedValue v;
        v.type = FetchType::String;
        v.str = s;
        return std::vector<FetchedValue>{v};
    };
    t.entries.push_back({key("new\nline"), 3, 0, 0, 0, {}});
    t.entries.push_back({key("\xff\xfe bad"), 2, 0, 0, 0, {}});
    t.entries.push_back({key("plain"), 1, 0, 0, 0, {}});
    t.entries.push_back({key(""), 1, 0, 0, 0, {}});
    EXPECT_EQ(formatAggrKey(t, t.entries[3]), "\"\"") << "an empty key printed a blank cell";
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "\"new\\nline\"");
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), "\"\\377\\376 bad\"");
    EXPECT_EQ(formatAggrKey(t, t.entries[2]), "plain");
    EXPECT_EQ(formatAggrTable(t, 0).find("new\nline"), std::string::npos);
    const std::string line = toJsonLine(aggrJson(t, 0));
    EXPECT_NE(line.find("\"new\\nline\""), std::string::npos) << line;
    EXPECT_NE(line.find("\xef\xbf\xbd"), std::string::npos) << line;  // U+FFFD
}

// --by comm of tasks named g\xff and g\xfe: two keys that JSON wrote as the same
// {"comm":"g\ufffd"} (a reader summing by key got one task). Each keeps its bytes.
TEST(AggrFormat, KeysDifferingOnlyInInvalidBytesStayTwoInJson) {
    AggrTable t;
    t.key_names = {"comm"};
    auto key = [](const std::string& s) {
        FetchedValue v;
        v.type = FetchType::String;
        v.str = s;
        return std::vector<FetchedValue>{v};
    };
    t.entries.push_back({key("g\xff"), 3, 0, 0, 0, {}});
    t.entries.push_back({key("g\xfe"), 2, 0, 0, 0, {}});
    const auto j = nlohmann::json::parse(toJsonLine(aggrJson(t, 0)));
    ASSERT_EQ(j["entries"].size(), 2u);
    const auto& a = j["entries"][0];
    const auto& b = j["entries"][1];
    EXPECT_NE(a["key"], b["key"]);
    EXPECT_EQ(a["key"]["comm"], "g\xef\xbf\xbd");
    EXPECT_EQ(a["key"]["comm_bytes"], "67ff");
    EXPECT_EQ(a["count"], 3);
    EXPECT_EQ(b["key"]["comm"], "g\xef\xbf\xbd");
    EXPECT_EQ(b["key"]["comm_bytes"], "67fe");
    EXPECT_EQ(b["count"], 2);
}

// --top N in JSON did not say how many keys it left out (the text tables do).
TEST(AggrFormat, JsonSaysHowManyKeysTopLeftOut) {
    AggrTable t;
    t.key_names = {"n"};
    for (std::uint64_t i = 1; i <= 5; i++) {
        AggrEntry e;
        e.key.resize(1);
        e.key[0].type = FetchType::U64;
        e.key[0].raw = i;
        e.count = i;
        t.entries.push_back(e);
    }
    auto top = aggrJson(t, 2);
    EXPECT_EQ(top["entries"].size(), 2u);
    EXPECT_EQ(top["omitted"], 3);
    EXPECT_EQ(aggrJson(t, 0)["omitted"], 0);
    EXPECT_EQ(aggrJson(t, 9)["omitted"], 0);
}

// --by retval showed an int function's -6 as 4294967290 only, --by errno a syscall's
// ENOENT as -2: each also reads as the trace line reads it.
TEST(AggrFormat, RetvalAndErrnoKeysReadAsIntAndErrnoName) {
    AggrTable t;
    t.key_names = {"retval", "errno", "n"};
    t.key_readings = {AggrKeyReading::Retval, AggrKeyReading::Errno, AggrKeyReading::Plain};
    auto key = [](std::uint64_t retval, std::int64_t err, std::uint64_t n) {
        FetchedValue r, e, x;
        r.type = e.type = FetchType::S64;
        x.type = FetchType::U64;
        r.raw = retval;
        e.raw = static_cast<std::uint64_t>(err);
        x.raw = n;
        return std::vector<FetchedValue>{r, e, x};
    };
    t.entries.push_back({key(0xfffffffa, -2, 0xfffffffa), 3, 0, 0, 0, {}});
    t.entries.push_back({key(7, 0, 1), 2, 0, 0, 0, {}});
    t.entries.push_back({key(static_cast<std::uint64_t>(-2), -4095, 1), 1, 0, 0, 0, {}});
    EXPECT_EQ(formatAggrKey(t, t.entries[0]), "4294967290 (int -6), -2 (ENOENT), 4294967290");
    EXPECT_EQ(formatAggrKey(t, t.entries[1]), "7, 0, 1");
    // a 64-bit -2 is already negative; -4095 has no name
    EXPECT_EQ(formatAggrKey(t, t.entries[2]), "-2, -4095, 1");
    const std::string table = formatAggrTable(t, 0);
    EXPECT_NE(table.find("4294967290 (int -6)  -2 (ENOENT)"), std::string::npos) << table;
    // JSON keeps the numbers
    EXPECT_EQ(aggrJson(t, 0)["entries"][0]["key"]["errno"], -2);
}

namespace {

AggrTable sampleCounts() {
    AggrTable t;
    t.key_names = {"comm", "pid"};
    t.keys = 3;
    t.capacity = 1024;
    auto key = [](const std::string& comm, std::uint32_t pid) {
        FetchedValue c;
        c.type = FetchType::String;
        c.str = comm;
        FetchedValue p;
        p.type = FetchType::U32;
        p.raw = pid;
        return std::vector<FetchedValue>{c, p};
    };
    t.entries.push_back({key("sh", 10), 4, 0, 0, 0, {}});
    t.entries.push_back({key("make", 7), 120, 0, 0, 0, {}});
    t.entries.push_back({key("cc1", 9), 4, 0, 0, 0, {}});
    return t;
}

}  // namespace

// Keys are left-aligned, counts right-aligned.
TEST(AggrFormat, TableSortedByCountThenKey) {
    AggrTable t = sampleCounts();
    t.overflow = 5;
    EXPECT_EQ(formatAggrTable(t),
              "COMM  PID  COUNT\n"
              "make  7      120\n"
              "cc1   9        4\n"
              "sh    10       4\n"
              "3 keys (capacity 1024); map full: 5 hits with new keys not counted\n");
    EXPECT_EQ(formatAggrTable(t, 1),
              "COMM  PID  COUNT\n"
              "make  7      120\n"
              "3 keys (capacity 1024); map full: 5 hits with new keys not counted\n");
}

// count --by retval of mmap, brk, mremap, shmat printed their addresses in decimal
// (140737488355328); now in hex as strace prints their return (0x800000000000), in the key's
// numeric order, an error as the number it is (named, as every syscall's failed retval is),
// JSON's key a number still (seen failing).
// Other syscalls' values stay decimal.
TEST(AggrFormat, RetvalKeysOfSyscallsReturningAddressesAreHex) {
    auto table = [](const std::string& spec) {
        AggrTable t;
        t.spec = spec;
        t.key_names = {"retval"};
        t.key_readings = {AggrKeyReading::Retval};
        t.keys = 3;
        t.capacity = 1024;
        for (std::int64_t r :
             {std::int64_t{0x800000000000}, std::int64_t{-12}, std::int64_t{0x7f0000001000}}) {
            FetchedValue k;
            k.type = FetchType::S64;
            k.raw = static_cast<std::uint64_t>(r);
            t.entries.push_back({{k}, 1, 0, 0, 0, {}});
        }
        return t;
    };
    for (const char* spec : {"syscall:mmap", "syscall:brk", "syscall:mremap", "syscall:shmat",
                             "syscall:mmap len=$arg2:u64"}) {
        SCOPED_TRACE(spec);
        const AggrTable t = table(spec);
        EXPECT_EQ(formatAggrTable(t),
                  "RETVAL          COUNT\n"
                  "-12 (ENOMEM)        1\n"
                  "0x7f0000001000      1\n"
                  "0x800000000000      1\n"
                  "3 keys (capacity 1024)\n");
        const auto j = aggrJson(t);
        EXPECT_EQ(j["entries"][2]["key"]["retval"], 0x800000000000);
        EXPECT_EQ(j["entries"][0]["key"]["retval"], -12);
    }
    EXPECT_EQ(formatAggrKey(table("syscall:read"), table("syscall:read").entries[0]),
              "140737488355328");
    // a kretprobe's function is not known to return an address
    EXPECT_EQ(formatAggrKey(table("kretprobe:brk"), table("kretprobe:brk").entries[0]),
              "140737488355328");
}

// count syscall:openat --by retval printed a failed call's key as a bare -2, where strace -c
// and the event line name the error: a syscall's return in -4095..-1 names it as the errno
// key does, "-2 (ENOENT)", for syscall: probes and kretprobes on a syscall's wrapper (seen
// failing). The order stays the number's, JSON's key stays the number and each entry adds
// "key_errno" naming it. Other functions' -2 is no errno: it stays bare.
TEST(AggrFormat, RetvalKeysOfSyscallsNameTheError) {
    auto table = [](const std::string& spec) {
        AggrTable t;
        t.spec = spec;
        t.key_names = {"retval"};
        t.key_readings = {AggrKeyReading::Retval};
        t.keys = 5;
        t.capacity = 1024;
        for (std::int64_t r : {std::int64_t{3}, std::int64_t{-2}, std::int64_t{-13},
                               std::int64_t{-4095}, std::int64_t{-4096}}) {
            FetchedValue k;
            k.type = FetchType::S64;
            k.raw = static_cast<std::uint64_t>(r);
            t.entries.push_back({{k}, r == -2 ? 3u : 1u, 0, 0, 0, {}});
        }
        return t;
    };
    for (const char* spec : {"syscall:openat", "syscall:openat f=$arg2:ustring",
                             "kretprobe:__x64_sys_openat", "r:__x64_sys_openat"}) {
        SCOPED_TRACE(spec);
        const AggrTable t = table(spec);
        EXPECT_EQ(formatAggrTable(t),
                  "RETVAL        COUNT\n"
                  "-2 (ENOENT)       3\n"
                  "-4096             1\n"
                  "-4095             1\n"
                  "-13 (EACCES)      1\n"
                  "3                 1\n"
                  "5 keys (capacity 1024)\n");
        // --top keeps the same order
        EXPECT_EQ(formatAggrTable(t, 2),
                  "RETVAL       COUNT\n"
                  "-2 (ENOENT)      3\n"
                  "-4096            1\n"
                  "5 keys (capacity 1024)\n");
        const auto j = aggrJson(t);
        EXPECT_EQ(j["entries"][0]["key"]["retval"], -2);
        EXPECT_EQ(j["entries"][0]["key_errno"]["retval"], "ENOENT");
        EXPECT_EQ(j["entries"][3]["key_errno"]["retval"], "EACCES");
        EXPECT_FALSE(j["entries"][1].contains("key_errno")) << j.dump();
        EXPECT_FALSE(j["entries"][4].contains("key_errno")) << j.dump();
        EXPECT_EQ(j["entries"][4]["key"]["retval"], 3);
    }
    for (const char* spec : {"kretprobe:do_sys_openat2", "uretprobe:/bin/true:main", ""}) {
        SCOPED_TRACE(spec);
        const AggrTable t = table(spec);
        EXPECT_EQ(formatAggrKey(t, t.entries[1]), "-2");
        EXPECT_FALSE(aggrJson(t)["entries"][0].contains("key_errno"));
    }
    // hist and latency print the same key
    AggrTable h = table("syscall:openat");
    h.value = AggrValue::Latency;
    h.value_name = "latency";
    h.hist = AggrHist::Log2;
    EXPECT_NE(formatAggrHist(h).find("@[-2 (ENOENT)]:\n"), std::string::npos) << formatAggrHist(h);
    // the errno key's JSON names it too
    AggrTable e = table("kretprobe:do_sys_openat2");
    e.key_names = {"errno"};
    e.key_readings = {AggrKeyReading::Errno};
    EXPECT_EQ(aggrJson(e)["entries"][0]["key_errno"]["errno"], "ENOENT");
}

// latency --by retval: equal counts in the key's numeric order, signed (-11 < -2 < 0 < 10),
// not the text's ("-11" < "-2" < "0" < "10" only by luck; "10" < "9" as text).
TEST(AggrFormat, NumericKeysSortAsNumbers) {
    AggrTable t;
    t.key_names = {"retval"};
    for (std::int64_t r : {9, -2, 10, 0, -11}) {
        FetchedValue k;
        k.type = FetchType::S64;
        k.raw = static_cast<std::uint64_t>(r);
        t.entries.push_back({{k}, 1, 0, 0, 0, {}});
    }
    std::vector<std::string> order;
    for (const AggrEntry* e : sortedEntries(t, 0))
        order.push_back(formatAggrKey(t, *e));
    EXPECT_EQ(order, (std::vector<std::string>{"-11", "-2", "0", "9", "10"}));
    // Unsigned: 2^63 is large, not negative.
    AggrTable u;
    for (std::uint64_t r : {std::uint64_t{1} << 63, std::uint64_t{3}}) {
        FetchedValue k;
        k.type = FetchType::U64;
        k.raw = r;
        u.entries.push_back({{k}, 1, 0, 0, 0, {}});
    }
    EXPECT_EQ(sortedEntries(u, 0).front()->key[0].raw, 3u);
}

// A linear step once printed as [1K, 1536): both bounds of a label share one unit.
TEST(AggrFormat, LinearBoundsShareOneUnit) {
    AggrTable t = linearTable(0, 3072, 512);
    t.keys = 1;
    t.capacity = 1024;
    AggrEntry e;
    e.count = 6;
    e.buckets.assign(8, 1);
    t.entries.push_back(e);
    const std::string out = formatAggrHist(t);
    EXPECT_NE(out.find("[0, 512)"), std::string::npos) << out;
    EXPECT_NE(out.find("[512, 1024)"), std::string::npos) << out;
    EXPECT_NE(out.find("[1024, 1536)"), std::string::npos) << out;
    EXPECT_NE(out.find("[1536, 2048)"), std::string::npos) << out;
    EXPECT_NE(out.find("[2048, 2560)"), std::string::npos) << out;
    EXPECT_EQ(out.find("1K"), std::string::npos) << out;
    // Bounds that are both whole units keep the short form.
    AggrTable k = linearTable(0, 4096, 1024);
    k.keys = 1;
    k.capacity = 1024;
    e.buckets.assign(6, 1);
    k.entries.push_back(e);
    const std::string kout = formatAggrHist(k);
    EXPECT_NE(kout.find("[1K, 2K)"), std::string::npos) << kout;
    EXPECT_NE(kout.find("[0, 1K)"), std::string::npos) << kout;
}

// A clearing read (--interval) of a map whose one key had no hit since the last: the table
// is empty, but its line said "1 key", the map's count of the keys it remembers.
TEST(AggrFormat, AnEmptyIntervalSaysNoKeys) {
    AggrTable t = linearTable(0, 3072, 512);
    t.key_names = {"comm"};  // a keyless map's line says nothing of its keys
    t.keys = 1;
    t.capacity = 1024;
    const std::string out = formatAggrHist(t);
    EXPECT_NE(out.find("0 keys (1 held in the map, capacity 1024)"), std::string::npos) << out;
    EXPECT_EQ(out.find("1 key "), std::string::npos) << out;
    t.keys = 0;
    EXPECT_NE(formatAggrHist(t).find("0 keys (capacity 1024)"), std::string::npos);
}

// A linear bucket ending at -1 read [-1, 2^64) (its last value, -1, taken for log2's top), and
// log2's [2^62, 2^63) read [4E, -8E) (its end past INT64_MAX).
TEST(AggrFormat, BucketsEndingAtMinusOneAndAt2To63) {
    AggrTable t = linearTable(-5, 5, 1);
    t.is_signed = true;
    t.keys = 1;
    t.capacity = 1024;
    AggrEntry e;
    e.count = 12;
    e.buckets.assign(12, 1);
    t.entries.push_back(e);
    std::string out = formatAggrHist(t);
    EXPECT_NE(out.find("[-2, -1) "), std::string::npos) << out;
    EXPECT_NE(out.find("[-1, 0) "), std::string::npos) << out;
    EXPECT_NE(out.find("[0, 1) "), std::string::npos) << out;
    EXPECT_EQ(out.find("2^64"), std::string::npos) << out;
    AggrTable l = log2Table(true);
    l.keys = 1;
    l.capacity = 1024;
    e.buckets.assign(kAggrLog2Buckets, 0);
    e.buckets[64] = 1;  // [2^62, 2^63): INT64_MAX
    e.count = 1;
    l.entries = {e};
    out = formatAggrHist(l);
    EXPECT_NE(out.find("[4E, 8E) "), std::string::npos) << out;
    EXPECT_EQ(out.find("-8E"), std::string::npos) << out;
    // An unsigned value's last bucket, [2^63, 2^64), printed [-8E, 2^64) and in JSON
    // {"min": INT64_MIN, "max": -1}.
    AggrTable u = log2Table(false);
    u.keys = 1;
    u.capacity = 1024;
    e.buckets.assign(kAggrLog2Buckets, 0);
    e.buckets[65] = 3;
    e.count = 3;
    u.entries = {e};
    out = formatAggrHist(u);
    EXPECT_NE(out.find("[8E, 16E) "), std::string::npos) << out;
    EXPECT_EQ(out.find("-8E"), std::string::npos) << out;
    const auto h = aggrJson(u, 0)["entries"][0]["hist"][0];
    EXPECT_EQ(h["min"], std::uint64_t{1} << 63);
    EXPECT_EQ(h["max"], ~std::uint64_t{0});
    EXPECT_EQ(h["count"], 3);
}

// The kernel's sum wraps at 64 bits: u64 values near 2^64 printed "avg 2305843009213693952"
// and s64 ones a positive average of negative values. count, min and max give the true sum
// back when they pin it; when they do not, SUM and AVG say they are not known.
TEST(AggrFormat, ASumPast64BitsIsRecoveredOrSaidUnknown) {
    using U = std::uint64_t;
    AggrTable u = log2Table(false);
    u.value = AggrValue::Arg;
    u.value_name = "x";
    // 3 values of 2^63 + 1: the sum 3 * 2^63 + 3 wraps to 2^63 + 3
    AggrEntry big{{}, 3, (U{1} << 63) + 3, (U{1} << 63) + 1, (U{1} << 63) + 1, {}};
    u.entries = {big};
    ASSERT_TRUE(aggrSum(u, big));
    EXPECT_TRUE(*aggrSum(u, big) ==
                static_cast<__int128>(3) * ((static_cast<__int128>(1) << 63) + 1));
    EXPECT_DOUBLE_EQ(*aggrAvg(u, big), 9223372036854775809.0);
    EXPECT_NE(formatAggrTable(u).find("27670116110564327427"), std::string::npos)
        << formatAggrTable(u);
    auto j = aggrJson(u, 0)["entries"][0];
    EXPECT_TRUE(j["sum"].is_null());
    EXPECT_EQ(j["sum_text"], "27670116110564327427");
    // -1, -1, INT64_MIN, 0 as s64: the sum -2^63 - 2 wraps to 2^63 - 2
    AggrTable s = log2Table(true);
    s.value = AggrValue::Arg;
    s.value_name = "x";
    AggrEntry neg{{}, 4, (U{1} << 63) - 2, U{1} << 63, 0, {}};
    s.entries = {neg};
    // spread over 2^63 four times: more than 2^64 apart, so not known
    EXPECT_FALSE(aggrSum(s, neg));
    EXPECT_FALSE(aggrAvg(s, neg));
    const std::string text = formatAggrHist(s);
    EXPECT_NE(text.find("count 4, avg ?,"), std::string::npos) << text;
    EXPECT_NE(text.find("1 sum of x not known (?)"), std::string::npos) << text;
    EXPECT_TRUE(aggrJson(s, 0)["entries"][0]["avg"].is_null());
    // a sum that did not wrap is the kernel's, as before
    AggrEntry small{{}, 2, static_cast<U>(-10), static_cast<U>(-6), static_cast<U>(-4), {}};
    s.entries = {small};
    EXPECT_DOUBLE_EQ(*aggrAvg(s, small), -5.0);
    EXPECT_EQ(aggrJson(s, 0)["entries"][0]["sum"], -10);
}

// Three values of -(2^63 - 1) (aggr_target wrap): the sum is known, -27670116110564327421,
// but the average went through a double, which has no -(2^63 - 1): "avg
// -9223372036854775808", below the minimum. It is computed in integers now.
TEST(AggrFormat, AnAverageNearTheLimitsStaysInsideMinAndMax) {
    using U = std::uint64_t;
    AggrTable s = log2Table(true);
    s.value = AggrValue::Arg;
    s.value_name = "v";
    const auto v = static_cast<U>(-INT64_MAX);
    AggrEntry e{{}, 3, v * 3, v, v, {}};
    s.entries = {e};
    ASSERT_TRUE(aggrSum(s, e));
    EXPECT_EQ(aggrJson(s, 0)["entries"][0]["sum_text"], "-27670116110564327421");
    ASSERT_TRUE(aggrAvgValue(s, e));
    EXPECT_EQ(static_cast<std::int64_t>(*aggrAvgValue(s, e)), -INT64_MAX);
    EXPECT_NE(formatAggrHist(s).find("count 3, avg -9223372036854775807, min "
                                     "-9223372036854775807, max -9223372036854775807"),
              std::string::npos)
        << formatAggrHist(s);
    EXPECT_EQ(formatAggrTable(s).find("-9223372036854775808"), std::string::npos)
        << formatAggrTable(s);
    // -3 and -2: a mean of -2.5, which rounds to the even -2; -2 and -1: -1.5, to -2 too
    AggrEntry m{{}, 2, static_cast<U>(-5), static_cast<U>(-3), static_cast<U>(-2), {}};
    ASSERT_TRUE(aggrAvgValue(s, m));
    EXPECT_EQ(static_cast<std::int64_t>(*aggrAvgValue(s, m)), -2);
    m = {{}, 2, static_cast<U>(-3), static_cast<U>(-2), static_cast<U>(-1), {}};
    ASSERT_TRUE(aggrAvgValue(s, m));
    EXPECT_EQ(static_cast<std::int64_t>(*aggrAvgValue(s, m)), -2);
    // u64: UINT64_MAX twice and UINT64_MAX - 1, a mean of UINT64_MAX - 1/3
    AggrTable u = log2Table(false);
    u.value = AggrValue::Arg;
    u.value_name = "v";
    AggrEntry big{{}, 3, ~U{0} * 3 - 1, ~U{0} - 1, ~U{0}, {}};
    u.entries = {big};
    ASSERT_TRUE(aggrAvgValue(u, big));
    EXPECT_EQ(*aggrAvgValue(u, big), ~U{0});
    EXPECT_NE(formatAggrHist(u).find("count 3, avg 18446744073709551615, min "
                                     "18446744073709551614, max 18446744073709551615"),
              std::string::npos)
        << formatAggrHist(u);
    // halves: 49.5 to 50 (README's 0..99), 48.5 to 48, -0.5 to 0
    AggrEntry h{{}, 2, 97, 48, 49, {}};
    u.entries = {h};
    EXPECT_EQ(*aggrAvgValue(u, h), 48u);
    h = {{}, 100, 4950, 0, 99, {}};
    EXPECT_EQ(*aggrAvgValue(u, h), 50u);
    AggrEntry z{{}, 2, static_cast<U>(-1), static_cast<U>(-1), 0, {}};
    EXPECT_EQ(*aggrAvgValue(s, z), 0u);
}

// -1 and 0 average -0.5, which printed as "avg -0".
TEST(AggrFormat, AnAverageThatRoundsToZeroHasNoSign) {
    using U = std::uint64_t;
    AggrTable s = log2Table(true);
    s.value = AggrValue::Arg;
    s.value_name = "x";
    AggrEntry e{{}, 2, static_cast<U>(-1), static_cast<U>(-1), 0, {}};
    s.entries = {e};
    const std::string text = formatAggrHist(s);
    EXPECT_NE(text.find("count 2, avg 0, min -1, max 0"), std::string::npos) << text;
    AggrEntry f{{}, 2, static_cast<U>(-3), static_cast<U>(-2), static_cast<U>(-1), {}};
    s.entries = {f};
    EXPECT_NE(formatAggrHist(s).find("avg -2,"), std::string::npos) << formatAggrHist(s);
}

TEST(AggrFormat, HistogramLinesAndUnits) {
    AggrTable t = log2Table(false);
    t.keys = 1;
    t.capacity = 1024;
    AggrEntry e;
    e.count = 7;
    e.sum = 2060;
    e.min = 0;
    e.max = 2047;
    e.buckets.assign(kAggrLog2Buckets, 0);
    e.buckets[1] = 1;   // [0]
    e.buckets[3] = 2;   // [2, 4)
    e.buckets[12] = 4;  // [1K, 2K)
    t.entries.push_back(e);
    const std::string out = formatAggrHist(t);
    EXPECT_EQ(
        out,
        "@v:\n"
        "[0]                        1 |@@@@@@@@@@@@@                                       |\n"
        "[1]                        0 |                                                    |\n"
        "[2, 4)                     2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
        "[4, 8)                     0 |                                                    |\n"
        "[8, 16)                    0 |                                                    |\n"
        "[16, 32)                   0 |                                                    |\n"
        "[32, 64)                   0 |                                                    |\n"
        "[64, 128)                  0 |                                                    |\n"
        "[128, 256)                 0 |                                                    |\n"
        "[256, 512)                 0 |                                                    |\n"
        "[512, 1K)                  0 |                                                    |\n"
        "[1K, 2K)                   4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
        "count 7, avg 294, min 0, max 2047\n");
    t.value = AggrValue::Latency;
    t.value_name = "latency";
    e.buckets.assign(kAggrLog2Buckets, 0);
    e.buckets[22] = 1;  // [2^20, 2^21) ns
    e.min = e.max = e.sum = 1500000;
    e.count = 1;
    t.entries = {e};
    EXPECT_NE(formatAggrHist(t).find("[1.05ms, 2.1ms)            1 |@@@@"), std::string::npos)
        << formatAggrHist(t);
}

TEST(AggrFormat, JsonFollowsBpftraceHistShape) {
    AggrTable t = linearTable(0, 20, 10);
    t.spec = "kprobe:vfs_read n=$arg3:s64";
    t.key_names = {};
    t.keys = 1;
    t.capacity = 16;
    AggrEntry e;
    e.count = 6;
    e.sum = static_cast<std::uint64_t>(40);
    e.min = static_cast<std::uint64_t>(-5);
    e.max = 30;
    e.buckets = {1, 2, 0, 3};
    t.entries.push_back(e);
    auto j = aggrJson(t);
    EXPECT_EQ(j["type"], "aggregation");
    EXPECT_EQ(j["probe"], t.spec);
    EXPECT_EQ(j["value"], "v");
    EXPECT_EQ(j["capacity"], 16);
    const auto& o = j["entries"][0];
    EXPECT_EQ(o["min"], -5);
    EXPECT_EQ(o["max"], 30);
    EXPECT_EQ(o["avg"], 40.0 / 6);
    // below min: no "min"; above max: no "max"; empty buckets left out
    EXPECT_EQ(o["hist"].dump(),
              R"([{"max":-1,"count":1},{"min":0,"max":9,"count":2},{"min":20,"count":3}])");
}

TEST(AggrFormat, ProbeCountsWithoutKeys) {
    AggrTable a, b;
    a.spec = "kprobe:vfs_read";
    a.entries.push_back({{}, 5, 0, 0, 0, {}});
    b.spec = "kprobe:vfs_write";
    b.entries.push_back({{}, 9, 0, 0, 0, {}});
    b.overflow = 0;
    EXPECT_EQ(cli::formatProbeCounts({a, b}),
              "PROBE                  COUNT\n"
              "kprobe:vfs_write           9\n"
              "kprobe:vfs_read            5\n");
}

// count --uid N printed a bare 0 when the process filter skipped every hit: the skipped
// hits are shown beside COUNT, as trace's summary and the keyed tables' headers show them.
TEST(AggrFormat, ProbeCountsShowWhatTheProcessFilterSkipped) {
    AggrTable a;
    a.spec = "syscall:getppid";
    a.entries.push_back({{}, 0, 0, 0, 0, {}});
    SessionStats stats;
    stats.probes.resize(1);
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats),
              "PROBE                 COUNT\n"
              "syscall:getppid           0\n");
    // A run with a process filter (-- CMD, -p, --uid...) has the column, as trace's summary.
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats, false, true),
              "PROBE                 COUNT    FILTERED\n"
              "syscall:getppid           0           0\n");
    stats.probes[0].filtered = 5;
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats),
              "PROBE                 COUNT    FILTERED\n"
              "syscall:getppid           0           5\n"
              "FILTERED: hits the process filter skipped (-p, -- CMD, --pid, --tid, --uid, "
              "--comm), not in COUNT\n");
}

// count kretprobe:do_nanosleep --maxactive 2 on 4 sleeping threads printed COUNT 10 of 20
// calls and nothing else: the missed calls (NMISSED, outside HITS) are said under the table,
// as the keyed tables' headers and trace's summary say them.
TEST(AggrFormat, ProbeCountsSayTheMissedHits) {
    AggrTable a;
    a.spec = "kretprobe:do_nanosleep";
    a.entries.push_back({{}, 10, 0, 0, 0, {}});
    SessionStats stats;
    stats.probes.resize(1);
    stats.probes[0].hits = 10;
    stats.probes[0].nmissed = 10;
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats),
              "PROBE                        COUNT\n"
              "kretprobe:do_nanosleep          10\n"
              "kretprobe:do_nanosleep: 10 hits missed, not in COUNT (probe reentry, or too few "
              "kretprobe instances: raise --maxactive)\n");
    // --maxactive is no help to a kprobe (reentry only) or a uretprobe (its own table).
    a.spec = "kprobe:vfs_read";
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats),
              "PROBE                 COUNT\n"
              "kprobe:vfs_read          10\n"
              "kprobe:vfs_read: 10 hits missed, not in COUNT (probe reentry: the probe fired "
              "inside another probe's handler on its CPU)\n");
    a.spec = "uretprobe:/bin/true:main";
    EXPECT_EQ(cli::formatProbeCounts({a}, 0, &stats),
              "PROBE                          COUNT\n"
              "uretprobe:/bin/true:main          10\n"
              "uretprobe:/bin/true:main: 10 hits missed, not in COUNT (returns whose entry was "
              "pushed out of the probe's table of calls in flight)\n");
}

// count 'kprobe:vfs_*' once printed a row for every function that never ran.
TEST(AggrFormat, ProbeCountsHideZeroRowsOfSeveral) {
    AggrTable a, b, c;
    a.spec = "kprobe:vfs_read";
    a.entries.push_back({{}, 5, 0, 0, 0, {}});
    b.spec = "kprobe:vfs_fsync";
    c.spec = "kprobe:vfs_rename";
    c.entries.push_back({{}, 0, 0, 0, 0, {}});
    EXPECT_EQ(cli::formatProbeCounts({a, b, c}),
              "PROBE                 COUNT\n"
              "kprobe:vfs_read           5\n"
              "(2 probes with no hits not shown; --zeros shows them)\n");
    EXPECT_EQ(cli::formatProbeCounts({a, b, c}, 0, nullptr, true),
              "PROBE                   COUNT\n"
              "kprobe:vfs_read             5\n"
              "kprobe:vfs_fsync            0\n"
              "kprobe:vfs_rename           0\n");
    // One probe is shown even with no hits: the table would be empty otherwise.
    EXPECT_EQ(cli::formatProbeCounts({b}),
              "PROBE                  COUNT\n"
              "kprobe:vfs_fsync           0\n");
    auto o = cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_*", "--zeros"});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_TRUE(o->zeros);
}

TEST(AggrCliOptions, ParsesEachMode) {
    auto h = cli::parseAggrOptions(cli::AggrMode::Hist, {"kprobe:vfs_read n=$arg3", "n", "--linear",
                                                         "0,4096,512", "--by", "comm,$pid"});
    ASSERT_TRUE(h) << h.error().message;
    EXPECT_EQ(h->aggr.value, AggrValue::Arg);
    EXPECT_EQ(h->aggr.value_arg, "n");
    EXPECT_EQ(h->aggr.hist, AggrHist::Linear);
    EXPECT_EQ(h->aggr.lin_max, 4096);
    EXPECT_EQ(h->aggr.keys, (std::vector<std::string>{"comm", "pid"}));
    auto l = cli::parseAggrOptions(cli::AggrMode::Latency, {"kretprobe:vfs_read", "--", "ls"});
    ASSERT_TRUE(l);
    EXPECT_EQ(l->aggr.value, AggrValue::Latency);
    EXPECT_EQ(l->aggr.hist, AggrHist::Log2);
    EXPECT_EQ(l->command, (std::vector<std::string>{"ls"}));
    EXPECT_FALSE(cli::parseAggrOptions(cli::AggrMode::Hist, {"kprobe:vfs_read"}));
    EXPECT_FALSE(cli::parseAggrOptions(cli::AggrMode::Hist,
                                       {"kprobe:vfs_read n=$arg3", "n", "--linear", "5,1,1"}));
    // an integer too large is out of range, not "not an integer"
    auto big = cli::parseAggrOptions(cli::AggrMode::Hist, {"kprobe:vfs_read n=$arg3", "n",
                                                           "--linear", "0,18446744073709551615,1"});
    ASSERT_FALSE(big);
    EXPECT_NE(big.error().message.find("'18446744073709551615' is out of range"), std::string::npos)
        << big.error().message;
    // -p twice for one process is one process
    auto twice = cli::parseAggrOptions(cli::AggrMode::Count,
                                       {"kprobe:vfs_read", "-p", "7", "-p", "9", "-p", "7"});
    ASSERT_TRUE(twice) << twice.error().message;
    EXPECT_EQ(twice->pids, (std::vector<std::uint32_t>{7, 9}));
    EXPECT_FALSE(
        cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--by", "a,b,c,d,e"}));
    EXPECT_FALSE(
        cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--max-entries", "0"}));
}

// count/hist/latency read --duration as trace does: units, and at most a year (1e30 used to
// overflow the deadline and end the count at once).
TEST(AggrCliOptions, DurationAsTraceReadsIt) {
    auto c =
        cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--duration", "500ms"});
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_DOUBLE_EQ(c->duration, 0.5);
    for (const char* top : {"0", "-1"})
        EXPECT_FALSE(cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--top", top}))
            << "--top " << top;
    EXPECT_EQ(cli::endsWhen("500ms", false), "Ends after 500ms or on Ctrl-C.");
    EXPECT_EQ(cli::endsWhen("", true), "Ends when the command exits or on Ctrl-C.");
    // -p PID -f ends once PID and what it forked exited.
    EXPECT_EQ(cli::endsWhen("", false, 1, true),
              "Ends when the process and what it forks exit or on Ctrl-C.");
    for (const char* bad : {"1e30", "inf", "100000000h", "0", "-1"})
        EXPECT_FALSE(
            cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--duration", bad}))
            << bad;
}

// -o '' used to mean standard output; a key given twice used to make a table with two equal
// columns. Both are usage errors naming what is wrong.
TEST(AggrCliOptions, EmptyOutputAndRepeatedKeysAreRefused) {
    auto refused = [](cli::AggrMode mode, std::vector<std::string> args, const std::string& says) {
        auto r = cli::parseAggrOptions(mode, args);
        ASSERT_FALSE(r) << says;
        EXPECT_EQ(r.error().message, says);
    };
    refused(cli::AggrMode::Count, {"kprobe:vfs_read", "-o", ""},
            "-o '': give a file name (leave -o out to write to standard output)");
    refused(cli::AggrMode::Latency, {"kretprobe:vfs_read", "--output", ""},
            "-o '': give a file name (leave -o out to write to standard output)");
    const std::string twice = "--by: key 'comm' is given twice: name each key once";
    refused(cli::AggrMode::Count, {"kprobe:vfs_read", "--by", "comm,comm"}, twice);
    refused(cli::AggrMode::Count, {"kprobe:vfs_read", "--by", "comm", "--by", "$comm"}, twice);
    refused(cli::AggrMode::Hist, {"kprobe:vfs_read n=$arg3", "n", "--by", "pid,comm,comm"}, twice);
    EXPECT_TRUE(
        cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--by", "comm,pid"}));
}

// --interval has its own message (it used to say --duration) and a lower bound, 100ms.
TEST(AggrCliOptions, IntervalHasItsOwnCheckAndLowerBound) {
    for (const char* bad : {"0", "0ms", "99ms", "0.05", "-1", "1e30", "x"}) {
        auto r =
            cli::parseAggrOptions(cli::AggrMode::Count, {"kprobe:vfs_read", "--interval", bad});
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().message.rfind(std::string("--interval '") + bad +
                                              "': expected a time "
                                              "of at least 100ms",
                                          0),
                  0u)
            << r.error().message;
        EXPECT_EQ(r.error().message.find("--duration"), std::string::npos) << r.error().message;
    }
    for (const auto& [text, secs] :
         std::vector<std::pair<const char*, double>>{{"100ms", 0.1}, {"0.1", 0.1}, {"2s", 2}}) {
        auto r = cli::parseAggrOptions(cli::AggrMode::Latency,
                                       {"kretprobe:vfs_read", "--interval", text});
        ASSERT_TRUE(r) << text << ": " << r.error().message;
        EXPECT_DOUBLE_EQ(r->interval, secs);
    }
}

// --by kstack or ustack where no stacks can be counted: each mistake says what to do.
TEST(AggrCliOptions, EachStackKeyMistakeHasItsOwnMessage) {
    auto says = [](cli::AggrMode mode, std::vector<std::string> args) {
        auto r = cli::parseAggrOptions(mode, args);
        EXPECT_FALSE(r);
        return r ? std::string() : r.error().message;
    };
    EXPECT_EQ(says(cli::AggrMode::Hist, {"uprobe:/bin/true:main n=$arg1", "n", "--by", "ustack"}),
              "--by ustack: hist has no stack keys: count the stacks with probectl count SPEC "
              "--by ustack");
    EXPECT_EQ(says(cli::AggrMode::Latency, {"kretprobe:vfs_read", "--by", "kstack"}),
              "--by kstack: latency has no stack keys: count the stacks with probectl count SPEC "
              "--by kstack");
    EXPECT_EQ(says(cli::AggrMode::Count, {"--from", "run.prb", "--by", "ustack"}),
              "--by ustack with --from: stacks are counted while the program runs, not from a "
              "recording: probectl count SPEC --by ustack -- CMD");
    EXPECT_EQ(says(cli::AggrMode::Count,
                   {"uprobe:/bin/true:main", "--by", "ustack", "--backend", "ptrace"}),
              "--by ustack walks frame pointers in probectl.ko: with --backend ptrace add "
              "--ustack=dwarf (either backend), or leave out --backend ptrace");
    EXPECT_EQ(says(cli::AggrMode::Count,
                   {"uprobe:/bin/true:main", "--by", "kstack", "--backend", "ptrace"}),
              std::string("--by kstack: ") + cli::kNoKernelStacksWithPtrace);
    EXPECT_EQ(says(cli::AggrMode::Count,
                   {"kprobe:vfs_read", "--by", "ustack", "--format", "chrome", "-o", "x.json"}),
              "--by ustack --format chrome: counter tracks have no stacks; stacks are printed as "
              "text, json, folded or svg");
}

// "each map holds up to 1 keys" was said when the share held one key a map.
TEST(AggrBudget, ShareNoteSaysOneKeyInTheSingular) {
    cli::MapShare share;
    share.probes = 361;
    share.attached = 361;
    share.limit_bytes = 1024 * 1024;
    share.smallest = 1;
    EXPECT_NE(cli::mapShareNote(share).find("each map holds up to 1 key, not 1024;"),
              std::string::npos)
        << cli::mapShareNote(share);
    share.smallest = 153;
    EXPECT_NE(cli::mapShareNote(share).find("up to 153 keys, not"), std::string::npos);
}

// The note said "361 probes share the module's max_map_kb" when 359 were attached (latency
// refuses exit and exit_group after the share is made): it says how many the maps were sized
// for and how many attached. One probe whose default map does not fit is sized down too.
TEST(AggrBudget, ShareNoteCountsTheProbesAttached) {
    cli::MapShare share;
    share.probes = 361;
    share.attached = 359;
    share.limit_bytes = 1024 * 1024;
    share.smallest = 2;
    EXPECT_EQ(cli::mapShareNote(share),
              "probectl: note: the maps were sized for the 361 probes asked for to share the "
              "module's max_map_kb (1024 KiB); 359 of them attached, each map holding up to 2 "
              "keys, not 1024; hits with a key beyond are counted as map full (--max-entries N "
              "asks for N keys a map)");
    share.attached = 361;
    EXPECT_EQ(cli::mapShareNote(share).find("probectl: note: 361 probes share the module's "
                                            "max_map_kb (1024 KiB): each map holds up to 2 keys, "
                                            "not 1024;"),
              0u)
        << cli::mapShareNote(share);
    share.probes = share.attached = 1;
    share.smallest = 40;
    EXPECT_EQ(cli::mapShareNote(share).find("probectl: note: a map of 1024 keys does not fit the "
                                            "module's max_map_kb (1024 KiB): the probe's map "
                                            "holds up to 40 keys;"),
              0u)
        << cli::mapShareNote(share);
}

// A spec with several sites has a probe and a map per site (a function's inlined copies, a
// USDT probe's sites), but the share of max_map_kb counted it as one: its first map took the
// whole budget and the next site's was refused (seen failing). Every site counts; a spec
// given twice counts once, as attachSpecs adds it once.
TEST(AggrBudget, EverySiteOfASpecCountsInTheShare) {
    auto spec = [](const std::string& text) {
        auto s = parseProbeSpec(text);
        EXPECT_TRUE(s) << text;
        return s ? *s : ProbeSpec{};
    };
    const std::string helper = std::string("uprobe:") + FX_INLINE_PATH + ":helper";
    const auto sites = resolveUserSpecAll(spec(helper));
    ASSERT_TRUE(sites) << sites.error().message;
    ASSERT_GE(sites->size(), 3u) << "the out-of-line copy and the inlined ones";
    EXPECT_EQ(cli::mapProbesOf({spec(helper)}, 0), sites->size());
    EXPECT_EQ(cli::mapProbesOf({spec(helper), spec(helper)}, 0), sites->size());
    EXPECT_EQ(cli::mapProbesOf({spec(helper), spec("kprobe:vfs_read")}, 0), sites->size() + 1);
    // A return probe has the out-of-line copy alone.
    EXPECT_EQ(cli::mapProbesOf({spec(std::string("uretprobe:") + FX_INLINE_PATH + ":helper")}, 0),
              1u);
    EXPECT_EQ(cli::mapProbesOf({spec(std::string("usdt:") + FX_USDT_PATH + ":fx:plain")}, 0), 1u);
}

// count --by shares the maps' budget among the probes (mapProbesOf), resolving each spec, then
// attaches them, which resolved every name of a glob again, the file read anew each time.
// With one UserResolveCache the attaching asks the file nothing: it gets the answers the
// sharing got, even once the file is gone.
TEST(AggrBudget, AttachingReusesTheResolutionsOfTheShare) {
    const std::string path = ::testing::TempDir() + "aggr-resolve-once";
    std::filesystem::copy_file(FX_INLINE_PATH, path,
                               std::filesystem::copy_options::overwrite_existing);
    auto glob = parseProbeSpec("uprobe:" + path + ":'[ht]*'");
    ASSERT_TRUE(glob);
    const std::size_t uncached = cli::mapProbesOf({*glob}, 0);
    auto cache = std::make_shared<UserResolveCache>();
    EXPECT_EQ(cli::mapProbesOf({*glob}, 0, cache), uncached);
    ASSERT_GE(uncached, 5u) << "helper's copies, thrice and twice";
    std::filesystem::remove(path);

    SpecExpander x(0, nullptr, cache);
    auto names = x.expand(*glob);
    ASSERT_TRUE(names) << names.error().message;
    std::vector<std::string> symbols;
    std::size_t sites = 0;
    UserResolveOptions ro;
    ro.cache = cache;
    for (const ProbeSpec& s : names->specs) {
        symbols.push_back(s.symbol);
        auto all = resolveUserSpecAll(s, ro);
        ASSERT_TRUE(all) << all.error().message;
        sites += all->size();
        auto gone = resolveUserSpecAll(s);
        ASSERT_FALSE(gone) << "the file is gone";
        EXPECT_EQ(gone.error().err, ENOENT) << gone.error().message;
    }
    EXPECT_EQ(symbols, (std::vector<std::string>{"helper", "thrice", "twice"}));
    EXPECT_EQ(sites, uncached);
    EXPECT_FALSE(SpecExpander(0, nullptr).expand(*glob)) << "the file is gone";
}

// Not even one key in a map's share: refused with the cause (the probes, the budget, the bytes
// a key needs) and what to do, where the kernel's refusal named a map of 1024 keys.
TEST(AggrBudget, NotEvenOneKeyNamesTheCauseAndTheWayOut) {
    cli::MapShare share;
    share.probes = 361;
    share.limit_bytes = 512 * 1024;
    share.bytes = share.limit_bytes / share.probes;
    share.ncpus = 2;
    Error e = cli::mapShareRefusal(share, 2272);
    EXPECT_EQ(e.err, ENOSPC);
    EXPECT_FALSE(e.usage);
    EXPECT_EQ(e.message,
              "not even one key fits the map: 361 probes share the module's max_map_kb (512 "
              "KiB), 1452 bytes each, and one key of this map needs 2272 bytes (2 possible CPUs) "
              "(limit: max_map_kb); trace fewer probes, raise the module parameter max_map_kb to "
              "801 or more (at 801 each map holds one key: echo 801 > "
              "/sys/module/probectl/parameters/max_map_kb), or use fewer or smaller keys (an "
              "integer key takes 8 bytes, a string 32)");
    share.probes = 1;
    share.limit_bytes = share.bytes = 1024;
    EXPECT_EQ(cli::mapShareRefusal(share, 2272).message,
              "not even one key fits the map: the module's max_map_kb is 1 KiB and one key of "
              "this map needs 2272 bytes (2 possible CPUs) (limit: max_map_kb); raise the module "
              "parameter max_map_kb to 3 or more (at 3 the map holds one key: echo 3 > "
              "/sys/module/probectl/parameters/max_map_kb), or use fewer or smaller keys (an "
              "integer key takes 8 bytes, a string 32)");
}
