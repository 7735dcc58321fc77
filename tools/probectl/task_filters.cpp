#include "task_filters.hpp"

#include <fmt/format.h>
#include <pwd.h>

#include <cerrno>
#include <cstdlib>

#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

// "12,34" (and repeated options) -> ids; `names` allows user names (getpwnam).
std::optional<UsageError> parseIdList(const po::variables_map& vm, const char* opt, bool names,
                                      std::vector<std::uint32_t>& out) {
    if (!vm.count(opt))
        return std::nullopt;
    for (const auto& arg : vm[opt].as<std::vector<std::string>>()) {
        std::size_t b = 0;
        while (b <= arg.size()) {
            std::size_t e = arg.find(',', b);
            if (e == std::string::npos)
                e = arg.size();
            const std::string item = arg.substr(b, e - b);
            char* end = nullptr;
            errno = 0;
            const unsigned long v = std::strtoul(item.c_str(), &end, 10);
            if (!item.empty() && *end == '\0' && item[0] != '-' && errno == 0 && v <= UINT32_MAX) {
                out.push_back(static_cast<std::uint32_t>(v));
            } else if (names && !item.empty()) {
                const passwd* pw = ::getpwnam(item.c_str());
                if (!pw)
                    return UsageError{fmt::format("--{}: no user '{}'", opt, item)};
                out.push_back(pw->pw_uid);
            } else {
                return UsageError{
                    fmt::format("--{}: '{}' is not a number (in '{}')", opt, item, arg)};
            }
            b = e + 1;
        }
    }
    if (out.size() > PROBECTL_MATCH_MAX_IDS)
        return UsageError{fmt::format("--{}: at most {} ids", opt, PROBECTL_MATCH_MAX_IDS)};
    return std::nullopt;
}

}  // namespace

void addTaskFilterOptions(po::options_description& d, std::string* comm) {
    // clang-format off
    d.add_options()
        ("pid", po::value<std::vector<std::string>>()->value_name("PID,..."),
         "keep only hits in these processes (tgids; comma list, repeatable): a pure filter "
         "on top of what is traced (-p, -- CMD, or everything), evaluated in the kernel; "
         "other hits count as FILTERED")
        ("tid", po::value<std::vector<std::string>>()->value_name("TID,..."),
         "keep only hits in these threads (same rules as --pid)")
        ("uid", po::value<std::vector<std::string>>()->value_name("UID,..."),
         "keep only hits of tasks running as these users (numbers or names; real uid)")
        ("comm", po::value<std::string>(comm)->value_name("GLOB"),
         "keep only hits of tasks whose comm (name, at most 15 bytes) matches GLOB "
         "(* ? [a-z] [!x]), e.g. --comm 'ls*'");
    // clang-format on
}

std::optional<UsageError> parseTaskFilters(const po::variables_map& vm, const std::string& backend,
                                           std::vector<std::uint32_t>& pids,
                                           std::vector<std::uint32_t>& tids,
                                           std::vector<std::uint32_t>& uids,
                                           const std::string& comm) {
    if (auto e = parseIdList(vm, "pid", false, pids))
        return e;
    if (auto e = parseIdList(vm, "tid", false, tids))
        return e;
    if (auto e = parseIdList(vm, "uid", true, uids))
        return e;
    if (vm.count("comm") && (comm.empty() || comm.size() >= PROBECTL_MATCH_COMM_MAX))
        return UsageError{
            fmt::format("--comm needs a glob of 1..{} bytes", PROBECTL_MATCH_COMM_MAX - 1)};
    if (backend == "ptrace" && (!pids.empty() || !tids.empty() || !uids.empty() || !comm.empty()))
        return UsageError{
            "--pid, --tid, --uid and --comm filter in the kernel: with "
            "--backend=ptrace use -p/--attach, or a predicate such as "
            "'uprobe:... if $comm ~ \"ls*\"'"};
    return std::nullopt;
}

}  // namespace probectl::cli
