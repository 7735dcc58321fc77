// probectl bench: the kernel backend (probectl.ko), count-only and record-streaming, and
// the ptrace backend, each tracing the workload started held before exec (HeldCommand /
// PtraceSession), as `probectl trace -- CMD` does.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "bench.hpp"
#include "bench_throughput.hpp"
#include "probectl/aggr.hpp"
#include "probectl/client.hpp"
#include "probectl/event_view.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/held_command.hpp"
#include "probectl/kernel_stacks.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/ptrace_session.hpp"
#include "probectl/session.hpp"
#include "probectl/user_target.hpp"
#include "record_parts.hpp"
#include "uapi/probectl.h"

namespace probectl::cli::bench {

namespace {

// The probe point of each workload, and its one fetch argument (the same for ftrace):
// bench_fn's argument i (%di), and for getppid the first word of the user's saved
// registers, which __x64_sys_getppid gets a pointer to in %di (a kernel memory read).
std::string location(const Workload& w) {
    return w.mode == "calls" ? fmt::format("uprobe:{}:bench_fn", w.binary)
                             : std::string("kprobe:__x64_sys_getppid");
}

const char* fetchArg(const Workload& w) {
    return w.mode == "calls" ? "x=%di:s64" : "r15=+0(%di):x64";
}

std::string skipWhyNoModule(const Error& e) {
    return fmt::format("kernel backend unavailable: {}", e.describe());
}

// The request of a count-only probe: the spec resolved like Session does, persistent.
Result<ProbeRequest> countOnlyRequest(const Workload& w) {
    auto spec = parseProbeSpec(location(w));
    if (!spec)
        return makeError(EINVAL, spec.error().render());
    ProbeRequest req;
    if (spec->kind == SpecKind::Uprobe) {
        auto t = resolveUserSpec(*spec);
        if (!t)
            return std::move(t).error();
        req.kind = ProbeKind::Uprobe;
        req.path = t->path;
        req.file_offset = t->file_offset;
    } else {
        auto syms = KernelSymbols::load();
        if (!syms)
            return std::move(syms).error();
        auto res = syms->resolve(*spec);
        if (!res)
            return std::move(res).error();
        req = res->request;
    }
    req.flags |= PROBECTL_PROBE_F_PERSISTENT;
    return req;
}

// A persistent probe, removed when this goes out of scope (an exception or a signal that
// unwinds included; only a SIGKILL of probectl bench leaves it, listed by probectl list).
class OwnedProbe {
  public:
    OwnedProbe(Client& c, std::uint32_t id) : c_(c), id_(id) {}
    ~OwnedProbe() { (void)c_.removeProbe(id_); }
    std::uint32_t id() const { return id_; }

  private:
    Client& c_;
    std::uint32_t id_;
};

}  // namespace

// Count-only: the module's persistent probe (PROBECTL_PROBE_F_PERSISTENT), whose handler
// counts the hit per CPU and writes no record. It has no session, so it counts in every
// process; only the workload runs its code (calls) or calls getppid in a busy loop.
Outcome runKernelCount(const Workload& w) {
    auto client = Client::connect();
    if (!client)
        return skip(skipWhyNoModule(client.error()));
    auto req = countOnlyRequest(w);
    if (!req)
        return fail(req.error().describe());
    auto added = client->addProbe(*req);
    if (!added)
        return fail(fmt::format("{}: {}", location(w), added.error().describe()));
    OwnedProbe probe(*client, added->id);
    // Not HeldCommand: its held child calls getppid (the parent-death check), which this
    // system-wide probe would count.
    const std::string out = tempFile("workload");
    auto st = runToEnd(w.argv(out));
    if (!st)
        return fail(st.error().describe());
    if (*st != 0)
        return fail(fmt::format("workload {}", HeldCommand::describeStatus(*st)));
    auto ns = readElapsed(out);
    std::filesystem::remove(out);
    if (!ns)
        return fail(ns.error().describe());
    Measure m0;
    m0.elapsed_ns = *ns;
    Outcome o = measured(m0);
    auto list = client->listProbes();
    if (!list)
        return fail(list.error().describe());
    for (const auto& p : *list)
        if (p.id == probe.id() && o.measure) {
            o.measure->hits = p.hits;
            o.measure->lost = p.nmissed;
        }
    return o;
}

namespace {

// A session probe with one fetch argument and the workload's tgid as filter, run to the
// workload's end. Record-streaming: every record is received and checked (counted through
// its view, as ftrace-iterate hands each parsed event to its callback) by this process
// while the workload runs. The session's per-CPU ring (module parameter buffer_kb, read when a
// session is created) is made large enough for every record of the run, as ftrace's
// buffer_size_kb is for ftrace: under emulation the workload can outrun the 10 ms drain,
// and the default 256 KiB then drops records (counted: the run shows INEXACT). Each record
// is at most 256 bytes here. Aggregating (`aggr` set): the probe counts into its map keyed
// by $pid with a log2 histogram of the argument and sends no record; the map is read once
// at the end, its total count being the row's records. `stacks`: each record also carries
// a stack, as trace --kstack, --ustack and --ustack=dwarf add it (a stack id, or the
// registers and 3072 bytes of user stack), which the ring is sized for; the stacks are
// not symbolized or unwound here, so the rows measure capture and delivery. `deferred`:
// nothing is read until the workload has ended, as the ftrace row reads its buffer; the
// module's drain fills the session's 64 KiB socket once and then leaves the records in
// the ring, so the run costs the handlers, not the delivery. `ring_kb`: the ring is that size per
// CPU instead (the throughput search's fixed ring, bench_throughput.hpp).
enum class Stacks { None, Kernel, User, UserDwarf };

Outcome sessionRun(const Workload& w, const AggrSpec* aggr, Stacks stacks = Stacks::None,
                   bool deferred = false, unsigned ring_kb = 0) {
    const std::string param = "/sys/module/probectl/parameters/buffer_kb";
    const std::uint64_t record = 256 + (stacks == Stacks::UserDwarf ? 3584 : 0);
    // Capped where a VM's memory would refuse the ring: a longer run may then lose
    // records, counted and shown as INEXACT.
    const std::uint64_t want = std::min<std::uint64_t>(w.n * record / 1024 + 256, 131072);
    std::optional<ScopedSetting> ring;
    const std::string now = ScopedSetting::current(param);
    if (ring_kb && now.empty())
        return skip(
            fmt::format("kernel backend unavailable: no {} (probectl.ko not loaded)", param));
    if (ring_kb) {
        ring.emplace(param, std::to_string(ring_kb));
        if (!ring->ok())
            return fail(fmt::format("cannot set {} to {} (needs root and probectl.ko loaded)",
                                    param, ring_kb));
    } else if (!aggr && !now.empty() && std::stoull(now) < want) {
        ring.emplace(param, std::to_string(want));
    }
    const std::string out = tempFile("workload");
    auto child = HeldCommand::spawn(w.argv(out));
    if (!child)
        return fail(child.error().describe());
    SessionOptions so;
    so.tgids = {static_cast<std::uint32_t>(child->pid())};
    if (deferred) {
        // libctl's forced 4 MiB socket holds every record of a run, so the drain would
        // deliver them all while the workload runs: a small socket makes the row deferred.
        so.client.rcvbuf_bytes = 64 << 10;
        so.client.force_rcvbuf = false;
    }
    if (aggr)
        so.prepare = [aggr](ProbeRequest& req, std::vector<FetchArg>& fetch) {
            return prepareAggregation(*aggr, req, fetch);
        };
    else
        so.prepare = [stacks](ProbeRequest& req, std::vector<FetchArg>& fetch) -> Result<void> {
            // the parts `probectl trace SPEC` asks for (text output), as trace.cpp does
            req.record_parts = traceRecordParts("text", fetch);
            if (stacks == Stacks::None)
                return {};
            if (stacks == Stacks::Kernel)
                return appendKernelStackArg(req, fetch, kStackDefaultDepth);
            if (stacks == Stacks::User)
                return appendUserStackArg(req, fetch, kStackDefaultDepth);
            return appendUserStackSnapshotArg(req, fetch, kUstackSnapshotDefault);
        };
    auto s = Session::open(so);
    if (!s)
        return skip(skipWhyNoModule(s.error()));
    const std::string spec = location(w) + " " + fetchArg(w);
    if (auto id = s->add(spec); !id)
        return fail(id.error().describe());
    // Each record is counted through its view (checked by libctl's decode: size and value
    // headers), with no Event built or allocated: the reader's work per record is then
    // that of ftrace-iterate's callback, which reads the event's argument (ftrace-stream
    // only counts the events in the pages it reads).
    std::uint64_t events = 0;
    auto cb = [&](const EventView& v) {
        if (v.fetchedCount() != 0)
            ++events;
    };
    if (auto r = child->release(); !r)
        return fail(r.error().describe());
    std::optional<int> status;
    auto ended = [&] {
        if (!status)
            status = child->tryWait();
        return status.has_value();
    };
    if (deferred) {
        while (!ended())
            usleep(20000);
    } else if (auto r = s->runViews(cb, ended, 20); !r) {
        return fail(r.error().describe());
    }
    auto st = s->stopViews(cb);
    if (!st)
        return fail(st.error().describe());
    if (*status != 0)
        return fail(fmt::format("workload {}", HeldCommand::describeStatus(*status)));
    auto ns = readElapsed(out);
    std::filesystem::remove(out);
    if (!ns)
        return fail(ns.error().describe());
    Measure m;
    m.elapsed_ns = *ns;
    m.hits = st->probes.at(0).hits;
    m.records = events;
    m.lost = st->lost + st->overruns + st->probes[0].dropped + st->probes[0].nmissed;
    m.lost_detail =
        fmt::format("ring full {}, missed {}, undeliverable {}, socket overruns {}",
                    st->probes[0].dropped, st->probes[0].nmissed, st->lost, st->overruns);
    if (aggr) {
        const SessionProbe& p = s->probes().at(0);
        auto t = readAggregation(s->client(), p.id, p.resolution.request, p.fetch_args);
        if (!t)
            return fail(t.error().describe());
        m.records = t->totalCount();
        m.lost += t->overflow + t->nested + t->faulted;
    }
    return measured(m);
}

}  // namespace

Outcome runKernelRecord(const Workload& w) {
    return sessionRun(w, nullptr);
}

Outcome runKernelRecordRing(const Workload& w, unsigned ring_kb) {
    return sessionRun(w, nullptr, Stacks::None, false, ring_kb);
}

Outcome runKernelRecordDeferred(const Workload& w) {
    return sessionRun(w, nullptr, Stacks::None, true);
}

Outcome runKernelKstack(const Workload& w) {
    return sessionRun(w, nullptr, Stacks::Kernel);
}

Outcome runKernelUstack(const Workload& w) {
    return sessionRun(w, nullptr, Stacks::User);
}

Outcome runKernelUstackDwarf(const Workload& w) {
    return sessionRun(w, nullptr, Stacks::UserDwarf);
}

namespace {
// The aggregation of kernel-aggregate: hits per $pid, each with a log2 histogram of the
// fetch argument (fetchArg's name).
AggrSpec benchAggregation(const Workload& w) {
    AggrSpec a;
    a.keys = {"pid"};
    a.value = AggrValue::Arg;
    a.value_arg = w.mode == "calls" ? "x" : "r15";
    a.hist = AggrHist::Log2;
    return a;
}
}  // namespace

Outcome runKernelAggregate(const Workload& w) {
    const AggrSpec a = benchAggregation(w);
    return sessionRun(w, &a);
}

namespace {

// The ptrace backend has no fetch arguments: its events carry the argument registers.
Outcome ptraceRun(const Workload& w, bool seccomp) {
    const std::string out = tempFile("workload");
    PtraceSessionOptions so;
    so.command = w.argv(out);
    so.seccomp = seccomp;
    auto s = PtraceSession::open(so);
    if (!s)
        return skip(fmt::format("ptrace unavailable: {}", s.error().describe()));
    const std::string spec = w.mode == "calls" ? location(w) : std::string("syscall:getppid");
    if (auto id = s->add(spec); !id)
        return fail(id.error().describe());
    std::uint64_t events = 0;
    auto cb = [&](const Event&) { ++events; };
    if (auto r = s->release(); !r)
        return fail(r.error().describe());
    if (auto r = s->run(
            cb, [&] { return s->commandStatus().has_value(); }, 50);
        !r)
        return fail(r.error().describe());
    auto st = s->stop(cb);
    if (!st)
        return fail(st.error().describe());
    const auto status = s->commandStatus();
    if (!status || *status != 0)
        return fail(status ? fmt::format("workload {}", HeldCommand::describeStatus(*status))
                           : std::string("workload did not end"));
    auto ns = readElapsed(out);
    std::filesystem::remove(out);
    if (!ns)
        return fail(ns.error().describe());
    Measure m;
    m.elapsed_ns = *ns;
    m.hits = st->probes.at(0).hits;
    m.records = events;
    return measured(m);
}

}  // namespace

Outcome runPtrace(const Workload& w) {
    return ptraceRun(w, false);
}

Outcome runPtraceSeccomp(const Workload& w) {
    return ptraceRun(w, true);
}

}  // namespace probectl::cli::bench
