// --pid, --tid, --uid and --comm: the session's filters on the task (SessionOptions'
// match_*), evaluated in the kernel, shared by trace and count/hist/latency.
#pragma once

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace probectl::cli {

// Adds --pid, --tid, --uid and --comm (the last stored in `comm`, may be null for --help).
void addTaskFilterOptions(boost::program_options::options_description& d, std::string* comm);

// Reads --pid/--tid/--uid into `pids`, `tids`, `uids` (comma lists, repeatable; --uid also
// takes user names) and checks `comm`, where --comm was stored. Errors name the option and the item
// at fault, and refuse the filters with the ptrace backend, whose stops are chosen by -p and
// predicates instead.
std::optional<UsageError> parseTaskFilters(const boost::program_options::variables_map& vm,
                                           const std::string& backend,
                                           std::vector<std::uint32_t>& pids,
                                           std::vector<std::uint32_t>& tids,
                                           std::vector<std::uint32_t>& uids,
                                           const std::string& comm);

}  // namespace probectl::cli
