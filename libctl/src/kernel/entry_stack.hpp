// A syscall's kernel stack is taken at its entry: a syscall: spec is a kretprobe on the
// __x64_sys_ wrapper, and at the return the wrapper's frame (and whatever it called) is gone,
// leaving only the entry path. The stack's program joins the ones the kretprobe's entry handler
// runs (ProbeRequest::fetch_entry), after them, so in the record the value sits between the
// entry reads and the return reads. SyscallPlan::entry_extra tells the decoder.
#pragma once

#include <cstddef>
#include <vector>

#include "probectl/client.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"

namespace probectl::detail {

// Whether `req` takes its kernel stack at the entry: a syscall's kretprobe.
bool stackAtEntry(const ProbeRequest& req);

// Fetch programs in `insns` (one store ends each).
std::size_t programCount(const std::vector<FetchInsn>& insns);

// Inserts `arg` and its one program `prog` as the last of `req`'s entry programs, raising
// fetch_entry; the predicate and aggregation indexes after it move up with the values. `args`
// are the request's own fetch arguments in record order, after any strace plan's values
// (which are not in `args`). Returns where `arg` went in `args`.
std::size_t insertEntryArg(ProbeRequest& req, std::vector<FetchArg>& args, FetchArg arg,
                           const std::vector<FetchInsn>& prog);

}  // namespace probectl::detail
