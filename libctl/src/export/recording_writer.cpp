// The recording writer (layout: probectl/recording.hpp).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string_view>
#include <unordered_set>

#include "export/recording_wire.hpp"
#include "probectl/counters.hpp"
#include "probectl/recording.hpp"

namespace probectl {

namespace {

using namespace recording;

class RecordingWriter final : public TraceWriter {
  public:
    RecordingWriter(int fd, std::string path, std::uint32_t flags)
        : fd_(fd), path_(std::move(path)), flags_(flags) {
        block_.reserve(kBlockFlushBytes + 2 * PROBECTL_RECORD_MAX);
    }
    ~RecordingWriter() override { ::close(fd_); }

    Result<void> begin(std::uint64_t t0_ns, const TraceClocks& c) override {
        std::string h(kMagic, sizeof(kMagic));
        putU32(h, flags_);
        putU32(h, 0);
        for (std::uint64_t v : {t0_ns, c.monotonic_ns, c.boottime_ns, c.realtime_ns})
            putU64(h, v);
        const auto crc = static_cast<std::uint32_t>(
            ::crc32(0, reinterpret_cast<const Bytef*>(h.data()), static_cast<uInt>(h.size())));
        std::memcpy(h.data() + kHeaderCrcAt, &crc, sizeof(crc));
        return writeAll(h);
    }

    Result<void> event(const Event& ev) override {
        if (probes_.insert(ev.probe_id).second)
            putProbe(ev);
        block_ += static_cast<char>(kTagEvent);
        putU32(block_, ev.probe_id);
        putU64(block_, ev.timestamp_ns);
        putU32(block_, ev.cpu);
        putU32(block_, ev.pid);
        putU32(block_, ev.tgid);
        putStr(block_, ev.comm);
        putU64(block_, ev.ip);
        for (auto a : ev.args)
            putU64(block_, a);
        putU64(block_, ev.retval);
        putU64(block_, ev.latency_ns);
        const bool no_retval = ev.is_return && !(ev.parts & kRecordPartRetval);
        block_ += static_cast<char>((ev.is_return ? kEvReturn : 0) |
                                    (ev.syscall_returned ? kEvSyscallReturned : 0) |
                                    (no_retval ? kEvNoRetval : 0));
        putU16(block_, static_cast<std::uint16_t>(ev.fetched.size()));
        for (const auto& r : ev.fetched) {
            block_ += static_cast<char>(r.flags);
            putStr(block_, {reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()});
        }
        putU16(block_, static_cast<std::uint16_t>(ev.values.size()));
        for (const auto& v : ev.values) {
            block_ += static_cast<char>((v.faulted ? kValFaulted : 0) |
                                        (v.truncated ? kValTruncated : 0));
            if (v.array_len) {
                putU32(block_, static_cast<std::uint32_t>(v.array.size()));
                for (auto x : v.array)
                    putU64(block_, x);
            } else if (isStringType(v.type)) {
                putStr(block_, v.str);
            } else {
                putU64(block_, v.raw);
            }
        }
        ++entries_;
        if (block_.size() >= kBlockFlushBytes)
            return flush();
        return {};
    }

    Result<void> flush() override {
        if (!entries_)
            return {};
        std::string head;
        putU32(head, kBlockMagic);
        putU32(head, static_cast<std::uint32_t>(block_.size()));
        putU32(head,
               static_cast<std::uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(block_.data()),
                                                  static_cast<uInt>(block_.size()))));
        putU32(head, static_cast<std::uint32_t>(
                         ::crc32(0, reinterpret_cast<const Bytef*>(head.data()), 12)));
        block_.insert(0, head);
        auto r = writeAll(block_);
        block_.clear();
        entries_ = 0;
        return r;
    }

    Result<void> finish(const SessionStats& stats) override {
        block_ += static_cast<char>(kTagSummaryNamed);
#define PROBECTL_COUNTER_NAME(name) #name,
        static constexpr std::string_view kNames[] = {
            PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_NAME)};
#undef PROBECTL_COUNTER_NAME
        putU16(block_, static_cast<std::uint16_t>(std::size(kNames)));
        for (auto name : kNames)
            putStr(block_, name);
        putU32(block_, static_cast<std::uint32_t>(stats.probes.size()));
        for (const auto& p : stats.probes) {
            putU32(block_, p.id);
            putStr(block_, p.spec);
#define PROBECTL_COUNTER_PUT(name) putU64(block_, p.name);
            PROBECTL_TRACE_COUNTERS(PROBECTL_COUNTER_PUT)
#undef PROBECTL_COUNTER_PUT
        }
        putU64(block_, stats.lost);
        putU64(block_, stats.overruns);
        ++entries_;
        return flush();
    }

  private:
    void putProbe(const Event& ev) {
        block_ += static_cast<char>(kTagProbe);
        putU32(block_, ev.probe_id);
        putStr(block_, ev.spec);
        putStr(block_, ev.syscall ? std::string_view(ev.syscall->name) : std::string_view());
        putU16(block_, static_cast<std::uint16_t>(ev.values.size()));
        for (const auto& v : ev.values) {
            putStr(block_, v.name);
            block_ += static_cast<char>(v.type);
            putU32(block_, v.array_len);
        }
        ++entries_;
    }
    // One write() per block where the kernel allows: a kill lands between blocks, or
    // leaves a short one the reader's length and CRC checks drop.
    Result<void> writeAll(const std::string& s) {
        for (std::size_t at = 0; at < s.size();) {
            const ssize_t n = ::write(fd_, s.data() + at, s.size() - at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return makeError(n < 0 ? errno : EIO, fmt::format("cannot write {}", path_));
            at += static_cast<std::size_t>(n);
        }
        return {};
    }

    int fd_;
    std::string path_;
    std::uint32_t flags_;
    std::string block_;
    std::uint32_t entries_ = 0;
    std::unordered_set<std::uint32_t> probes_;
};

}  // namespace

Result<std::unique_ptr<TraceWriter>> recordingWriter(const std::string& path, std::uint32_t flags) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return makeError(errno, fmt::format("cannot write {}", path));
    return std::unique_ptr<TraceWriter>(std::make_unique<RecordingWriter>(fd, path, flags));
}

}  // namespace probectl
