// Failed writes to stdout and stderr: said on stderr (stdout's), and the exit status is
// non-zero, as coreutils do. `probectl --help >/dev/full` used to exit 0 with nothing said.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <ext/stdio_sync_filebuf.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "command_run.hpp"
#include "probectl/recording.hpp"
#include "std_streams.hpp"

using namespace probectl::cli;
using probectl::test::withFixtures;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// An ostream over a FILE, as std::cout is over stdout.
struct FileStream {
    explicit FileStream(const char* path) : file(std::fopen(path, "w")), buf(file), os(&buf) {}
    ~FileStream() {
        if (file)
            std::fclose(file);
    }
    std::FILE* file;
    __gnu_cxx::stdio_sync_filebuf<char> buf;
    std::ostream os;
};

struct CliRun {
    int status = -1;
    std::string other;  // what the command wrote on the stream not sent to /dev/full
};

// The built CLI with `full_fd` (1 or 2) on /dev/full and the other stream read back.
// `file_limit` > 0: files it writes cannot grow past that many bytes, as after a shell's
// `ulimit -f` (SIGXFSZ's default action, which killed probectl before it caught it).
CliRun runCli(const std::vector<std::string>& args, int full_fd, rlim_t file_limit = 0) {
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    const pid_t pid = fork();
    if (pid == 0) {
        const int full = open("/dev/full", O_WRONLY);
        dup2(full, full_fd);
        dup2(p[1], full_fd == 1 ? 2 : 1);
        if (file_limit) {
            signal(SIGXFSZ, SIG_DFL);
            const rlimit lim{file_limit, file_limit};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        close(p[0]);
        std::vector<char*> argv{const_cast<char*>("probectl")};
        for (const auto& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(PROBECTL_BIN, argv.data());
        _exit(127);
    }
    close(p[1]);
    CliRun r;
    std::array<char, 4096> buf;
    for (ssize_t n; (n = read(p[0], buf.data(), buf.size())) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        r.other.append(buf.data(), static_cast<std::size_t>(n));
    }
    close(p[0]);
    EXPECT_EQ(waitpid(pid, &r.status, 0), pid);
    return r;
}

}  // namespace

TEST(StdStreams, WrittenWholeLeavesTheStatus) {
    std::ostringstream out, err;
    out << "fine\n";
    EXPECT_EQ(finishStreams(0, "probectl x", out, nullptr, err, nullptr, false), 0);
    EXPECT_EQ(finishStreams(3, "probectl x", out, nullptr, err, nullptr, false), 3);
    EXPECT_EQ(err.str(), "");
}

// stdout's buffer reaches /dev/full only at the flush: ENOSPC then.
TEST(StdStreams, FailedStdoutIsSaidAndFails) {
    FileStream full("/dev/full");
    ASSERT_NE(full.file, nullptr);
    full.os << "a line\n";
    std::ostringstream err;
    EXPECT_EQ(finishStreams(0, "probectl list", full.os, full.file, err, nullptr, false),
              kExitRuntime);
    EXPECT_EQ(err.str(), "probectl list: cannot write standard output (No space left on device)\n");
}

// Through stdio a write past its buffer lost its errno ("Input/output error"); FdOutBuf,
// std::cout's buffer, keeps it however much was written.
TEST(StdStreams, FdOutBufKeepsTheErrnoOfALongOutput) {
    const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    FdOutBuf buf(fd);
    std::ostream os(&buf);
    os << std::string(100000, 'x') << "\n";
    std::ostringstream err;
    EXPECT_EQ(finishStreams(0, "probectl", os, nullptr, err, nullptr, false), kExitRuntime);
    EXPECT_EQ(err.str(), "probectl: cannot write standard output (No space left on device)\n");
    close(fd);
}

// FdOutBuf writes what it is given, in order, when the writes go through.
TEST(StdStreams, FdOutBufWritesEverything) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    std::string text;
    for (int i = 0; i < 3000; ++i)
        text += std::to_string(i) + '\n';
    ASSERT_LT(text.size(), 65536u);  // fits in the pipe: no reader needed
    {
        FdOutBuf buf(p[1]);
        std::ostream os(&buf);
        for (char c : text.substr(0, 100))
            os << c;
        os << text.substr(100);
        std::ostringstream err;
        EXPECT_EQ(finishStreams(0, "probectl", os, nullptr, err, nullptr, false), 0);
        EXPECT_EQ(buf.error(), 0);
    }
    close(p[1]);
    std::string got;
    std::array<char, 4096> b;
    for (ssize_t n; (n = read(p[0], b.data(), b.size())) > 0;)
        got.append(b.data(), static_cast<std::size_t>(n));
    close(p[0]);
    EXPECT_EQ(got, text);
}

// A status already non-zero (an earlier failure, CMD's own with -- CMD) is kept; a
// failure the command already reported is not said twice.
TEST(StdStreams, NonZeroStatusKeptAndNoSecondMessage) {
    FileStream full("/dev/full");
    ASSERT_NE(full.file, nullptr);
    full.os << "a line\n";
    std::ostringstream err;
    EXPECT_EQ(finishStreams(42, "probectl trace", full.os, full.file, err, nullptr, true), 42);
    EXPECT_EQ(err.str(), "");
}

// Nothing can be said of stderr failing; the status says it.
TEST(StdStreams, FailedStderrFailsSilently) {
    FileStream full("/dev/full");
    ASSERT_NE(full.file, nullptr);
    std::setvbuf(full.file, nullptr, _IONBF, 0);  // as stderr
    full.os << "a note\n";
    std::ostringstream out;
    EXPECT_EQ(finishStreams(0, "probectl trace", out, nullptr, full.os, full.file, false),
              kExitRuntime);
    EXPECT_EQ(finishStreams(7, "probectl trace", out, nullptr, full.os, full.file, false), 7);
}

// The built CLI, commands that need no kernel: each exited 0 with its output lost.
TEST(CliWriteErrors, StdoutOnDevFullFails) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
        {"probectl", {"--help"}},
        {"probectl", {"help", "trace"}},
        {"probectl trace", {"trace", "--help"}},
        {"probectl symbols", withFixtures({"symbols", "vfs_*"})},
        {"probectl resolve", withFixtures({"resolve", "syscall:getppid"})},
        {"probectl resolve", {"resolve", std::string("uprobe:") + FX_NOPIE_PATH + ":fx_work"}},
    };
    for (const auto& [who, args] : runs) {
        const CliRun r = runCli(args, STDOUT_FILENO);
        const std::string line = args.front() + " " + args.back();
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime)
            << line << ": status " << r.status << ", stderr: " << r.other;
        EXPECT_EQ(r.other, who + ": cannot write standard output (No space left on device)\n")
            << line;
    }
}

// With stderr on /dev/full: a usage error keeps its 2; a run that wrote nothing there
// keeps its 0.
TEST(CliWriteErrors, StderrOnDevFull) {
    CliRun r = runCli({"nosuchcommand"}, STDERR_FILENO);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitUsage) << r.status;
    r = runCli({"--help"}, STDERR_FILENO);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitOk) << r.status;
    EXPECT_THAT(r.other, HasSubstr("Usage: probectl"));
}

// report's loss warning goes to stderr beside -o FILE: lost, it exited 0.
TEST(CliWriteErrors, ReportWarningOnFullStderrFails) {
    const std::string path = ::testing::TempDir() + "/write-errors.rec";
    const std::string out = ::testing::TempDir() + "/write-errors.txt";
    {
        auto w = probectl::recordingWriter(path, 0);
        ASSERT_TRUE(w);
        ASSERT_TRUE((*w)->begin(1, {}));
        probectl::Event ev;
        ev.probe_id = 1;
        ev.spec = "syscall:getppid";
        ASSERT_TRUE((*w)->event(ev));
        probectl::SessionStats stats;
        stats.probes.push_back({});
        stats.probes.back().id = 1;
        stats.probes.back().spec = "syscall:getppid";
        stats.probes.back().hits = 6;
        stats.probes.back().delivered = 1;
        stats.probes.back().dropped = 5;
        ASSERT_TRUE((*w)->finish(stats));
    }
    const std::vector<std::string> args = {"report", path, "-o", out};
    CliRun r = runCli(args, STDOUT_FILENO);  // nothing on stdout: -o
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitOk) << r.other;
    EXPECT_THAT(r.other, HasSubstr("warning: events were lost: 5 dropped"));
    r = runCli(args, STDERR_FILENO);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime) << r.status;
    unlink(path.c_str());
    unlink(out.c_str());
}

namespace {

// A recording of `events` getppid events, from a process whose comm is `comm`.
void writeRecordingOfEvents(const std::string& path, int events, const std::string& comm) {
    auto w = probectl::recordingWriter(path, 0);
    ASSERT_TRUE(w);
    ASSERT_TRUE((*w)->begin(1, {}));
    probectl::Event ev;
    ev.probe_id = 1;
    ev.spec = "syscall:getppid";
    ev.comm = comm;
    for (int i = 0; i < events; ++i) {
        ev.timestamp_ns = 1000u + static_cast<std::uint64_t>(i);
        ASSERT_TRUE((*w)->event(ev));
    }
    probectl::SessionStats stats;
    stats.probes.push_back({});
    stats.probes.back().id = 1;
    stats.probes.back().spec = "syscall:getppid";
    stats.probes.back().hits = stats.probes.back().delivered = static_cast<std::uint64_t>(events);
    ASSERT_TRUE((*w)->finish(stats));
}

}  // namespace

// report -o /dev/full, and report >/dev/full: the file (or standard output) and the write's
// own errno. Chrome and perfetto said "cannot write the trace (Input/output error)", json
// "cannot write /dev/full (Input/output error)".
TEST(CliWriteErrors, ReportNamesTheOutputAndTheRealErrno) {
    const std::string rec = ::testing::TempDir() + "/write-errors-full.rec";
    writeRecordingOfEvents(rec, 5000, "worker");
    for (const char* format : {"text", "json", "chrome", "perfetto"}) {
        SCOPED_TRACE(format);
        CliRun r = runCli({"report", rec, "--format", format, "-o", "/dev/full"}, STDOUT_FILENO);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime) << r.status;
        EXPECT_THAT(r.other,
                    HasSubstr("probectl report: cannot write /dev/full (No space left on device)"))
            << r.other;
        EXPECT_THAT(r.other, Not(HasSubstr("Input/output error"))) << r.other;
        if (std::string(format) == "chrome" || std::string(format) == "perfetto")
            continue;
        r = runCli({"report", rec, "--format", format}, STDOUT_FILENO);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime) << r.status;
        EXPECT_THAT(r.other, HasSubstr("probectl report: cannot write standard output (No space "
                                       "left on device)"))
            << r.other;
        EXPECT_THAT(r.other, Not(HasSubstr("Input/output error"))) << r.other;
    }
    EXPECT_TRUE(std::filesystem::exists("/dev/full"));
    unlink(rec.c_str());
}

// A write that fails part-way (the disk filled up) leaves no output: an incomplete JSON does
// not parse, a CTF directory without metadata does not open. It left a truncated file, an
// empty perfetto file, a CTF directory with only an empty stream file.
TEST(CliWriteErrors, ReportRemovesAnOutputItCouldNotFinish) {
    const std::string rec = ::testing::TempDir() + "/write-errors-partial.rec";
    writeRecordingOfEvents(rec, 5000, "worker");
    for (const char* format : {"text", "json", "chrome", "perfetto", "ctf"}) {
        SCOPED_TRACE(format);
        const std::string out = ::testing::TempDir() + "/write-errors-partial." + format;
        std::filesystem::remove_all(out);
        const CliRun r =
            runCli({"report", rec, "--format", format, "-o", out}, STDOUT_FILENO, 4096);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime) << r.status;
        EXPECT_THAT(r.other, HasSubstr("probectl report: cannot write " + out)) << r.other;
        EXPECT_THAT(r.other,
                    HasSubstr("(File too large): removed " + out + ", as it was incomplete\n"))
            << r.other;
        EXPECT_FALSE(std::filesystem::exists(out)) << r.other;
    }
    // Written whole, it stays.
    const std::string out = ::testing::TempDir() + "/write-errors-whole.json";
    const CliRun r = runCli({"report", rec, "--format", "json", "-o", out}, STDOUT_FILENO);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitOk) << r.status;
    EXPECT_GT(std::filesystem::file_size(out), 4096u);
    unlink(out.c_str());
    unlink(rec.c_str());
}

// count, hist and latency's -o FILE follow trace's rule: a write that fails part-way (here
// RLIMIT_FSIZE: EFBIG) is said with the file and its errno, and the incomplete file is
// removed. Through std::ofstream they left the truncated file behind, and the timelines of
// --format perfetto|chrome too.
TEST(CliWriteErrors, AggrRemovesAnOutputItCouldNotFinish) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
        {"count", {"syscall:getppid"}},
        {"count", {"syscall:getppid", "--by", "comm", "--format", "json"}},
        {"count", {"syscall:getppid", "--format", "perfetto"}},
        {"count", {"syscall:getppid", "--format", "chrome"}},
        {"hist", {"syscall:getppid", "pid"}},
        {"latency", {"syscall:getppid", "--format", "json"}},
    };
    int n = 0;
    for (const auto& [name, spec] : runs) {
        const std::string line = name + " " + ::testing::PrintToString(spec);
        const std::string out = ::testing::TempDir() + "/aggr-partial-" + std::to_string(n++);
        std::vector<std::string> args = {name};
        args.insert(args.end(), spec.begin(), spec.end());
        args.insert(args.end(), {"--backend", "ptrace", "-o", out, "--", "true"});
        CliRun r = runCli(args, STDOUT_FILENO, 16);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime)
            << line << ": " << r.other;
        EXPECT_THAT(r.other,
                    HasSubstr("probectl " + name + ": cannot write " + out +
                              " (File too large): removed " + out + ", as it was incomplete\n"))
            << line;
        EXPECT_FALSE(std::filesystem::exists(out)) << line;

        // A device is written to, never removed.
        args = {name};
        args.insert(args.end(), spec.begin(), spec.end());
        args.insert(args.end(), {"--backend", "ptrace", "-o", "/dev/full", "--", "true"});
        r = runCli(args, STDOUT_FILENO);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime)
            << line << ": " << r.other;
        EXPECT_THAT(r.other, HasSubstr("probectl " + name +
                                       ": cannot write /dev/full (No space left on device)\n"))
            << line;
        EXPECT_TRUE(std::filesystem::exists("/dev/full"));

        // Written whole, it stays.
        args = {name};
        args.insert(args.end(), spec.begin(), spec.end());
        args.insert(args.end(), {"--backend", "ptrace", "-o", out, "--", "true"});
        r = runCli(args, STDOUT_FILENO);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitOk)
            << line << ": " << r.other;
        EXPECT_GT(std::filesystem::file_size(out), 16u) << line;
        unlink(out.c_str());
    }
}

// The tables on a full standard output: said once. The run said it through the tables' own
// Io, a copy of main()'s, and main() said it again at exit.
TEST(CliWriteErrors, AggrTablesOnAFullStdoutAreSaidOnce) {
    const std::vector<std::vector<std::string>> runs = {
        {"count", "syscall:getppid"},
        {"count", "syscall:getppid", "--format", "json"},
        {"hist", "syscall:getppid", "pid"},
        {"latency", "syscall:getppid"},
    };
    for (auto args : runs) {
        const std::string line = ::testing::PrintToString(args);
        const std::string name = args[0];
        args.insert(args.end(), {"--backend", "ptrace", "-o", "-", "--", "true"});
        const CliRun r = runCli(args, STDOUT_FILENO);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime)
            << line << ": " << r.other;
        const std::string said =
            "probectl " + name + ": cannot write standard output (No space left on device)\n";
        const auto first = r.other.find(said);
        EXPECT_NE(first, std::string::npos) << line << ": " << r.other;
        EXPECT_EQ(r.other.find(said, first + 1), std::string::npos) << line << ": " << r.other;
    }
}

// probectl catches SIGXFSZ to say EFBIG, but the command it runs keeps the default action:
// an ignored SIGXFSZ would pass to it through exec.
TEST(CliWriteErrors, TheTracedCommandKeepsSigxfszDefault) {
    const CliRun r = runCli({"trace", "syscall:getppid", "--backend", "ptrace", "-o", "/dev/null",
                             "--", "sh", "-c", "grep SigIgn /proc/self/status"},
                            STDERR_FILENO);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.other, m, std::regex("SigIgn:\\s*([0-9a-f]+)"))) << r.other;
    EXPECT_EQ(std::stoull(m[1], nullptr, 16) & (1ull << (SIGXFSZ - 1)), 0u) << r.other;
}

namespace {

std::size_t occurrences(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

// An output whose first write fails (/dev/full; a file that cannot grow) is found before the
// command is released: it never runs. The header was buffered until the first poll, the
// command released meanwhile: `touch` created its file in some runs, `cat` printed its own.
TEST(CliWriteErrors, AnOutputThatFailsAtOnceNeverRunsTheCommand) {
    const std::string marker = ::testing::TempDir() + "/write-errors-marker";
    const std::string out = ::testing::TempDir() + "/write-errors-at-once";
    for (int run = 0; run < 3; ++run) {
        for (const char* format : {"text", "chrome", "perfetto", "record"}) {
            for (const std::string& to : {std::string("/dev/full"), out}) {
                SCOPED_TRACE(fmt::format("{} -o {}, run {}", format, to, run));
                std::filesystem::remove(marker);
                const CliRun r = runCli({"trace", "--backend=ptrace", "syscall:openat", "--format",
                                         format, "-o", to, "--", "touch", marker},
                                        STDOUT_FILENO, to == out ? 1 : 0);
                EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime)
                    << r.other;
                EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran: " << r.other;
                EXPECT_THAT(r.other,
                            HasSubstr(fmt::format("probectl trace: cannot write {} (", to)))
                    << r.other;
                EXPECT_THAT(r.other, HasSubstr("): 'touch' was not run\n")) << r.other;
                EXPECT_EQ(occurrences(r.other, "cannot write"), 1u) << r.other;
                if (to == out) {
                    EXPECT_THAT(r.other,
                                HasSubstr(fmt::format(
                                    "probectl trace: removed {}, as it was incomplete\n", out)))
                        << r.other;
                    EXPECT_FALSE(std::filesystem::exists(out)) << r.other;
                }
            }
        }
    }
}

// A trace output that fills up part-way: the trace stops at once, the failure is said once
// (it was said again at the end with the removal), the incomplete file is removed, and the
// counters are shown on stderr (text and JSON put them in the file that failed: lost).
TEST(CliWriteErrors, ATraceOutputThatFillsUpStopsTheTrace) {
    const std::string out = ::testing::TempDir() + "/write-errors-fills-up";
    for (const char* format : {"text", "json", "chrome", "perfetto", "record"}) {
        SCOPED_TRACE(format);
        std::filesystem::remove(out);
        const CliRun r =
            runCli({"trace", "--backend=ptrace", "syscall:read", "--format", format, "-o", out,
                    "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1000000"},
                   STDOUT_FILENO, 4096);
        EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitRuntime) << r.other;
        EXPECT_THAT(r.other, HasSubstr(fmt::format(
                                 "probectl trace: cannot write {} (File too large): stopping "
                                 "the trace\n",
                                 out)))
            << r.other;
        EXPECT_EQ(occurrences(r.other, "cannot write"), 1u) << r.other;
        EXPECT_THAT(r.other, HasSubstr(fmt::format(
                                 "probectl trace: removed {}, as it was incomplete\n", out)))
            << r.other;
        EXPECT_THAT(r.other, HasSubstr("HITS")) << r.other;
        EXPECT_FALSE(std::filesystem::exists(out)) << r.other;
    }
}
