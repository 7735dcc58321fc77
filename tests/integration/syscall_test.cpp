// syscall:NAME and trace --syscalls in the VM: the lines of a fixed workload
// (workloads/sys_workload.c) against Debian's strace run on the same workload in the same
// VM, and the ptrace backend against the kernel backend.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "itest_util.hpp"

using itest::Ran;
using itest::sh;
using ::testing::HasSubstr;

namespace {

constexpr const char* kTracedCalls = "openat,read,write,close,nanosleep,clock_nanosleep,exit_group";
constexpr const char* kIn = "/tmp/sys-workload.in";
constexpr const char* kOut = "/tmp/sys-workload.out";
// The workload's first call; what comes before it is the tracer's and ld.so's business.
constexpr const char* kMarker = "/probectl-syscall-workload-begin";

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        out.push_back(text.substr(at, nl - at));
    return out;
}

// The workload's own lines: from its marker openat on, without strace's "+++ exited" line.
std::vector<std::string> workloadLines(const std::string& file) {
    std::vector<std::string> all = lines(itest::readFile(file)), out;
    bool on = false;
    for (const auto& l : all) {
        on = on || l.find(kMarker) != std::string::npos;
        if (on && !l.starts_with("+++ "))
            out.push_back(l);
    }
    return out;
}

void writeInput() {
    std::ofstream(kIn) << "probectl syscall workload input\n";
}

std::string workloadCmd() {
    return itest::workload("sys_workload") + " " + kIn + " " + kOut;
}

}  // namespace

// Debian's strace is part of the VM image (make deps installs it, mkinitramfs copies it):
// without it this comparison must fail, not pass vacuously.
TEST(Syscalls, SameLinesAsStrace) {
    ASSERT_EQ(access("/usr/bin/strace", X_OK), 0) << "strace missing from the VM image";
    writeInput();
    Ran st = sh(std::string("strace -o /tmp/sys-strace.txt -e trace=") + kTracedCalls + " " +
                workloadCmd());
    ASSERT_EQ(st.status, 0) << st.out;
    Ran pc = sh(std::string("probectl trace -o /tmp/sys-kernel.txt --syscalls=") + kTracedCalls +
                " -- " + workloadCmd());
    ASSERT_EQ(pc.status, 0) << pc.out;
    auto want = workloadLines("/tmp/sys-strace.txt");
    auto got = workloadLines("/tmp/sys-kernel.txt");
    // The marker, 3 opens, 2 reads, 1 write, 4 closes (one EBADF), 4 sleeps and exit_group.
    ASSERT_EQ(want.size(), 17u) << itest::readFile("/tmp/sys-strace.txt");
    EXPECT_EQ(got, want) << "probectl:\n"
                         << itest::readFile("/tmp/sys-kernel.txt") << "strace:\n"
                         << itest::readFile("/tmp/sys-strace.txt") << pc.out;
    // The summary (on stderr with --syscalls) counts every call delivered.
    EXPECT_THAT(pc.out, HasSubstr("syscall:exit_group")) << pc.out;
}

// The ptrace backend prints the same lines as the kernel backend.
TEST(Syscalls, PtraceBackendSameLinesAsKernel) {
    writeInput();
    Ran k = sh(std::string("probectl trace -o /tmp/sys-k.txt --syscalls=") + kTracedCalls + " -- " +
               workloadCmd());
    ASSERT_EQ(k.status, 0) << k.out;
    Ran p = sh(std::string("probectl trace --backend=ptrace -o /tmp/sys-p.txt --syscalls=") +
               kTracedCalls + " -- " + workloadCmd());
    ASSERT_EQ(p.status, 0) << p.out;
    auto kl = workloadLines("/tmp/sys-k.txt");
    ASSERT_EQ(kl.size(), 17u) << itest::readFile("/tmp/sys-k.txt");
    EXPECT_EQ(workloadLines("/tmp/sys-p.txt"), kl) << itest::readFile("/tmp/sys-p.txt");
}

// The sleeps of workloads/interrupted_sleep.c, with what differs between runs made the same:
// the remaining time (numbers that depend on when the signal came), the absolute sleep's end,
// addresses, strace's padding and the ERESTART code's description (strace's wording is its
// own).
std::vector<std::string> interruptedSleeps(const std::string& file) {
    static const std::regex rem(R"(\{tv_sec=\d+, tv_nsec=\d+\}\)\s+= \?)");
    static const std::regex until(R"(TIMER_ABSTIME, \{tv_sec=\d+, tv_nsec=\d+\})");
    static const std::regex addr("0x[0-9a-f]+");
    static const std::regex pad(R"(\)\s+= )");
    static const std::regex why(R"( \([^()]*\)$)");
    std::vector<std::string> out;
    for (auto l : lines(itest::readFile(file))) {
        if (!l.starts_with("nanosleep(") && !l.starts_with("clock_nanosleep("))
            continue;
        l = std::regex_replace(l, rem, "{REMAINING}) = ?");
        l = std::regex_replace(l, until, "TIMER_ABSTIME, {END}");
        l = std::regex_replace(l, addr, "ADDR");
        l = std::regex_replace(l, pad, ") = ");
        out.push_back(std::regex_replace(l, why, ""));
    }
    return out;
}

// A sleep a signal interrupts: the kernel writes the time left into the second timespec and
// strace prints it then (only then: an absolute sleep's, or an uninterrupted one's, is the
// address). Both backends print the lines strace prints, and the time left is under the 60 s
// asked for.
TEST(Syscalls, InterruptedSleepsShowTheTimeLeftAsStrace) {
    const std::string cmd = itest::workload("interrupted_sleep");
    Ran st = sh("strace -o /tmp/sleep-strace.txt -e trace=nanosleep,clock_nanosleep " + cmd);
    ASSERT_EQ(st.status, 0) << st.out;
    const std::vector<std::string> want = {
        "nanosleep({tv_sec=60, tv_nsec=0}, {REMAINING}) = ? ERESTART_RESTARTBLOCK",
        "clock_nanosleep(CLOCK_MONOTONIC, 0, {tv_sec=60, tv_nsec=0}, {REMAINING}) = ? "
        "ERESTART_RESTARTBLOCK",
        "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, {END}, ADDR) = ? ERESTARTNOHAND",
        "nanosleep({tv_sec=60, tv_nsec=0}, NULL) = ? ERESTART_RESTARTBLOCK",
    };
    ASSERT_EQ(interruptedSleeps("/tmp/sleep-strace.txt"), want)
        << itest::readFile("/tmp/sleep-strace.txt");
    static const std::regex left(R"(, \{tv_sec=([0-9]+), tv_nsec=[0-9]+\}\) += \?)");
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        Ran pc = sh(std::string("probectl trace --backend=") + backend +
                    " -o /tmp/sleep-probectl.txt --syscalls=nanosleep,clock_nanosleep -- " + cmd);
        ASSERT_EQ(pc.status, 0) << pc.out;
        const std::string text = itest::readFile("/tmp/sleep-probectl.txt");
        EXPECT_EQ(interruptedSleeps("/tmp/sleep-probectl.txt"), want) << text;
        int shown = 0;
        for (const auto& l : lines(text)) {
            std::smatch m;
            if (!std::regex_search(l, m, left))
                continue;
            shown++;
            EXPECT_LT(std::stoi(m[1]), 60) << l;
        }
        EXPECT_EQ(shown, 2) << text;
    }
}

// One struct as request and remaining time, as coreutils' sleep passes it, cut short by a
// handled signal: the kernel writes the time left over the request before the call returns.
// The request shown is the one the workload passed (it prints each: 60.25 s), read at the
// entry, as strace shows it; the time left, read at the return, is less. Both backends.
TEST(Syscalls, InterruptedSleepShowsTheRequestPassedNotTheTimeLeft) {
    const std::string cmd = itest::workload("interrupted_sleep") + " same";
    static const std::regex passed(R"(request (\d+) (\d+))");
    static const std::regex call(
        R"(^(clock_)?nanosleep\((?:CLOCK_REALTIME, 0, )?\{tv_sec=(\d+), tv_nsec=(\d+)\}, )"
        R"(\{tv_sec=(\d+), tv_nsec=(\d+)\}\) += \? ERESTART_RESTARTBLOCK)");
    for (const char* tracer : {"strace", "kernel", "ptrace"}) {
        SCOPED_TRACE(tracer);
        const std::string file = std::string("/tmp/sleep-same-") + tracer + ".txt";
        Ran r = sh(std::string(tracer) == "strace"
                       ? "strace -o " + file + " -e trace=nanosleep,clock_nanosleep " + cmd
                       : std::string("probectl trace --backend=") + tracer + " -o " + file +
                             " --syscalls=nanosleep,clock_nanosleep -- " + cmd);
        ASSERT_EQ(r.status, 0) << r.out;
        std::vector<std::pair<long long, long long>> want;
        for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), passed);
             it != std::sregex_iterator(); ++it)
            want.emplace_back(std::stoll((*it)[1]), std::stoll((*it)[2]));
        ASSERT_EQ(want.size(), 2u) << r.out;
        const std::string text = itest::readFile(file);
        std::vector<std::pair<long long, long long>> shown;
        for (const auto& l : lines(text)) {
            std::smatch m;
            if (!std::regex_search(l, m, call))
                continue;
            shown.emplace_back(std::stoll(m[2]), std::stoll(m[3]));
            const long long req = std::stoll(m[2]) * 1000000000LL + std::stoll(m[3]);
            const long long left = std::stoll(m[4]) * 1000000000LL + std::stoll(m[5]);
            EXPECT_LT(left, req) << l;
        }
        EXPECT_EQ(shown, want) << text;
    }
}

// -f: children's calls too, each line prefixed with the thread id like strace -f -o FILE.
TEST(Syscalls, FollowForksPrefixesPids) {
    writeInput();
    Ran r = sh(std::string("probectl trace -f -o /tmp/sys-f.txt --syscalls=openat -- sh -c '") +
               workloadCmd() + "; " + workloadCmd() + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    int markers = 0;
    for (const auto& l : lines(itest::readFile("/tmp/sys-f.txt")))
        if (l.find(kMarker) != std::string::npos) {
            markers++;
            EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(l[0]))) << l;
            EXPECT_THAT(l, HasSubstr(" openat(AT_FDCWD, \"" + std::string(kMarker) +
                                     "\", O_RDONLY) = -1 ENOENT (No such file or directory)"));
        }
    EXPECT_EQ(markers, 2) << itest::readFile("/tmp/sys-f.txt");
}

// JSON Lines carry the strace line and the return value.
TEST(Syscalls, JsonCarriesTheStraceLine) {
    writeInput();
    Ran r = sh("probectl trace --format json --syscalls=openat -- " + workloadCmd());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("\"syscall\":\"openat(AT_FDCWD, \\\"" + std::string(kMarker) +
                                 "\\\", O_RDONLY) = -1 ENOENT (No such file or directory)\""))
        << r.out;
    EXPECT_THAT(r.out, HasSubstr("\"retval\":-2")) << r.out;
}

// Names that are no syscall; $retval where the syscall never returns.
TEST(Syscalls, ErrorsNameTheSyscall) {
    Ran r = sh("probectl trace --syscalls=opneat -- true");
    EXPECT_NE(r.status, 0);
    EXPECT_THAT(r.out, HasSubstr("unknown syscall 'opneat'")) << r.out;
    EXPECT_THAT(r.out, HasSubstr("openat")) << r.out;  // the did-you-mean
    Ran ret = sh("probectl trace 'syscall:exit_group if $retval < 0' -- true");
    EXPECT_EQ(ret.status, 2) << ret.out;
    EXPECT_THAT(ret.out, HasSubstr("exit_group never returns (the task ends in it), so it has no "
                                   "$retval"))
        << ret.out;
}

// A syscall spec with fetch arguments prints them instead of the decoded call, and still
// ends in " = RET" with the errno's name; $retval is fetched (at the return, shown where the
// spec puts it) and filtered on directly.
TEST(Syscalls, FetchArgumentsKeepTheReturn) {
    const std::string open = itest::workload("open_file");
    Ran r =
        sh("probectl trace 'syscall:openat fd=$retval:s32 path=+0($arg2):ustring if "
           "$retval < 0 && path ~ \"/nonexistent/*\"' -- " +
           open + " /nonexistent/sys-test");
    EXPECT_EQ(r.status, 1) << "open_file exits 1 when the open fails\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("syscall:openat  fd=-2 path=\"/nonexistent/sys-test\" = -1 "
                                 "ENOENT (No such file or directory) lat="))
        << r.out;
    // A successful call: the return value as strace prints it.
    Ran ok =
        sh("probectl trace 'syscall:openat path=+0($arg2):ustring if path == "
           "\"/etc/hostname\"' -- " +
           open + " /etc/hostname");
    EXPECT_EQ(ok.status, 0) << ok.out;
    EXPECT_TRUE(std::regex_search(
        ok.out, std::regex(R"(syscall:openat  path="/etc/hostname" = [0-9]+ lat=)")))
        << ok.out;
}

// execve's argv and environment as strace prints them, on both backends: the pipeline's
// children can be told apart.
TEST(Syscalls, ExecveShowsArgvAndCountsTheEnvironment) {
    for (const std::string backend : {"kernel", "ptrace"}) {
        // env -i leaves PATH out: probectl by its path.
        Ran r = sh("env -i A=1 B=2 \"$(command -v probectl)\" trace --backend=" + backend +
                   " -f --syscalls=execve -o /tmp/execve.txt -- /bin/sh -c 'exec /bin/echo one "
                   "two' >/dev/null");
        ASSERT_EQ(r.status, 0) << backend << ": " << r.out;
        const std::string t = itest::readFile("/tmp/execve.txt");
        EXPECT_THAT(t, HasSubstr("execve(\"/bin/sh\", [\"/bin/sh\", \"-c\", \"exec /bin/echo one "
                                 "two\"], 0x"))
            << backend << ": " << t;
        EXPECT_THAT(t, HasSubstr(", [\"/bin/echo\", \"one\", \"two\"], 0x"))
            << backend << ": " << t;
        EXPECT_THAT(t, HasSubstr(" /* 2 vars */) = 0")) << backend << ": " << t;
    }
}

// JSON carries a syscall's arguments as fields, not only inside the strace line.
TEST(Syscalls, JsonCarriesTheArgumentsAsFields) {
    Ran r =
        sh("probectl trace --format json -o /tmp/args.json syscall:openat -- cat "
           "/etc/hostname");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string j = itest::readFile("/tmp/args.json");
    // "dfd" from the syscall metadata; "arg1" on a kernel without it (the debug kernel).
    EXPECT_THAT(j, ::testing::AnyOf(HasSubstr("\"syscall_args\":[{\"name\":\"dfd\","),
                                    HasSubstr("\"syscall_args\":[{\"name\":\"arg1\",")))
        << j;
    EXPECT_THAT(j, HasSubstr("\"decoded\":\"\\\"/etc/hostname\\\"\"")) << j;
}

// A syscall's $retval is signed: -2, not 0xfffffffffffffffe.
TEST(Syscalls, RetvalFetchArgumentIsSigned) {
    Ran r = sh("probectl trace 'syscall:openat r=$retval' -- cat /nonexistent");
    EXPECT_THAT(r.out, HasSubstr(" r=-2 = -1 ENOENT")) << r.out;
}

namespace {

constexpr const char* kDecodedCalls =
    "umask,mkdir,chmod,fchmodat,access,faccessat,faccessat2,unlinkat,kill,tgkill,tkill,pipe2,"
    "dup3,lseek,fcntl,socket,arch_prctl,prlimit64,getrlimit,setrlimit,rseq,getrandom,wait4,futex,"
    "readlink,readlinkat,getcwd";

// Lines of workloads/decode_args.c from its umask on (ld.so's calls come before), with the
// run's pids (printed by the workload on stdout) as PID, CHILD1 and CHILD2 and getrandom's
// bytes as BYTES: they differ between runs. The padding before " = " is one space.
std::vector<std::string> decodedLines(const std::string& file, const std::string& stdout_text) {
    std::smatch m;
    if (!std::regex_search(stdout_text, m,
                           std::regex(R"(child=(\d+) child=(\d+) pid=(\d+) tid=\d+)")))
        return {"no pid printed: " + stdout_text};
    const std::vector<std::pair<std::regex, std::string>> pids = {
        {std::regex("\\b" + m[3].str() + "\\b"), "PID"},
        {std::regex("\\b" + m[1].str() + "\\b"), "CHILD1"},
        {std::regex("\\b" + m[2].str() + "\\b"), "CHILD2"},
    };
    static const std::regex bytes(R"("(\\x[0-9a-f]{2})+")");
    std::vector<std::string> out;
    bool on = false;
    for (std::string l : lines(itest::readFile(file))) {
        on = on || l.starts_with("umask(");
        if (!on || l.starts_with("+++ ") || l.starts_with("--- "))
            continue;
        // Only the calls that take or return a pid: a pid may equal another number of the
        // run (dup3's fd 100 once did, in a VM whose pids were near 100).
        static const std::regex takes_pid("^(kill|tgkill|tkill|wait4)\\(");
        if (std::regex_search(l, takes_pid))
            for (const auto& [re, name] : pids)
                l = std::regex_replace(l, re, name);
        l = std::regex_replace(l, bytes, "BYTES");
        // The " = " column follows the line's length, so a pid of other width moves it.
        static const std::regex padding(" {2,}= ");
        out.push_back(std::regex_replace(l, padding, " = "));
    }
    return out;
}

}  // namespace

// Arguments strace prints as names (octal modes, AT_FDCWD, access modes, signal numbers,
// O_/SOCK_ flags, SEEK_*, AF_*, F_*, ARCH_*, RLIMIT_*, GRND_*, wait4's W* options and the
// statuses it wrote, FUTEX_* operations and a futex timeout) print the same on both backends as
// Debian's strace prints them on the same workload, line for line.
TEST(Syscalls, DecodedArgumentsAsStrace) {
    ASSERT_EQ(access("/usr/bin/strace", X_OK), 0) << "strace missing from the VM image";
    const std::string cmd = itest::workload("decode_args") + " /tmp/probectl-decode-dir";
    Ran st =
        sh(std::string("strace -o /tmp/decode-strace.txt -e trace=") + kDecodedCalls + " " + cmd);
    ASSERT_EQ(st.status, 0) << st.out;
    const auto want = decodedLines("/tmp/decode-strace.txt", st.out);
    ASSERT_EQ(want.size(), 45u) << itest::readFile("/tmp/decode-strace.txt") << st.out;
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        Ran pc = sh(std::string("probectl trace --backend=") + backend +
                    " -o /tmp/decode-probectl.txt --syscalls=" + kDecodedCalls + " -- " + cmd);
        ASSERT_EQ(pc.status, 0) << pc.out;
        EXPECT_EQ(decodedLines("/tmp/decode-probectl.txt", pc.out), want)
            << "probectl:\n"
            << itest::readFile("/tmp/decode-probectl.txt") << "strace:\n"
            << itest::readFile("/tmp/decode-strace.txt") << pc.out;
    }
}

namespace {

// The "+++ ... +++" lines of a strace-layout file, each with the pid prefix it has ("PID "
// for any pid with -f, as `strace -f -o FILE` prints it), in their order.
std::vector<std::string> endLines(const std::string& file) {
    static const std::regex prefix(R"(^\d+ +)");
    std::vector<std::string> out;
    for (const auto& l : lines(itest::readFile(file)))
        if (l.find("+++ ") != std::string::npos)
            out.push_back(std::regex_replace(l, prefix, "PID "));
    return out;
}

}  // namespace

// strace's "+++ exited with N +++" / "+++ killed by SIG +++" lines, each the traced
// thread's real wait status: every one strace -f prints (a thread, children exiting, killed,
// aborting) with the ptrace backend, which sees every end; with the kernel backend only the
// command's own (its launcher's waitpid), last; without -f the command's alone, on both.
TEST(Syscalls, EndLinesAsStrace) {
    ASSERT_EQ(access("/usr/bin/strace", X_OK), 0) << "strace missing from the VM image";
    const std::string cmd = itest::workload("exits");
    constexpr const char* kCalls = "exit,exit_group";
    Ran st = sh(std::string("strace -f -o /tmp/ends-strace.txt -e trace=") + kCalls + " " + cmd);
    ASSERT_EQ(st.status, 5) << st.out;
    const auto want = endLines("/tmp/ends-strace.txt");
    // The thread, exit 3, SIGKILL, SIGABRT (with or without a core), exit 5.
    ASSERT_EQ(want.size(), 5u) << itest::readFile("/tmp/ends-strace.txt");
    EXPECT_EQ(want.back(), "PID +++ exited with 5 +++");

    Ran pt = sh(std::string("probectl trace --backend=ptrace -f -o /tmp/ends-ptrace.txt "
                            "--syscalls=") +
                kCalls + " -- " + cmd);
    EXPECT_EQ(pt.status, 5) << pt.out;
    // The same ends; the thread's may come after the first child's (pthread_join returns
    // before the thread's end is told), in strace's output as in ours.
    auto sorted = [](std::vector<std::string> v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto got = endLines("/tmp/ends-ptrace.txt");
    EXPECT_EQ(sorted(got), sorted(want)) << "probectl:\n"
                                         << itest::readFile("/tmp/ends-ptrace.txt") << "strace:\n"
                                         << itest::readFile("/tmp/ends-strace.txt") << pt.out;
    EXPECT_EQ(got.empty() ? "" : got.back(), want.back());

    Ran k = sh(std::string("probectl trace -f -o /tmp/ends-kernel.txt --syscalls=") + kCalls +
               " -- " + cmd);
    EXPECT_EQ(k.status, 5) << k.out;
    const auto kernel_text = itest::readFile("/tmp/ends-kernel.txt");
    EXPECT_EQ(endLines("/tmp/ends-kernel.txt"), std::vector<std::string>{want.back()})
        << kernel_text << k.out;
    EXPECT_TRUE(kernel_text.ends_with("+++ exited with 5 +++\n")) << kernel_text;

    // Without -f: the command's end alone, without a prefix, as strace prints it.
    Ran one = sh(std::string("strace -o /tmp/ends-strace1.txt -e trace=") + kCalls + " " + cmd);
    ASSERT_EQ(one.status, 5) << one.out;
    const auto want_one = endLines("/tmp/ends-strace1.txt");
    ASSERT_EQ(want_one, std::vector<std::string>{"+++ exited with 5 +++"})
        << itest::readFile("/tmp/ends-strace1.txt");
    for (const char* backend : {"kernel", "ptrace"}) {
        SCOPED_TRACE(backend);
        Ran pc = sh(std::string("probectl trace --backend=") + backend +
                    " -o /tmp/ends-one.txt --syscalls=" + kCalls + " -- " + cmd);
        EXPECT_EQ(pc.status, 5) << pc.out;
        EXPECT_EQ(endLines("/tmp/ends-one.txt"), want_one)
            << itest::readFile("/tmp/ends-one.txt") << pc.out;
    }
}
