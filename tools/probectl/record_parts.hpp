// Which optional kernel record parts (kRecordPart*, event.hpp) `probectl trace` reads, so
// that each probe's records carry only those. probectl bench's record-streaming rows ask
// the same for their spec, so that they measure what a user's trace costs.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>
#include "probectl/fetch_spec.hpp"

namespace probectl::cli {

// `fetch`: the spec's own fetch arguments (or a syscall plan's: none), before stack
// arguments are appended. Text output prints comm, and the raw argument registers only when
// there are no fetched values to print instead (a syscall's strace line is built from them);
// returns print retval and latency (the module writes those for return probes only). Other
// formats (JSON, the exporters, recordings) keep every part.
std::uint32_t traceRecordParts(std::string_view format, const std::vector<FetchArg>& fetch);

}  // namespace probectl::cli
