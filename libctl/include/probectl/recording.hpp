// probectl's recording: the events of a trace as they came, for `probectl report` to turn
// into any output format later. Written while tracing with bounded memory; a recording
// cut short (SIGKILL, full disk, power loss) reads up to its last complete block; one
// damaged (a checksum that does not match, a block header that is no block header) is
// told apart from one cut short.
//
// Layout (little-endian): a 48-byte header, then blocks.
//   header: "PRBCTLR" + version byte (2), u32 flags (the CLI's layout bits), u32 CRC-32 of
//           the header with this field 0 (version 1: 0, unchecked), u64 t0
//           (CLOCK_MONOTONIC ns), u64 monotonic, boottime, realtime at the start
//   block:  u32 "PBLK", u32 payload length, u32 CRC-32 of the payload (zlib), u32 CRC-32 of
//           these 12 bytes (version 1: the number of entries), then the entries, each a tag byte
//           and its fields (strings are u32 length + bytes):
//     1 probe   (before its first event) u32 id, spec, syscall name ("" if none),
//               u16 values, each: name, u8 FetchType, u32 array length
//     2 event   u32 probe id, u64 ts, u32 cpu, pid, tgid, comm, u64 ip, 6 x u64 args,
//               u64 retval, u64 latency, u8 flags (1 return, 2 syscall returned, 4 return
//               value unknown), u16 raw values (u8 flags, u32 length, bytes), u16
//               decoded values (u8 flags: 1 faulted, 2 truncated; then u64, or u32
//               length + bytes for strings, or u32 count + u64s for arrays)
//     4 summary u32 probes, each: u32 id, spec, hits, delivered, dropped, nmissed,
//               filtered, rejected, unreturned (u64); u64 lost, u64 overruns (tag 3,
//               written before unreturned was counted, is the same without it)
// A block is written with one write() once complete, at most every flush() or 64 KiB.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probectl/trace_export.hpp"  // Event, Result, SessionStats, TraceClocks, TraceWriter

// Everything declared here is libprobectl.so's ABI (the rest of libctl is hidden).
#pragma GCC visibility push(default)
namespace probectl {

struct RecordingInfo {
    std::uint32_t flags = 0;
    std::uint64_t t0_ns = 0;
    TraceClocks clocks;
};

// A writer that records into `path` (created, truncated; O_CLOEXEC). `flags` is stored
// for the reader as is.
Result<std::unique_ptr<TraceWriter>> recordingWriter(const std::string& path, std::uint32_t flags);

class RecordingReader {
  public:
    // Errors: errno from opening (EISDIR for a directory); EBADMSG when the file is not a
    // recording, or its header is damaged; EPROTONOSUPPORT for a version this reader does not know.
    static Result<RecordingReader> open(const std::string& path);
    RecordingReader(RecordingReader&&) noexcept;
    RecordingReader& operator=(RecordingReader&&) noexcept;
    ~RecordingReader();

    const RecordingInfo& info() const;
    // The next event into `ev` (reusing its storage; spec and syscall point into this
    // reader). false at the end of the recording, or of its last complete block.
    bool next(Event& ev);
    // The trace's counters, when the recording got as far as its summary.
    const std::optional<SessionStats>& summary() const;
    // Bytes of the file read so far (header and complete blocks): with the file's size, how
    // far a conversion has come.
    std::uint64_t offset() const;
    // Why the recording ended before its summary ("" when it did not): a truncated or
    // damaged block, and where.
    const std::string& note() const;
    // Whether it ended at damage (a block whose checksum, header or entries are wrong)
    // rather than where the file was cut short; note() says at which byte.
    bool damaged() const;

  private:
    struct Impl;
    explicit RecordingReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace probectl
#pragma GCC visibility pop
