// Recordings: every field of an event comes back; the summary too; a file cut anywhere
// reads up to its last complete block with a note; a damaged block ends the reading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

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
    EXPECT_THAT(r->note(), HasSubstr("damaged at byte 48 (the block's checksum does not match)"));
}

// Damage is told from a cut: wherever a byte of a block header or of the file's header is
// changed, the reader says damaged (with the byte) and never "cut short".
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
        EXPECT_THAT(r->note(), HasSubstr("damaged at byte 48")) << at;
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

TEST(Recording, NotARecording) {
    const std::string path = testing::TempDir() + "/not.rec";
    std::ofstream(path) << "hello, this is not a recording but long enough to be a header...";
    auto r = probectl::RecordingReader::open(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EBADMSG);
}
