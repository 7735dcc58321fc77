// Perfetto's protobuf trace (TracePacket stream), the fields listed with their numbers in
// Documentation/perfetto_trace.proto, which also describes the packet order.
#include <cerrno>
#include <map>
#include <ostream>

#include "export/export_fields.hpp"
#include "export/interner.hpp"
#include "export/proto_encoder.hpp"
#include "export/stream_writer.hpp"
#include "export/thread_names.hpp"
#include "output/json_text.hpp"
#include "probectl/trace_export.hpp"

namespace probectl {

namespace {

using exporter::Field;
using exporter::ProtoEncoder;

// Field numbers (Documentation/perfetto_trace.proto).
namespace f {
constexpr std::uint32_t kTracePacket = 1;
constexpr std::uint32_t kTimestamp = 8, kClockId = 58, kClockSnapshot = 6, kTrackEvent = 11,
                        kTrackDescriptor = 60, kSequenceId = 10, kInterned = 12,
                        kSequenceFlags = 13;
constexpr std::uint32_t kSnapClocks = 1, kSnapClockId = 1, kSnapClockTs = 2;
constexpr std::uint32_t kTdUuid = 1, kTdParent = 5, kTdName = 2, kTdProcess = 3, kTdThread = 4,
                        kTdCounter = 8;
constexpr std::uint32_t kPdPid = 1, kPdName = 6;
constexpr std::uint32_t kThPid = 1, kThTid = 2, kThName = 5;
constexpr std::uint32_t kTeCategoryIids = 3, kTeNameIid = 10, kTeType = 9, kTeTrack = 11,
                        kTeCounter = 30, kTeAnnotations = 4;
constexpr std::uint32_t kDaNameIid = 1, kDaUint = 3, kDaInt = 4, kDaPointer = 7, kDaString = 6,
                        kDaStringIid = 17;
constexpr std::uint32_t kIdCategories = 1, kIdNames = 2, kIdAnnotationNames = 3, kIdStrings = 29;
}  // namespace f

constexpr std::uint64_t kClockMonotonic = 3, kClockBoottime = 6;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
constexpr std::uint32_t kSeqCleared = 1, kSeqNeedsState = 2;
constexpr std::uint32_t kSequence = 1;
// Track uuids: disjoint ranges for processes, threads and counters.
constexpr std::uint64_t kProcessTrack = 1ull << 32, kThreadTrack = 2ull << 32,
                        kCounterTrack = 3ull << 32, kCallerCounterTrack = 4ull << 32;
// Interned string values: at most this many, each at most this long.
constexpr std::size_t kMaxInternedValues = 4096, kMaxInternedValueLen = 128;

class PerfettoWriter final : public exporter::StreamTraceWriter {
  public:
    explicit PerfettoWriter(std::ostream& out)
        : StreamTraceWriter(out), values_(kMaxInternedValues) {}

    Result<void> begin(std::uint64_t t0_ns, const TraceClocks& clocks) override {
        t_first_ = t_last_ = t0_ns;
        buf_.clear();
        ProtoEncoder p(buf_);
        const auto pkt = p.open(f::kTracePacket);
        p.varint(f::kTimestamp, clocks.boottime_ns);
        const auto snap = p.open(f::kClockSnapshot);
        for (auto [id, ts] : {std::pair{kClockMonotonic, clocks.monotonic_ns},
                              std::pair{kClockBoottime, clocks.boottime_ns}}) {
            const auto c = p.open(f::kSnapClocks);
            p.varint(f::kSnapClockId, id);
            p.varint(f::kSnapClockTs, ts);
            p.close(c);
        }
        p.close(snap);
        p.varint(f::kSequenceId, kSequence);
        p.varint(f::kSequenceFlags, kSeqCleared);
        p.close(pkt);
        return write();
    }

    Result<void> event(const Event& ev) override {
        buf_.clear();
        ProtoEncoder p(buf_);
        const auto seen = names_.see(ev);
        if (seen.name_process) {
            const auto pkt = p.open(f::kTracePacket);
            const auto td = p.open(f::kTrackDescriptor);
            p.varint(f::kTdUuid, kProcessTrack | ev.tgid);
            const auto pd = p.open(f::kTdProcess);
            p.varint(f::kPdPid, ev.tgid);
            p.bytes(f::kPdName, json::validUtf8(ev.comm));
            p.close(pd);
            p.close(td);
            p.varint(f::kSequenceId, kSequence);
            p.close(pkt);
        }
        if (seen.name_thread) {
            const auto pkt = p.open(f::kTracePacket);
            const auto td = p.open(f::kTrackDescriptor);
            p.varint(f::kTdUuid, kThreadTrack | ev.pid);
            p.varint(f::kTdParent, kProcessTrack | ev.tgid);
            const auto th = p.open(f::kTdThread);
            p.varint(f::kThPid, ev.tgid);
            p.varint(f::kThTid, ev.pid);
            p.bytes(f::kThName, json::validUtf8(ev.comm));
            p.close(th);
            p.close(td);
            p.varint(f::kSequenceId, kSequence);
            p.close(pkt);
        }
        const bool slice = exporter::isSlice(ev);
        const std::uint64_t start = slice ? exporter::sliceStart(ev) : ev.timestamp_ns;
        t_first_ = seen_event_ ? std::min(t_first_, start) : start;
        seen_event_ = true;
        t_last_ = std::max(t_last_, ev.timestamp_ns);
        const std::uint64_t track = kThreadTrack | ev.pid;

        interned_.clear();
        ProtoEncoder in(interned_);
        const auto pkt = p.open(f::kTracePacket);
        p.varint(f::kTimestamp, start);
        p.varint(f::kClockId, kClockMonotonic);
        const auto te = p.open(f::kTrackEvent);
        p.varint(f::kTeType, slice ? kSliceBegin : kInstant);
        p.varint(f::kTeTrack, track);
        p.varint(f::kTeCategoryIids,
                 internInto(in, categories_, f::kIdCategories, exporter::eventKind(ev)));
        p.varint(f::kTeNameIid,
                 internInto(in, event_names_, f::kIdNames, exporter::eventName(ev, scratch_)));
        auto annotate = [&](const Field& fl) {
            const auto da = p.open(f::kTeAnnotations);
            p.varint(f::kDaNameIid,
                     internInto(in, annotation_names_, f::kIdAnnotationNames, fl.name));
            annotationValue(p, in, fl);
            p.close(da);
        };
        // Protobuf strings must be UTF-8 (trace_processor and protoc refuse others): U+FFFD
        // for the bytes that are not, and their exact bytes in hex beside, under NAME_bytes,
        // as the JSON and Chrome writers keep them.
        auto annotateBytes = [&](std::string_view name, std::string_view bytes) {
            bytes_name_.assign(name);
            bytes_name_ += json::kBytesSuffix;
            bytes_hex_ = json::hexBytes(bytes);
            annotate(Field{bytes_name_, Field::Kind::String, 0, bytes_hex_, Field::Kind::String});
        };
        exporter::forEachField(ev, field_scratch_, [&](const Field& fl) {
            const bool text = fl.kind == Field::Kind::String || fl.kind == Field::Kind::Fault;
            if (!text || json::isUtf8(fl.str)) {
                annotate(fl);
                return;
            }
            Field shown = fl;
            const std::string valid = json::validUtf8(fl.str);
            shown.str = valid;
            annotate(shown);
            annotateBytes(fl.name, fl.str);
        });
        // The thread's name, when it is not UTF-8: its track shows it with U+FFFD.
        if (!json::isUtf8(ev.comm))
            annotateBytes("comm", ev.comm);
        p.close(te);
        p.varint(f::kSequenceId, kSequence);
        p.varint(f::kSequenceFlags, kSeqNeedsState);
        if (!interned_.empty())
            p.bytes(f::kInterned, interned_);
        p.close(pkt);
        if (slice) {
            const auto end = p.open(f::kTracePacket);
            p.varint(f::kTimestamp, ev.timestamp_ns);
            p.varint(f::kClockId, kClockMonotonic);
            const auto te_end = p.open(f::kTrackEvent);
            p.varint(f::kTeType, kSliceEnd);
            p.varint(f::kTeTrack, track);
            p.close(te_end);
            p.varint(f::kSequenceId, kSequence);
            p.varint(f::kSequenceFlags, kSeqNeedsState);
            p.close(end);
        }
        return write();
    }

    Result<void> counter(std::string_view track, std::uint64_t ts, std::int64_t v) override {
        buf_.clear();
        t_last_ = std::max(t_last_, ts);
        auto it = counter_tracks_.find(track);
        if (it == counter_tracks_.end()) {
            const std::uint64_t uuid = kCallerCounterTrack | counter_tracks_.size();
            it = counter_tracks_.emplace(std::string(track), uuid).first;
            describeCounter(uuid, track);
        }
        counterSample(it->second, ts, v);
        return write();
    }

    Result<void> finish(const SessionStats& stats) override {
        buf_.clear();
        std::uint64_t n = 0;
        for (const auto& pr : stats.probes)
            counterTrack(kCounterTrack | n++, "dropped: " + pr.spec, pr.dropped);
        counterTrack(kCounterTrack | n++, "lost records", stats.lost);
        // Calls that never returned (exit(), longjmp) have no slice: their count is the trace
        // of them.
        for (const auto& pr : stats.probes)
            if (pr.unreturned)
                counterTrack(kCounterTrack | n++, "unreturned: " + pr.spec, pr.unreturned);
        if (auto r = write(); !r)
            return r;
        return flush();
    }

  private:
    // The iid of `s` in `table`; a new one is added to the packet's InternedData.
    std::uint64_t internInto(ProtoEncoder& in, exporter::Interner& table, std::uint32_t field,
                             std::string_view s) {
        const auto id = table.intern(s);
        if (id.is_new) {
            const auto e = in.open(field);
            in.varint(1, id.iid);  // iid
            in.bytes(2, s);        // name / str
            in.close(e);
        }
        return id.iid;
    }
    void annotationValue(ProtoEncoder& p, ProtoEncoder& in, const Field& fl) {
        switch (fl.kind) {
            case Field::Kind::Unsigned:
                p.varint(f::kDaUint, fl.u);
                return;
            case Field::Kind::Signed:
                p.int64(f::kDaInt, fl.s());
                return;
            case Field::Kind::Hex:
                p.varint(f::kDaPointer, fl.u);
                return;
            case Field::Kind::Fault:
            case Field::Kind::String:
                if (fl.str.size() <= kMaxInternedValueLen) {
                    if (auto iid = internInto(in, values_, f::kIdStrings, fl.str)) {
                        p.varint(f::kDaStringIid, iid);
                        return;
                    }
                }
                p.bytes(f::kDaString, fl.str);
                return;
        }
    }
    void counterTrack(std::uint64_t uuid, const std::string& name, std::uint64_t total) {
        describeCounter(uuid, name);
        // Steps from 0 at the first event to the total at the last: drops are known only
        // as totals.
        counterSample(uuid, t_first_, 0);
        counterSample(uuid, t_last_, static_cast<std::int64_t>(total));
    }
    void describeCounter(std::uint64_t uuid, std::string_view name) {
        ProtoEncoder p(buf_);
        const auto pkt = p.open(f::kTracePacket);
        const auto td = p.open(f::kTrackDescriptor);
        p.varint(f::kTdUuid, uuid);
        p.bytes(f::kTdName, name);
        p.close(p.open(f::kTdCounter));
        p.close(td);
        p.varint(f::kSequenceId, kSequence);
        p.close(pkt);
    }
    void counterSample(std::uint64_t uuid, std::uint64_t ts, std::int64_t v) {
        ProtoEncoder p(buf_);
        const auto pkt = p.open(f::kTracePacket);
        p.varint(f::kTimestamp, ts);
        p.varint(f::kClockId, kClockMonotonic);
        const auto te = p.open(f::kTrackEvent);
        p.varint(f::kTeType, kCounter);
        p.varint(f::kTeTrack, uuid);
        p.int64(f::kTeCounter, v);
        p.close(te);
        p.varint(f::kSequenceId, kSequence);
        p.varint(f::kSequenceFlags, kSeqNeedsState);
        p.close(pkt);
    }
    std::string interned_, scratch_, field_scratch_;
    std::string bytes_name_, bytes_hex_;
    exporter::ThreadNames names_;
    exporter::Interner categories_, event_names_, annotation_names_, values_;
    std::map<std::string, std::uint64_t, std::less<>> counter_tracks_;  // name -> uuid
    std::uint64_t t_first_ = 0, t_last_ = 0;
    bool seen_event_ = false;
};

}  // namespace

std::unique_ptr<TraceWriter> perfettoTraceWriter(std::ostream& out) {
    return std::make_unique<PerfettoWriter>(out);
}

}  // namespace probectl
