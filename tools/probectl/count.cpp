// probectl count / hist / latency: add the specs with an aggregation, run until the command
// exits (or --duration, Ctrl-C, SIGTERM, SIGHUP), then read every probe's map and print it.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>

#include "aggr_cli.hpp"
#include "aggr_collect.hpp"
#include "aggr_print.hpp"
#include "aggr_recorded.hpp"
#include "aggr_timeline.hpp"
#include "attach.hpp"
#include "format.hpp"
#include "open_tracer.hpp"
#include "output_file.hpp"
#include "probectl/kernel_maps.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/probe_kinds.hpp"
#include "probectl/session.hpp"
#include "run_loop.hpp"
#include "spec_hints.hpp"
#include "subcommands.hpp"
#include "task_filters.hpp"
#include "uapi/probectl.h"

namespace po = boost::program_options;

namespace probectl::cli {

namespace {

const char* modeName(AggrMode m) {
    return m == AggrMode::Count ? "count" : m == AggrMode::Hist ? "hist" : "latency";
}

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= s.size()) {
        const std::size_t comma = std::min(s.find(',', at), s.size());
        out.push_back(s.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

// "$comm" and "comm" both name the task field.
std::string keyName(std::string k) {
    if (!k.empty() && k.front() == '$')
        k.erase(0, 1);
    return k;
}

Parsed<std::int64_t> parseInt(const std::string& s, const char* what) {
    try {
        std::size_t used = 0;
        const long long v = std::stoll(s, &used, 0);
        if (used == s.size())
            return static_cast<std::int64_t>(v);
    } catch (const std::out_of_range&) {
        return UsageError{fmt::format("{}: '{}' is out of range (-2^63 to 2^63 - 1)", what, s)};
    } catch (const std::exception&) {
    }
    return UsageError{fmt::format("{}: '{}' is not an integer", what, s)};
}

// Each read-out reads every probe's whole map and prints its tables: shorter intervals
// would be mostly that work (and the 50 ms poll makes them late).
constexpr double kMinIntervalSec = 0.1;

std::string intervalError(const std::string& text) {
    return fmt::format(
        "--interval '{}': expected a time of at least 100ms and at most {} s (a year), in "
        "seconds (0.5) or with a unit (100ms, 2s, 1m); leave it out for one table at the end",
        text, static_cast<long>(kMaxDurationSec));
}

// The time of day above an interval's tables (intervalClock).
std::string wallClock(double interval) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::tm tm{};
    localtime_r(&now.tv_sec, &tm);
    return intervalClock(tm, static_cast<unsigned>(now.tv_nsec / 1000000), interval);
}

// The counters of `now` less those of `before` (matched by probe id): an interval's. But
// unreturned, which is not a count of events but of the calls in flight (or left) at the
// moment: `now`'s.
SessionStats countersSince(const SessionStats& now, const SessionStats& before) {
    auto less = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    SessionStats d = now;
    for (ProbeStats& p : d.probes) {
        auto was = std::find_if(before.probes.begin(), before.probes.end(),
                                [&](const ProbeStats& b) { return b.id == p.id; });
        if (was == before.probes.end())
            continue;
        const std::uint64_t unreturned = p.unreturned;
#define PROBECTL_COUNTER_SINCE(name) p.name = less(p.name, was->name);
        PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_SINCE)
#undef PROBECTL_COUNTER_SINCE
        p.unreturned = unreturned;
    }
    d.lost = less(now.lost, before.lost);
    d.overruns = less(now.overruns, before.overruns);
    return d;
}

// Whether a probe's hits are entries and its table counts returns: a return probe, or any
// latency probe.
bool countsReturns(const AggrCliOptions& o, const AggrTable& t) {
    const KindInfo* kind = findKind(std::string_view(t.spec).substr(0, t.spec.find(':')));
    return o.mode == AggrMode::Latency || (kind && kind->is_return);
}

// A kernel map's read: the calls not returned are its probe's entries (the hits at the
// read's moment) less the returns its tables held (their counts, map full, nested, faulted
// and rejected), summed over the reads in `returned` when each interval is cleared. The
// session's own count, read apart from the map, once put a call entered between the two
// reads in the next interval. A return in flight at the read may make it one short
// (never below 0).
void unreturnedOfTheRead(const AggrCliOptions& o, const std::vector<AggrTable>& tables,
                         SessionStats& shown, std::map<std::uint32_t, std::uint64_t>& returned,
                         bool clear) {
    for (const AggrTable& t : tables) {
        if (!t.read_counts || !countsReturns(o, t))
            continue;
        for (ProbeStats& ps : shown.probes)
            if (ps.id == t.probe_id) {
                const std::uint64_t now =
                    t.totalCount() + t.overflow + t.nested + t.faulted + ps.rejected;
                std::uint64_t& sum = returned[t.probe_id];
                sum = clear ? sum + now : now;
                // entries whose return the kernel did not probe (nesting limit): not pending
                const std::uint64_t gone = sum + t.read_counts->depth_skipped;
                ps.unreturned = t.read_counts->hits > gone ? t.read_counts->hits - gone : 0;
            }
    }
}

// The printers pair stats.probes with the tables by index: once a removed probe's table is
// left out of clearing reads (AggrCollector::tables), its counters must go too.
void pairWithTables(SessionStats& stats, const std::vector<AggrTable>& tables) {
    if (stats.probes.size() == tables.size())
        return;
    std::vector<ProbeStats> paired;
    for (const AggrTable& t : tables) {
        auto it = std::find_if(stats.probes.begin(), stats.probes.end(),
                               [&](const ProbeStats& p) { return p.id == t.probe_id; });
        if (it != stats.probes.end()) {
            paired.push_back(*it);
            continue;
        }
        paired.emplace_back();
        paired.back().id = t.probe_id;
        paired.back().spec = t.spec;
    }
    stats.probes = std::move(paired);
}

// A kernel map's counters at its last read, per probe id.
struct MapCounters {
    AggrTable::ProbeCounts probe;
    std::uint64_t overflow = 0, nested = 0, faulted = 0;
};

// A kernel map's read carries the probe's counters of that moment (AggrTable::read_counts):
// the header's hits, filtered and rejected come from it, so that they count the hits the
// table holds (the session's counters, read before, miss those of the moment between). With
// `clear` (each interval on its own), they and the map's own counters are the change since
// the last read.
void countersOfTheRead(std::vector<AggrTable>& tables, SessionStats& shown,
                       std::map<std::uint32_t, MapCounters>& last, bool clear) {
    auto less = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    for (AggrTable& t : tables) {
        if (!t.read_counts)
            continue;
        const MapCounters now{*t.read_counts, t.overflow, t.nested, t.faulted};
        const MapCounters was = clear ? last[t.probe_id] : MapCounters{};
        last[t.probe_id] = now;
        t.overflow = less(now.overflow, was.overflow);
        t.nested = less(now.nested, was.nested);
        t.faulted = less(now.faulted, was.faulted);
        for (ProbeStats& ps : shown.probes)
            if (ps.id == t.probe_id) {
                ps.hits = less(now.probe.hits, was.probe.hits);
                ps.filtered = less(now.probe.filtered, was.probe.filtered);
                ps.rejected = less(now.probe.rejected, was.probe.rejected);
                ps.depth_skipped = less(now.probe.depth_skipped, was.probe.depth_skipped);
            }
    }
}

StackLines stackLines(KernelStacks& stacks) {
    return [&stacks](std::uint32_t probe, std::uint32_t id) { return stacks.lines(probe, id); };
}
StackLines stackLines(const SnapshotStacks& stacks) {
    return [&stacks](std::uint32_t, std::uint32_t id) { return stacks.lines(id); };
}

bool byKey(const AggrCliOptions& o, const char* key) {
    return std::find(o.aggr.keys.begin(), o.aggr.keys.end(), key) != o.aggr.keys.end();
}
bool byKernelStack(const AggrCliOptions& o) {
    return byKey(o, kKernelStackArg);
}
bool byUserStack(const AggrCliOptions& o) {
    return byKey(o, kUserStackArg);
}
bool byStack(const AggrCliOptions& o) {
    return byKernelStack(o) || byUserStack(o);
}

// o with text output: what --format perfetto|chrome prints beside its file.
AggrCliOptions textOptions(const AggrCliOptions& o) {
    AggrCliOptions t = o;
    t.format = "text";
    return t;
}

// What the tables are written to, for its write error.
std::string outputName(const AggrCliOptions& o) {
    switch (tablesTo(o)) {
        case TablesTo::File:
            return o.output;
        case TablesTo::Stderr:
            return kStandardError;
        case TablesTo::Stdout:
            break;
    }
    return kStandardOutput;
}

// The stream of the tables but -o FILE's.
std::ostream& tablesStream(const AggrCliOptions& o, Io& io) {
    return tablesTo(o) == TablesTo::Stderr ? io.err : io.out;
}

// Where the tables are printed (tablesTo). -o FILE is created once the run can begin, as
// trace's and the timelines' are: a command that cannot run or a refused spec leaves no
// empty FILE behind (and an existing one as it was). A read-out it could not take whole
// ends the run with the file removed, as trace's -o (output_file.hpp).
class TablesOutput {
  public:
    TablesOutput(const AggrCliOptions& o, Io& io)
        : o_(o), io_(io), out_{streamOf(io), io.err, io.err_is_tty, isTty(io)} {}
    // "cannot write standard output" said through the tables' Io is said for main()'s too,
    // which would otherwise say it again at exit.
    ~TablesOutput() { io_.out_error_told = io_.out_error_told || out_.out_error_told; }
    TablesOutput(const TablesOutput&) = delete;
    TablesOutput& operator=(const TablesOutput&) = delete;

    // The tables' own Io: its `out` is where they go.
    Io& io() { return out_; }
    Result<void> open() {
        if (tablesTo(o_) != TablesTo::File)
            return {};
        return file_.open(o_.output);
    }
    Result<void> print(const AggrReadout& r, const StackLines* stacks = nullptr) {
        auto w = printAggrReadout(o_, r, out_.out, out_.err, outputName(o_), stacks);
        if (!w && file_.isOpen())
            return file_.discard(w.error());
        return w;
    }

  private:
    std::ostream& streamOf(Io& io) {
        return tablesTo(o_) == TablesTo::File ? file_.stream() : tablesStream(o_, io);
    }
    bool isTty(const Io& io) const {
        const TablesTo to = tablesTo(o_);
        return to == TablesTo::Stdout ? io.out_is_tty : to == TablesTo::Stderr && io.err_is_tty;
    }

    const AggrCliOptions& o_;
    Io& io_;
    OutputFile file_;  // before out_, which may write to it
    Io out_;
};

// --from FILE: the same tables from a recording's events.
int runFromRecording(const AggrCliOptions& o, TablesOutput& tables) {
    const char* cmd = modeName(o.mode);
    Io& io = tables.io();
    auto r = aggregateRecording(o.from, o.aggr, o.only);
    if (!r)
        return runtimeError(io, cmd, r.error());
    if (auto opened = tables.open(); !opened)
        return runtimeError(io, cmd, opened.error());
    for (const auto& why : r->skipped)
        io.err << fmt::format("note: {}: left out, {}\n", o.from, why);
    if (auto w = tables.print({r->tables, r->stats, r->stats, std::string()}); !w)
        return runtimeError(io, cmd, w.error());
    if (!r->note.empty())
        io.err << fmt::format("note: {}: {}: counts are of the events it holds\n", o.from, r->note);
    else if (!r->has_summary)
        io.err << fmt::format("note: {} has no summary: counts are of the events it holds\n",
                              o.from);
    if (r->has_summary)
        if (auto w = lossWarning(r->stats); !w.empty())
            io.err << w << '\n';
    return kExitOk;
}

// --format perfetto|chrome: the tables as text (on stdout, or stderr with -- CMD), and each
// read-out as counter samples in o.output.
int runWithTimeline(const AggrCliOptions& o, const char* cmd, Io& io) {
    std::optional<AggrTimeline> timeline;
    SessionStats last;
    const AggrCliOptions text = textOptions(o);
    const bool cleared = o.interval > 0 && !o.cumulative;
    // A failed write ends the run at once, and FILE, incomplete, is removed (output_file.hpp).
    auto written = [&](Result<void> r) -> Result<void> {
        if (r)
            return r;
        timeline.reset();  // closed before it is removed
        return removeIncomplete(r.error(), o.output);
    };
    const int rc = runAggregation(
        o, cmd, io,
        [&](const AggrReadout& r) -> Result<void> {
            if (auto w = printAggrReadout(text, r, tablesStream(o, io), io.err, outputName(o)); !w)
                return w;
            last = r.total;
            return written(timeline->readout(r.tables, monotonicNs(), cleared));
        },
        [&](std::uint64_t t0) -> Result<void> {
            auto t = AggrTimeline::open(o.format, o.output);
            if (!t)
                return std::move(t).error();
            timeline.emplace(std::move(*t));
            return written(timeline->start(t0));
        });
    if (!timeline)
        return rc;
    if (auto r = written(timeline->finish(last)); !r)
        return runtimeError(io, cmd, r.error());
    return rc;
}

// --ustack=dwarf: the probes record every hit with its snapshot, aggregated here by the
// unwound stack; the end line says how the walks went, as trace's.
int runDwarf(const AggrCliOptions& o, const char* cmd, Io& io, TablesOutput& tables) {
    SnapshotStacks snapshots(o.aggr.stack_depth ? o.aggr.stack_depth : kStackDefaultDepth);
    const StackLines lines = stackLines(snapshots);
    // Kernel backend: the maps of the address space the kernel kept for a process (it may
    // have exited before its events are read), on a socket of their own.
    std::optional<KernelMapsSource> kept_maps;
    if (o.backend != "ptrace") {
        auto km = KernelMapsSource::open();
        if (!km)
            return runtimeError(io, cmd, privilegeError(km.error(), cmd, true));
        kept_maps.emplace(std::move(*km));
        snapshots.setMapsSource(kept_maps->probeSource());
    }
    std::optional<SessionStats> last;  // none: the run failed before its tables
    const int rc = runAggregation(
        o, cmd, tables.io(),
        [&](const AggrReadout& r) {
            last = r.total;
            return tables.print(r, &lines);
        },
        [&](std::uint64_t) { return tables.open(); }, {}, &snapshots);
    if (!last)
        return rc;
    if (auto w = lossWarning(*last); !w.empty())
        io.err << w << '\n';
    const std::uint64_t unpinned = kept_maps ? kept_maps->refreshUnpinned() : 0;
    io.err << userSnapshotSummary(snapshots.walks(),
                                  o.stack_size ? o.stack_size : kUstackSnapshotDefault, unpinned)
           << '\n';
    return rc;
}

// A key or value that a spec's own argument names like a task field is that argument (the
// kernel's rule): said, since its column reads like the task's.
void noteTaskNamesTaken(const AggrCliOptions& o, const char* cmd, Io& io) {
    std::vector<std::string> names = o.aggr.keys;
    if (o.aggr.value == AggrValue::Arg)
        names.push_back(o.aggr.value_arg);
    for (const ProbeSpec& spec : o.specs)
        for (const FetchArg& a : spec.fetch_args)
            if (!a.auto_named && isAggrTaskKey(a.name) &&
                std::find(names.begin(), names.end(), a.name) != names.end())
                io.err << fmt::format(
                    "probectl {}: note: '{}' is the spec's argument {}, not the task's {} "
                    "(name the argument otherwise to have both)\n",
                    cmd, a.name, a.str(), a.name);
}

int runAggr(AggrMode mode, const std::vector<std::string>& args, Io& io) {
    const char* cmd = modeName(mode);
    auto parsed = parseAggrOptions(mode, args);
    if (auto rc = parsedExit(io, cmd, parsed))
        return *rc;
    parsed->seccomp = seccompFilterOn(*parsed, parsed->seccomp, io.err, cmd);
    const AggrCliOptions& o = *parsed;
    noteTaskNamesTaken(o, cmd, io);
    if (isTraceExportFormat(o.format))
        return runWithTimeline(o, cmd, io);
    TablesOutput tables(o, io);
    if (!o.from.empty())
        return runFromRecording(o, tables);
    // --by ustack --ustack=dwarf: the events' snapshots, unwound here.
    if (o.ustack == "dwarf")
        return runDwarf(o, cmd, io, tables);
    // --by kstack, ustack: the stacks are read by id from the session's map, on a socket of
    // their own.
    std::optional<KernelStacks> stacks;
    if (byStack(o)) {
        auto ks = KernelStacks::open();
        if (!ks)
            return runtimeError(io, cmd, privilegeError(ks.error(), cmd, true));
        stacks.emplace(std::move(*ks));
    }
    const StackLines lines = stacks ? stackLines(*stacks) : StackLines();
    const int rc = runAggregation(
        o, cmd, tables.io(),
        [&](const AggrReadout& r) { return tables.print(r, stacks ? &lines : nullptr); },
        [&](std::uint64_t) { return tables.open(); },
        // --by ustack: a process's maps are kept from when its first stack is
        // seen; a process that lived less than a tick is not symbolized.
        [&](std::uint32_t probe_id) {
            if (stacks && byUserStack(o))
                (void)stacks->readAndCapture(probe_id);
        });
    if (stacks && stacks->count() + stacks->lost() > 0)
        io.err << kernelStacksSummary(*stacks) << '\n';
    return rc;
}

}  // namespace

TablesTo tablesTo(const AggrCliOptions& o) {
    // -o -: standard output, even with -- CMD.
    if (!o.output.empty() && !isTraceExportFormat(o.format))
        return isStandardOutputName(o.output) ? TablesTo::Stdout : TablesTo::File;
    return o.command.empty() ? TablesTo::Stdout : TablesTo::Stderr;
}

int runAggregation(const AggrCliOptions& o, const char* cmd, Io& io, const AggrTablesPrinter& print,
                   const std::function<Result<void>(std::uint64_t t0_ns)>& started,
                   const std::function<void(std::uint32_t probe_id)>& tick,
                   SnapshotStacks* snapshots) {
    if (auto e = missingProcess(o.pids))
        return runtimeError(io, cmd, *e);
    const bool kernel = o.backend != "ptrace";
    BlockedStopSignals signals;  // before the tracer: see the class
    MapShare share;              // before the tracer: its prepare step writes here
    // Sizing the maps resolves each spec as attaching it does: once for both.
    const auto resolved = std::make_shared<UserResolveCache>();
    auto opened = openAggrTracer(o, &share, resolved);
    if (!opened)
        return runtimeError(io, cmd,
                            kernel ? privilegeError(opened.error(), cmd, true) : opened.error());
    Tracer& tracer = **opened;
    signals.block();
    const pid_t resolve_pid = o.pids.size() == 1 ? static_cast<pid_t>(o.pids[0]) : 0;
    // The module is loaded now: its budget can be read.
    share = mapShareFor(o, resolve_pid, resolved);
    // Lowering --max-entries is advice only where it was given: without it a keyed map is made
    // to fit its share (or refused, saying what to do), and a map without keys holds one.
    auto n = attachSpecs(
        tracer, o.specs, resolve_pid, o.verbose, io.err, o.aggr.max_entries != 0,
        [&] { return signals.caught() != 0; }, resolved);
    if (!n)
        return runtimeError(io, cmd, kernel ? privilegeError(n.error(), cmd, true) : n.error());
    // The probes, not the specs: a USDT spec's every site has a probe and a map of its own.
    auto* session = dynamic_cast<Session*>(&tracer);
    share.attached = session ? session->probes().size() : *n;
    if (share.smallest)
        io.err << mapShareNote(share) << '\n';
    auto collector = AggrCollector::create(tracer, o.aggr, snapshots);
    if (!collector)
        return runtimeError(io, cmd, collector.error());
    const EventCallback onEvent = collector->callback();
    RunLoop loop(tracer, o.command, o.duration, [&] { return signals.caught(); });
    loop.followCommand(o.follow);
    // With -f the ptrace backend ends once nothing is traced any more: it sees every fork.
    if (!o.follow || tracer.backend() == "kernel")
        loop.watchPids(o.pids, o.follow);
    const std::uint64_t t0 = loop.t0();
    if (started)
        if (auto r = started(t0); !r)
            return runtimeError(io, cmd, r.error());
    const bool has_command = !o.command.empty();
    io.err << fmt::format("Aggregating {} probe{}{}{}. {}\n", *n, *n == 1 ? "" : "s",
                          traceTarget(has_command ? o.command[0] : std::string(),
                                      has_command ? tracer.commandPid() : 0, o.pids),
                          kernel ? "" : " with ptrace",
                          signals.caught() != 0
                              ? kEndsNow
                              : endsWhen(o.duration > 0 ? o.duration_text : std::string(),
                                         has_command, o.pids.size(), o.follow));
    if (has_command && loop.signalBeforeStart())
        return loop.notStarted(io, cmd);
    if (auto r = tracer.start(); !r)
        return runtimeError(io, cmd, r.error());
    std::uint64_t next_tick = 0;
    std::optional<std::uint32_t> tick_probe;
    auto shouldStop = [&] {
        if (tick && monotonicNs() >= next_tick) {
            next_tick = monotonicNs() + 200'000'000;
            if (!tick_probe)
                if (auto s = collector->stats(); s && !s->probes.empty())
                    tick_probe = s->probes.front().id;
            if (tick_probe)
                tick(*tick_probe);
        }
        return loop.shouldStop();
    };
    const std::uint64_t every = static_cast<std::uint64_t>(o.interval * 1e9);
    std::uint64_t next = every ? t0 + every : 0;
    auto intervalDue = [&] { return next && monotonicNs() >= next; };
    const bool clear = o.interval > 0 && !o.cumulative;
    SessionStats before;  // the counters at the last read-out, when each interval is cleared
    std::map<std::uint32_t, MapCounters> last_read;
    std::map<std::uint32_t, std::uint64_t> returned;  // per probe, its maps' returns so far
    // Per probe, the calls not returned at the last read-out: the next interval's entered
    // before it.
    std::map<std::uint32_t, std::uint64_t> unreturned_last;
    auto printNow = [&](const SessionStats& total, const std::string& when,
                        bool more) -> Result<void> {
        auto tables = collector->tables(clear, total);
        if (!tables)
            return std::move(tables).error();
        SessionStats shown = clear ? countersSince(total, before) : total;
        pairWithTables(shown, *tables);
        countersOfTheRead(*tables, shown, last_read, clear);
        unreturnedOfTheRead(o, *tables, shown, returned, clear);
        // Each interval on its own, once every probe's table was left out (removed, its last
        // table shown): no read-out to print, not an empty time of day.
        if (clear && tables->empty() && !total.probes.empty())
            return {};
        AggrReadout readout{*tables, shown, total, when, more, {}};
        for (const ProbeStats& ps : shown.probes) {
            if (clear)
                readout.entered_before.push_back(unreturned_last[ps.id]);
            unreturned_last[ps.id] = ps.unreturned;
        }
        before = total;
        auto printed = print(readout);
        // Without --interval the end's note on the removal says it all.
        for (const auto& note : collector->takeRemovedNotes(clear))
            if (o.interval > 0)
                io.err << fmt::format("probectl {}: warning: {}{}\n", cmd,
                                      when.empty() ? "" : when + ": ", note);
        return printed;
    };
    // Every probe removed by another client (probectl remove): nothing is left to count, so
    // the run ends (said) instead of printing empty read-outs until the command ends, the
    // deadline or a signal. Checked once a second. The ptrace backend's probes go only with
    // their processes, which ends its run (Tracer::done()).
    std::uint64_t next_probe_check = 0;
    bool no_probe_left = false;
    auto probesGone = [&] {
        if (!kernel || no_probe_left || monotonicNs() < next_probe_check)
            return no_probe_left;
        next_probe_check = monotonicNs() + 1'000'000'000;
        if (auto s = collector->stats(); s && !s->probes.empty())
            no_probe_left = std::all_of(s->probes.begin(), s->probes.end(),
                                        [](const ProbeStats& p) { return p.removed_by != 0; });
        return no_probe_left;
    };
    int rc = kExitOk;
    bool unwritten = false;  // the output failed: the run ends, with nothing more to print
    for (;;) {
        if (auto r = tracer.run(
                onEvent, [&] { return shouldStop() || intervalDue() || probesGone(); }, 50);
            !r) {
            rc = runtimeError(io, cmd, r.error());
            break;
        }
        if (!intervalDue() || shouldStop() || no_probe_left)
            break;
        next += every;
        auto stats = collector->stats();
        if (!stats)
            return runtimeError(io, cmd, stats.error());
        if (auto r = printNow(*stats, wallClock(o.interval), true); !r) {
            rc = runtimeError(io, cmd, r.error());
            unwritten = true;
            break;
        }
    }
    auto stats = tracer.stop(onEvent);
    if (!stats)
        return runtimeError(io, cmd, stats.error());
    if (!unwritten)
        if (auto r =
                printNow(*stats, o.interval > 0 ? wallClock(o.interval) : std::string(), false);
            !r)
            rc = runtimeError(io, cmd, r.error());
    // A removal said at its read-out is not said again.
    for (const auto& note : o.interval > 0 ? collector->notSaidYet(stats->notes) : stats->notes)
        io.err << fmt::format("probectl {}: warning: {}\n", cmd, note);
    if (no_probe_left)
        io.err << fmt::format(
            "probectl {}: every probe was removed by another client: nothing left to count, "
            "the run ends\n",
            cmd);
    return loop.finish(io, rc);
}

namespace {

// --by kstack or ustack where stacks cannot be counted: each mistake and what to do.
std::optional<UsageError> stackKeyError(const AggrCliOptions& o, bool from) {
    const char* key = byKernelStack(o) ? kKernelStackArg : kUserStackArg;
    if (o.mode != AggrMode::Count)
        return UsageError{fmt::format(
            "--by {}: {} has no stack keys: count the stacks with probectl count SPEC --by {}", key,
            modeName(o.mode), key)};
    if (from)
        return UsageError{fmt::format(
            "--by {} with --from: stacks are counted while the program runs, not from a "
            "recording: probectl count SPEC --by {} -- CMD",
            key, key)};
    if (o.backend != "kernel" && byKernelStack(o))
        return UsageError{fmt::format("--by kstack: {}", kNoKernelStacksWithPtrace)};
    if (o.backend != "kernel" && o.ustack != "dwarf")
        return UsageError{
            "--by ustack walks frame pointers in probectl.ko: with --backend ptrace add "
            "--ustack=dwarf (either backend), or leave out --backend ptrace"};
    if (o.format == "perfetto" || o.format == "chrome")
        return UsageError{fmt::format(
            "--by {} --format {}: counter tracks have no stacks; stacks are printed as text, "
            "json, folded or svg",
            key, o.format)};
    return std::nullopt;
}

}  // namespace

po::options_description aggrOptionsDescription(AggrMode mode, AggrCliOptions* o) {
    po::options_description d("Options");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("by,b", po::value<std::vector<std::string>>()->value_name("KEY,...")->composing(),
         "aggregate per key (at most 4): comm pid tid uid cpu retval errno, or a fetch argument's "
         "NAME (integer or string; strings keep 31 bytes)")
        ("attach,p", po::value<std::vector<std::uint32_t>>(o ? &o->pids : nullptr)
             ->value_name("PID"), "only process PID (repeatable)")
        ("follow,f", po::bool_switch(o ? &o->follow : nullptr),
         "also the processes they fork from now on (needs -p or -- CMD)");
    addTaskFilterOptions(d, o ? &o->match_comm : nullptr);
    d.add_options()
        ("duration,d", po::value<std::string>(o ? &o->duration_text : nullptr)
             ->value_name("TIME"),
         "stop after TIME: seconds (2.5), or with a unit: 500ms, 10s, 2m, 1h")
        ("top", bounded<std::size_t>(o ? &o->top : nullptr, "top", 1, kAggrMaxEntries,
                                     "(leave it out for every key)")->value_name("N"),
         "print only the N keys with the most hits (a line, or JSON's \"omitted\", counts "
         "the others; folded and svg: the N heaviest stacks of each probe)")
        ("zeros", po::bool_switch(o ? &o->zeros : nullptr),
         "also list the probes with no hits (of several probes, e.g. a glob's, they are left "
         "out and counted in one line; a probe whose hits were filtered or lost is shown)")
        ("max-entries", bounded<std::uint32_t>(o ? &o->aggr.max_entries : nullptr,
                                               "max-entries", 1, kAggrMaxEntries)
             ->value_name("N"), "distinct keys each probe's map holds (at most 65536; default: 1 without --by, "
         "else 1024, or what an even share of max_map_kb holds when the maps of 1024 (a glob's, "
         "or one) would not fit); hits with new keys beyond it are counted as map full")
        ("format", po::value<std::string>(o ? &o->format : nullptr)->value_name("FMT"),
         "text (default); json: one object per probe (a key string that is not UTF-8 also "
         "has NAME_bytes, its bytes in hex); folded (count --by kstack or ustack): "
         "one 'frame;frame;... COUNT' line per stack, root first, flame-graph input; svg "
         "(count --by kstack or ustack, with -o FILE): a flame graph; perfetto "
         "or chrome (with -o FILE): "
         "the tables still print as text, and every read-out (each --interval and the end) "
         "goes to FILE as counter tracks for a timeline viewer")
        ("output,o", po::value<std::string>(o ? &o->output : nullptr)->value_name("FILE"),
         "write to FILE instead of standard output, or standard error with -- CMD ('-': "
         "standard output, even with -- CMD; perfetto, chrome: the timeline, a file; svg: the "
         "flame graph); a write to it that fails (a full disk) ends the run and removes FILE, "
         "incomplete")
        ("interval,i", po::value<std::string>(o ? &o->interval_text : nullptr)
             ->value_name("TIME"),
         "print the tables every TIME (as --duration, at least 100ms), each under the time "
         "of day, and start the next interval from zero: the kernel zeroes the maps as it "
         "reads them, so every hit is in exactly one interval; the header's counters are the "
         "interval's too, marked (this interval)")
        ("cumulative", po::bool_switch(o ? &o->cumulative : nullptr),
         "with --interval: do not zero, each table and header holds everything since the "
         "start, marked (since the start)")
        ("verbose,v", po::bool_switch(o ? &o->verbose : nullptr),
         "list each name a glob (kprobe:vfs_*) matched but did not attach, and why")
        ("backend", po::value<std::string>(o ? &o->backend : nullptr)->value_name("NAME"),
         "kernel (probectl.ko's maps, the default) or ptrace (no module: every event is "
         "stopped for and aggregated here with the same rules; uprobe, uretprobe, usdt and "
         "syscall specs; keys comm pid tid cpu retval errno, a usdt site's args, ustack with "
         "--ustack=dwarf: not uid or kstack)")
        ("seccomp-bpf", po::bool_switch(o ? &o->seccomp : nullptr),
         "ptrace backend: stop the command only on traced syscalls (a seccomp filter, like "
         "strace --seccomp-bpf); needs -f and -- CMD, not -p (without -f: off, with a warning)")
        ("force", po::bool_switch(o ? &o->force : nullptr),
         "add kernel uretprobes in files that unwind C++ exceptions (refused by default: "
         "an exception thrown through a probed call ends the program)")
        ("maxactive", bounded<std::uint32_t>(o ? &o->maxactive : nullptr, "maxactive", 1,
                                             PROBECTL_MAXACTIVE_MAX)->value_name("N"),
         "calls in flight each kretprobe: and syscall: probe can pair with its return "
         "(1..4096; default: the kernel's); raise it when the header counts NMISSED; kernel "
         "backend only")
        ("from", po::value<std::string>(o ? &o->from : nullptr)->value_name("FILE"),
         "aggregate the events of recording FILE (probectl record) instead of tracing; "
         "SPECs, if given, choose its probes (globs of their spec text)");
    if (mode == AggrMode::Count)
        d.add_options()
            ("stack-depth", bounded<std::uint32_t>(o ? &o->aggr.stack_depth : nullptr, "stack-depth", 1, PROBECTL_STACK_MAX_DEPTH)
                 ->value_name("N"),
             "with --by kstack or ustack: frames a stack keeps (1..127, default 64); deeper "
             "stacks end with '...' and count as truncated")
            ("ustack", po::value<std::string>(o ? &o->ustack : nullptr)->value_name("UNWINDER"),
             "how --by ustack walks user stacks: fp (the default) by frame pointers in the "
             "kernel's map; dwarf records every hit with the registers and the top of the "
             "user stack (--stack-size) and unwinds and counts it here by the files' DWARF "
             "call frame information (code built without frame pointers; both backends)")
            ("stack-size", bounded<std::uint32_t>(o ? &o->stack_size : nullptr, "stack-size", 1, PROBECTL_USTACK_SNAPSHOT_MAX)
                 ->value_name("BYTES"),
             fmt::format("--ustack=dwarf: bytes of user stack copied at each hit (1..{}, "
                         "default {})",
                         PROBECTL_USTACK_SNAPSHOT_MAX, PROBECTL_USTACK_SNAPSHOT_DEFAULT)
                 .c_str());
    if (mode != AggrMode::Count)
        d.add_options()
            ("linear", po::value<std::string>()->value_name("MIN,MAX,STEP"),
             "linear buckets of STEP from MIN to MAX (plus one below and one above) instead "
             "of log2 buckets");
    // clang-format on
    return d;
}

Parsed<AggrCliOptions> parseAggrOptions(AggrMode mode, const std::vector<std::string>& args) {
    AggrCliOptions o;
    o.mode = mode;
    std::vector<std::string> mine;
    if (auto e = splitCommand(args, mine, o.command))
        return *e;
    auto desc = aggrOptionsDescription(mode, &o);
    po::variables_map vm;
    auto r = parsePositionals(mine, desc, "spec", "probe spec", vm);
    if (!r)
        return std::move(r).error();
    o.help = r->help;
    if (o.help)
        return o;
    std::vector<std::string> specs = r->values;
    // An empty name (an unset shell variable) read as "no --from" and asked for a spec.
    if (vm.count("from") && o.from.empty())
        return UsageError{"--from '': give the recording's file name"};
    const bool from = !o.from.empty();
    if (mode == AggrMode::Hist) {
        if (from ? specs.empty() : specs.size() != 2)
            return UsageError{from
                                  ? "hist --from FILE takes the fetch argument to histogram "
                                    "(probectl hist --from rec.prb n)"
                                  : "hist takes one probe spec and the fetch argument to histogram "
                                    "(probectl hist 'kprobe:vfs_read n=$arg3' n)"};
        o.aggr.value = AggrValue::Arg;
        o.aggr.value_arg = keyName(specs.back());
        specs.pop_back();
    }
    if (from) {
        if (!o.pids.empty() || o.follow || vm.count("duration") || vm.count("interval") ||
            !o.command.empty() || vm.count("pid") || vm.count("tid") || vm.count("uid") ||
            vm.count("comm") || vm.count("maxactive"))
            return UsageError{
                "--from reads a recording: -p, -f, --pid, --tid, --uid, --comm, --duration, "
                "--interval, --maxactive and -- CMD belong to the recording run (probectl "
                "record)"};
        o.only = specs;
    } else if (specs.empty()) {
        return UsageError{fmt::format("no probe spec given (e.g. probectl {} syscall:openat -- ls)",
                                      modeName(mode)) +
                          specTakenAsValueHint("--ustack", o.ustack)};
    }
    for (const auto& s : from ? std::vector<std::string>{} : specs) {
        auto spec = parseSpecArgument(s);
        if (!spec)
            return std::move(spec).error();
        o.specs.push_back(std::move(*spec));
    }
    if (!from && vm.count("maxactive"))
        if (auto e = maxactiveError(o.specs, o.backend))
            return *e;
    if (vm.count("by"))
        for (const auto& list : vm["by"].as<std::vector<std::string>>())
            for (const auto& k : splitList(list)) {
                if (k.empty())
                    return UsageError{fmt::format("--by '{}': empty key", list)};
                if (byKey(o, keyName(k).c_str()))
                    return UsageError{fmt::format(
                        "--by: key '{}' is given twice: name each key once", keyName(k))};
                o.aggr.keys.push_back(keyName(k));
            }
    if (o.aggr.keys.size() > kAggrMaxKeys)
        return UsageError{fmt::format("--by: at most {} keys", kAggrMaxKeys)};
    if (mode == AggrMode::Latency)
        o.aggr.value = AggrValue::Latency;
    if (mode != AggrMode::Count) {
        o.aggr.hist = AggrHist::Log2;
        if (vm.count("linear")) {
            auto parts = splitList(vm["linear"].as<std::string>());
            if (parts.size() != 3)
                return UsageError{"--linear takes MIN,MAX,STEP"};
            std::int64_t v[3];
            for (int i = 0; i < 3; i++) {
                auto n = parseInt(parts[i], "--linear");
                if (!n)
                    return std::move(n).error();
                v[i] = *n;
            }
            if (v[2] <= 0 || v[1] <= v[0])
                return UsageError{"--linear needs MIN < MAX and STEP > 0"};
            o.aggr.hist = AggrHist::Linear;
            o.aggr.lin_min = v[0];
            o.aggr.lin_max = v[1];
            o.aggr.lin_step = v[2];
        }
    }
    if (vm.count("duration")) {
        auto secs = parseDuration(o.duration_text);
        if (!secs)
            return UsageError{durationError(o.duration_text)};
        o.duration = *secs;
    }
    if (vm.count("interval")) {
        auto secs = parseDuration(o.interval_text);
        if (!secs || *secs < kMinIntervalSec)
            return UsageError{intervalError(o.interval_text)};
        o.interval = *secs;
    }
    if (auto e = emptyOutputError(vm))
        return *e;
    if (o.cumulative && o.interval == 0)
        return UsageError{"--cumulative goes with --interval"};
    if (o.follow && o.pids.empty() && o.command.empty())
        return UsageError{"-f follows the children of -p PID or -- CMD: give one of them"};
    const bool kstack = byStack(o);
    // folded and svg are stacks, which only count keys by.
    const bool stacks_format = mode == AggrMode::Count;
    if (o.format != "text" && o.format != "json" && o.format != "perfetto" &&
        o.format != "chrome" && (!stacks_format || (o.format != "folded" && o.format != "svg")))
        return UsageError{fmt::format("--format must be text, json, {}perfetto or chrome, not '{}'",
                                      stacks_format ? "folded, svg, " : "", o.format)};
    if (o.format == "folded" && (!kstack || mode != AggrMode::Count))
        return UsageError{"--format folded prints stacks: probectl count ... --by kstack|ustack"};
    if (o.format == "svg" && (!kstack || mode != AggrMode::Count))
        return UsageError{
            "--format svg draws stacks: probectl count ... --by kstack|ustack --format svg "
            "-o FILE"};
    if (o.format == "svg" && o.output.empty())
        return UsageError{"--format svg writes a file: give -o FILE (e.g. -o flame.svg)"};
    if (o.format == "svg" && o.interval > 0)
        return UsageError{
            "--format svg draws one graph at the end: --interval goes with text, json or "
            "folded"};
    if (vm.count("stack-depth") && !kstack)
        return UsageError{"--stack-depth goes with --by kstack or ustack"};
    const bool dwarf = o.ustack == "dwarf";
    if (o.ustack != "fp" && !dwarf)
        return UsageError{
            fmt::format("--ustack={}: the unwinders are fp (frame pointers) and dwarf", o.ustack)};
    if (vm.count("ustack") && !byUserStack(o))
        return UsageError{"--ustack goes with --by ustack"};
    if (dwarf && byKernelStack(o))
        return UsageError{
            "--ustack=dwarf: kernel stacks are keys of the kernel's map, dwarf's user stacks "
            "are unwound here: not with --by kstack (--by kstack,ustack walks frame pointers)"};
    if (dwarf && from)
        return UsageError{
            "--ustack=dwarf unwinds the stacks of processes while they run: not with --from"};
    if (dwarf)
        for (const auto& s : o.specs)
            if (s.kind == SpecKind::Syscall)
                return UsageError{
                    syscallUserStackRefusal("--ustack=dwarf", s.text, s.symbol, o.backend)};
    if (vm.count("stack-size") && !dwarf)
        return UsageError{"--stack-size goes with --ustack=dwarf"};
    if (kstack)
        if (auto e = stackKeyError(o, from))
            return *e;
    if ((o.format == "perfetto" || o.format == "chrome") && o.output.empty())
        return UsageError{fmt::format("--format {} writes a file: give -o FILE (e.g. -o {})",
                                      o.format,
                                      o.format == "perfetto" ? "counts.pftrace" : "counts.json")};
    // It made a file named '-': a timeline is for a file, as trace's trace files are.
    if ((o.format == "perfetto" || o.format == "chrome") && isStandardOutputName(o.output))
        return UsageError{fmt::format(
            "-o -: --format {} is written to a file, not to standard output: give a file name "
            "(./- for one named '-')",
            o.format)};
    if ((o.format == "perfetto" || o.format == "chrome") && from)
        return UsageError{fmt::format(
            "--format {} with --from: a recording's events go to a timeline with probectl "
            "report FILE --format {} -o OUT",
            o.format, o.format)};
    if (o.backend != "kernel" && o.backend != "ptrace")
        return UsageError{fmt::format("--backend must be kernel or ptrace, not '{}'", o.backend)};
    if (auto e = seccompBpfError(o, o.seccomp, from))
        return *e;
    if (auto e =
            parseTaskFilters(vm, o.backend, o.match_pids, o.match_tids, o.match_uids, o.match_comm))
        return *e;
    for (auto pid : o.pids)
        if (pid == 0)
            return UsageError{"-p 0 is not a process id"};
    uniquePids(o.pids);
    // Last: a specific refusal of the options says more.
    if (o.backend == "ptrace" && !from && o.pids.empty() && o.command.empty())
        return UsageError{kPtraceNeedsTarget};
    return o;
}

int runCount(const std::vector<std::string>& args, Io& io) {
    return runAggr(AggrMode::Count, args, io);
}
int runHist(const std::vector<std::string>& args, Io& io) {
    return runAggr(AggrMode::Hist, args, io);
}
int runLatency(const std::vector<std::string>& args, Io& io) {
    return runAggr(AggrMode::Latency, args, io);
}

}  // namespace probectl::cli

namespace probectl::cli {

const char* const kCountHelp =
    R"(Usage: probectl count SPEC... [--by KEY,...] [-p PID]... [-f] [--duration TIME]
                      [--pid|--tid|--uid LIST] [--comm GLOB]
                      [--interval TIME [--cumulative]] [--top N] [--zeros]
                      [--max-entries N]
                      [--format json|folded|svg|perfetto|chrome] [-o FILE] [--stack-depth N]
                      [--ustack fp|dwarf [--stack-size BYTES]] [--maxactive N]
                      [--backend kernel|ptrace [--seccomp-bpf]] [--force] [-v]
                      [-- CMD [ARGS...]]
       probectl count --from FILE [SPEC-GLOB...] [--by KEY,...] [--top N] [--format json]

Counts hits in the kernel: each probe adds its hits to a map in probectl.ko (no
record per event, nothing dropped), read when the command exits, on --duration or
Ctrl-C. Without --by, one table of every probe and its count, highest first. With
--by, one table per probe with a row per key: task fields (comm pid tid uid cpu,
retval and errno for return probes: errno is the return value when it is -4095..-1,
else 0, named as -2 (ENOENT), as is a syscall's failed retval; the retval of mmap,
mremap, brk and shmat in hex, as strace prints it) or the
probe's own fetch arguments by NAME, integers or strings. A return whose
value is not known keys retval and errno as ? (JSON null): with --backend ptrace, a
syscall whose thread was killed inside it (ptrace sees no exit stop then; the kernel
backend keys it by the ERESTART code it returned, -516 for a sleep). A hit whose
key is new while the map is full is not counted but reported ("map full"); the table
ends with the number of keys held.
--by kstack counts per kernel stack (kprobe, kretprobe, tracepoint and syscall specs, a
syscall's taken at its entry; not with --backend ptrace, which sees no kernel stack):
each stack's frames, innermost first, over its count; --format folded prints one
'root;...;leaf COUNT' line per stack for flame-graph tools (flamegraph.pl, inferno,
speedscope); --format svg -o FILE writes the flame graph itself (root at the bottom,
hover a frame for its hits). With several probes each one's stacks stand on a root
frame named by its spec, in folded lines as in the graph; --top N keeps each probe's N
heaviest stacks. --stack-depth N caps the frames kept (deeper stacks end with '...').
--by ustack walks frame pointers in the kernel (any spec); --ustack=dwarf counts code built
without them: every hit is recorded with the user registers and the top of the user stack
(--stack-size BYTES, default 3072) and unwound here by the files' DWARF call frame
information, as trace --ustack=dwarf shows it (both backends; not with --by kstack,
--from or syscall: specs). Each record carries its copy: the records the ring could not take
are hits not counted, said under the table (on stderr with folded and svg); the module's
buffer_kb parameter sizes the ring, or narrow the probes (-p, a predicate). The end line
says how the walks went ("user stacks (dwarf): ...").

Which processes: as for trace (-- CMD, -p PID, -f; neither: every process).
--pid, --tid, --uid and --comm keep only some of their tasks' hits, in the kernel: the
others are not counted and show as FILTERED (in the header, or beside COUNT without
--by; kernel backend).
Predicates (SPEC ... if EXPR) run first: rejected hits are not counted.
--backend ptrace needs no module: every hit stops the traced process and is counted
here with the kernel map's rules (same tables; uprobe, uretprobe, usdt and syscall
specs; keys comm pid tid cpu retval errno, a usdt site's args, ustack with
--ustack=dwarf: its events carry no uid, and it sees no kernel stack); --seccomp-bpf
stops the command only on the traced syscalls (a seccomp filter, as strace
--seccomp-bpf; needs -f and -- CMD, else off with a warning). --force adds kernel
uretprobes where C++ exceptions unwind.

A glob in the name (kprobe:vfs_*, kretprobe:GLOB, syscall:GLOB, tracepoint:SUBSYS:GLOB,
uprobe:PATH:GLOB, uretprobe:PATH:GLOB) adds one probe per matching name, each with
its own map (without --by made for its one key; with --by and no --max-entries, for
the keys an even share of the module's max_map_kb holds when the default 1024 would
not fit them all, said in a note; one probe's map too). A probe whose share holds not
even one key is refused, saying the bytes a key needs and what to change. Names that cannot be probed (blacklisted, data, duplicate; exit and
exit_group, which never return, for latency, $retval or $errno; refused by probectl
or by the kernel) are skipped and summed up in one line on stderr ("attached 8 of 9;
1 refused: 1 blacklisted"); -v lists them with why. Only a glob that attaches nothing fails.
Names refused over a limit (each map counts against the module's max_map_kb) end
that line with what to change: the module parameter to raise, or --max-entries to
lower.

On a kretprobe or uretprobe a hit counts at the return: the entries that never
returned (longjmp, a C++ exception, the thread's exit, still inside at the end) are
not counted, and said as latency says them ("never returned N").

--interval TIME (at least 100ms) prints the tables every TIME under the time of day
(HH:MM:SS) and starts each interval from zero: the kernel zeroes the maps as it reads
them, so every hit is counted in exactly one interval; each probe's header counts the
interval too, and says so: (this interval). --cumulative keeps the totals, tables
and headers: (since the start). A call counts in the interval it returns in: a return
probe's header says "entered before B" and "not returned yet U", so that hits + B =
count + U; only the last read-out says "never returned". The run ends, saying why,
once another client removed every probe.

--format perfetto|chrome -o FILE also writes every read-out as counter tracks (one per
probe and key: "SPEC [KEY]: count", and for hist and latency "...: avg FIELD") for
ui.perfetto.dev or chrome://tracing; with --interval each sample is the interval that
ends at its time (or the total so far with --cumulative). The tables still print.

--from FILE computes the same tables from a recording (probectl record) in user
space, with the kernel map's rules but no bound on the keys (unless --max-entries
gives one); SPEC-GLOBs choose its probes by their spec text. Probes the aggregation
does not apply to are left out with a note; only a glob whose every probe is left
out fails. Records the recording lost are not in
the counts (the loss is shown).

Where the tables go (text, json, folded): with -- CMD and no -o on stderr, as strace
-c's (CMD's own output stays on stdout); without a command on stdout; with -o in FILE.
With --format perfetto|chrome, -o FILE is the timeline and the tables print by the
same rule on stderr or stdout.

Exit status: with -- CMD, as trace (and strace): CMD's exit code when it exits,
whatever ended the run (Ctrl-C, SIGTERM and SIGHUP go on to CMD); when signal N kills
CMD, or CMD outlives a stop signal N by a second (it is then killed, with every process
of it traced: none is left running), probectl dies of N once the tables
are printed (a shell says 128+N: 130 for Ctrl-C; a closed terminal loses nothing); 0
when --duration ended it, and when Ctrl-C, SIGTERM or SIGHUP ends a run without CMD
(-p, or system-wide); 2 on a usage error; 1 when the system refused.
A stop signal while the probes are still being attached ends the attaching: with
-- CMD, CMD is not run and probectl dies of the signal; without, the run ends at once.
SIGHUP is left alone when it is ignored already (nohup).
A failed write to stdout or stderr (a full disk) makes 0
into 1 (stdout's is said on stderr).

Examples:
  sudo probectl count 'kprobe:vfs_*' --duration 5
  sudo probectl count 'tracepoint:sched:sched_process_*' --interval 1 --duration 5
  sudo probectl count 'syscall:*' --by comm --interval 1 --duration 10 \
       --format perfetto -o syscalls.pftrace
  sudo probectl count 'syscall:openat' --by comm,pid -- make -j2
  sudo probectl count 'syscall:*' --comm 'cc1*' --duration 10
  sudo probectl count kprobe:vfs_read kprobe:vfs_write --duration 5
  sudo probectl count 'uprobe:libc:malloc size=$arg1:u64' --by size -- ls -l /usr
  sudo probectl count 'kretprobe:do_sys_openat2' --by retval --top 5 -- ls /
  sudo probectl count kprobe:vfs_read --by kstack --format svg -o flame.svg -- make
  sudo probectl count uprobe:/usr/bin/app:leaf --by ustack --ustack=dwarf --format folded -- app
  probectl count --from run.prb --by comm 'syscall:*'
)";

const char* const kHistHelp =
    R"(Usage: probectl hist SPEC FIELD [--by KEY,...] [--linear MIN,MAX,STEP] [--top N] [--zeros]
                     [--max-entries N] [-p PID]... [-f] [--duration TIME]
                     [--pid|--tid|--uid LIST] [--comm GLOB]
                     [--format json|perfetto|chrome] [-o FILE]
                     [--interval TIME [--cumulative]]
                     [--backend kernel|ptrace [--seccomp-bpf]] [--maxactive N] [--force]
                     [-v] [-- CMD [ARGS...]]
       probectl hist --from FILE [SPEC-GLOB...] FIELD [--by KEY,...] [--linear ...]

A histogram of the integer fetch argument FIELD of SPEC, kept in the kernel: log2
buckets as bpftrace's hist() ([0], [1], [2, 4), [4, 8), ..., and (..., 0) for
negative signed values), or with --linear MIN,MAX,STEP buckets of STEP from MIN
(one below MIN, one from MAX on), as lhist(). One histogram per key with --by,
each followed by its count, average, minimum and maximum. --interval, globs,
--pid/--tid/--uid/--comm, --format perfetto|chrome -o FILE (count and average as
counter tracks), --backend, --seccomp-bpf, --force and --from FILE (a recording's events)
as for count.
Where the tables go as for count: with -- CMD and no -o on stderr (CMD's own output
stays on stdout), without a command on stdout, with -o in FILE.
Exit status as for count: CMD's exit code, or killed by the signal that killed CMD
(or by a stop signal CMD outlived: Ctrl-C, SIGTERM, SIGHUP), 0 when --duration ended it.

Examples:
  sudo probectl hist 'uretprobe:libc:malloc size=$arg1:u64' size -- ls -l /usr
  sudo probectl hist 'kprobe:vfs_read n=$arg3:u64' n --linear 0,4096,512 --duration 5
  sudo probectl hist 'syscall:read n=$arg3:u64' n --by comm -- sh -c 'cat /etc/*'
)";

const char* const kLatencyHelp =
    R"(Usage: probectl latency SPEC... [--by KEY,...] [--linear MIN,MAX,STEP] [--top N] [--zeros]
                        [--max-entries N] [-p PID]... [-f] [--duration TIME]
                        [--pid|--tid|--uid LIST] [--comm GLOB]
                        [--format json|perfetto|chrome] [-o FILE]
                        [--interval TIME [--cumulative]] [-v]
                        [--backend kernel|ptrace [--seccomp-bpf]] [--maxactive N] [--force]
                        [-- CMD [ARGS...]]
       probectl latency --from FILE [SPEC-GLOB...] [--by KEY,...] [--linear ...]

The time from entry to return of kretprobe:, uretprobe: and syscall: probes, as a
log2 histogram in the kernel (bounds shown in ns, us, ms), one per probe (and per
key with --by). Calls whose entry and return the kernel cannot pair (too few
kretprobe instances) are not counted: the header's nmissed shows them, and
--maxactive N (kretprobe: and syscall: probes, up to 4096) gives more instances.
Entries that never returned (longjmp or a C++ exception past the frame, the
thread's exit, still inside at the end) are in no bucket: the header's "never
returned" counts them.
--interval, globs, --pid/--tid/--uid/--comm, --format perfetto|chrome -o FILE (count
and average latency in ns as counter tracks), --backend, --seccomp-bpf, --force and
--from FILE (a recording's return events) as for count.
Where the tables go as for count: with -- CMD and no -o on stderr (CMD's own output
stays on stdout), without a command on stdout, with -o in FILE.
Exit status as for count: CMD's exit code, or killed by the signal that killed CMD
(or by a stop signal CMD outlived: Ctrl-C, SIGTERM, SIGHUP), 0 when --duration ended it.

Examples:
  sudo probectl latency kretprobe:vfs_read --by comm --duration 5
  sudo probectl latency 'syscall:*read*' --interval 1s -- dd if=/dev/zero of=/dev/null
  sudo probectl latency kretprobe:vfs_read --interval 500ms --duration 10 \
       --format chrome -o vfs_read.json
  sudo probectl latency 'uretprobe:/path/app:handle if $retval < 0' -p 1234
  sudo probectl latency syscall:clock_nanosleep -- sleep 1
  probectl latency syscall:openat --by errno --backend ptrace -- ls /nonexistent
)";

}  // namespace probectl::cli
