// Recordings: every field of an event comes back; the summary too; a file cut anywhere
// reads up to its last complete block with a note; a damaged block ends the reading.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "export/recording_wire.hpp"
#include "probectl/recording.hpp"
#include "trace_export_events.hpp"

using ::testing::HasSubstr;

namespace {

// Writes the sample run, flushing after each event (a block each) when `blocks`.
std::string record(const std::string& name, bool blocks, bool summary = true) {
    const std::string path = testing::TempDir() + name;
    auto w = probectl::recordingWriter(path, 3);
    EXPECT_TRUE(w.ok());
    probectl::TraceClocks clocks{11, 22, 33};
    EXPECT_TRUE((*w)->begin(1'000'000'000, clocks).ok());
    for (const auto& ev : exporttest::sampleRun()) {
        EXPECT_TRUE((*w)->event(ev).ok());
        if (blocks) {
            EXPECT_TRUE((*w)->flush().ok());
        }
    }
    if (summary) {
        EXPECT_TRUE((*w)->finish(exporttest::sampleStats()).ok());
    } else {
        EXPECT_TRUE((*w)->flush().ok());
    }
    return path;
}

std::vector<probectl::Event> readAll(probectl::RecordingReader& r) {
    std::vector<probectl::Event> out;
    probectl::Event ev;
    while (r.next(ev)) {
        out.push_back(ev);
        out.back().spec = ev.spec;  // points into the reader, which outlives the test's use
    }
    return out;
}

}  // namespace

TEST(Recording, EventsAndSummaryComeBackAsWritten) {
    auto r = probectl::RecordingReader::open(record("/all.rec", false));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->info().flags, 3u);
    EXPECT_EQ(r->info().t0_ns, 1'000'000'000u);
    EXPECT_EQ(r->info().clocks.boottime_ns, 22u);
    const auto got = readAll(*r);
    const auto want = exporttest::sampleRun();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(i);
        // Every field of the record, as one tuple (gtest prints both sides on a mismatch).
        auto fields = [](const probectl::Event& e) {
            return std::make_tuple(e.probe_id, std::string(e.spec), e.timestamp_ns, e.cpu, e.pid,
                                   e.tgid, e.comm, e.ip, e.args, e.retval, e.latency_ns,
                                   e.is_return);
        };
        EXPECT_EQ(fields(got[i]), fields(want[i]));
        ASSERT_EQ(got[i].values.size(), want[i].values.size());
        for (std::size_t k = 0; k < want[i].values.size(); ++k) {
            const auto &g = got[i].values[k], &w = want[i].values[k];
            EXPECT_EQ(g.name, w.name);
            EXPECT_EQ(g.type, w.type);
            EXPECT_EQ(g.array_len, w.array_len);
            EXPECT_EQ(g.raw, w.raw);
            EXPECT_EQ(g.array, w.array);
            EXPECT_EQ(g.str, w.str);
            EXPECT_EQ(g.faulted, w.faulted);
        }
    }
    ASSERT_TRUE(r->summary().has_value());
    ASSERT_EQ(r->summary()->probes.size(), 3u);
    EXPECT_EQ(r->summary()->probes[0].dropped, 3u);
    EXPECT_EQ(r->summary()->probes[1].spec, "uretprobe:/bin/prog:work r=$retval:s64");
    EXPECT_EQ(r->summary()->lost, 2u);
    EXPECT_EQ(r->note(), "");
}

// A return whose value is not known (Event::parts without kRecordPartRetval: the ptrace
// backend's syscall of a killed thread) comes back so, not as a return of 0.
TEST(Recording, AReturnWithoutItsValueComesBackWithout) {
    const std::string path = testing::TempDir() + "/no-retval.rec";
    auto w = probectl::recordingWriter(path, 0);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->begin(0, {}).ok());
    for (bool known : {true, false}) {
        probectl::Event ev;
        ev.probe_id = 1;
        ev.spec = "kretprobe:vfs_read";
        ev.is_return = true;
        ev.latency_ns = 5;
        if (!known)
            ev.parts &= ~probectl::kRecordPartRetval;
        ASSERT_TRUE((*w)->event(ev).ok());
    }
    ASSERT_TRUE((*w)->flush().ok());
    auto r = probectl::RecordingReader::open(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const auto got = readAll(*r);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(got[0].parts & probectl::kRecordPartRetval);
    EXPECT_FALSE(got[1].parts & probectl::kRecordPartRetval);
    EXPECT_TRUE(got[1].is_return);
    EXPECT_EQ(got[1].latency_ns, 5u);
}

// Cut at every byte: whole blocks before the cut are read, nothing after, with a note.
TEST(Recording, CutAnywhereReadsUpToTheLastCompleteBlock) {
    const std::string path = record("/cut.rec", true);
    std::ifstream in(path, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), {});
    const std::string cut = testing::TempDir() + "/cut-short.rec";
    std::size_t last = 0;
    for (std::size_t len = 48; len < whole.size(); ++len) {
        std::ofstream(cut, std::ios::binary | std::ios::trunc) << whole.substr(0, len);
        auto r = probectl::RecordingReader::open(cut);
        ASSERT_TRUE(r.ok());
        const auto n = readAll(*r).size();
        EXPECT_GE(n, last) << len;
        last = n;
        EXPECT_FALSE(r->summary().has_value()) << len;
        EXPECT_THAT(r->note(), HasSubstr("cut short")) << len;
    }
    EXPECT_EQ(last, exporttest::sampleRun().size());  // all blocks but the summary's
}

TEST(Recording, ADamagedBlockEndsTheReading) {
    const std::string path = record("/damaged.rec", true);
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(48 + 16 + 20);  // inside the first block's payload
    f.put('\x5a');
    f.close();
    auto r = probectl::RecordingReader::open(path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(readAll(*r).size(), 0u);
    EXPECT_TRUE(r->damaged());
    // The changed byte (84) is in the range named: the block's payload, after its header.
    std::uint64_t first = 0, last = 0;
    ASSERT_EQ(
        std::sscanf(r->note().c_str(), "recording damaged in bytes %lu to %lu", &first, &last), 2)
        << r->note();
    EXPECT_EQ(first, 48u + 16u);
    EXPECT_GE(last, 84u);
    EXPECT_THAT(r->note(), HasSubstr("(the block's checksum does not match)"));
}

// Damage is told from a cut: wherever a byte of a block header or of the file's header is
// changed, the reader says damaged (with the bytes it is in) and never "cut short".
TEST(Recording, DamageAnywhereIsNotCalledCutShort) {
    const std::string path = record("/damage-any.rec", true);
    std::ifstream in(path, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), {});
    const std::string bad = testing::TempDir() + "/damage-one.rec";
    for (std::size_t at = 0; at < 48 + 16; ++at) {
        std::string copy = whole;
        copy[at] = static_cast<char>(copy[at] ^ 0x5a);
        std::ofstream(bad, std::ios::binary | std::ios::trunc) << copy;
        auto r = probectl::RecordingReader::open(bad);
        if (at < 48) {
            ASSERT_FALSE(r.ok()) << at;
            EXPECT_EQ(r.error().err, at < 7 ? EBADMSG : at == 7 ? EPROTONOSUPPORT : EBADMSG);
            if (at > 7) {
                EXPECT_THAT(r.error().message, HasSubstr("damaged in its header")) << at;
            }
            continue;
        }
        ASSERT_TRUE(r.ok()) << at;
        readAll(*r);
        EXPECT_TRUE(r->damaged()) << at;
        EXPECT_THAT(r->note(), HasSubstr("damaged in bytes 48 to 63 (")) << at;
        EXPECT_THAT(r->note(), testing::Not(HasSubstr("cut short"))) << at;
    }
}

// Zeros where a block should start are space never written (power loss): cut short.
TEST(Recording, ZerosAtTheEndAreACut) {
    const std::string path = record("/zeros.rec", true, false);
    std::ofstream(path, std::ios::binary | std::ios::app) << std::string(4096, '\0');
    auto r = probectl::RecordingReader::open(path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(readAll(*r).size(), exporttest::sampleRun().size());
    EXPECT_FALSE(r->damaged());
    EXPECT_THAT(r->note(), HasSubstr("cut short"));
}

// Cut inside its header (1 to 47 bytes of a real one): a cut recording, said so, not "not a
// probectl recording"; a short file of other bytes is still no recording.
TEST(Recording, CutInsideTheHeaderIsSaid) {
    const std::string path = record("/cut-head.rec", true);
    std::ifstream in(path, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), {});
    const std::string cut = testing::TempDir() + "/cut-head-short.rec";
    for (std::size_t len : {1, 7, 8, 10, 47}) {
        std::ofstream(cut, std::ios::binary | std::ios::trunc) << whole.substr(0, len);
        auto r = probectl::RecordingReader::open(cut);
        ASSERT_FALSE(r.ok()) << len;
        EXPECT_EQ(r.error().err, EBADMSG);
        EXPECT_THAT(
            r.error().message,
            HasSubstr(fmt::format("recording cut short in its header ({} of 48 bytes)", len)));
    }
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << "hello";
    auto r = probectl::RecordingReader::open(cut);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("is not a probectl recording"));
}

// An empty file said "not a probectl recording": it says it is empty, naming it (seen
// failing).
TEST(Recording, AnEmptyFileIsSaidEmpty) {
    const std::string path = testing::TempDir() + "/empty.rec";
    std::ofstream(path, std::ios::trunc).close();
    auto r = probectl::RecordingReader::open(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EBADMSG);
    EXPECT_EQ(r.error().message, path +
                                     " is empty (0 bytes): no recording in it; `probectl "
                                     "record -o " +
                                     path + "` writes one");
}

TEST(Recording, NotARecording) {
    const std::string path = testing::TempDir() + "/not.rec";
    std::ofstream(path) << "hello, this is not a recording but long enough to be a header...";
    auto r = probectl::RecordingReader::open(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EBADMSG);
    EXPECT_EQ(r.error().message,
              path +
                  " is not a probectl recording (a recording starts with the bytes "
                  "\"PRBCTLR\"); give the file that `probectl record -o FILE` wrote");
}

// `report /dev/null` said "/dev/null is empty (0 bytes): no recording in it; `probectl record
// -o /dev/null` writes one", advice that records into nothing (seen failing). A file that is
// no regular file is named as what it is, with no advice to record into it.
TEST(Recording, ADeviceIsNamedAsOne) {
    auto null = probectl::RecordingReader::open("/dev/null");
    ASSERT_FALSE(null.ok());
    EXPECT_EQ(null.error().err, EBADMSG);
    EXPECT_EQ(null.error().message,
              "/dev/null is a character device and read nothing (0 bytes): no recording in it; "
              "give the file that `probectl record -o FILE` wrote");
    auto zero = probectl::RecordingReader::open("/dev/zero");
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().message,
              "/dev/zero is a character device whose bytes are not a probectl recording (a "
              "recording starts with the bytes \"PRBCTLR\"); give the file that `probectl record "
              "-o FILE` wrote");
}

// A directory (say, a --format ctf output) is named as one, with what a recording is.
TEST(Recording, ADirectoryIsNoRecording) {
    const std::string dir = testing::TempDir() + "/rec.dir";
    std::filesystem::create_directories(dir);
    auto r = probectl::RecordingReader::open(dir);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EISDIR);
    EXPECT_THAT(r.error().describe(), HasSubstr(dir + " is a directory"));
    EXPECT_THAT(r.error().describe(), HasSubstr("probectl record -o FILE"));
}

namespace {

// Appends one block holding `payload` (CRCs as the writer computes them) to `path`.
void appendBlock(const std::string& path, const std::string& payload) {
    using namespace probectl::recording;
    std::string head;
    putU32(head, kBlockMagic);
    putU32(head, static_cast<std::uint32_t>(payload.size()));
    putU32(head, static_cast<std::uint32_t>(
                     ::crc32(0, reinterpret_cast<const Bytef*>(payload.data()), payload.size())));
    putU32(head,
           static_cast<std::uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(head.data()), 12)));
    std::ofstream(path, std::ios::binary | std::ios::app) << head << payload;
}

}  // namespace

// Every counter of the summary comes back by name, whichever counters a build has.
TEST(Recording, EveryCounterOfTheSummaryComesBack) {
    using namespace probectl::recording;
    const std::string path = record("/counters.rec", false, false);
    std::string b(1, static_cast<char>(kTagSummaryNamed));
    // The counters in another order than this build's, with one it does not know.
    const std::vector<std::string> names = {"unreturned", "hits",    "from_the_future", "rejected",
                                            "delivered",  "dropped", "nmissed",         "filtered"};
    putU16(b, static_cast<std::uint16_t>(names.size()));
    for (const auto& n : names)
        putStr(b, n);
    putU32(b, 1);
    putU32(b, 7);
    putStr(b, "uretprobe:/bin/prog:work");
    for (std::uint64_t v = 1; v <= names.size(); ++v)
        putU64(b, v * 10);
    putU64(b, 4);  // lost
    putU64(b, 5);  // overruns
    appendBlock(path, b);
    auto r = probectl::RecordingReader::open(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    (void)readAll(*r);
    ASSERT_TRUE(r->summary().has_value());
    ASSERT_EQ(r->summary()->probes.size(), 1u);
    const auto& p = r->summary()->probes[0];
    EXPECT_EQ(p.id, 7u);
    EXPECT_EQ(p.unreturned, 10u);
    EXPECT_EQ(p.hits, 20u);
    EXPECT_EQ(p.rejected, 40u);
    EXPECT_EQ(p.delivered, 50u);
    EXPECT_EQ(p.dropped, 60u);
    EXPECT_EQ(p.nmissed, 70u);
    EXPECT_EQ(p.filtered, 80u);
    EXPECT_EQ(r->summary()->lost, 4u);
    EXPECT_EQ(r->summary()->overruns, 5u);
    EXPECT_EQ(r->note(), "");
}

// Recordings made before the summary named its counters (tag 4) still read.
TEST(Recording, AnOlderFixedCounterSummaryStillReads) {
    using namespace probectl::recording;
    const std::string path = record("/tag4.rec", false, false);
    std::string b(1, static_cast<char>(kTagSummaryUnreturned));
    putU32(b, 1);
    putU32(b, 3);
    putStr(b, "kprobe:do_sys_openat2");
    for (std::uint64_t v = 1; v <= 7; ++v)  // hits delivered dropped nmissed filtered
        putU64(b, v);                       // rejected unreturned
    putU64(b, 0);
    putU64(b, 0);
    appendBlock(path, b);
    auto r = probectl::RecordingReader::open(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    (void)readAll(*r);
    ASSERT_TRUE(r->summary().has_value());
    const auto& p = r->summary()->probes.at(0);
    EXPECT_EQ(std::make_tuple(p.hits, p.delivered, p.dropped, p.nmissed, p.filtered, p.rejected,
                              p.unreturned),
              std::make_tuple(1u, 2u, 3u, 4u, 5u, 6u, 7u));
}
