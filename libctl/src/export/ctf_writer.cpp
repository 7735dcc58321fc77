// A CTF 1.8 trace directory (Common Trace Format 1.8.3, the version babeltrace2 2.0 reads):
// `metadata` (TSDL text), and `stream_CPU`, one stream per CPU, each a run of packets of at
// most kPacketBytes. Little-endian, every field byte-aligned, so nothing is padded.
//   packet header:  magic, trace uuid, stream id (one stream class, id 0)
//   packet context: timestamp_begin/end, content_size/packet_size (bits), events_discarded
//                   (the stream's running total, from which readers report losses), cpu_id
//   event header:   event class id, timestamp (the monotonic clock, ns)
//   event payload:  _tid _pid _comm _ip, then the event's fields (export_fields.hpp) with
//                   their types, and `_faults` (bit i: field i's read faulted, 0 written)
// Field names carry CTF's escape underscore (readers strip it), so a fetch argument may be
// called like a TSDL keyword. The metadata is written by finish(): event classes are known
// only as probes first hit.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "export/export_fields.hpp"
#include "probectl/trace_export.hpp"
#include "uapi/probectl.h"

namespace probectl {

namespace {

using exporter::Field;

constexpr std::size_t kPacketBytes = 64 * 1024;
constexpr std::size_t kPacketHeaderBytes = 4 + 16 + 4;              // magic, uuid, stream_id
constexpr std::size_t kContextBytes = 8 * 5 + 4;                    // see the packet context above
constexpr std::size_t kContentOffset = kPacketHeaderBytes + 2 * 8;  // content_size's offset
constexpr std::uint32_t kCtfMagic = 0xc1fc1fc1;

void put(std::vector<std::uint8_t>& b, const void* p, std::size_t n) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    b.insert(b.end(), c, c + n);
}
template <class T>
void putInt(std::vector<std::uint8_t>& b, T v) {
    put(b, &v, sizeof(v));  // x86-64: already little-endian
}
template <class T>
void patch(std::vector<std::uint8_t>& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(v));
}
void putString(std::vector<std::uint8_t>& b, std::string_view s) {
    put(b, s.data(), std::min(s.size(), s.find('\0')));
    b.push_back(0);
}

// A field name as a TSDL identifier with CTF's leading escape underscore.
std::string ctfName(std::string_view name) {
    std::string out = "_";
    for (char c : name)
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    return out;
}
std::string tsdlString(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
    return out + '"';
}
const char* tsdlType(Field::Kind k) {
    switch (k) {
        case Field::Kind::Signed:
            return "int64_t";
        case Field::Kind::Hex:
            return "x64_t";
        case Field::Kind::String:
        case Field::Kind::Fault:
            return "string";
        case Field::Kind::Unsigned:
            break;
    }
    return "uint64_t";
}

struct EventClass {
    std::uint32_t id = 0;
    std::vector<Field::Kind> fields;  // declared kinds, in order
};

struct Stream {
    int fd = -1;
    std::uint32_t cpu = 0;
    std::vector<std::uint8_t> buf;  // the packet being filled
    std::uint64_t first_ts = 0, last_ts = 0;
    std::size_t events = 0;
};

class CtfWriter final : public TraceWriter {
  public:
    explicit CtfWriter(std::string dir) : dir_(std::move(dir)) {
        std::random_device rd;
        for (auto& b : uuid_)
            b = static_cast<std::uint8_t>(rd());
    }
    ~CtfWriter() override {
        for (auto& [cpu, s] : streams_)
            if (s.fd >= 0)
                ::close(s.fd);
    }

    Result<void> begin(std::uint64_t, const TraceClocks& clocks) override {
        clocks_ = clocks;
        return {};
    }

    Result<void> event(const Event& ev) override {
        auto cls = classes_.find(ev.probe_id);
        if (cls == classes_.end())
            cls = addClass(ev);
        auto s = stream(ev.cpu);
        if (!s)
            return std::move(s).error();
        Stream& st = **s;
        if (st.buf.size() >= kPacketBytes)
            if (auto r = flushPacket(st, 0); !r)
                return r;
        if (st.buf.empty())
            openPacket(st);
        // Time never goes back within a stream (readers require it); a record stamped
        // before the previous one of its CPU takes that one's time.
        const std::uint64_t ts = std::max(ev.timestamp_ns, st.last_ts);
        if (!st.events)
            st.first_ts = ts;
        st.last_ts = ts;
        ++st.events;
        putInt(st.buf, cls->second.id);
        putInt(st.buf, ts);
        putInt(st.buf, ev.pid);
        putInt(st.buf, ev.tgid);
        putString(st.buf, ev.comm);
        putInt(st.buf, ev.ip);
        std::size_t i = 0;
        std::uint64_t faults = 0;
        const auto& kinds = cls->second.fields;
        exporter::forEachField(ev, scratch_, [&](const Field& f) {
            if (i >= kinds.size())
                return;  // not this probe's shape (cannot happen for one probe id)
            const bool is_string = kinds[i] == Field::Kind::String;
            if (f.kind == Field::Kind::Fault)
                faults |= 1ull << i;
            if (is_string)
                putString(st.buf, f.kind == Field::Kind::String ? f.str : std::string_view());
            else
                putInt(st.buf, f.kind == Field::Kind::Fault || f.kind == Field::Kind::String
                                   ? std::uint64_t{0}
                                   : f.u);
            ++i;
        });
        for (; i < kinds.size(); ++i) {
            if (kinds[i] == Field::Kind::String)
                st.buf.push_back(0);
            else
                putInt(st.buf, std::uint64_t{0});
        }
        putInt(st.buf, faults);
        return {};
    }

    Result<void> finish(const SessionStats& stats) override {
        std::uint64_t discarded = stats.lost;
        for (const auto& p : stats.probes)
            discarded += p.dropped;
        for (auto& [cpu, st] : streams_)
            if (!st.buf.empty())
                if (auto r = flushPacket(st, 0); !r)
                    return r;
        if (discarded) {
            // An empty last packet carrying the total: readers report the difference from
            // the packet before it as discarded events.
            auto s = stream(streams_.empty() ? 0 : streams_.begin()->first);
            if (!s)
                return std::move(s).error();
            openPacket(**s);
            (*s)->first_ts = (*s)->last_ts;
            if (auto r = flushPacket(**s, discarded); !r)
                return r;
        }
        return writeMetadata();
    }

  private:
    std::map<std::uint32_t, EventClass>::iterator addClass(const Event& ev) {
        EventClass c;
        c.id = static_cast<std::uint32_t>(classes_.size());
        std::string fields;
        exporter::forEachField(ev, scratch_, [&](const Field& f) {
            c.fields.push_back(f.type);
            fields += fmt::format("\t\t{} {};\n", tsdlType(f.type), ctfName(f.name));
        });
        events_tsdl_ += fmt::format(
            "event {{\n\tname = {};\n\tid = {};\n\tstream_id = 0;\n\tfields := struct {{\n"
            "\t\tuint32_t _tid;\n\t\tuint32_t _pid;\n\t\tstring _comm;\n\t\tx64_t _ip;\n{}"
            "\t\tuint64_t _faults;\n\t}};\n}};\n\n",
            tsdlString(exporter::eventName(ev, scratch_)), c.id, fields);
        return classes_.emplace(ev.probe_id, std::move(c)).first;
    }

    Result<Stream*> stream(std::uint32_t cpu) {
        auto [it, inserted] = streams_.try_emplace(cpu);
        Stream& s = it->second;
        if (inserted) {
            s.cpu = cpu;
            const std::string path = fmt::format("{}/stream_{}", dir_, cpu);
            s.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (s.fd < 0) {
                const int e = errno;
                streams_.erase(it);
                return makeError(e, fmt::format("cannot write {}", path));
            }
            s.buf.reserve(kPacketBytes + PROBECTL_RECORD_MAX * 2);
        }
        return &s;
    }

    void openPacket(Stream& st) {
        st.buf.clear();
        st.events = 0;
        putInt(st.buf, kCtfMagic);
        put(st.buf, uuid_, sizeof(uuid_));
        putInt(st.buf, std::uint32_t{0});
        st.buf.resize(kPacketHeaderBytes + kContextBytes);  // filled by flushPacket
    }

    Result<void> flushPacket(Stream& st, std::uint64_t discarded) {
        const std::uint64_t bits = st.buf.size() * 8;
        patch(st.buf, kPacketHeaderBytes, st.first_ts);
        patch(st.buf, kPacketHeaderBytes + 8, st.last_ts);
        patch(st.buf, kContentOffset, bits);
        patch(st.buf, kContentOffset + 8, bits);
        patch(st.buf, kContentOffset + 16, discarded ? discarded : discarded_so_far_);
        patch(st.buf, kContentOffset + 24, st.cpu);
        for (std::size_t at = 0; at < st.buf.size();) {
            const ssize_t n = ::write(st.fd, st.buf.data() + at, st.buf.size() - at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return makeError(n < 0 ? errno : EIO,
                                 fmt::format("cannot write {}/stream_{}", dir_, st.cpu));
            at += static_cast<std::size_t>(n);
        }
        st.buf.clear();
        return {};
    }

    Result<void> writeMetadata() {
        std::string uuid;
        for (std::size_t i = 0; i < sizeof(uuid_); ++i)
            uuid += fmt::format("{}{:02x}", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "",
                                uuid_[i]);
        // The clock's offset puts CLOCK_MONOTONIC on the wall clock of the trace's start.
        const std::int64_t offset = static_cast<std::int64_t>(clocks_.realtime_ns) -
                                    static_cast<std::int64_t>(clocks_.monotonic_ns);
        std::string text = fmt::format(
            "/* CTF 1.8 */\n\n"
            "typealias integer {{ size = 8; align = 8; signed = false; }} := uint8_t;\n"
            "typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;\n"
            "typealias integer {{ size = 64; align = 8; signed = false; }} := uint64_t;\n"
            "typealias integer {{ size = 64; align = 8; signed = true; }} := int64_t;\n"
            "typealias integer {{ size = 64; align = 8; signed = false; base = 16; }} := x64_t;\n\n"
            "trace {{\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"{}\";\n\tbyte_order = le;\n"
            "\tpacket.header := struct {{\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
            "\t\tuint32_t stream_id;\n\t}};\n}};\n\n"
            "env {{\n\ttracer_name = \"probectl\";\n\tdomain = \"probectl\";\n}};\n\n"
            "clock {{\n\tname = \"monotonic\";\n\tuuid = \"{}\";\n"
            "\tdescription = \"CLOCK_MONOTONIC\";\n\tfreq = 1000000000;\n\tprecision = 1;\n"
            "\toffset_s = {};\n\toffset = {};\n\tabsolute = false;\n}};\n\n"
            "typealias integer {{ size = 64; align = 8; signed = false; "
            "map = clock.monotonic.value; }} := clock_t;\n\n"
            "stream {{\n\tid = 0;\n\tpacket.context := struct {{\n"
            "\t\tclock_t timestamp_begin;\n\t\tclock_t timestamp_end;\n"
            "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
            "\t\tuint64_t events_discarded;\n\t\tuint32_t cpu_id;\n\t}};\n"
            "\tevent.header := struct {{\n\t\tuint32_t id;\n\t\tclock_t timestamp;\n\t}};\n}};\n\n",
            uuid, uuid, offset / 1000000000, offset % 1000000000);
        text += events_tsdl_;
        const std::string path = dir_ + "/metadata";
        // write(2), not a stream: a full disk's ENOSPC is said, not a stream's EIO.
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return makeError(errno, fmt::format("cannot write {}", path));
        int err = 0;
        for (std::size_t at = 0; at < text.size() && !err;) {
            const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                err = n < 0 ? errno : EIO;
            else
                at += static_cast<std::size_t>(n);
        }
        if (::close(fd) != 0 && !err)
            err = errno;
        if (err)
            return makeError(err, fmt::format("cannot write {}", path));
        return {};
    }

    std::string dir_;
    std::uint8_t uuid_[16];
    TraceClocks clocks_;
    std::map<std::uint32_t, EventClass> classes_;  // by probe id
    std::map<std::uint32_t, Stream> streams_;      // by CPU
    std::string events_tsdl_, scratch_;
    std::uint64_t discarded_so_far_ = 0;
};

}  // namespace

Result<std::unique_ptr<TraceWriter>> ctfTraceWriter(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0777) < 0 && errno != EEXIST)
        return makeError(errno, fmt::format("cannot create {}", dir));
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return makeError(errno, fmt::format("cannot open {}", dir));
    bool empty = true;
    while (const dirent* e = ::readdir(d))
        empty &= std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0;
    ::closedir(d);
    // Streams of an earlier trace would be read as part of this one.
    if (!empty)
        return makeError(EEXIST, fmt::format("{} is not empty", dir));
    return std::unique_ptr<TraceWriter>(std::make_unique<CtfWriter>(dir));
}

}  // namespace probectl
