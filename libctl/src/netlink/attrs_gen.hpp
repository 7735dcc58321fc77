// generated from Documentation/netlink/probectl.yaml by tools/nlgen.py -- do not edit
// Attribute tables of the replies the client decodes: (id, name, wire type,
// member of the struct it fills), and the probe counters.
#pragma once

#include "netlink/attr_table.hpp"

namespace probectl::detail {

inline constexpr auto kProbeAddReply =
    std::make_tuple(attr<NlType::U32>(PROBECTL_A_PROBE_ID, "probe-id", &AddedProbe::id),
                    attr<NlType::U64>(PROBECTL_A_PROBE_ADDR, "probe-addr", &AddedProbe::addr));

inline constexpr auto kProbeGetReply = std::make_tuple(
    attr<NlType::U32>(PROBECTL_A_PROBE_ID, "probe-id", &ProbeInfo::id),
    attr<NlType::U32>(PROBECTL_A_PROBE_KIND, "probe-kind", &ProbeInfo::kind),
    attr<NlType::String>(PROBECTL_A_PROBE_SYMBOL, "probe-symbol", &ProbeInfo::symbol),
    attr<NlType::U32>(PROBECTL_A_PROBE_OFFSET, "probe-offset", &ProbeInfo::offset),
    attr<NlType::U64>(PROBECTL_A_PROBE_ADDR, "probe-addr", &ProbeInfo::addr),
    attr<NlType::U32>(PROBECTL_A_PROBE_OWNER, "probe-owner", &ProbeInfo::owner),
    attr<NlType::U32>(PROBECTL_A_PROBE_FLAGS, "probe-flags", &ProbeInfo::flags),
    attr<NlType::U32>(PROBECTL_A_PROBE_MAXACTIVE, "probe-maxactive", &ProbeInfo::maxactive),
    attr<NlType::U64>(PROBECTL_A_PROBE_HITS, "probe-hits", &ProbeInfo::hits),
    attr<NlType::U64>(PROBECTL_A_PROBE_NMISSED, "probe-nmissed", &ProbeInfo::nmissed),
    attr<NlType::U64>(PROBECTL_A_PROBE_DROPPED, "probe-dropped", &ProbeInfo::dropped),
    attr<NlType::U64>(PROBECTL_A_PROBE_FILTERED, "probe-filtered", &ProbeInfo::filtered),
    attr<NlType::String>(PROBECTL_A_PROBE_PATH, "probe-path", &ProbeInfo::path),
    attr<NlType::U64>(PROBECTL_A_PROBE_FILE_OFFSET, "probe-file-offset", &ProbeInfo::file_offset),
    attr<NlType::U64>(PROBECTL_A_PROBE_REF_CTR_OFFSET, "probe-ref-ctr-offset",
                      &ProbeInfo::ref_ctr_offset),
    attr<NlType::U64>(PROBECTL_A_PROBE_REJECTED, "probe-rejected", &ProbeInfo::rejected),
    attr<NlType::U64>(PROBECTL_A_PROBE_UNRETURNED, "probe-unreturned", &ProbeInfo::unreturned),
    attr<NlType::U64>(PROBECTL_A_PROBE_DEPTH_SKIPPED, "probe-depth-skipped",
                      &ProbeInfo::depth_skipped),
    attr<NlType::U32>(PROBECTL_A_PROBE_DEPTH_LIMIT, "probe-depth-limit", &ProbeInfo::depth_limit),
    attr<NlType::String>(PROBECTL_A_PROBE_LABEL, "probe-label", &ProbeInfo::label),
    attr<NlType::U32>(PROBECTL_A_PROBE_REMOVED_BY, "probe-removed-by", &ProbeInfo::removed_by),
    attr<NlType::U32>(PROBECTL_A_PROBE_REMOVED_BY_PID, "probe-removed-by-pid",
                      &ProbeInfo::removed_by_pid),
    attr<NlType::String>(PROBECTL_A_PROBE_REMOVED_BY_COMM, "probe-removed-by-comm",
                         &ProbeInfo::removed_by_comm));

inline constexpr auto kAggrGetReply = std::make_tuple(
    attr<NlType::U32>(PROBECTL_A_PROBE_ID, "probe-id", &AggrReply::id),
    attr<NlType::U32>(PROBECTL_A_AGGR_KEY_SIZE, "aggr-key-size", &AggrReply::aggr_key_size),
    attr<NlType::U32>(PROBECTL_A_AGGR_BUCKETS, "aggr-buckets", &AggrReply::aggr_buckets),
    attr<NlType::U32>(PROBECTL_A_AGGR_KEYS, "aggr-keys", &AggrReply::aggr_keys),
    attr<NlType::U64>(PROBECTL_A_AGGR_OVERFLOW, "aggr-overflow", &AggrReply::aggr_overflow),
    attr<NlType::U64>(PROBECTL_A_AGGR_NESTED, "aggr-nested", &AggrReply::aggr_nested),
    attr<NlType::U64>(PROBECTL_A_AGGR_FAULTED, "aggr-faulted", &AggrReply::aggr_faulted),
    attr<NlType::U64>(PROBECTL_A_PROBE_HITS, "probe-hits", &AggrReply::hits),
    attr<NlType::U64>(PROBECTL_A_PROBE_FILTERED, "probe-filtered", &AggrReply::filtered),
    attr<NlType::U64>(PROBECTL_A_PROBE_REJECTED, "probe-rejected", &AggrReply::rejected),
    attr<NlType::U64>(PROBECTL_A_PROBE_DEPTH_SKIPPED, "probe-depth-skipped",
                      &AggrReply::depth_skipped),
    attr<NlType::Binary>(PROBECTL_A_AGGR_ENTRIES, "aggr-entries", &AggrReply::aggr_entries));

inline constexpr auto kStackGetReply = std::make_tuple(
    attr<NlType::U32>(PROBECTL_A_PROBE_ID, "probe-id", &StackReply::id),
    attr<NlType::U32>(PROBECTL_A_STACK_COUNT, "stack-count", &StackReply::stack_count),
    attr<NlType::U64>(PROBECTL_A_STACK_LOST, "stack-lost", &StackReply::stack_lost),
    attr<NlType::U64>(PROBECTL_A_STACK_TRUNCATED, "stack-truncated", &StackReply::stack_truncated),
    attr<NlType::Binary>(PROBECTL_A_STACK_ENTRIES, "stack-entries", &StackReply::stack_entries));

inline constexpr auto kMapsGetReply = std::make_tuple(
    attr<NlType::U32>(PROBECTL_A_PROBE_ID, "probe-id", &MapsReply::id),
    attr<NlType::U32>(PROBECTL_A_MAPS_TGID, "maps-tgid", &MapsReply::maps_tgid),
    attr<NlType::U32>(PROBECTL_A_MAPS_SEQ, "maps-seq", &MapsReply::maps_seq),
    attr<NlType::U64>(PROBECTL_A_MAPS_UNPINNED, "maps-unpinned", &MapsReply::maps_unpinned),
    attr<NlType::Binary>(PROBECTL_A_MAPS_TEXT, "maps-text", &MapsReply::maps_text));

inline constexpr auto kSessionGetReply = std::make_tuple(
    attr<NlType::U32>(PROBECTL_A_SESSION_LIVE, "session-live", &SessionReply::session_live),
    attr<NlType::U32>(PROBECTL_A_SESSION_PROCS, "session-procs", &SessionReply::session_procs));

// The probe counters (ProbeInfo members), in PROBE_GET order.
inline constexpr auto kProbeCounters = std::make_tuple(
    attr<NlType::U64>(PROBECTL_A_PROBE_HITS, "hits", &ProbeInfo::hits),
    attr<NlType::U64>(PROBECTL_A_PROBE_NMISSED, "nmissed", &ProbeInfo::nmissed),
    attr<NlType::U64>(PROBECTL_A_PROBE_DROPPED, "dropped", &ProbeInfo::dropped),
    attr<NlType::U64>(PROBECTL_A_PROBE_FILTERED, "filtered", &ProbeInfo::filtered),
    attr<NlType::U64>(PROBECTL_A_PROBE_REJECTED, "rejected", &ProbeInfo::rejected),
    attr<NlType::U64>(PROBECTL_A_PROBE_UNRETURNED, "unreturned", &ProbeInfo::unreturned),
    attr<NlType::U64>(PROBECTL_A_PROBE_DEPTH_SKIPPED, "depth_skipped", &ProbeInfo::depth_skipped));

}  // namespace probectl::detail
