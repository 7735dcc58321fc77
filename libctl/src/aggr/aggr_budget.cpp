// The memory of an aggregation map as probectl.ko charges it, and the budget it is charged to
// (aggr.hpp: AggrMapSize, readAggrBudget): how a glob's many maps are sized to fit together.
#include <sys/sysinfo.h>

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "aggr_rules.hpp"
#include "probectl/aggr.hpp"

namespace probectl {

AggrMapSize aggrMapSize(const ProbeRequest& req, const std::vector<FetchArg>& args) {
    AggrMapSize m;
    if (!req.aggr)
        return m;
    const AggrMapSpec& a = *req.aggr;
    // kmod/aggr.c: a key argument is a string unless it stores an integer (decodeAggrEntries
    // checks the same layout against the kernel's).
    for (unsigned i = 0; i < a.nkeys; i++)
        m.key_size += a.keys[i] < args.size() && isStringType(args[a.keys[i]].type)
                          ? static_cast<std::uint32_t>(kAggrStrLen)
                          : 8u;
    std::uint64_t buckets = 0;
    if (a.hist == AggrHist::Log2)
        buckets = kAggrLog2Buckets;
    else if (a.hist == AggrHist::Linear)
        buckets = 2 + detail::linearSteps(a.lin_min, a.lin_max, a.lin_step);
    m.val_size = static_cast<std::uint32_t>(sizeof(AggrTotals) + buckets * 8);
    return m;
}

std::uint64_t aggrMapBytes(const AggrMapSize& m, std::uint32_t entries, std::uint32_t ncpus) {
    std::uint64_t slots = 1;
    while (slots < 2ULL * entries)
        slots <<= 1;
    return slots * 4 + std::uint64_t{entries} * m.key_size + 2ULL * ncpus * entries * m.val_size;
}

std::uint32_t aggrEntriesWithin(const AggrMapSize& m, std::uint64_t bytes, std::uint32_t want,
                                std::uint32_t ncpus) {
    // The bytes grow with the keys: the largest count that fits, by bisection.
    std::uint32_t lo = 0, hi = want;
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo + 1) / 2;
        if (aggrMapBytes(m, mid, ncpus) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

namespace {

// CPUs in a list such as /sys/devices/system/cpu/possible ("0-1", "0,2-3").
std::uint32_t cpusInList(const std::string& list) {
    std::uint32_t n = 0;
    std::size_t pos = 0;
    while (pos < list.size()) {
        const std::size_t end = std::min(list.find(',', pos), list.size());
        const std::string part = list.substr(pos, end - pos);
        const std::size_t dash = part.find('-');
        try {
            n += dash == std::string::npos
                     ? 1u
                     : static_cast<std::uint32_t>(std::stoul(part.substr(dash + 1)) -
                                                  std::stoul(part.substr(0, dash)) + 1);
        } catch (const std::exception&) {
            return 0;
        }
        pos = end + 1;
    }
    return n;
}

}  // namespace

Result<AggrBudget> readAggrBudget(const std::string& sys) {
    const std::string param = sys + "/module/probectl/parameters/max_map_kb";
    std::ifstream kb_in(param);
    std::uint64_t kb = 0;
    if (!(kb_in >> kb))
        return makeError(ENOENT, fmt::format("{}: not readable (is probectl.ko loaded?)", param));
    std::ifstream cpu_in(sys + "/devices/system/cpu/possible");
    std::string list;
    std::getline(cpu_in, list);
    AggrBudget b;
    b.ncpus = cpusInList(list);
    if (!b.ncpus)
        return makeError(ENOENT, fmt::format("{}/devices/system/cpu/possible: no CPU list", sys));
    if (kb) {
        b.limit_bytes = kb * 1024;
        return b;
    }
    // kmod/limits.c: totalram_pages() * PAGE_SIZE / 8, which sysinfo reports.
    struct sysinfo si {};
    if (sysinfo(&si) != 0)
        return makeError(errno, "sysinfo");
    b.limit_bytes = static_cast<std::uint64_t>(si.totalram) * si.mem_unit / 8;
    return b;
}

}  // namespace probectl
