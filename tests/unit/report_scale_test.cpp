// probectl report at scale, through the real binary: a 10^6-event recording stays small per
// event, and converting it into each format takes no more memory than converting 10^5
// events does (peak RSS of the child from wait4, no timing); on a terminal the conversion
// shows its progress on stderr and erases it at the end. Files are named by pid: ctest -j
// runs these tests in processes side by side.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <array>
#include <cerrno>
#include <filesystem>
#include <string>

#include "probectl/recording.hpp"
#include "trace_export_events.hpp"

using ::testing::HasSubstr;

namespace {

// n events over 8 threads of two processes: returns with a value, instants with a string
// from a small set (as a real trace repeats its paths), and bare kprobe hits, in turn.
std::string writeRecording(std::size_t n) {
    const std::string path = testing::TempDir() + "/scale-" + std::to_string(getpid()) + "-" +
                             std::to_string(n) + ".rec";
    auto w = probectl::recordingWriter(path, 0);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->begin(1'000'000'000, {}).ok());
    probectl::Event ret = exporttest::ret(100, 100, 0, 0, 0);
    probectl::Event inst = exporttest::fetched(100, 100, 0, "");
    probectl::Event hit = exporttest::entry(100, 100, 0, "kprobe:do_sys_openat2");
    for (std::size_t i = 0; i < n; ++i) {
        probectl::Event& ev = i % 3 == 0 ? ret : i % 3 == 1 ? inst : hit;
        ev.pid = 100 + static_cast<std::uint32_t>(i % 8);
        ev.tgid = ev.pid < 104 ? 100 : 104;
        ev.timestamp_ns = 1'000'000'000 + i * 1000;
        if (&ev == &ret) {
            ev.latency_ns = 400 + i % 100;
            ev.retval = i % 7;
            ev.values[0].raw = ev.retval;
        } else if (&ev == &inst) {
            ev.values[0].str = "/usr/lib/x86_64-linux-gnu/lib" + std::to_string(i % 16) + ".so";
        }
        EXPECT_TRUE((*w)->event(ev).ok());
    }
    EXPECT_TRUE((*w)->finish(exporttest::sampleStats()).ok());
    return path;
}

struct ReportRun {
    int status = -1;
    long maxrss_kib = 0;
};

// probectl report REC --format FMT -o OUT, its peak resident set.
ReportRun report(const std::string& rec, const std::string& format, const std::string& out) {
    std::filesystem::remove_all(out);
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl(PROBECTL_BIN, "probectl", "report", rec.c_str(), "--format", format.c_str(), "-o",
              out.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    ReportRun r;
    rusage ru{};
    EXPECT_EQ(wait4(pid, &r.status, 0, &ru), pid);
    r.maxrss_kib = ru.ru_maxrss;
    std::filesystem::remove_all(out);
    return r;
}

class ReportScale : public testing::Test {
  protected:
    static void SetUpTestSuite() {
        small_ = writeRecording(100'000);
        large_ = writeRecording(1'000'000);
    }
    static void TearDownTestSuite() {
        std::filesystem::remove(small_);
        std::filesystem::remove(large_);
    }
    static std::string small_, large_;
};
std::string ReportScale::small_, ReportScale::large_;

TEST_F(ReportScale, AMillionEventRecordingIsSmallPerEvent) {
    const double per_event = static_cast<double>(std::filesystem::file_size(large_)) / 1e6;
    // The writer repeats each event's fields (no interning): comm, spec id, values.
    EXPECT_LT(per_event, 160) << "bytes per recorded event";
    RecordProperty("recording_bytes_per_event", std::to_string(per_event));
}

// Ten times the events, the same memory: no format keeps the events it has written. The
// slack covers the allocator's and the interner's steady state, not 900 000 events
// (even at 16 bytes each they would be 14 MiB).
TEST_F(ReportScale, ConversionMemoryDoesNotGrowWithTheEvents) {
    const std::string out = testing::TempDir() + "/scale-out-" + std::to_string(getpid());
    for (const char* format : {"text", "json", "chrome", "perfetto", "ctf"}) {
        const ReportRun s = report(small_, format, out);
        const ReportRun l = report(large_, format, out);
        ASSERT_TRUE(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0) << format;
        ASSERT_TRUE(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0) << format;
        EXPECT_LT(l.maxrss_kib, s.maxrss_kib + 4096)
            << format << ": peak RSS " << s.maxrss_kib << " KiB for 10^5 events, " << l.maxrss_kib
            << " KiB for 10^6";
        RecordProperty(std::string(format) + "_maxrss_kib_1e5_1e6",
                       std::to_string(s.maxrss_kib) + " " + std::to_string(l.maxrss_kib));
    }
}

// stderr a terminal (a pty): the percentage line is drawn and erased at the end.
TEST_F(ReportScale, ProgressOnATerminal) {
    const std::string out =
        testing::TempDir() + "/scale-progress-" + std::to_string(getpid()) + ".json";
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        execl(PROBECTL_BIN, "probectl", "report", small_.c_str(), "--format", "json", "-o",
              out.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    std::string tty;
    std::array<char, 4096> buf;
    for (;;) {
        const ssize_t n = read(master, buf.data(), buf.size());
        if (n > 0)
            tty.append(buf.data(), static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;  // EIO once the child has closed the terminal
    }
    close(master);
    int status = -1;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << tty;
    EXPECT_THAT(tty, HasSubstr("report: 100%"));
    EXPECT_THAT(tty, HasSubstr("100000 events"));
    // Erased before anything else is written (the loss warning of the sample counters).
    const std::size_t last = tty.rfind("100000 events");
    ASSERT_NE(last, std::string::npos);
    EXPECT_EQ(tty.substr(last + 13, 4), "\r\x1b[K") << "the progress line is erased at the end";
    std::filesystem::remove(out);
}

}  // namespace
