#include "task_filters.hpp"

#include <fmt/format.h>
#include <pwd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

// The largest pid_max the kernel allows (PID_MAX_LIMIT on 64-bit): no process or thread id
// is above it.
constexpr unsigned long kMaxPid = 4UL * 1024 * 1024;
// uid_t's largest valid value ((uid_t)-1 means "no uid").
constexpr unsigned long kMaxUid = UINT32_MAX - 1;

// "12,34" (and repeated options) -> ids; `names` allows user names (getpwnam), and says the
// list is of user ids (0..kMaxUid) rather than process or thread ids (1..kMaxPid).
std::optional<UsageError> parseIdList(const po::variables_map& vm, const char* opt, bool names,
                                      std::vector<std::uint32_t>& out) {
    if (!vm.count(opt))
        return std::nullopt;
    const unsigned long lo = names ? 0 : 1, hi = names ? kMaxUid : kMaxPid;
    const char* const what = names ? "user" : std::string_view(opt) == "tid" ? "thread" : "process";
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
            const bool digits =
                !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
            if (digits && (errno == ERANGE || v < lo || v > hi)) {
                // The same words as -p 0's refusal for 0; else the range, since it was a number.
                if (v == 0 && errno == 0)
                    return UsageError{
                        fmt::format("--{} 0 is not a {} id (they start at 1)", opt, what)};
                return UsageError{fmt::format("--{}: '{}' is out of range: {} ids are {}..{}", opt,
                                              item, what, lo, hi)};
            }
            if (digits) {
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
