// Where count, hist, latency and trace -c get their tables, for either backend: the kernel
// backend's probes aggregate in probectl.ko (read back with AGGR_GET); the ptrace backend's
// events go through one EventAggregator per probe, with the kernel map's rules, so both give
// the same tables for the same workload.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aggr_cli.hpp"
#include "probectl/aggr.hpp"
#include "probectl/aggr_events.hpp"
#include "probectl/session.hpp"
#include "probectl/snapshot_stacks.hpp"
#include "probectl/tracer.hpp"
#include "probectl/user_target.hpp"

namespace probectl::cli {

// Keyed maps sized to fit the module's max_map_kb together (a glob over every syscall, or one
// probe whose default map is larger than the limit): a map o.aggr gives no --max-entries is
// made for at most the keys that fit in `bytes`, with `ncpus` possible CPUs (0 bytes: as
// asked); one where not even one key fits is refused (mapShareRefusal). `probes`: how many
// probes (a map each) the specs expand to, whose maps share `limit_bytes`; `attached`: how
// many of them were attached (set after attaching; the others were refused). `smallest`: the fewest
// keys a map was given where the default did not fit (0: none).
struct MapShare {
    std::uint64_t bytes = 0;
    std::uint32_t ncpus = 0;
    std::size_t probes = 0;
    std::size_t attached = 0;
    std::uint64_t limit_bytes = 0;
    std::uint32_t smallest = 0;
};

// The even share of the module's map budget each of the kernel backend's probes for o.specs
// (mapProbesOf) gets; none (bytes 0) for a given --max-entries, no keys (a map of one key),
// the ptrace backend or --ustack=dwarf. `cache` keeps the resolutions for attaching.
MapShare mapShareFor(const AggrCliOptions& o, pid_t pid,
                     const std::shared_ptr<UserResolveCache>& cache = nullptr);

// The probes, each with a map of its own, that attachSpecs will add for `specs`: a spec
// given twice once, a glob expanded (without the names an earlier spec probes), and a
// user-space spec's sites each (a USDT probe's several sites, a function's inlined copies:
// resolveUserSpecAll, with `pid` resolving paths). A spec that does not resolve counts as
// one (its attach fails and says why). `cache`: resolutions to reuse and keep (the attaching
// asks the same again).
std::size_t mapProbesOf(const std::vector<ProbeSpec>& specs, pid_t pid,
                        const std::shared_ptr<UserResolveCache>& cache = nullptr);

// The refusal of a map of which not even one key fits in `share.bytes`: `one_key` bytes (with
// `share.ncpus` possible CPUs) for a key, more than an even share of max_map_kb among
// share.probes. Names the cause and what to do: fewer probes, a larger max_map_kb (and how
// large), fewer or smaller keys. The text holds "(limit: max_map_kb)", which a glob's summary
// counts as "over the module's max_map_kb limit".
Error mapShareRefusal(const MapShare& share, std::uint64_t one_key);

// The backend o.backend names on o's target, its probes set to aggregate o.aggr; their maps
// sized by `share` (set before the specs are attached) when it has bytes; user-space specs
// resolved through `cache` when given.
Result<std::unique_ptr<Tracer>> openAggrTracer(const AggrCliOptions& o, MapShare* share = nullptr,
                                               std::shared_ptr<UserResolveCache> cache = nullptr);

// The note on stderr when `share` made maps smaller than the default: how many keys, why,
// and what to change. It counts the probes attached (share.attached) and, when specs were
// refused after the share was made, also the probes the maps were sized for.
std::string mapShareNote(const MapShare& share);

class AggrCollector {
  public:
    // After the specs are attached (the probes are known from then on). With `snapshots`
    // (--ustack=dwarf) the events of either backend are aggregated here, each `ustack`
    // snapshot first replaced by its stack's id (SnapshotStacks::replace).
    static Result<AggrCollector> create(Tracer& tracer, const AggrSpec& spec,
                                        SnapshotStacks* snapshots = nullptr);

    // What the tracer's run() and stop() deliver: events into their probe's aggregator (the
    // kernel backend's aggregating probes deliver none).
    EventCallback callback();
    // Every probe's table, in the order added; `clear` starts the next one from zero. `now`:
    // the counters just read (stats()), which say what probes another client removed. The
    // session keeps such a probe's map, so its table ends at the removal; once a read has
    // shown it, clearing reads leave it out (it could only be empty from then on).
    Result<std::vector<AggrTable>> tables(bool clear, const SessionStats& now);
    // The counters now (between intervals), in the same order.
    Result<SessionStats> stats();
    // One warning for each removed probe whose last table tables() has just shown (each said
    // once), naming the remover: with `clear`, that the next read-outs leave it out.
    std::vector<std::string> takeRemovedNotes(bool clear);
    // `notes` (the session's at the end) less those on a removal takeRemovedNotes() said:
    // one warning per removed probe.
    std::vector<std::string> notSaidYet(std::vector<std::string> notes) const;

  private:
    AggrCollector(Tracer& tracer, const AggrSpec& spec, SnapshotStacks* snapshots)
        : tracer_(&tracer), spec_(spec), snapshots_(snapshots) {}
    Result<void> reset();
    // Whether the kernel's maps hold the tables (else events_ do).
    bool kernelMaps() const;

    Tracer* tracer_;
    AggrSpec spec_;
    SnapshotStacks* snapshots_;
    std::vector<std::pair<std::uint32_t, EventAggregator>> events_;  // by probe id
    std::vector<std::uint32_t> removed_shown_;                       // ids
    std::vector<ProbeStats> removed_new_;                            // not said yet
    std::vector<std::string> removed_said_;  // "probe ID (SPEC) was removed": said
};

}  // namespace probectl::cli
