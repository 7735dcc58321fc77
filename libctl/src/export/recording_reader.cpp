// The recording reader (layout: probectl/recording.hpp): one block in memory at a time.
#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "export/recording_wire.hpp"
#include "probectl/counters.hpp"
#include "probectl/recording.hpp"

namespace probectl {

using namespace recording;

namespace {

// ProbeStats' counter of that name (PROBECTL_TRACE_COUNTERS), null for one this build does
// not know (a newer recording's).
std::uint64_t* counterOf(ProbeStats& p, std::string_view name) {
#define PROBECTL_COUNTER_FIND(member) \
    if (name == #member)              \
        return &p.member;
    PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_FIND)
#undef PROBECTL_COUNTER_FIND
    return nullptr;
}

struct ProbeDef {
    std::string spec;
    std::vector<FetchedValue> values;  // names, types, array lengths
    std::unique_ptr<SyscallPlan> syscall;
};

}  // namespace

struct RecordingReader::Impl {
    std::ifstream in;
    RecordingInfo info;
    std::string block;
    Cursor cur{nullptr, nullptr};
    std::uint32_t blocks = 0;
    std::uint64_t offset = kHeaderBytes;  // of the next block
    std::map<std::uint32_t, ProbeDef> probes;
    std::optional<SessionStats> summary;
    std::string note;
    bool done = false;

    // The next block into `block`; false at the end (a note says why, if early).
    bool nextBlock() {
        char head[kBlockHeaderBytes];
        in.read(head, sizeof(head));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0)
            return end("");
        if (got < sizeof(head))
            return end("block header");
        std::uint32_t magic = 0, len = 0, crc = 0;
        std::memcpy(&magic, head, 4);
        std::memcpy(&len, head + 4, 4);
        std::memcpy(&crc, head + 8, 4);
        // Zeros where a block should start: space the file system gave but the writer never
        // filled (power loss), the same as cut short.
        if (std::all_of(head, head + sizeof(head), [](char c) { return c == 0; }))
            return end("block header");
        std::uint32_t head_crc = 0;
        std::memcpy(&head_crc, head + 12, 4);
        // A checksum tells which bytes hold the damage, not which byte: the range is named.
        const std::uint64_t body = offset + sizeof(head);
        if (magic != kBlockMagic)
            return damage("no block starts there", offset, body - 1);
        // Version 2 checks the length too: one past the end is damage, not a cut.
        if (version >= 2 && ::crc32(0, reinterpret_cast<const Bytef*>(head), 12) != head_crc)
            return damage("the block header's checksum does not match", offset, body - 1);
        if (len > kBlockMaxBytes)
            return damage(fmt::format("a block of {} bytes", len), offset, body - 1);
        block.resize(len);
        in.read(block.data(), len);
        if (static_cast<std::size_t>(in.gcount()) != len)
            return end("block");
        if (::crc32(0, reinterpret_cast<const Bytef*>(block.data()), len) != crc)
            return damage("the block's checksum does not match", body, body + len - 1);
        cur = Cursor{block.data(), block.data() + block.size()};
        ++blocks;
        offset += sizeof(head) + len;
        return true;
    }
    bool end(const char* what) {
        done = true;
        if (*what || !summary)
            note = fmt::format("recording ends at byte {} after {} complete block{}{}{}", offset,
                               blocks, blocks == 1 ? "" : "s",
                               *what ? fmt::format(" (incomplete {} there)", what) : "",
                               summary ? "" : ": no summary, the trace was cut short");
        return false;
    }
    // `first` to `last`: the bytes the damage is in.
    bool damage(const std::string& what, std::uint64_t first, std::uint64_t last) {
        done = true;
        damaged = true;
        note =
            fmt::format("recording damaged in bytes {} to {} ({}); {} complete block{} before it",
                        first, last, what, blocks, blocks == 1 ? "" : "s");
        return false;
    }
    bool damaged = false;
    int version = 0;

    void readProbe() {
        const auto id = cur.get<std::uint32_t>();
        ProbeDef d;
        d.spec = cur.str();
        const std::string_view sys = cur.str();
        if (!sys.empty())
            d.syscall =
                std::make_unique<SyscallPlan>(syscallPlan(sys, systemSyscallTable().find(sys)));
        const auto n = cur.get<std::uint16_t>();
        for (std::uint16_t i = 0; i < n && !cur.bad; ++i) {
            FetchedValue v;
            v.name = cur.str();
            v.type = static_cast<FetchType>(cur.get<std::uint8_t>());
            v.array_len = cur.get<std::uint32_t>();
            d.values.push_back(std::move(v));
        }
        probes[id] = std::move(d);
    }

    // Tag 5 names its counters; tags 3 and 4 (older recordings) have a fixed list, 4 with
    // unreturned after the others.
    void readSummary(std::uint8_t tag) {
        std::vector<std::string> names;
        if (tag == kTagSummaryNamed) {
            const auto k = cur.get<std::uint16_t>();
            for (std::uint16_t i = 0; i < k && !cur.bad; ++i)
                names.emplace_back(cur.str());
        } else {
            names = {"hits", "delivered", "dropped", "nmissed", "filtered", "rejected"};
            if (tag == kTagSummaryUnreturned)
                names.emplace_back("unreturned");
        }
        SessionStats s;
        const auto n = cur.get<std::uint32_t>();
        for (std::uint32_t i = 0; i < n && !cur.bad; ++i) {
            ProbeStats p;
            p.id = cur.get<std::uint32_t>();
            p.spec = cur.str();
            for (const auto& name : names) {
                const auto v = cur.get<std::uint64_t>();
                if (std::uint64_t* c = counterOf(p, name))
                    *c = v;
            }
            s.probes.push_back(std::move(p));
        }
        s.lost = cur.get<std::uint64_t>();
        s.overruns = cur.get<std::uint64_t>();
        summary = std::move(s);
    }

    void readEvent(Event& ev) {
        ev.probe_id = cur.get<std::uint32_t>();
        const auto def = probes.find(ev.probe_id);
        ev.spec = def != probes.end() ? std::string_view(def->second.spec) : std::string_view();
        ev.syscall = def != probes.end() ? def->second.syscall.get() : nullptr;
        ev.timestamp_ns = cur.get<std::uint64_t>();
        ev.cpu = cur.get<std::uint32_t>();
        ev.pid = cur.get<std::uint32_t>();
        ev.tgid = cur.get<std::uint32_t>();
        ev.comm = cur.str();
        ev.ip = cur.get<std::uint64_t>();
        for (auto& a : ev.args)
            a = cur.get<std::uint64_t>();
        ev.retval = cur.get<std::uint64_t>();
        ev.latency_ns = cur.get<std::uint64_t>();
        const auto flags = cur.get<std::uint8_t>();
        ev.is_return = flags & kEvReturn;
        ev.syscall_returned = flags & kEvSyscallReturned;
        if (flags & kEvNoRetval)
            ev.parts &= ~kRecordPartRetval;
        ev.fetched.resize(cur.get<std::uint16_t>());
        for (auto& r : ev.fetched) {
            r.flags = cur.get<std::uint8_t>();
            const auto b = cur.str();
            r.bytes.assign(b.begin(), b.end());
        }
        ev.values.resize(cur.get<std::uint16_t>());
        for (std::size_t i = 0; i < ev.values.size(); ++i) {
            FetchedValue& v = ev.values[i];
            if (def != probes.end() && i < def->second.values.size()) {
                const FetchedValue& d = def->second.values[i];
                v.name = d.name;
                v.type = d.type;
                v.array_len = d.array_len;
            }
            const auto vf = cur.get<std::uint8_t>();
            v.faulted = vf & kValFaulted;
            v.truncated = vf & kValTruncated;
            v.raw = 0;
            v.str.clear();
            v.array.clear();
            if (v.array_len) {
                v.array.resize(cur.get<std::uint32_t>());
                for (auto& x : v.array)
                    x = cur.get<std::uint64_t>();
            } else if (isStringType(v.type)) {
                v.str = cur.str();
            } else {
                v.raw = cur.get<std::uint64_t>();
            }
        }
    }
};

namespace {

// What `path` is when it is no regular file ("a character device"); "" for a regular file,
// or when stat fails (the read that follows says what failed).
std::string notRegularFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
        return "";
    if (S_ISCHR(st.st_mode))
        return "a character device";
    if (S_ISBLK(st.st_mode))
        return "a block device";
    if (S_ISFIFO(st.st_mode))
        return "a pipe";
    if (S_ISSOCK(st.st_mode))
        return "a socket";
    return "not a regular file";
}

}  // namespace

Result<RecordingReader> RecordingReader::open(const std::string& path) {
    // A directory opens as a stream that reads nothing: say what it is, not "not a recording".
    if (std::error_code ec; std::filesystem::is_directory(path, ec))
        return makeError(EISDIR, fmt::format("{} is a directory: a recording is one file, the "
                                             "one `probectl record -o FILE` writes",
                                             path));
    auto impl = std::make_unique<Impl>();
    impl->in.open(path, std::ios::binary);
    if (!impl->in)
        return makeError(errno ? errno : ENOENT, fmt::format("cannot read {}", path));
    char head[kHeaderBytes];
    impl->in.read(head, sizeof(head));
    const auto got = static_cast<std::size_t>(impl->in.gcount());
    // A file that ends inside a header that starts right was cut, not some other file.
    const std::size_t magic = std::min(got, sizeof(kMagic) - 1);
    // An empty file is no other file either: a record that wrote nothing (killed before its
    // header, or the file truncated since).
    // A device, pipe or socket (/dev/null) is no file `record -o` could fill again: it is
    // named as what it is, and the advice is to give the recording instead.
    const std::string kind = notRegularFile(path);
    if (got == 0 && !kind.empty())
        return makeError(EBADMSG, fmt::format("{} is {} and read nothing (0 bytes): no recording "
                                              "in it; give the file that `probectl record -o "
                                              "FILE` wrote",
                                              path, kind));
    if (got == 0)
        return makeError(EBADMSG, fmt::format("{} is empty (0 bytes): no recording in it; "
                                              "`probectl record -o {}` writes one",
                                              path, path));
    if (got > 0 && got < sizeof(head) && std::memcmp(head, kMagic, magic) == 0)
        return makeError(EBADMSG, fmt::format("{}: recording cut short in its header ({} of {} "
                                              "bytes): it holds nothing to read",
                                              path, got, sizeof(head)));
    if (got != sizeof(head) || std::memcmp(head, kMagic, sizeof(kMagic) - 1) != 0)
        return makeError(
            EBADMSG,
            fmt::format("{} is {}not a probectl recording (a recording starts with the bytes "
                        "\"{}\"); give the file that `probectl record -o FILE` wrote",
                        path, kind.empty() ? std::string() : kind + " whose bytes are ",
                        std::string_view(kMagic, sizeof(kMagic) - 1)));
    const int version = head[sizeof(kMagic) - 1];
    if (version < 1 || version > kMagic[sizeof(kMagic) - 1])
        return makeError(EPROTONOSUPPORT,
                         fmt::format("{} is a recording of version {}: this probectl reads "
                                     "versions 1 to {}",
                                     path, version, static_cast<int>(kMagic[sizeof(kMagic) - 1])));
    impl->version = version;
    if (version >= 2) {
        std::uint32_t crc = 0;
        std::memcpy(&crc, head + kHeaderCrcAt, sizeof(crc));
        std::memset(head + kHeaderCrcAt, 0, sizeof(crc));
        if (::crc32(0, reinterpret_cast<const Bytef*>(head), sizeof(head)) != crc)
            return makeError(EBADMSG, fmt::format("{}: recording damaged in its header (bytes 0 "
                                                  "to {}: the checksum does not match)",
                                                  path, kHeaderBytes - 1));
    }
    Cursor c{head + sizeof(kMagic), head + sizeof(head)};
    impl->info.flags = c.get<std::uint32_t>();
    c.get<std::uint32_t>();
    impl->info.t0_ns = c.get<std::uint64_t>();
    impl->info.clocks.monotonic_ns = c.get<std::uint64_t>();
    impl->info.clocks.boottime_ns = c.get<std::uint64_t>();
    impl->info.clocks.realtime_ns = c.get<std::uint64_t>();
    return RecordingReader(std::move(impl));
}

RecordingReader::RecordingReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordingReader::RecordingReader(RecordingReader&&) noexcept = default;
RecordingReader& RecordingReader::operator=(RecordingReader&&) noexcept = default;
RecordingReader::~RecordingReader() = default;

const RecordingInfo& RecordingReader::info() const {
    return impl_->info;
}
const std::optional<SessionStats>& RecordingReader::summary() const {
    return impl_->summary;
}
std::uint64_t RecordingReader::offset() const {
    return impl_->offset;
}
const std::string& RecordingReader::note() const {
    return impl_->note;
}
bool RecordingReader::damaged() const {
    return impl_->damaged;
}

bool RecordingReader::next(Event& ev) {
    Impl& m = *impl_;
    while (!m.done) {
        if (m.cur.p == m.cur.end && !m.nextBlock())
            return false;
        const auto tag = m.cur.get<std::uint8_t>();
        if (tag == kTagProbe)
            m.readProbe();
        else if (tag == kTagSummary || tag == kTagSummaryUnreturned || tag == kTagSummaryNamed)
            m.readSummary(tag);
        else if (tag == kTagEvent)
            m.readEvent(ev);
        else
            m.cur.bad = true;
        // The CRC matched, so a bad entry is a writer of another version: stop there.
        if (m.cur.bad) {
            m.offset -= kBlockHeaderBytes + m.block.size();
            --m.blocks;
            const std::uint64_t body = m.offset + kBlockHeaderBytes;
            return m.damage("an entry this reader does not know", body, body + m.block.size() - 1);
        }
        if (tag == kTagEvent)
            return true;
    }
    return false;
}

}  // namespace probectl
